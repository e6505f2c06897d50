"""The score store: what rankers computed, kept as self-verifying entries.

* :mod:`~sourcesum.store.entry`: keys, :class:`ScoreEntry` (the score-row contract, verified on
  read) and the one merge rule of entries (:func:`merge_entries`);
* :mod:`~sourcesum.store.stores`: :class:`ScoreStore` (a folder of entries), :class:`StoreStack`
  (a writable store over read-only ones), :func:`open_stores`;
* :mod:`~sourcesum.store.merge`: ``sourcesum merge`` (stores into one);
* :mod:`~sourcesum.store.migrate`: ``sourcesum migrate`` (older formats);
* :mod:`~sourcesum.store.scorefiles`: score files produced elsewhere (``sourcesum evaluate``);
* :mod:`~sourcesum.store.published`: the paper's published outputs as in-memory entries.
"""

from sourcesum.store.entry import (
    FORMAT,
    ScoreEntry,
    agreed_libraries,
    config_id,
    entry_key,
    fit_problem,
    merge_entries,
    scores_sha256,
)
from sourcesum.store.migrate import migrate
from sourcesum.store.stores import ScoreStore, StoreStack, open_stores, read_entry, read_entry_memoised

__all__ = [
    "FORMAT",
    "ScoreEntry",
    "ScoreStore",
    "StoreStack",
    "agreed_libraries",
    "config_id",
    "entry_key",
    "fit_problem",
    "merge_entries",
    "migrate",
    "open_stores",
    "read_entry",
    "read_entry_memoised",
    "scores_sha256",
]
