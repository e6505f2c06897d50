"""Evaluate scores against relevance: the one per-pair primitive and split means.

:func:`evaluate` (``qrels``, ``run``, ``measures``) -> per-pair values is what every part of the
harness calls: split evaluation, the human-agreement table (one qrels row per held-out
annotator), the tie report (with ``tiebreak`` bounds) and supervised rankers' inner
cross-validation. :func:`evaluate_split` wraps it for a split and a ``pair id -> scores``
mapping, returning an :class:`Evaluation`.

Means are unweighted over the pairs of a split. A pair on which a measure is undefined (no
relevant sentence: possible in SourceSum's ``*_all`` splits) is left out of that measure's mean
and counted in ``undefined``; single-sentence pairs are scored like any other (any ranking of
one sentence is perfect when it is relevant).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd
from sourcesum.data import Split
from sourcesum.evaluation.measures import DEFAULT_MEASURES, Measure
from sourcesum.evaluation.metrics import Ranking, TieBreak
from sourcesum.evaluation.qrels import Qrels, Run

if TYPE_CHECKING:
    from sourcesum.util.memo import Record


def evaluate(
    qrels: Qrels, scores: np.ndarray, measures: Sequence[Measure], tiebreak: TieBreak = "groups"
) -> dict[Measure, np.ndarray]:
    """Per-row values of each measure for padded ``scores`` (rows aligned with ``qrels``, finite
    where ``qrels.mask``). Rankings that keep tie groups are shared by every measure; tie
    bounds (``worst``/``best``) are ranked once per relevance kind."""
    rankings: dict[str, Ranking] = {}
    out: dict[Measure, np.ndarray] = {}
    for measure in measures:
        kind = measure.relevance
        key = kind if tiebreak != "groups" else "shared"
        if key not in rankings:
            rankings[key] = Ranking.from_scores(scores, qrels.mask, tiebreak, qrels.relevance(kind))
        out[measure] = measure.compute(rankings[key], qrels.relevance(kind))
    return out


@dataclass
class Evaluation:
    """Per-pair values of some measures for one system (ranker or score field) on one split."""

    system: str
    split: str
    per_pair: pd.DataFrame
    measures: list[Measure]
    """The measures of ``per_pair``'s columns, in order."""
    nan_replaced: int = 0
    extra: dict[str, Any] = field(default_factory=dict)
    reasons: dict[Measure, dict[str, int]] = field(default_factory=dict)
    """Per measure, why it is undefined on some pairs: ``no relevant sentence``, ``constant
    relevance`` or ``constant scores`` (e.g. Spearman), with the number of pairs."""
    _means: dict[Measure, float] = field(default_factory=dict, repr=False, compare=False)

    def values(self, measure: Measure) -> np.ndarray:
        """Per-pair values of ``measure`` (NaN where undefined), in pair order."""
        values: np.ndarray = self.per_pair[measure.name].to_numpy()
        return values

    def mean(self, measure: Measure) -> float:
        """The split mean of ``measure`` over the pairs where it is defined (memoised)."""
        if measure not in self._means:
            values = self.values(measure)
            self._means[measure] = float(np.nanmean(values)) if np.isfinite(values).any() else float("nan")
        return self._means[measure]

    def summary(self, system_key: str = "ranker") -> dict[str, Any]:
        """The JSON record of this evaluation: system, split, example count, means."""
        record: dict[str, Any] = {system_key: self.system, "split": self.split}
        record["pairs"] = int(len(self.per_pair))
        undefined = {}
        for measure in self.measures:
            record[measure.json_key] = self.mean(measure)
            missing = int(self.per_pair[measure.name].isna().sum())
            if missing:
                undefined[measure.json_key] = missing
        if undefined:
            record["undefined"] = undefined
            record["undefined_reasons"] = {m.json_key: dict(r) for m, r in self.reasons.items() if r}
        if self.nan_replaced:
            record["nan_replaced"] = self.nan_replaced
        record.update(self.extra)
        return record


def undefined_reasons(qrels: Qrels, scores: np.ndarray, values: np.ndarray, relevance: str) -> dict[str, int]:
    """Why ``values`` (one measure, per pair) is NaN where it is: the pair has no relevant
    sentence, its relevance is constant, or its scores are constant."""
    out: dict[str, int] = {}
    rel = qrels.relevance(relevance)  # type: ignore[arg-type]
    for row in np.flatnonzero(~np.isfinite(values)):
        mask = qrels.mask[row]
        grades, marks = rel[row, mask], scores[row, mask]
        reason = (
            "no relevant sentence"
            if not grades.any()
            else "constant relevance"
            if np.all(grades == grades[0])
            else "constant scores"
            if np.all(marks == marks[0])
            else "undefined"
        )
        out[reason] = out.get(reason, 0) + 1
    return out


