"""SourceSum (Suhara & Alikaniotis, EACL 2024): which document sentences a summary drew on.

Four board splits (the paper's main table) and their unfiltered ``*_all`` variants, each a JSON
list of pairs from ``suhara/sourcesum`` (Apache-2.0), pinned by commit and sha256 in
``data/manifest.json`` (source ``sourcesum``; local copies in ``$SOURCESUM_DATA_DIR``).

**Held-out splits** (``*_heldout``): the pairs of a ``*_all`` split that its main split leaves
out (the same ids are removed; the main pairs are identical in both files), on which no
configuration of this benchmark was chosen: 479 XSum-PEGASUS and 479 XSum-Reference pairs (the
same 479 documents, none of them in a main pair: summaries the annotators judged not fully
reconstructible from the document), 36 CNN/DM-PEGASUS and 80 CNN/DM-Reference pairs (13 and 14
of them on documents outside the main pairs).

**Format** (also what :func:`parse_sourcesum_rows` accepts from other repositories): a JSON list
of objects with ``id``, ``document``, ``gen_summary`` and ``annotations``, a list of
``{"sentence_idx": i, "sentence": text, "label": [0/1 per annotator]}`` in sentence order;
optional ``corpus``, ``model``, ``original_id``, ``summary_idx``, ``ref_summary``.

**Relevance**: graded = the number of annotators who voted the sentence a source (nDCG);
binary = at least ``BINARY_MIN_VOTES = 2`` such votes (AP and the other binary measures);
the soft label of supervised rankers is the share of the sentence's annotators who voted 1.
The two splits of a corpus share their documents (XSum: 119, CNN/DM: 191), so statistics
resample documents.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from sourcesum.data.datasets import Dataset, ParsedSplit, SplitSpec, register_dataset
from sourcesum.data.pairs import Judgment, Pair
from sourcesum.data.sources import Source, manifest_source, read_verified
from sourcesum.errors import DataError, UnknownNameError

BINARY_MIN_VOTES = 2
"""A sentence is binary-relevant when at least this many annotators voted 1 (paper: 2)."""

CITATION = """@inproceedings{suhara-alikaniotis-2024-source,
  title     = {Source Identification in Abstractive Summarization},
  author    = {Suhara, Yoshi and Alikaniotis, Dimitris},
  booktitle = {Proceedings of the 18th Conference of the European Chapter of the Association
               for Computational Linguistics (Volume 2: Short Papers)},
  year      = {2024},
  publisher = {Association for Computational Linguistics},
  url       = {https://arxiv.org/abs/2402.04677}
}"""


def read_rows(path: Path, payload: bytes) -> list[dict[str, Any]]:
    """Parse a SourceSum JSON list from the verified ``payload`` of ``path``."""
    try:
        rows = json.loads(payload)
    except (ValueError, RecursionError) as exc:
        raise DataError(f"{path}: cannot be read as a SourceSum JSON list ({exc})") from exc
    if not isinstance(rows, list) or not all(isinstance(row, dict) for row in rows):
        raise DataError(f"{path}: expected a JSON list of objects (one per pair)")
    return rows


def parse_pair(row: dict[str, Any], split: str, path: Path, position: int) -> tuple[Pair, Judgment]:
    """Validate one raw row into its inputs and its judgment; errors name the file and pair."""
    pair_id = row.get("id") or f"<row {position}>"

    def fail(message: str) -> DataError:
        return DataError(f"{path}: pair {pair_id}: {message}")

    for key in ("id", "document", "gen_summary", "annotations"):
        if not row.get(key):
            raise fail(f"missing or empty field {key!r}")
    annotations = row["annotations"]
    if not isinstance(annotations, list):
        raise fail("'annotations' is not a list")
    sentences: list[str] = []
    votes: list[tuple[int, ...]] = []
    for expected, ann in enumerate(annotations):
        if not isinstance(ann, dict):
            raise fail(f"annotation {expected} is not an object")
        if ann.get("sentence_idx") != expected:
            raise fail(
                f"annotations out of order: position {expected} has sentence_idx {ann.get('sentence_idx')!r}"
            )
        text = ann.get("sentence")
        if not isinstance(text, str) or not text.strip():
            raise fail(f"sentence {expected} has no text")
        label = ann.get("label")
        if not label or not isinstance(label, list) or any(v not in (0, 1) for v in label):
            raise fail(f"sentence {expected} has labels {label!r}; expected a non-empty 0/1 list")
        sentences.append(text)
        votes.append(tuple(int(v) for v in label))
    pair = Pair(
        id=str(row["id"]),
        split=split,
        sentences=tuple(sentences),
        summary=row["gen_summary"],
        document=row["document"],
        corpus=str(row.get("corpus", "")),
        model=str(row.get("model", "")),
        original_id=str(row.get("original_id", "")),
        summary_idx=int(row.get("summary_idx") or 0),
        reference_summary=row.get("ref_summary") or "",
    )
    return pair, Judgment.from_votes(votes)


def parse_sourcesum_rows(rows: list[dict[str, Any]], split: str, path: Path) -> ParsedSplit:
    """Pairs and judgments of SourceSum-format rows (module docstring), in file order."""
    parsed = [parse_pair(row, split, path, i) for i, row in enumerate(rows)]
    return ParsedSplit(tuple(p for p, _ in parsed), tuple(j for _, j in parsed))


def _split(name: str, title: str, pairs: int, corpus: str, board: bool) -> SplitSpec:
    return SplitSpec(name, title, pairs, corpus, (f"{name}.json",), board=board)


HELD_OUT_SUFFIX = "_heldout"


def _held_out(main: str, title: str, pairs: int, corpus: str) -> SplitSpec:
    """``main``'s ``_all`` pairs minus ``main``'s own (files: the ``_all`` file, then main's)."""
    return SplitSpec(
        f"{main}{HELD_OUT_SUFFIX}", f"{title} (held out)", pairs, corpus, (f"{main}_all.json", f"{main}.json")
    )


@register_dataset
class SourceSum(Dataset):
    """SourceSum: news summaries (XSum, CNN/DM; PEGASUS and reference summaries) with 1-4
    annotators' votes on which document sentences each summary drew on."""

    name = "sourcesum"
    title = "SourceSum"
    description = (
        "Source sentence detection on SourceSum (Suhara & Alikaniotis, EACL 2024): rank each "
        "document sentence by how much it contributed to the summary."
    )
    citation = CITATION
    splits: ClassVar[tuple[SplitSpec, ...]] = (
        _split("xsum_pegasus", "XSum-PEGASUS", 119, "xsum", True),
        _split("xsum_reference", "XSum-Reference", 119, "xsum", True),
        _split("cnn_pegasus", "CNN/DM-PEGASUS", 468, "cnn_dailymail", True),
        _split("cnn_reference", "CNN/DM-Reference", 505, "cnn_dailymail", True),
        _split("xsum_pegasus_all", "XSum-PEGASUS (all)", 598, "xsum", False),
        _split("xsum_reference_all", "XSum-Reference (all)", 598, "xsum", False),
        _split("cnn_pegasus_all", "CNN/DM-PEGASUS (all)", 504, "cnn_dailymail", False),
        _split("cnn_reference_all", "CNN/DM-Reference (all)", 585, "cnn_dailymail", False),
        _held_out("xsum_pegasus", "XSum-PEGASUS", 479, "xsum"),
        _held_out("xsum_reference", "XSum-Reference", 479, "xsum"),
        _held_out("cnn_pegasus", "CNN/DM-PEGASUS", 36, "cnn_dailymail"),
        _held_out("cnn_reference", "CNN/DM-Reference", 80, "cnn_dailymail"),
    )
    binary_threshold = BINARY_MIN_VOTES
    max_graded = 4
    """Votes of at most four annotators."""
    relevance_text = (
        "graded = number of annotators who voted the sentence a source (NDCG); binary = at "
        "least 2 such votes (MAP)."
    )
    human_agreement = True
    shared_documents_text = "the two splits of a corpus, which share their documents,"
    resampling_text = "CNN/DM pairs that share a document move together; on XSum this equals resampling pairs"
    published_source = "sourcesum-published"

    def sources(self) -> dict[str, Source]:
        return {
            "sourcesum": manifest_source("sourcesum", "SOURCESUM_DATA_DIR", "sourcesum"),
            "sourcesum-published": manifest_source(
                "sourcesum-published", "SOURCESUM_PUBLISHED_DIR", "published"
            ),
        }

    def parse(self, spec: SplitSpec, files: dict[str, tuple[Path, bytes]]) -> ParsedSplit:
        path, payload = files[spec.files[0]]
        rows = read_rows(path, payload)
        if spec.name.endswith(HELD_OUT_SUFFIX):
            main_path, main_payload = files[spec.files[1]]
            main_ids = {str(row.get("id")) for row in read_rows(main_path, main_payload)}
            missing = main_ids - {str(row.get("id")) for row in rows}
            if missing:
                raise DataError(
                    f"{path}: {len(missing)} pair(s) of {main_path.name} are not in it (e.g. {sorted(missing)[0]}); "
                    "a held-out split is the unfiltered split minus its main pairs"
                )
            rows = [row for row in rows if str(row.get("id")) not in main_ids]
        return parse_sourcesum_rows(rows, spec.name, path)


PROMPT_VERSIONS = ("v1", "v2")


def read_prompt(version: str) -> str:
    """The verified text of the paper's prompt template ``v1`` or ``v2``
    (``data/gpt_prompt_<version>.txt`` of the published source, sha256-pinned)."""
    if version not in PROMPT_VERSIONS:
        raise UnknownNameError(f"the paper has prompts {', '.join(PROMPT_VERSIONS)}, not {version!r}")
    source = SourceSum().sources()["sourcesum-published"]
    _, payload = read_verified(source.file(f"gpt_prompt_{version}.txt", kind="published file"))
    return payload.decode("utf-8")
