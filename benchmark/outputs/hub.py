"""Export datasets as a Hugging Face Hub dataset folder (``sourcesum export --format hf``).

The folder holds one Parquet file per split, ``<dataset>/<split>.parquet`` (the rows of
:func:`~sourcesum.data.frames.to_hf_dataset`, built from the sha256-verified files), a
``README.md`` dataset card, and :data:`INDEX_NAME`, listing the files the export wrote (a later
export overwrites only those, and removes those it no longer writes, as the TREC export does).

The card's YAML header is what ``datasets.load_dataset(folder)`` and the Hub read:

* ``configs``: ``default`` (every exported split: ``load_dataset(folder)`` returns them all) and
  one config per dataset (``load_dataset(folder, "wice")``); each split is named as the harness
  names it (``xsum_pegasus``, ``wice_test``, ...);
* ``license`` (the Hub's ids of every dataset's licenses), ``language``, ``task_categories``,
  ``size_categories``, ``pretty_name``, ``tags``;
* ``sourcesum``: per dataset its license as its source states it, its citation (BibTeX), its
  sources (repository, pinned commit, license), and per split its pairs, sentences, data
  checksum, the sha256 of every file it was read from, and its Parquet file's sha256; and the
  harness version (and git commit) that wrote the export.

The card's body says the same in prose and tables.
"""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sourcesum import __version__
from sourcesum.data import Dataset, Source, Split, dataset, load_split
from sourcesum.data.frames import PAIR_COLUMNS, hf_datasets, to_hf_dataset
from sourcesum.util.files import check_folder_target, owned_files, write_bytes_atomic, write_text_atomic
from sourcesum.util.hashing import sha256_bytes

INDEX_NAME = "sourcesum-hf-export.json"
"""Lists every file an export wrote; later exports overwrite only those."""
INDEX_FORMAT = "sourcesum-hf-export/1"
CARD_NAME = "README.md"

HUB_LICENSES = {
    "Apache-2.0": "apache-2.0",
    "MIT": "mit",
    "ODC-BY-1.0": "odc-by",
    "CC BY-SA 4.0": "cc-by-sa-4.0",
    "CC-BY-SA-4.0": "cc-by-sa-4.0",
    "CC BY 4.0": "cc-by-4.0",
    "CC-BY-4.0": "cc-by-4.0",
    "CC0-1.0": "cc0-1.0",
}
"""License names as sources state them -> the Hub's license ids (none known: ``other``)."""

TASK_CATEGORIES = ("text-retrieval", "summarization")
"""The Hub task categories on the card: ranking a document's sentences as a summary's sources."""

TAGS = ("source-identification", "evidence-retrieval", "sentence-ranking", "sourcesum-bench")


@dataclass(frozen=True)
class ExportedSplit:
    """One split written: the split, its Parquet path in the folder and that file's sha256."""

    dataset: Dataset
    split: Split
    path: str
    sha256: str


def hub_licenses(statement: str) -> list[str]:
    """The Hub license ids a source's license statement names, in its order (``other`` when
    it names none that :data:`HUB_LICENSES` knows)."""
    found = sorted((statement.find(name), hub) for name, hub in HUB_LICENSES.items() if name in statement)
    return list(dict.fromkeys(hub for _, hub in found)) or ["other"]


def dataset_license(sources: Sequence[Source]) -> str:
    """The license statements of ``sources``, joined (each stated once)."""
    return "; ".join(dict.fromkeys(source.license for source in sources))


def planned_splits(names: Sequence[str]) -> dict[str, tuple[Dataset, str]]:
    """``<dataset>/<split>.parquet`` -> (dataset, split name) for every split of the datasets
    ``names`` (unknown names: :class:`~sourcesum.errors.UnknownNameError`)."""
    return {
        f"{ds.name}/{spec.name}.parquet": (ds, spec.name)
        for ds in (dataset(name) for name in dict.fromkeys(names))
        for spec in ds.splits
    }


def parquet_bytes(split: Split) -> bytes:
    """The Parquet file of ``split`` (:func:`~sourcesum.data.frames.to_hf_dataset`'s rows; the
    features ride in its schema, so ``load_dataset`` reads them back typed). ``datasets``' own
    progress bar stays off: :func:`export_hf` shows one over the splits."""
    datasets = hf_datasets()
    was_disabled = datasets.are_progress_bars_disabled()
    datasets.disable_progress_bars()
    try:
        buffer = io.BytesIO()
        to_hf_dataset(split).to_parquet(buffer)
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()
    return buffer.getvalue()


