"""AT2: attention heads weighted to reproduce the model's own ablation effects.

Cohen-Wang et al. 2025 (*Learning to Attribute with Attention*, arXiv 2504.13752; the authors'
package ``at2``). Features: for sentence ``i``, ``f_i`` in R^(L x H) holds, per layer ``l`` and
head ``h``, the attention paid to the sentence's tokens by the positions that predict the
summary's tokens: the mean over those positions of the sum over the sentence's tokens (one
teacher-forced pass after the document's cached states; causal self-attention from the
context's last token (``template``'s text before the summary) and the summary's tokens but its
last, as the package's ``get_attention_weights`` reads them; seq2seq cross-attention from the
decoder's positions).
Score: ``s_i = theta . f_i``.

``theta`` is fitted as the package's trainer fits it: initialised to ``1 / (L x H)``, Adam with
learning rate ``lr`` under a cosine schedule over ``steps`` steps, the gradient's norm clipped at
1, each step the mean negative Pearson correlation over a sample of ``batch`` training pairs, and
``theta`` divided by its L1 norm at the end. The package correlates ``theta . sum_i (2 z_ri - 1)
f_i`` with the model's output under ablation masks ``z_r``; for the leave-one-out masks
(``z_r`` keeps every sentence but ``r``) that is the correlation, over the pair's sentences,
between ``theta . f_r`` and the loss without sentence ``r`` (exactly, with log-probability
outputs; the package's logit differs from the log-probability by ``log(1 - p)``). So the target
of sentence ``r`` is ``perplexity_gain``'s gain (mean summary loss without ``r`` minus with it),
the model's own effect, read from the base's stored entries on the training pairs. The protocol
(``cross-corpus``: the other corpus's main splits; ``from-sourcesum`` on the transfer tasks)
withholds their votes: AT2 reads none, so its rows are zero-shot.

The sampling of training pairs and the initial state are seeded (``seed``), and the fit runs in
float64 on the CPU, so it is deterministic. The weights are stored in every entry they score
(:meth:`fitted_state`, the entry's ``fits``); :meth:`describe_model` (``sourcesum explain at2``)
lists the heads by weight, read from the entry where it holds them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from sourcesum.data import Pair
from sourcesum.errors import RankerError
from sourcesum.params import Param
from sourcesum.rankers.base import register
from sourcesum.rankers.context import BaseScores, ProtocolSpec, TrainingData
from sourcesum.rankers.lm.attention import attention_passes
from sourcesum.rankers.lm.base import LMRanker
from sourcesum.rankers.lm.inputs import Context

PROTOCOLS = ("cross-corpus", "from-sourcesum")
TOP_HEADS = 10
"""Heads :meth:`AT2Ranker.describe_model` lists."""


def head_features(attentions: Sequence[Any], query_mask: Any, context: Context) -> np.ndarray:
    """``(batch, n_sentences, layers x heads)``: per layer and head, the attention from the valid
    query positions (``query_mask``, ``(batch, queries)``) to each segment's keys, summed over the
    segment's tokens and averaged over the queries; layer-major (feature ``l x H + h``)."""
    import torch

    stacked = torch.stack([a.float() for a in attentions])  # (L, B, H, Q, K)
    mask = query_mask.float()
    per_key = (stacked * mask[None, :, None, :, None]).sum(dim=3) / mask.sum(dim=1)[None, :, None, None]
    segments = [
        per_key[..., start : start + len(segment)].sum(dim=-1)
        for start, segment in zip(context.starts, context.segments, strict=True)
    ]  # each (L, B, H)
    features = torch.stack(segments, dim=-1)  # (L, B, H, S)
    layers, batch, heads, n = features.shape
    return features.permute(1, 3, 0, 2).reshape(batch, n, layers * heads).double().cpu().numpy()


def usable_pairs(
    features: Sequence[np.ndarray], targets: Sequence[np.ndarray]
) -> list[tuple[np.ndarray, np.ndarray]]:
    """The ``(features, targets)`` of the training pairs a correlation loss can learn from: two
    sentences or more whose targets are not all equal (Pearson's r is undefined otherwise)."""
    return [(x, t) for x, t in zip(features, targets, strict=True) if len(t) >= 2 and np.ptp(t) > 0]


