"""``sourcesum explain``: what a trained ranker fits to score a split."""

from __future__ import annotations

from sourcesum.data import Split
from sourcesum.errors import SourceSumError
from sourcesum.rankers.base import Ranker
from sourcesum.runner.configs import Configuration
from sourcesum.runner.protocols import protocol
from sourcesum.runner.provide import needed_splits, train
from sourcesum.runner.run import base_scores
from sourcesum.store.stores import ScoreStore, StoreStack


def explain(ranker: Ranker, split: Split, store: ScoreStore | StoreStack) -> list[dict[str, object]]:
    """What a trained ranker fits to score ``split``: for each assignment of its protocol (in
    order), ``ranker.describe_model()`` after training on it. Bases are read or computed."""
    config = Configuration.of_ranker(ranker)
    describe = getattr(ranker, "describe_model", None)
    if config.protocol is None or describe is None:
        raise SourceSumError(
            f"ranker {ranker.name!r} fits no model to explain (try `sourcesum explain learned`)"
        )
    ranker.use_workspace(store.root)
    bases = base_scores(config, needed_splits(config, [split.name]), store) if config.bases else None
    if bases is not None:
        ranker.use_bases(bases)  # type: ignore[attr-defined]
    out: list[dict[str, object]] = []
    for assignment in protocol(config.protocol.name).assign(config.protocol, split, split.pairs):
        train(ranker, assignment, bases, config.protocol.votes)
        described = describe()
        if described not in out:
            out.append(described)
    return out