def split_files(ds: Dataset, split: Split) -> dict[str, dict[str, str | None]]:
    """The files ``split`` is read from: name -> its pinned sha256 and the source pinning it."""
    sources = ds.sources()
    out: dict[str, dict[str, str | None]] = {}
    for pinned in ds.pinned_files(ds.split_spec(split.name)):
        source = next(
            (s for s in sources.values() if (s.files.get(pinned.file) or {}).get("sha256") == pinned.sha256),
            None,
        )
        out[pinned.file] = {"sha256": pinned.sha256, "source": source.name if source else None}
    return out


def read_sources(items: Sequence[ExportedSplit]) -> list[Source]:
    """The sources the files of ``items`` (splits of one dataset) were read from, in the
    dataset's order."""
    used = {f["source"] for e in items for f in split_files(e.dataset, e.split).values()}
    return [source for name, source in items[0].dataset.sources().items() if name in used]


def card_metadata(exported: Sequence[ExportedSplit], harness: str) -> dict[str, Any]:
    """The card's YAML header (module docstring)."""
    by_dataset: dict[str, list[ExportedSplit]] = {}
    for each in exported:
        by_dataset.setdefault(each.dataset.name, []).append(each)

    def files(items: Sequence[ExportedSplit]) -> list[dict[str, str]]:
        return [{"split": e.split.name, "path": e.path} for e in items]

    datasets = [items[0].dataset for items in by_dataset.values()]
    licenses = [
        hub
        for items in by_dataset.values()
        for source in read_sources(items)
        for hub in hub_licenses(source.license)
    ]
    pairs = sum(len(e.split) for e in exported)
    return {
        "configs": [{"config_name": "default", "default": True, "data_files": files(exported)}]
        + [{"config_name": name, "data_files": files(items)} for name, items in by_dataset.items()],
        "license": list(dict.fromkeys(licenses)),
        "language": ["en"],
        "task_categories": list(TASK_CATEGORIES),
        "size_categories": [size_category(pairs)],
        "pretty_name": " / ".join(ds.title for ds in datasets),
        "tags": list(TAGS),
        "sourcesum": {
            "exported_by": harness,
            "datasets": {
                name: {
                    "title": items[0].dataset.title,
                    "license": dataset_license(read_sources(items)),
                    "citation": items[0].dataset.citation.strip(),
                    "sources": {
                        source.name: {
                            "repository": source.repository,
                            "commit": source.commit,
                            "license": source.license,
                        }
                        for source in read_sources(items)
                    },
                    "splits": {
                        e.split.name: {
                            "pairs": len(e.split),
                            "sentences": sum(p.n_sentences for p in e.split),
                            "data_sha256": e.split.sha256,
                            "files": split_files(e.dataset, e.split),
                            "parquet": e.path,
                            "parquet_sha256": e.sha256,
                        }
                        for e in items
                    },
                }
                for name, items in by_dataset.items()
            },
        },
    }


