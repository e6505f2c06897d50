"""WiCE (Kamoi et al., EMNLP 2023): which sentences of a cited web page support a Wikipedia claim.

Two splits of the claim-level evidence-retrieval files of ``ryokamoi/wice`` (annotations
ODC-BY 1.0; text from Wikipedia, CC BY-SA, and from pages archived by Common Crawl), pinned by
commit and sha256 in ``data/manifest.json`` (source ``wice``): ``wice_test`` (358 claims, the
board split) and ``wice_dev`` (349). Local copies: ``$SOURCESUM_WICE_DIR`` (a folder laid out
like the repository: ``data/entailment_retrieval/claim/{test,dev}.jsonl``), else ``data/wice/``,
else the pinned download. Data card: ``docs/datasets/wice.md``.

**Format**: one JSON object a line, with ``claim`` (a sentence of a Wikipedia article),
``evidence`` (the sentences of the page it cites, in order), ``supporting_sentences`` (a list of
alternative minimal sets of 0-based ``evidence`` indices that together support the claim),
``label`` and ``meta`` (``id``...).

**A pair per claim**: the summary is the claim, the candidates are every element of
``evidence`` in file order, as they are (the ``(meta data) TITLE: ...`` lines and empty strings
included: an empty candidate is scored like any other), the document is the evidence joined by
newlines, the query is empty.

**Relevance** comes from ``supporting_sentences`` alone, whatever the ``label``: graded = the
number of supporting sets (as listed: a set listed twice counts twice) holding the sentence,
used as a linear gain by nDCG (it reaches 128 on a claim with many sets); binary = in at least
one set (``binary_threshold = 1``); the soft label is graded over the number of non-empty sets.
A claim whose sets hold no index (``[[]]``) has no relevant sentence: its measures are undefined
(NaN), left out of the means and counted.

**Resampling cluster**: the cited page, a hash of its evidence text (the files have no page id);
claims citing the same page move together.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, ClassVar

from sourcesum.data.datasets import Dataset, ParsedSplit, SplitSpec, register_dataset
from sourcesum.data.pairs import Judgment, Pair
from sourcesum.data.sources import Source, manifest_source
from sourcesum.errors import DataError
from sourcesum.util.hashing import digest

ENV_VAR = "SOURCESUM_WICE_DIR"
DOWNLOAD_DIR = "wice"
TEST_FILE = "data/entailment_retrieval/claim/test.jsonl"
DEV_FILE = "data/entailment_retrieval/claim/dev.jsonl"

CITATION = """@inproceedings{kamoi-etal-2023-wice,
  title     = {{WiCE}: Real-World Entailment for Claims in {Wikipedia}},
  author    = {Kamoi, Ryo and Goyal, Tanya and Rodriguez, Juan Diego and Durrett, Greg},
  booktitle = {Proceedings of the 2023 Conference on Empirical Methods in Natural Language Processing},
  year      = {2023},
  publisher = {Association for Computational Linguistics},
  url       = {https://arxiv.org/abs/2303.01432}
}"""


def page_cluster(evidence: list[str]) -> str:
    """The resampling cluster of a claim: a hash of its cited page's sentences."""
    return "wice-page-" + digest(evidence, length=16)


def graded_relevance(n_sentences: int, sets: list[list[int]]) -> list[float]:
    """Per sentence, the number of supporting sets (as listed) that hold it."""
    counts = [0.0] * n_sentences
    for supporting in sets:
        for index in set(supporting):
            counts[index] += 1.0
    return counts


def parse_claim(item: Any, split: str, path: Path, number: int) -> tuple[Pair, Judgment, str]:
    """One line of a WiCE file into its pair, judgment and cluster; errors name file and line."""
    where = f"{path}:{number}"
    if not isinstance(item, dict):
        raise DataError(f"{where}: expected a JSON object (one claim)")
    meta = item.get("meta")
    pair_id = meta.get("id") if isinstance(meta, dict) else None
    if not isinstance(pair_id, str) or not pair_id:
        raise DataError(f"{where}: no meta.id")
    where = f"{where}: pair {pair_id}"
    claim, evidence, sets = item.get("claim"), item.get("evidence"), item.get("supporting_sentences")
    if not isinstance(claim, str) or not claim.strip():
        raise DataError(f"{where}: missing or empty 'claim'")
    if not isinstance(evidence, list) or not evidence or not all(isinstance(s, str) for s in evidence):
        raise DataError(f"{where}: 'evidence' is not a non-empty list of strings")
    if not isinstance(sets, list) or not all(
        isinstance(s, list) and all(type(i) is int for i in s) for s in sets
    ):
        raise DataError(f"{where}: 'supporting_sentences' is not a list of lists of indices")
    for supporting in sets:
        for index in supporting:
            if not 0 <= index < len(evidence):
                raise DataError(f"{where}: supporting sentence {index} is not one of its {len(evidence)}")
    graded = graded_relevance(len(evidence), sets)
    n_sets = sum(1 for s in sets if s)
    pair = Pair(
        id=pair_id,
        split=split,
        sentences=tuple(evidence),
        summary=claim,
        document="\n".join(evidence),
        corpus="wice",
    )
    judgment = Judgment.of(graded, [g / n_sets if n_sets else 0.0 for g in graded])
    return pair, judgment, page_cluster(evidence)


def parse_wice_lines(payload: bytes, split: str, path: Path) -> ParsedSplit:
    """Pairs, judgments and clusters of a WiCE claim file's verified bytes, in file order."""
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{path}: not UTF-8 ({exc})") from exc
    parsed = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise DataError(f"{path}:{number}: not a JSON object ({exc})") from exc
        parsed.append(parse_claim(item, split, path, number))
    return ParsedSplit(
        tuple(p for p, _, _ in parsed), tuple(j for _, j, _ in parsed), tuple(c for _, _, c in parsed)
    )


@register_dataset
class WiCE(Dataset):
    """WiCE: Wikipedia claims and the sentences of the web page each cites, with alternative
    minimal sets of supporting sentences."""

    name = "wice"
    title = "WiCE"
    description = (
        "Evidence retrieval on WiCE (Kamoi et al., EMNLP 2023): rank the sentences of the page a "
        "Wikipedia claim cites by whether they support the claim."
    )
    citation = CITATION
    splits: ClassVar[tuple[SplitSpec, ...]] = (
        SplitSpec("wice_test", "WiCE test", 358, "wice", (TEST_FILE,), board=True),
        SplitSpec("wice_dev", "WiCE dev", 349, "wice", (DEV_FILE,)),
    )
    binary_threshold = 1
    max_graded = 128
    """The most supporting sets that hold one sentence in the pinned files (128, a wice_test
    claim; 120 in wice_dev)."""
    training_splits = {"wice_test": ("wice_dev",)}
    relevance_text = (
        "graded = number of WiCE's alternative minimal supporting sets holding the sentence (NDCG, "
        "linear gain, up to 128); binary = in at least one set (MAP). Claims with no supporting "
        "sentence are undefined and left out of the means."
    )
    human_agreement = False
    text_notice = (
        "Claims: sentences of Wikipedia articles (named in each claim's meta.claim_title), by "
        "Wikipedia contributors, licensed under CC BY-SA 4.0 "
        "(https://creativecommons.org/licenses/by-sa/4.0/); changes: extracted into the WiCE dataset "
        "(Kamoi et al., 2023). Evidence: web pages archived by Common Crawl, quoted for research. "
        "Annotations: WiCE, ODC-BY 1.0 (https://opendatacommons.org/licenses/by/1-0/)."
    )
    shared_documents_text = ""
    resampling_text = "claims citing the same page (the same evidence sentences) move together"

    def sources(self) -> dict[str, Source]:
        return {"wice": manifest_source("wice", ENV_VAR, DOWNLOAD_DIR)}

    def parse(self, spec: SplitSpec, files: dict[str, tuple[Path, bytes]]) -> ParsedSplit:
        path, payload = files[spec.files[0]]
        return parse_wice_lines(payload, spec.name, path)
