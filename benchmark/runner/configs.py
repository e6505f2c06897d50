"""Ranker configurations as values: name and canonical parameters, with their label, bases,
training protocol and score-store keys, all computed without instantiating the ranker.

The runner, the board and the staleness checks identify a row by its :class:`Configuration`,
so rendering a board never builds a ranker (nor reads a model, a prompt file or a split).

**Key version** (what the store keys an entry with, besides ranker, parameters and data):
the ranker's ``version``, extended for configurations that read more than their own inputs
with ``+`` and a digest of everything else their scores depend on: every base's name and key
version (in the declared order), then what the training protocol reads (e.g. ``cross-corpus``:
the sha256 of each board split of the dataset it trains on). A new base version or new
training data therefore makes a new key, and a stale entry is never reused.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from sourcesum.errors import ParameterError
from sourcesum.rankers.base import RANKERS, Ranker, create_ranker
from sourcesum.rankers.context import ProtocolSpec
from sourcesum.store.entry import config_id, entry_key
from sourcesum.util.hashing import digest


@dataclass(frozen=True, eq=False)
class Configuration:
    """One ranker configuration: ``ranker`` and its complete canonical ``params``."""

    ranker: str
    params: dict[str, Any]

    @classmethod
    def of(cls, ranker: str, params: Mapping[str, Any] | None = None) -> Configuration:
        """The configuration of ``ranker`` with ``params`` (text or Python values; defaults
        filled in, canonicalised by the ranker class)."""
        ranker_class = RANKERS.get(ranker)
        return cls(ranker_class.name, ranker_class.full_params(params or {}))

    @classmethod
    def of_ranker(cls, ranker: Ranker) -> Configuration:
        """The configuration of an instance, read from its own class (registered or not: the
        runner scores any :class:`Ranker` instance)."""
        config = cls(ranker.name, ranker.get_params())
        config.__dict__["ranker_class"] = type(ranker)  # what the cached property would hold
        return config

    @cached_property
    def ranker_class(self) -> type[Ranker]:
        return RANKERS.get(self.ranker)

    @cached_property
    def label(self) -> str:
        """The row label: name plus non-default parameters (``random(seed=1)``)."""
        return self.ranker_class.label_for(self.params)

    @property
    def reference(self) -> bool:
        return self.ranker_class.reference

    @cached_property
    def bases(self) -> tuple[Configuration, ...]:
        """The configurations whose scores this one is built from (declared order)."""
        return tuple(
            Configuration.of(name, params)
            for name, params in self.ranker_class.base_configurations(self.params)
        )

    @cached_property
    def protocol(self) -> ProtocolSpec | None:
        """The training protocol under which it reads labels (None: it never does)."""
        spec = self.ranker_class.training_protocol(self.params)
        if spec is not None:
            from sourcesum.runner.protocols import protocol

            if protocol(spec.name).reference_only and not self.reference:
                raise ParameterError(
                    f"ranker {self.ranker}: protocol {spec.name!r} reads the labels of the pairs it "
                    "scores, which only reference rows (reference = True) may"
                )
        return spec

    def outside_source(self, split: str) -> str | None:
        """The dataset whose board pairs, none of ``split``'s corpus, it is fitted on when it
        scores ``split`` (:meth:`~sourcesum.runner.protocols.Protocol.outside_source`); None when
        it is not trained, or may be fitted on pairs of the scored corpus."""
        if self.protocol is None:
            return None
        from sourcesum.runner.protocols import protocol

        return protocol(self.protocol.name).outside_source(split)

    def key_version(self, split: str) -> str:
        """The version its entries on ``split`` are keyed with (module docstring)."""
        inputs: list[Any] = [[b.ranker, b.key_version(split)] for b in self.bases]
        if self.protocol is not None:
            from sourcesum.runner.protocols import protocol

            inputs += protocol(self.protocol.name).key_inputs(self.protocol, split)
        version = self.ranker_class.version
        return f"{version}+{digest(inputs)}" if self.bases or inputs else version

    def entry_key(self, split: str, data_sha256: str) -> str:
        return entry_key(self.ranker, self.key_version(split), self.params, data_sha256)

    def config_id(self, split: str) -> str:
        return config_id(self.ranker, self.key_version(split), self.params)

    def create(self, **runtime: Any) -> Ranker:
        """An instance (with optional runtime parameters such as ``device``)."""
        return create_ranker(self.ranker, **self.params, **runtime)

    def run_command(
        self, split: str, scores_dir: str | None = None, given: Mapping[str, Any] | None = None
    ) -> str:
        """The ``sourcesum run`` line that computes this configuration's entry on ``split``
        (``given``: the parameters as the user wrote them; default: those off their defaults)."""
        import json

        shown = given if given is not None else self.ranker_class.changed_params_of(self.params, False)
        args = "".join(
            f" -p {self.ranker}.{k}={v if isinstance(v, str) else json.dumps(v)}"
            for k, v in sorted(shown.items())
        )
        where = f" --scores-dir {scores_dir}" if scores_dir else ""
        return f"sourcesum run --ranker {self.ranker} --split {split}{args}{where}"