def size_category(pairs: int) -> str:
    """The Hub's size category for ``pairs`` rows."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if pairs < limit:
            return name
    return "100K<n<1M"


COLUMN_TEXT = {
    "id": "the pair id",
    "document_key": "identifies the document (a hash of its text); pairs on one document share it",
    "cluster": "the resampling unit of the board's bootstrap statistics",
    "corpus": "the corpus (SourceSum: `xsum` or `cnn_dailymail`)",
    "model": "the system that wrote the summary (SourceSum: `pegasus-xsum` or `reference`)",
    "original_id": "the id in the original corpus",
    "summary_idx": "the summary's index among the document's summaries",
    "summary": "the summary (or claim, or query-focused summary)",
    "query": "the query the summary answers (empty unless the task has one)",
    "reference_summary": "the corpus's reference summary",
    "document": "the document's text",
    "sentences": "the candidate sentences, in document order",
    "graded": "per sentence, the graded relevance nDCG reads",
    "binary": "per sentence, 1 where `graded` reaches the dataset's threshold: what AP reads",
    "soft": "per sentence, the share of annotators (or supporting sets) marking it",
    "votes": "per sentence, each annotator's 0/1 vote (the raw labels; null without per-annotator labels)",
}
"""What each column of :data:`~sourcesum.data.frames.PAIR_COLUMNS` holds (the card's table)."""


def card_text(exported: Sequence[ExportedSplit], harness: str) -> str:
    """The README.md: the YAML header (:func:`card_metadata`), then the card in prose."""
    import yaml

    metadata = card_metadata(exported, harness)
    title = metadata["pretty_name"]
    lines = [
        f"# {title}",
        "",
        f"Exported with `sourcesum export --format hf` by {harness} from the files each dataset "
        "pins by sha256, verified before they were parsed. One row per (document, summary) pair; one "
        "split per harness split, named as the harness names it.",
        "",
        "```python",
        "import datasets",
        'everything = datasets.load_dataset("PATH")            # every split (config "default")',
        f'one = datasets.load_dataset("PATH", "{exported[0].dataset.name}")  # one dataset\'s splits',
        "```",
        "",
        "| column | holds |",
        "|---|---|",
        *(f"| `{name}` | {COLUMN_TEXT[name]} |" for name in PAIR_COLUMNS),
        "",
    ]
    for name, info in metadata["sourcesum"]["datasets"].items():
        ds = dataset(name)
        lines += [f"## {info['title']} (config `{name}`)", ""]
        if ds.description:
            lines += [ds.description, ""]
        if ds.relevance_text:
            lines += [f"Relevance: {ds.relevance_text} Binary threshold: {ds.binary_threshold:g}.", ""]
        lines += [
            "| split | pairs | sentences | data sha256 | Parquet sha256 |",
            "|---|---:|---:|---|---|",
            *(
                f"| `{split}` | {s['pairs']} | {s['sentences']} | `{s['data_sha256']}` | `{s['parquet_sha256']}` |"
                for split, s in info["splits"].items()
            ),
            "",
            f"License: {info['license']}.",
            "",
            *(
                f"Source `{source}`: `{s['repository']}` at commit `{s['commit']}` ({s['license']})."
                for source, s in info["sources"].items()
            ),
            "",
            "The sha256 of every file each split was read from is in the `sourcesum` block of this "
            "card's YAML header.",
            "",
        ]
        if ds.text_notice:
            lines += [f"Attribution: {ds.text_notice}", ""]
        if info["citation"]:
            lines += ["Citation:", "", "```bibtex", info["citation"], "```", ""]
    header = yaml.safe_dump(metadata, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{header}---\n\n" + "\n".join(lines)


def harness_text() -> str:
    """``sourcesum-bench <version>`` and, in a git checkout, ``(git commit <commit>)``."""
    from sourcesum.board.citation import harness_revision

    revision = harness_revision()
    return f"sourcesum-bench {__version__}" + (
        f" (git commit {revision.described})" if revision.described else ""
    )


def export_hf(names: Sequence[str], folder: Path, progress: bool = True) -> list[Path]:
    """Write every split of the datasets ``names`` under ``folder`` (module docstring); returns
    the files written, the index last. Each split is loaded (located, verified, parsed) here;
    ``progress``: a tqdm bar over the splits on stderr."""
    from tqdm.auto import tqdm

    hf_datasets()  # the one-line install hint before any work
    planned = planned_splits(names)
    check_folder_target(folder, [*planned, CARD_NAME], INDEX_NAME, "export -o")
    earlier = owned_files(folder, INDEX_NAME)
    exported: list[ExportedSplit] = []
    written: list[Path] = []
    bar = tqdm(planned.items(), desc="export --format hf", unit="split", disable=not progress, leave=False)
    for path, (ds, name) in bar:
        split = load_split(name)
        payload = parquet_bytes(split)
        write_bytes_atomic(folder / path, payload)
        exported.append(ExportedSplit(ds, split, path, sha256_bytes(payload)))
        written.append(folder / path)
    write_text_atomic(folder / CARD_NAME, card_text(exported, harness_text()))
    written.append(folder / CARD_NAME)
    files = {CARD_NAME: {"kind": "dataset card"}} | {
        e.path: {"kind": "parquet", "dataset": e.dataset.name, "split": e.split.name} for e in exported
    }
    for stale in sorted(earlier - set(files)):
        leftover = folder / stale
        if ".." not in Path(stale).parts and leftover.is_file():
            leftover.unlink()
    index = folder / INDEX_NAME
    write_text_atomic(index, json.dumps({"format": INDEX_FORMAT, "files": files}, indent=2) + "\n")
    return [*written, index]