def evaluate_split(
    split: Split,
    scores: Mapping[str, Sequence[float]],
    system: str,
    measures: Sequence[Measure] = DEFAULT_MEASURES,
    tiebreak: TieBreak = "groups",
    source: str = "scores",
) -> Evaluation:
    """Per-pair values of ``measures`` for ``scores`` (pair id -> one score per sentence,
    checked by :class:`~sourcesum.evaluation.qrels.Run`) against the split's :class:`~sourcesum.evaluation.qrels.Qrels`."""
    qrels = Qrels.of_split(split)
    padded = Run.of_split(split, scores, source).values
    values = evaluate(qrels, padded, measures, tiebreak)
    frame = pd.DataFrame(
        {m.name: v for m, v in values.items()}, index=pd.Index([p.id for p in split], name="pair_id")
    )
    reasons = {
        m: undefined_reasons(qrels, padded, v, m.relevance)
        for m, v in values.items()
        if not np.isfinite(v).all()
    }
    return Evaluation(
        system=system, split=split.name, per_pair=frame, measures=list(measures), reasons=reasons
    )


@lru_cache(maxsize=1)
def _loaded_data_modules(loaded: int, last: str) -> frozenset[str]:
    """The imported ``sourcesum.data`` modules; the count of imported modules and the last one
    imported key the cache, so an import reruns the scan of ``sys.modules`` (thousands of
    names)."""
    import sys

    return frozenset(name for name in list(sys.modules) if name.startswith("sourcesum.data"))


def evaluation_code(split: Split, measures: Sequence[Measure], extra: Sequence[str] = ()) -> str:
    """Digest of the source that turns a split's files and scores into per-pair values: this
    module, the metrics, measures and qrels, every loaded ``sourcesum.data`` module, the split's
    dataset plugin, each measure's module, and the (imported) modules ``extra``."""
    import sys

    from sourcesum.data import dataset
    from sourcesum.util import memo

    modules = {
        __name__,
        "sourcesum.evaluation.metrics",
        "sourcesum.evaluation.measures",
        "sourcesum.evaluation.qrels",
        *extra,
    }
    modules |= _loaded_data_modules(len(sys.modules), next(reversed(sys.modules)))
    modules |= {type(dataset(split.dataset)).__module__, *(type(m).__module__ for m in measures)}
    return memo.code_digest(
        memo.module_files(m for m in modules if getattr(sys.modules.get(m), "__file__", None))
    )


def memoised_evaluation(
    split: Split,
    scores: Mapping[str, Sequence[float]],
    scores_checksum: str,
    system: str,
    measures: Sequence[Measure],
    source: str = "scores",
) -> Evaluation:
    """:func:`evaluate_split` (tie groups), answered from the memo (:mod:`sourcesum.util.memo`) when
    the same scores (``scores_checksum``, their sha256) were evaluated on the same split with
    the same measures and code (:func:`evaluation_code`)."""
    from sourcesum.util import memo

    names = [m.name for m in measures]
    pair_ids = [p.id for p in split]
    parts = [evaluation_code(split, measures), scores_checksum, split.name, split.sha256, names]

    def compute() -> Evaluation:
        return evaluate_split(split, scores, system, measures, source=source)

    def to_record(done: Evaluation) -> memo.Record:
        reasons = {m.name: r for m, r in done.reasons.items()}
        return frame_record(done.per_pair, names, {"reasons": reasons})

    def from_record(record: memo.Record) -> Evaluation:
        frame = frame_of_record(record, names, pair_ids)
        reasons = record.value.get("reasons")
        if (
            not isinstance(reasons, dict)
            or not set(reasons) <= set(names)
            or not all(
                isinstance(r, dict) and all(isinstance(k, str) and isinstance(n, int) for k, n in r.items())
                for r in reasons.values()
            )
        ):
            raise memo.MemoMismatch("not an evaluation's reasons")
        by_name = {m.name: m for m in measures}
        return Evaluation(
            system=system,
            split=split.name,
            per_pair=frame,
            measures=list(measures),
            reasons={by_name[name]: counts for name, counts in reasons.items()},
        )

    return memo.memoised("evaluations", parts, compute, to_record, from_record)


def frame_record(frame: pd.DataFrame, names: Sequence[str], value: dict[str, Any] | None = None) -> Record:
    """A memo record (:class:`sourcesum.util.memo.Record`) of a per-pair frame's columns ``names``:
    one float64 ``(pairs, columns)`` array, with the pair ids and column names beside ``value``."""
    from sourcesum.util.memo import Record

    values = frame[list(names)].to_numpy(dtype=np.float64) if names else np.empty((len(frame), 0))
    meta = {**(value or {}), "columns": list(names), "pairs": [str(p) for p in frame.index]}
    return Record(meta, {"values": np.ascontiguousarray(values)})


def frame_of_record(record: Record, names: Sequence[str], pair_ids: Sequence[str]) -> pd.DataFrame:
    """The frame :func:`frame_record` stored, checked to hold exactly columns ``names`` over
    ``pair_ids`` (else :class:`~sourcesum.util.memo.MemoMismatch`)."""
    from sourcesum.util.memo import MemoMismatch

    values, meta = record.arrays.get("values"), record.value
    if (
        values is None
        or values.dtype != np.float64
        or values.shape != (len(pair_ids), len(names))
        or not isinstance(meta, dict)
        or meta.get("columns") != list(names)
        or meta.get("pairs") != list(pair_ids)
    ):
        raise MemoMismatch("not a per-pair table of these pairs and columns")
    return pd.DataFrame(
        {name: values[:, i] for i, name in enumerate(names)}, index=pd.Index(list(pair_ids), name="pair_id")
    )
