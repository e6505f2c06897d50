"""Error types the CLI turns into one-line messages.

Every user-facing failure raises a :class:`SourceSumError` (or a subclass) whose message says
what is wrong and what to do; the CLI prints it on one line and exits non-zero.
"""

from __future__ import annotations


class SourceSumError(Exception):
    """Base class for every error meant for the user rather than a traceback."""


class DataError(SourceSumError):
    """Missing, corrupt or malformed SourceSum data (names the file and pair)."""


class ScoreFileError(SourceSumError):
    """A score file that does not match its split (names the file and pair)."""


class StoreConflict(ScoreFileError):
    """Entries of one key that disagree (store layers, concurrent writers, merged stores):
    names both origins and what differs; every reader refuses it, none drops it."""


class RankerError(SourceSumError):
    """A ranker that failed, or returned unusable scores (names the ranker and pair)."""


class MissingDependencyError(SourceSumError):
    """A ranker whose libraries are not installed (names them and the ``pip install`` to run)."""


class UnknownNameError(SourceSumError):
    """An unknown ranker, split or measure name."""


class ParameterError(SourceSumError):
    """A ranker parameter that is unknown, unparsable or out of range (names it and what it
    accepts)."""


class LabelAccessError(RankerError):
    """A ranker read a label (votes, relevance) from its pair inputs: rankers see inputs only.
    The runner re-raises it naming the ranker; rankers that read labels declare a training
    protocol instead (see :mod:`sourcesum.runner.protocols`)."""
