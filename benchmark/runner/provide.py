"""What a trained ranker is given: the labelled pairs an assignment of its protocol allows, and
training on them (the only path by which a label reaches a ranker)."""

from __future__ import annotations

from collections.abc import Sequence

from sourcesum.errors import RankerError, SourceSumError
from sourcesum.rankers.base import Ranker
from sourcesum.rankers.context import BaseScores, TrainingData
from sourcesum.runner.configs import Configuration
from sourcesum.runner.protocols import Assignment, protocol


def training_data(assignment: Assignment, bases: BaseScores | None) -> TrainingData:
    """The labelled pairs of ``assignment``, in order, with their bases' scores."""
    pairs, judgments, scores = [], [], []
    thresholds = {split.min_relevant for split, _ in assignment.training}
    if len(thresholds) != 1:
        raise RankerError(f"training on {assignment.trained_on}: the splits' binary thresholds differ")
    for split, positions in assignment.training:
        for i in positions:
            pairs.append(split.pairs[i])
            judgments.append(split.judgments[i])
            if bases is not None:
                scores.append(bases.of(split.name, split.pairs[i].id))
    return TrainingData(
        tuple(pairs),
        tuple(judgments),
        assignment.trained_on,
        thresholds.pop(),
        tuple(scores) if bases is not None else None,
    )


def train(ranker: Ranker, assignment: Assignment, bases: BaseScores | None) -> None:
    data = training_data(assignment, bases)
    try:
        ranker.train(data)
    except SourceSumError:
        raise
    except (Exception, SystemExit) as exc:  # a plugin's sys.exit() must not end the run silently
        raise RankerError(
            f"ranker {ranker.label} failed in train() on {', '.join(data.trained_on)}: {type(exc).__name__}: {exc}"
        ) from exc


def needed_splits(config: Configuration, scored: Sequence[str]) -> list[str]:
    """The splits whose base scores a run needs: the scored ones, then the protocol's training
    splits."""
    names = list(scored)
    if config.protocol is not None:
        for name in scored:
            names += protocol(config.protocol.name).training_splits(config.protocol, name)
    return list(dict.fromkeys(names))
