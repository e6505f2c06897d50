"""Probes of an LM's hidden states: which layer knows which sentence a summary came from?

As Zhou et al. (2026) probe what matters to an LLM, a ``probe`` pools each document sentence's
hidden states at every layer of a causal LM (:mod:`~sourcesum.rankers.lm.hidden_states`) and
fits a probe on one layer (or all of them) to predict the share of annotators who voted the
sentence a source (:mod:`~sourcesum.rankers.lm.probe_models`). It learns only through the
harness's training protocols (``protocol``, as ``learned``), so it never reads the votes of a
pair it scores.

Parameters (all in the key): ``mode`` (``blind``: the document alone, one pass per document,
so every summary of a document gets the same ranking; ``conditioned``: the summary first, then
the document, one pass per pair), ``layer`` (``0`` = the embeddings ... ``L`` = the last block
after the final norm, ``all`` = every layer concatenated, ``cv`` = chosen by cross-validation
inside the training pairs), ``pool`` (``mean`` over the sentence's tokens, or its ``last``
token), ``probe`` (``linear``: learned's logistic fit on the vote share; ``mlp``: Zhou et al.'s
MLP), ``weights`` (``pretrained``, or ``random``: the same architecture re-initialised from its
config with seed :data:`RANDOM_INIT_SEED`, the control), ``C`` (linear; None = chosen by inner
CV), ``folds`` and ``seed`` (the kfold protocol's and the inner CV's folds; the MLP's seed),
plus the LM options (``model``, ``dtype``, ``overflow``...).

Pooled states are cached per (model weights, ``weights``, ``mode``, ``pool``, input tokens, code
and library versions) in the memo (float16, sealed by the user: :mod:`~sourcesum.rankers.lm.state_cache`), so a sweep over layers, probes and
protocols costs one LM pass per document (blind) or pair (conditioned). With ``overflow=ties``, a
pair whose input exceeds the model's window scores all ties and is left out of training data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from sourcesum.data.pairs import Pair
from sourcesum.errors import ParameterError, RankerError
from sourcesum.params import Param
from sourcesum.rankers.base import register
from sourcesum.rankers.context import LEARNABLE_PROTOCOLS, ProtocolSpec, TrainingData
from sourcesum.rankers.learned import DEFAULT_FOLDS
from sourcesum.rankers.lm.base import LMRanker
from sourcesum.rankers.lm.hidden_states import MODES, POOLS
from sourcesum.rankers.lm.inputs import WindowOverflow, check_length
from sourcesum.util.hashing import sha256_hex

if TYPE_CHECKING:
    from sourcesum.rankers.lm.inputs import Context

PROBES = ("linear", "mlp")
WEIGHTS = ("pretrained", "random")
RANDOM_INIT_SEED = 0
"""Seed of ``weights=random``'s re-initialisation (fixed: the control is one model)."""


class StatesMemo:
    """Pooled states used in this process, by the digest of their cache key, the most recently
    used kept within ``limit`` bytes (a sweep over layers and protocols reads every state many
    times)."""

    def __init__(self, limit: int = 2 << 30):
        from collections import OrderedDict

        self.limit, self.size = limit, 0
        self._arrays: OrderedDict[str, np.ndarray] = OrderedDict()

    def get(self, name: str) -> np.ndarray | None:
        array = self._arrays.get(name)
        if array is not None:
            self._arrays.move_to_end(name)
        return array

    def put(self, name: str, array: np.ndarray) -> None:
        if name in self._arrays or array.nbytes > self.limit:
            return
        self._arrays[name] = array
        self.size += array.nbytes
        while self.size > self.limit:
            _, dropped = self._arrays.popitem(last=False)
            self.size -= dropped.nbytes

    def clear(self) -> None:
        self._arrays.clear()
        self.size = 0


_MEMO = StatesMemo()

_TRAINED: dict[str, dict[str, Any]] = {}
"""Probes fitted in this process, by :meth:`ProbeRanker.training_key` (the two splits of a
corpus share their cross-corpus probe)."""


def parse_layer(value: Any, where: str = "probe.layer") -> str:
    """``layer`` in canonical form: ``all``, ``cv`` or a layer index (text without sign or
    leading zeros); an integer is taken as its index."""
    text = str(value).strip().lower() if isinstance(value, (str, int)) and not isinstance(value, bool) else ""
    if text in ("all", "cv"):
        return text
    if text.isascii() and text.isdigit():
        return str(int(text))
    raise ParameterError(
        f"parameter {where}={value!r}: expected a layer index (0 = embeddings ... L), all or cv"
    )


