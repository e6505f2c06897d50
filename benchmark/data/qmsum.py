"""QMSum evidence (QMSum_SummaryEvidence on QMSum): which transcript sentences support a sentence
of a query-focused meeting summary.

Two sources, pinned by commit and sha256 in ``data/manifest.json``: ``qmsum-evidence``
(``etri/QMSum_SummaryEvidence``, MIT: per summary sentence, the transcript sentences annotated as
central, ``CES``, or peripheral, ``PES``, evidence) and ``qmsum`` (``Yale-LILY/QMSum``, MIT: the
meetings' transcripts, queries and relevant text spans). Local copies: ``$SOURCESUM_QMSUM_DIR``,
a folder laid out like ``../shared/qmsum-evidence`` (``evidence/<split>/<meeting>.json`` and
``qmsum/data/ALL/<split>/<meeting>.json``), else ``data/qmsum/`` (same layout), else the pinned
downloads. Splits ``qmsum_test`` (board), ``qmsum_val`` and ``qmsum_train``: the *specific*
queries of the meetings that have an evidence file. Data card: ``docs/datasets/qmsum.md``.

**A pair per summary sentence** (``<meeting>_q<query>_s<sentence>``, ``query`` = position among
the meeting's specific queries): the summary is the sentence (``tokenized_answer``), the query
is ``Pair.query``, the candidates are the sentences of the turns inside the query's own
``relevant_text_span`` (QMSum's span, never derived from the evidence; several spans are
concatenated in the order listed, a turn listed twice is taken once, empty turns are skipped),
split by :mod:`sourcesum.data.splitting`, without the speaker (which the transcript keeps apart;
``Pair`` has no per-sentence metadata, so the speaker is only in the document). The document is
the spans' turns, one ``speaker: content`` line each: every summary sentence of a query shares
it (``document_key``), so rankers that fit on a split's documents (tfidf, lexrank) see each span
once.

**Labels**: evidence aligned to candidates by :mod:`~sourcesum.data.qmsum_alignment`: graded
``CES = 2``, ``PES = 1``, none ``0``; binary = CES; soft = graded / 2.

**Resampling cluster**: the meeting (its pairs move together), kept apart from the document.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any, ClassVar

from sourcesum.data.datasets import Dataset, ParsedSplit, SplitSpec, register_dataset
from sourcesum.data.qmsum_alignment import (
    BINARY_MIN,
    EVIDENCE_PREFIX,
    TRANSCRIPT_PREFIX,
    Tally,
    parse_files,
)
from sourcesum.data.sources import PinnedFile, Source, manifest, manifest_source, read_verified

ENV_VAR = "SOURCESUM_QMSUM_DIR"
DOWNLOAD_DIR = "qmsum"
EVIDENCE_SOURCE = "qmsum-evidence"
TRANSCRIPT_SOURCE = "qmsum"

CITATION = """@inproceedings{zhong2021qmsum,
  title     = {{QMS}um: {A} {N}ew {B}enchmark for {Q}uery-based {M}ulti-domain {M}eeting {S}ummarization},
  author    = {Zhong, Ming and Yin, Da and Yu, Tao and Zaidi, Ahmad and Mutuma, Mutethia and Jha, Rahul
               and Hassan Awadallah, Ahmed and Celikyilmaz, Asli and Liu, Yang and Qiu, Xipeng
               and Radev, Dragomir},
  booktitle = {North American Association for Computational Linguistics (NAACL)},
  year      = {2021}
}
@misc{etri2023qmsumsummaryevidence,
  title        = {{QMSum\\_SummaryEvidence}: evidence sentences of {QMSum} summaries},
  author       = {{ETRI}},
  year         = {2023},
  howpublished = {\\url{https://github.com/etri/QMSum_SummaryEvidence}},
  note         = {commit 5847d36a12a8b48a69ac7cae4c5c34358cc0e1d3}
}"""


def _meetings(folder: str) -> tuple[str, ...]:
    """The meeting file names of QMSum split ``folder`` that have an evidence file (manifest)."""
    files = manifest()["sources"][EVIDENCE_SOURCE]["files"]
    prefix = f"{EVIDENCE_PREFIX}{folder}/"
    return tuple(sorted(name[len(prefix) :] for name in files if name.startswith(prefix)))


def _split(name: str, title: str, pairs: int, folder: str, board: bool = False) -> SplitSpec:
    meetings = _meetings(folder)
    files = tuple(f"{EVIDENCE_PREFIX}{folder}/{m}" for m in meetings) + tuple(
        f"{TRANSCRIPT_PREFIX}{folder}/{m}" for m in meetings
    )
    return SplitSpec(name, title, pairs, "qmsum", files, board=board)


# -- one meeting --------------------------------------------------------------------------------


@register_dataset
class QMSumEvidence(Dataset):
    """QMSum evidence: meeting transcripts, query-focused summary sentences and the transcript
    sentences annotated as their central (CES) or peripheral (PES) evidence."""

    name = "qmsum"
    title = "QMSum evidence"
    description = (
        "Evidence sentence detection on QMSum (Zhong et al., NAACL 2021) with "
        "QMSum_SummaryEvidence's CES/PES labels: rank the sentences of a query's relevant "
        "transcript span by whether they support a sentence of the query's summary."
    )
    citation = CITATION
    splits: ClassVar[tuple[SplitSpec, ...]] = (
        _split("qmsum_test", "QMSum test", 721, "test", board=True),
        _split("qmsum_val", "QMSum val", 740, "val"),
        _split("qmsum_train", "QMSum train", 3548, "train"),
    )
    binary_threshold = BINARY_MIN
    max_graded = 2
    """CES = 2, the highest label."""
    training_splits = {"qmsum_test": ("qmsum_train",)}
    relevance_text = (
        "graded = the strongest evidence type among the annotated sentences a candidate overlaps "
        "(CES = 2, PES = 1, else 0; NDCG); binary = CES (MAP). Evidence outside the query's "
        "relevant span cannot be ranked; pairs left with no relevant candidate are undefined."
    )
    human_agreement = False
    text_notice = (
        "Meeting transcripts and summaries: QMSum (Zhong et al., 2021), MIT License; evidence "
        "annotations: QMSum_SummaryEvidence (ETRI), MIT License."
    )
    shared_documents_text = ""
    resampling_text = "the summary sentences of a meeting (all its queries) move together"

    def sources(self) -> dict[str, Source]:
        return {
            EVIDENCE_SOURCE: manifest_source(EVIDENCE_SOURCE, ENV_VAR, DOWNLOAD_DIR),
            TRANSCRIPT_SOURCE: manifest_source(TRANSCRIPT_SOURCE, ENV_VAR, DOWNLOAD_DIR),
        }

    def pinned_files(self, spec: SplitSpec) -> list[PinnedFile]:
        """The split's evidence files (source ``qmsum-evidence``) and transcripts (``qmsum``)."""
        sources = self.sources()
        return [
            sources[EVIDENCE_SOURCE if f.startswith(EVIDENCE_PREFIX) else TRANSCRIPT_SOURCE].file(
                f, split=spec.name
            )
            for f in spec.files
        ]

    def parse(self, spec: SplitSpec, files: dict[str, tuple[Path, bytes]]) -> ParsedSplit:
        return parse_files(spec, files, Tally())

    def label_notes(self, spec: SplitSpec) -> str:
        """The evidence that cannot be ranked and how the rest matched (:func:`matching_report`)."""
        evidence = matching_report(spec.name)["evidence"]
        return (
            f"In {spec.title}, {evidence['outside_span']:,} of the {evidence['total']:,} evidence "
            f"sentences ({evidence['outside_span_ces']:,} of them CES) lie outside the query's "
            f"relevant span and cannot be ranked; {evidence['one_candidate']:,} of the "
            f"{evidence['inside_span']:,} inside it ({evidence['one_candidate_share']:.1%}) overlap "
            f"exactly one candidate, {evidence['several_candidates']:,} several"
            + (f", {evidence['no_candidate']:,} none" if evidence["no_candidate"] else "")
            + (
                f"; {evidence['not_located']:,} are not found in their turn"
                if evidence["not_located"]
                else ""
            )
            + "."
        )


def matching_report(split: str = "qmsum_test") -> dict[str, Any]:
    """How QMSum's evidence maps onto the candidates of ``split`` (its verified files, re-read):
    evidence sentences inside and outside the relevant spans, matched to exactly one candidate
    or to several, and the pairs left without a relevant (or CES) candidate."""
    from sourcesum.util import memo

    ds = QMSumEvidence()
    spec = ds.split_spec(split)

    def compute() -> dict[str, Any]:
        files = {p.file: read_verified(p) for p in ds.pinned_files(spec)}
        tally = Tally()
        parse_files(spec, files, tally)
        return _report(split, tally)

    def from_record(record: memo.Record) -> dict[str, Any]:
        if not isinstance(record.value, dict) or record.value.get("split") != split:
            raise memo.MemoMismatch("not a QMSum matching report")
        return dict(record.value)

    code = memo.code_digest(
        memo.module_files([__name__, "sourcesum.data.qmsum_alignment", "sourcesum.data.splitting"])
    )
    parts = [code, split, ds.data_sha256(spec)]
    return memo.memoised("qmsum-matching", parts, compute, lambda report: memo.Record(report), from_record)


def _report(split: str, tally: Tally) -> dict[str, Any]:
    inside = tally.evidence - tally.outside - tally.not_located
    return {
        "split": split,
        "meetings": tally.meetings,
        "queries": tally.queries,
        "pairs": tally.pairs,
        "candidates": {
            "total": sum(tally.candidates),
            "median": statistics.median(tally.candidates),
            "min": min(tally.candidates),
            "max": max(tally.candidates),
            "labels": {"CES": tally.labels[2], "PES": tally.labels[1], "none": tally.labels[0]},
        },
        "evidence": {
            "total": tally.evidence,
            "ces": tally.ces,
            "not_located": tally.not_located,
            "repeated_in_turn": tally.repeated_in_turn,
            "outside_span": tally.outside,
            "outside_span_ces": tally.outside_ces,
            "inside_span": inside,
            "one_candidate": tally.one_candidate,
            "several_candidates": tally.several_candidates,
            "no_candidate": tally.no_candidate,
            "one_candidate_share": tally.one_candidate / inside if inside else None,
        },
        "undefined": {
            "no_evidence": tally.pairs_no_evidence,
            "all_evidence_outside_span": tally.pairs_all_outside,
            "no_relevant_candidate": tally.pairs_no_relevant,
            "no_ces_candidate": tally.pairs_no_ces,
        },
    }
