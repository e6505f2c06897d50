"""What a trained ranker is given: the labelled pairs an assignment of its protocol allows, and
training on them (the only path by which a label reaches a ranker)."""

from __future__ import annotations

from collections.abc import Sequence

from sourcesum.errors import LabelAccessError, RankerError, SourceSumError
from sourcesum.rankers.base import Ranker
from sourcesum.rankers.context import BaseScores, TrainingData, WithheldJudgments
from sourcesum.runner.configs import Configuration
from sourcesum.runner.protocols import Assignment, protocol


def training_data(assignment: Assignment, bases: BaseScores | None, votes: bool = True) -> TrainingData:
    """The pairs of ``assignment``, in order, with their bases' scores and, unless ``votes`` is
    False (the protocol withholds them), their judgments."""
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
        tuple(judgments) if votes else WithheldJudgments(assignment.trained_on),
        assignment.trained_on,
        thresholds.pop(),
        tuple(scores) if bases is not None else None,
    )


def train(ranker: Ranker, assignment: Assignment, bases: BaseScores | None, votes: bool = True) -> None:
    """``ranker.train`` on the pairs of ``assignment`` (their votes withheld unless ``votes``)."""
    data = training_data(assignment, bases, votes)
    try:
        ranker.train(data)
    except LabelAccessError as exc:
        raise LabelAccessError(f"ranker {ranker.label} read a withheld vote in train(): {exc}") from exc
    except SourceSumError:
        raise
    except (Exception, SystemExit) as exc:  # a plugin's sys.exit() must not end the run silently
        raise RankerError(
            f"ranker {ranker.label} failed in train() on {', '.join(data.trained_on)}: {type(exc).__name__}: {exc}"
        ) from exc


def needed_splits(config: Configuration, scored: Sequence[str]) -> list[str]:
    """The splits whose base scores a run needs: the scored ones (unless the ranker reads its
    bases on training pairs only), then the protocol's training splits."""
    names = list(scored) if config.ranker_class.bases_on_scored_splits else []
    if config.protocol is not None:
        for name in scored:
            names += protocol(config.protocol.name).training_splits(config.protocol, name)
    return list(dict.fromkeys(names))