class LayerParam(Param):
    """The ``layer`` parameter: an index (text or integer), ``all`` or ``cv``, kept as text."""

    def __init__(self) -> None:
        super().__init__(
            str, "layer index (0 = embeddings ... L), all (concatenated) or cv (chosen by inner CV)"
        )

    @property
    def accepts(self) -> str:
        return "a layer index (0 = embeddings ... L), all or cv"

    def coerce(self, value: Any, where: str) -> Any:
        return parse_layer(value, where)


@register
class ProbeRanker(LMRanker):
    """A probe on an LM's pooled hidden states, fitted on the votes under a training protocol."""

    name = "probe"
    version = "1"
    reproduction_tolerance = 2e-3
    """``learned``'s, whose fit the linear probe is: on one machine a configuration reproduces bit
    for bit (the tests recompute states and fits); another CPU rounds the float32 pass's sums
    differently, which can move a float16 state by one unit in its last place, and the fit moves
    with it."""
    label_params = ("model", "mode", "layer", "protocol")  # type: ignore[assignment]  # LMRanker's is inferred as one name
    uses_template = False
    server_refusal = "it reads the model's hidden states, which a server's completions do not return"
    libraries = ("torch", "transformers", "gguf", "scikit-learn")  # type: ignore[assignment]
    board_note = (
        "`probe` fits a logistic regression (learned's fit: the vote share as soft labels, L2, C chosen "
        "by cross-validation inside the training pairs) on one layer's hidden states of "
        "SmolLM2-135M-Instruct, mean-pooled over each sentence's tokens, under the protocol in its label, "
        "never on the pairs it scores. `mode=blind` reads the document alone (every summary of a "
        "document gets the same ranking: what the model finds salient); `mode=conditioned` reads the "
        "summary, then the document. `layer=cv`: the layer is chosen by cross-validation inside the "
        "training pairs (docs/probe-layers.md shows every layer)."
    )
    param_specs = {
        **LMRanker.param_specs,
        "mode": Param(
            str, "blind: the document alone; conditioned: the summary, then the document", choices=MODES
        ),
        "layer": LayerParam(),
        "pool": Param(str, "a sentence's state: mean over its tokens, or its last token", choices=POOLS),
        "probe": Param(
            str, "linear (learned's logistic fit on the vote share) or mlp (Zhou et al.'s)", choices=PROBES
        ),
        "weights": Param(
            str,
            "pretrained, or random (re-initialised from the config, seed 0: the control)",
            choices=WEIGHTS,
        ),
        "protocol": Param(
            str, "training protocol, as learned's", registry=LEARNABLE_PROTOCOLS, training_protocol=True
        ),
        "C": Param(
            float,
            "linear probe's inverse regularisation; none = chosen by inner CV from 0.01, 0.1, 1, 10",
            min=1e-6,
            max=1e4,
            optional=True,
        ),
        "folds": Param(
            int, "folds of the kfold protocol and of the inner CV (grouped by document)", min=2, max=100
        ),
        "seed": Param(int, "seed of the fold assignment and of the MLP", min=0, max=2**32 - 1),
    }

    def __init__(
        self,
        mode: str = "blind",
        layer: str = "cv",
        pool: str = "mean",
        probe: str = "linear",
        weights: str = "pretrained",
        protocol: str = "cross-corpus",
        C: float | None = None,
        folds: int = DEFAULT_FOLDS,
        seed: int = 0,
        **options: Any,
    ):
        self.mode, self.pool, self.probe, self.weights, self.protocol = mode, pool, probe, weights, protocol
        self.C, self.folds, self.seed = C, folds, seed
        self.layer = self.checked_layer(layer, probe, C)
        super().__init__(**options)
        self._fitted: dict[str, Any] | None = None
        self._skipped_training = 0
        self._identity: dict[str, Any] | None = None

    @classmethod
    def checked_layer(cls, layer: str, probe: str, C: float | None) -> str:
        """``layer`` in canonical form; ``C`` and ``layer=cv`` are for the linear probe only."""
        if probe == "mlp" and C is not None:
            raise ParameterError(f"{cls.name}.C applies to probe=linear only")
        canonical = parse_layer(layer)
        if probe == "mlp" and canonical == "cv":
            raise ParameterError(
                f"{cls.name}.layer=cv chooses the layer with the linear probe; give probe=mlp a layer"
            )
        return canonical

    @classmethod
    def canonicalize(cls, params: dict[str, Any], runtime: Mapping[str, Any]) -> dict[str, Any]:
        """:meth:`checked_layer`, then the LM options (:meth:`LMRanker.canonicalize`)."""
        out = {**params, "layer": cls.checked_layer(params["layer"], params["probe"], params["C"])}
        return super().canonicalize(out, runtime)

    @classmethod
    def training_protocol(cls, params: Mapping[str, Any]) -> ProtocolSpec:
        return ProtocolSpec(str(params["protocol"]), {"folds": params["folds"], "seed": params["seed"]})

    # -- hidden states ------------------------------------------------------------------------------
    def states_model(self) -> Any:
        """The model whose states are read: the loaded one, or its random twin."""
        from sourcesum.rankers.lm.hidden_states import random_twin

        model = self.lm().model
        if getattr(model.config, "is_encoder_decoder", False):
            raise RankerError(f"ranker {self.name} reads causal LMs only; {self.model} is encoder-decoder")
        return model if self.weights == "pretrained" else random_twin(model, RANDOM_INIT_SEED, self.matmul)

    def states_identity(self) -> dict[str, Any]:
        """What every pooled state of this configuration depends on besides its input: the
        weights (:meth:`provenance`'s identity, or for weights no file names, such as in-memory
        models, the sha256 of the loaded parameters), ``weights``, precision, kernels, device,
        torch and transformers versions, ``mode`` and ``pool``."""
        if self._identity is None:
            from sourcesum.rankers.lm.hidden_states import weights_digest
            from sourcesum.util.versions import installed_version

            identity = self.provenance().get("weights", "")
            if not identity or "unverified" in identity:
                identity = f"{self.model}: parameters sha256 {weights_digest(self.lm().model)}"
            self._identity = {
                "model": identity,
                "weights": self.weights
                if self.weights == "pretrained"
                else f"random, seed {RANDOM_INIT_SEED}",
                "dtype": self.dtype,
                "matmul": self.matmul,
                "device": self.lm().device,
                "libraries": {name: installed_version(name) for name in ("torch", "transformers")},
                "mode": self.mode,
                "pool": self.pool,
            }
        return self._identity

    def state_key(self, context: Context) -> dict[str, Any]:
        """The cache key of one input's pooled states: :meth:`states_identity` and the input's
        token ids (head and sentence segments)."""
        tokens = sha256_hex([list(context.head), [list(s) for s in context.segments]])
        return {**self.states_identity(), "tokens": tokens}

    def pair_states(self, pairs: Sequence[Pair]) -> list[np.ndarray]:
        """``(L + 1, n_sentences, d)`` float16 pooled states of each pair, from the cache or one
        pass each (blind: one per distinct document), kept in this process's memo; :class:`WindowOverflow`
        naming the first pair whose input exceeds the model's window."""
        from sourcesum.rankers.lm import state_cache
        from sourcesum.rankers.lm.hidden_states import hidden_size, layout, n_states, pooled_states

        lm = self.lm()
        limit = getattr(lm.model.config, "max_position_embeddings", None)
        done: dict[str, np.ndarray] = {}
        out = []
        for pair in pairs:
            context = layout(lm.tokenizer, pair.sentences, None if self.mode == "blind" else pair.summary)
            check_length(context, 0, limit, pair.id)
            key = self.state_key(context)
            name = sha256_hex(key)
            if name not in done:
                states = _MEMO.get(name)
                if states is None:
                    shape = (n_states(lm.model), len(context.segments), hidden_size(lm.model))
                    states = state_cache.recall(key, shape)
                    if states is None:
                        states = pooled_states(self.states_model(), context, self.pool)
                        state_cache.keep(key, states)
                    _MEMO.put(name, states)
                done[name] = states
            out.append(done[name])
        return out

    # -- training -----------------------------------------------------------------------------------
    def resolved_layer(self, n_layers: int) -> int | None:
        """The fixed ``layer`` as an index (None: all), checked against the model's layers."""
        if self.layer == "all":
            return None
        index = int(self.layer)
        if index >= n_layers:
            raise RankerError(
                f"ranker {self.label}: layer {index} is beyond {self.model}'s layers 0..{n_layers - 1}"
            )
        return index

    def train(self, data: TrainingData) -> None:
        """Pool the training pairs' states, choose the layer (``cv``) and fit the probe."""
        key = self.training_key(data)
        if key not in _TRAINED:
            _TRAINED[key] = self._train(data)
        self._fitted = _TRAINED[key]

    def training_key(self, data: TrainingData) -> str:
        """What a fit depends on: the configuration, the states' identity, and the training
        pairs' inputs and labels."""
        import hashlib

        labels = hashlib.sha256()
        for judgment in data.judgments:
            labels.update(np.ascontiguousarray(judgment.graded, dtype=float).tobytes())
            labels.update(np.ascontiguousarray(judgment.soft, dtype=float).tobytes())
        inputs = [[p.split, p.id, p.summary, list(p.sentences)] for p in data.pairs]
        return sha256_hex(
            [
                self.get_params(),
                self.states_identity(),
                inputs,
                labels.hexdigest(),
                list(data.trained_on),
                data.min_relevant,
            ]
        )

    def _train(self, data: TrainingData) -> dict[str, Any]:
        from sourcesum.rankers.lm.probe_models import Labelled, choose_layer, fit_linear, fit_mlp
        from tqdm.auto import tqdm

        labelled = Labelled([], [], [], [], [], min_relevant=data.min_relevant)
        for pair, judgment in tqdm(
            list(zip(data.pairs, data.judgments, strict=True)),
            desc=f"{self.name} states of training pairs",
            unit="pair",
            leave=False,
            disable=None,  # shown on a terminal only
        ):
            try:
                (states,) = self.pair_states([pair])
            except WindowOverflow:
                if self.overflow == "error":
                    raise
                self._skipped_training += 1
                continue
            labelled.pair_ids.append(pair.id)
            labelled.documents.append(pair.document_key)
            labelled.states.append(states)
            labelled.graded.append(judgment.graded)
            labelled.share.append(judgment.soft)
        if len(set(labelled.documents)) < 2:
            raise RankerError(
                f"ranker {self.label}: training on {', '.join(data.trained_on)} needs pairs of two documents"
            )
        trained_on = list(data.trained_on)
        table: list[dict[str, Any]] = []
        if self.layer == "cv":
            layer: int | None
            layer, table = choose_layer(labelled, trained_on, self.folds, self.seed)
        else:
            layer = self.resolved_layer(labelled.states[0].shape[0])
        if self.probe == "linear":
            model: Any = fit_linear(labelled, layer, self.C, trained_on, self.folds, self.seed)
        else:
            model = fit_mlp(labelled.at(layer), self.folds, self.seed)
        return {
            "layer": layer,
            "model": model,
            "layer_cv": table,
            "trained_on": trained_on,
            "pairs": len(labelled.pair_ids),
            "left_out": len(data.pairs) - len(labelled.pair_ids),
        }

    def fitted(self) -> dict[str, Any]:
        if self._fitted is None:
            raise RankerError(f"ranker {self.label}: not trained; the runner trains it under its protocol")
        return self._fitted

    # -- scoring ------------------------------------------------------------------------------------
    def score_document(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        from sourcesum.rankers.lm.probe_models import layer_features

        fitted = self.fitted()
        return [
            fitted["model"].predict(layer_features(states, fitted["layer"])).tolist()
            for states in self.pair_states(pairs)
        ]

    def report(self) -> dict[str, Any]:
        out = super().report()
        if self._skipped_training:
            out["overflow_training_pairs"], self._skipped_training = self._skipped_training, 0
        return out

    def describe_model(self) -> dict[str, Any]:
        """The fitted probe: its layer (and the inner CV that chose it), training data, and the
        linear probe's chosen C and inner CV (its weights left out: one per unit)."""
        fitted = self.fitted()
        model = fitted["model"]
        if self.probe == "linear":
            described = {k: v for k, v in model.describe().items() if k != "weights"}
        else:
            described = model.describe()
        layer = fitted["layer"]
        return {
            "probe": self.probe,
            "layer": "all" if layer is None else layer,
            "layer_cv": fitted["layer_cv"],
            **described,
            "trained_on": fitted["trained_on"],
            "pairs": fitted["pairs"],
            "left_out_pairs": fitted["left_out"],
        }