def fit_head_weights(
    features: Sequence[np.ndarray],
    targets: Sequence[np.ndarray],
    steps: int,
    lr: float,
    batch: int,
    seed: int,
) -> np.ndarray:
    """``theta`` maximising the mean per-pair Pearson correlation between ``features[p] @ theta``
    (``(n_sentences, F)``) and ``targets[p]`` (module docstring). Pairs whose targets are constant
    or that have fewer than two sentences carry no correlation and are left out. The pairs are
    padded to one tensor (padding masked), so a step is a few batched operations."""
    import torch

    usable = usable_pairs(features, targets)
    if not usable:
        raise RankerError("at2: no training pair has two sentences with different targets")
    n_features, longest = usable[0][0].shape[1], max(len(t) for _, t in usable)
    x = torch.zeros((len(usable), longest, n_features), dtype=torch.float64)
    y = torch.zeros((len(usable), longest), dtype=torch.float64)
    valid = torch.zeros((len(usable), longest), dtype=torch.float64)
    for k, (rows, target) in enumerate(usable):
        x[k, : len(target)] = torch.as_tensor(rows, dtype=torch.float64)
        y[k, : len(target)] = torch.as_tensor(target, dtype=torch.float64)
        valid[k, : len(target)] = 1.0
    theta = torch.full((n_features,), 1.0 / n_features, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([theta], lr=lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)
    rng = np.random.default_rng(seed)
    size = min(batch, len(usable))
    for _ in range(steps):
        chosen = torch.as_tensor(rng.choice(len(usable), size=size, replace=False))
        optimizer.zero_grad()
        loss = -pearson(x[chosen] @ theta, y[chosen], valid[chosen]).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_([theta], max_norm=1.0)
        optimizer.step()
        schedule.step()
    out = theta.detach()
    result: np.ndarray = (out / out.abs().sum()).numpy()
    return result


def pearson(a: Any, b: Any, valid: Any) -> Any:
    """Per row, the Pearson correlation of ``a`` and ``b`` (``(rows, n)`` tensors) over the
    positions ``valid`` marks with 1 (0 where either is constant)."""
    n = valid.sum(dim=1, keepdim=True)
    da = (a - (a * valid).sum(dim=1, keepdim=True) / n) * valid
    db = (b - (b * valid).sum(dim=1, keepdim=True) / n) * valid
    scale = (da.square().sum(dim=1) * db.square().sum(dim=1)).sqrt()
    return (da * db).sum(dim=1) / scale.clamp_min(1e-30)


@register
class AT2Ranker(LMRanker):
    """AT2 (Cohen-Wang et al. 2025): per-head attention weighted to reproduce the model's own
    leave-one-out effects on other pairs (module docstring)."""

    name = "at2"
    version = "2"
    bases_on_scored_splits = False  # the ablation targets are read on the training pairs only
    eager_attention = True
    reproduction_tolerance = 1e-4
    server_refusal = "OpenAI-compatible servers return no attention weights; use backend=local"

    param_specs = {
        **LMRanker.param_specs,
        "protocol": Param(
            str,
            "where the head weights are fitted (their votes withheld)",
            choices=PROTOCOLS,
            training_protocol=True,
        ),
        "steps": Param(int, "optimiser steps (the package's 1,000)", min=1),
        "lr": Param(float, "Adam's learning rate (the package's 1e-3)", min=1e-9),
        "batch": Param(int, "training pairs per step (the package's 512)", min=1),
        "seed": Param(int, "seed of the pairs sampled per step", min=0),
    }

    def __init__(
        self,
        protocol: str = "cross-corpus",
        steps: int = 1000,
        lr: float = 1e-3,
        batch: int = 512,
        seed: int = 0,
        **options: Any,
    ):
        self.protocol, self.steps, self.lr, self.batch, self.seed = (
            protocol,
            int(steps),
            float(lr),
            int(batch),
            int(seed),
        )
        self._bases: BaseScores | None = None
        self._theta: np.ndarray | None = None
        self._trained_on: tuple[str, ...] = ()
        self._pairs = 0
        self._fits: dict[tuple[str, ...], np.ndarray] = {}
        self._heads = 0
        super().__init__(**options)

    @classmethod
    def base_configurations(cls, params: Mapping[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        """The targets: ``perplexity_gain`` on the same model, precision and template."""
        base = {"model": params["model"], "dtype": params["dtype"], "template": params["template"]}
        return [("perplexity_gain", base)]

    @classmethod
    def training_protocol(cls, params: Mapping[str, Any]) -> ProtocolSpec:
        return ProtocolSpec(str(params["protocol"]), votes=False)

    def use_bases(self, scores: BaseScores) -> None:
        """Called by the runner with the targets' scores (the training pairs' are read)."""
        self._bases = scores

    # -- features ---------------------------------------------------------------------------------
    def features(self, pairs: Sequence[Pair], progress: str = "") -> list[np.ndarray]:
        """``(n_sentences, layers x heads)`` per pair, the pairs of one document at a time
        (``progress``: a bar with this description, shown on a terminal only)."""
        import torch
        from tqdm.auto import tqdm

        groups: dict[tuple[str, tuple[str, ...]], list[int]] = {}
        for k, pair in enumerate(pairs):
            groups.setdefault((pair.document_key, pair.sentences), []).append(k)
        out: dict[int, np.ndarray] = {}
        with torch.inference_mode():
            bar = tqdm(
                groups.values(),
                desc=progress,
                unit="document",
                leave=False,
                disable=None if progress else True,
            )
            for members in bar:
                passes = attention_passes(self, [pairs[k] for k in members], predicting=True)
                for chosen, attentions, query_mask, context in passes:
                    rows = head_features(attentions, query_mask, context)
                    out.update((members[i], row) for i, row in zip(chosen, rows, strict=True))
        return [out[k] for k in range(len(pairs))]

    # -- training and scoring ---------------------------------------------------------------------
    def train(self, data: TrainingData) -> None:
        """Fit ``theta`` on the training pairs' features and their bases' gains (no vote read)."""
        if data.base_scores is None:
            raise RankerError(f"ranker {self.label}: training data without the targets' scores")
        ids = tuple(f"{p.split}/{p.id}" for p in data.pairs)
        if ids not in self._fits:  # e.g. both XSum splits are scored by one fit on CNN/DM
            targets = [np.asarray(scores[0], dtype=float) for scores in data.base_scores]
            features = self.features(data.pairs, f"{self.name} features of the training pairs")
            self._fits[ids] = fit_head_weights(features, targets, self.steps, self.lr, self.batch, self.seed)
        self._theta, self._trained_on, self._pairs = self._fits[ids], tuple(data.trained_on), len(ids)
        self._heads = self.heads_per_layer()

    def heads_per_layer(self) -> int:
        """The model's attention heads per layer (features are layer-major)."""
        return int(getattr(self.lm().model.config, "num_attention_heads", 1))

    def fitted_state(self) -> dict[str, Any]:
        """The head weights (layer-major), the heads per layer, and where they were fitted:
        stored in every entry they score."""
        return {
            "trained_on": list(self._trained_on),
            "pairs": self._pairs,
            "heads": self._heads,
            "weights": [float(v) for v in self.fitted()],
        }

    def restore_fitted_state(self, state: Mapping[str, Any]) -> None:
        try:
            theta = np.asarray(state["weights"], dtype=float)
            trained_on, pairs = tuple(str(s) for s in state["trained_on"]), int(state["pairs"])
            heads = int(state["heads"])
        except (KeyError, TypeError, ValueError) as exc:
            raise RankerError(f"ranker {self.label}: a stored fit without its weights ({exc})") from exc
        if theta.ndim != 1 or heads < 1 or len(theta) % heads or not np.isfinite(theta).all():
            raise RankerError(
                f"ranker {self.label}: a stored fit whose weights are not a finite vector of whole "
                f"layers of {heads} heads"
            )
        self._theta, self._trained_on, self._pairs, self._heads = theta, trained_on, pairs, heads

    def fitted(self) -> np.ndarray:
        if self._theta is None:
            raise RankerError(f"ranker {self.label}: not trained; the runner trains it under its protocol")
        return self._theta

    def score_document(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        theta = self.fitted()
        return [[float(v) for v in rows @ theta] for rows in self.features(pairs)]

    def describe_model(self) -> dict[str, Any]:
        """The fitted head weights: where they were fitted, and the heads of largest weight."""
        theta, heads = self.fitted(), self._heads
        order = np.argsort(-np.abs(theta), kind="stable")[:TOP_HEADS]
        return {
            "model": "at2",
            "trained_on": list(self._trained_on),
            "pairs": self._pairs,
            "features": len(theta),
            "top_heads": [
                {"layer": int(k // heads), "head": int(k % heads), "weight": float(theta[k])} for k in order
            ],
            "weights": [float(v) for v in theta],
        }
