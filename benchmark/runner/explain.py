"""``sourcesum explain``: what a trained ranker fits to score a split."""

from __future__ import annotations

from sourcesum.data import Split
from sourcesum.errors import SourceSumError
from sourcesum.rankers.base import Ranker, stores_fit
from sourcesum.rankers.context import BaseScores
from sourcesum.runner.configs import Configuration
from sourcesum.runner.protocols import protocol
from sourcesum.runner.provide import needed_splits, train
from sourcesum.runner.run import base_scores, restore_stored_fit
from sourcesum.store.stores import ScoreStore, StoreStack


def explain(ranker: Ranker, split: Split, store: ScoreStore | StoreStack) -> list[dict[str, object]]:
    """What a trained ranker fits to score ``split``: for each assignment of its protocol (in
    order), ``ranker.describe_model()`` after training on it. For a ranker that stores its fits,
    the fit the split's entry stores is restored instead, and ``fit`` says which:
    ``stored`` (the weights that scored the split), ``refitted`` (an entry without that fit: its
    scores may come from weights that differ by float noise) or ``new`` (no entry yet). Bases
    are read or computed only when a fit is computed."""
    config = Configuration.of_ranker(ranker)
    describe = getattr(ranker, "describe_model", None)
    if config.protocol is None or describe is None:
        raise SourceSumError(
            f"ranker {ranker.name!r} fits no model to explain (try `sourcesum explain learned`)"
        )
    ranker.use_workspace(store.root)
    entry = (
        store.load(config.ranker, split.name, config.entry_key(split.name, split.sha256))
        if stores_fit(ranker)
        else None
    )
    bases: BaseScores | None = None
    out: list[dict[str, object]] = []
    for assignment in protocol(config.protocol.name).assign(config.protocol, split, split.pairs):
        if restore_stored_fit(ranker, entry, assignment):
            fit = "stored"
        else:
            if config.bases and bases is None:
                bases = base_scores(config, needed_splits(config, [split.name]), store)
                ranker.use_bases(bases)  # type: ignore[attr-defined]
            train(ranker, assignment, bases, config.protocol.votes)
            fit = "new" if entry is None else "refitted"
        described = {**describe(), **({"fit": fit} if stores_fit(ranker) else {})}
        if described not in out:
            out.append(described)
    return out
