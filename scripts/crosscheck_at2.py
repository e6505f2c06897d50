"""The ``at2`` ranker against the authors' package ``at2`` on the same model, inputs and
training targets. Prints JSON.

For each of the first ``--pairs`` pairs of ``--split`` (default 20 of ``xsum_pegasus``), on the
ranker's token ids (the document, then the summary: ``causal_context`` and ``causal_summary``):

- **features**: the package's ``AttentionFeatureExtractor`` (attention recomputed from the
  hidden states of one uncached pass over every token but the last, the queries the positions
  that predict the summary's tokens) summed over each sentence's tokens and averaged over the
  queries, as its attributor aggregates scores, against :meth:`AT2Ranker.features`;
- **fit**: the package's ``LinearScoreEstimator`` (uniform start, L1-normalised at the end) and
  ``PearsonCorrelationLoss`` (its ``1e-8`` in the denominator included) under the trainer's
  recipe (Adam, cosine schedule, gradient norm clipped at 1) on the same features, targets and
  sampled pairs per step, in float64, against :func:`fit_head_weights`; the targets are
  ``perplexity_gain``'s gains on the pairs (the model's own leave-one-out effects);
- **scores**: the package's ``ScoreEstimationAttributor`` (its estimator with its fitted
  weights, over the whole summary) against the ranker's scores with its own weights, and whether
  every pair ranks its sentences the same (ties included).

The package is not a dependency of the core harness: install the ``lm`` and ``crosscheck``
extras (``bash scripts/setup.sh --extras lm,crosscheck``) or name a folder it was installed into
with ``pip install --target`` (``--packages DIR``).

    python scripts/crosscheck_at2.py [--split xsum_pegasus] [--pairs 20] [--steps 200] [--packages DIR]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np


def import_package() -> Any:
    """The package's modules used here, or an ``error:`` line and exit 2."""
    try:
        from at2.attribution import attributors, features, score_estimators, trainer
    except ImportError as exc:
        print(
            f"error: the authors' package at2 is not importable ({exc}); install the crosscheck extra",
            file=sys.stderr,
        )
        raise SystemExit(2) from exc
    return attributors, features, score_estimators, trainer


class PackageTask:
    """What the package's feature extractor and attributor read of an ``AttributionTask``: the
    model, its hidden states over every token but the last (as the package's task computes
    them), the summary's token range and each sentence's."""

    def __init__(self, ranker: Any, pair: Any) -> None:
        import torch
        from sourcesum.rankers.lm.inputs import causal_context, causal_summary

        lm = ranker.lm()
        context = causal_context(lm.tokenizer, pair.sentences, ranker.template)
        summary = list(causal_summary(lm.tokenizer, pair.summary))
        ids = torch.tensor([context.ids() + summary], device=lm.model.device)
        with torch.no_grad():
            hidden = lm.model(input_ids=ids, output_hidden_states=True).hidden_states
        self.model = lm.model
        self.hidden_states = [h[:, :-1] for h in hidden]
        self.target_token_range = (len(context.ids()), ids.shape[1])
        self.source_token_ranges = [
            (s, s + len(seg)) for s, seg in zip(context.starts, context.segments, strict=True)
        ]


def package_extractor(model: Any) -> Any:
    """The package's ``AttentionFeatureExtractor`` for ``model`` (its type from its config)."""
    _, features, _, _ = import_package()
    config = model.config
    return features.AttentionFeatureExtractor(
        config.num_hidden_layers, config.num_attention_heads, model_type=config.model_type
    )


def package_features(task: PackageTask) -> np.ndarray:
    """``(n_sentences, layers x heads)``: the package extractor's per-token features (attention
    of each predicting position to each token, per head), summed over each sentence's tokens and
    averaged over the predicting positions, the aggregation its attributor applies to scores."""
    import torch

    with torch.no_grad():
        per_token = package_extractor(task.model)(task, *task.target_token_range)  # (queries, keys, F)
    per_source = [per_token[:, s:e].sum(dim=1) for s, e in task.source_token_ranges]
    return torch.stack(per_source, dim=1).mean(dim=0).double().cpu().numpy()  # type: ignore[no-any-return]


def package_scores(task: PackageTask, theta: np.ndarray) -> np.ndarray:
    """The package's ``ScoreEstimationAttributor`` scores of the sentences for the whole summary,
    its estimator's weights set to ``theta``."""
    import torch

    attributors, _, score_estimators, _ = import_package()
    estimator = score_estimators.LinearScoreEstimator(package_extractor(task.model))
    with torch.no_grad():
        estimator.linear.weight[0] = torch.as_tensor(theta)
    start, end = task.target_token_range
    scores = attributors.ScoreEstimationAttributor(task, estimator).get_attribution_scores(
        token_start=0, token_end=end - start
    )
    return np.asarray(scores, dtype=float)


def package_fit(
    model: Any,
    features: Sequence[np.ndarray],
    targets: Sequence[np.ndarray],
    steps: int,
    lr: float,
    batch: int,
    seed: int,
) -> np.ndarray:
    """The head weights the package's estimator (over ``model``'s extractor) and loss reach under
    its trainer's recipe, on the pairs :func:`fit_head_weights` keeps and the same pairs sampled
    per step (one pair per loss call: the package's batches need one sentence count; the mean
    over the step's pairs is the package's ``reduction="mean"``), in float64."""
    import torch
    from sourcesum.rankers.lm.at2 import usable_pairs

    _, _, score_estimators, trainer = import_package()
    usable = usable_pairs(features, targets)
    estimator = score_estimators.LinearScoreEstimator(package_extractor(model)).double()
    loss_fn = trainer.PearsonCorrelationLoss()
    optimizer = torch.optim.Adam(estimator.parameters(), lr=lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=steps)
    rng = np.random.default_rng(seed)
    size = min(batch, len(usable))
    tensors = [
        (torch.as_tensor(x, dtype=torch.float64), torch.as_tensor(t, dtype=torch.float64)) for x, t in usable
    ]
    for _ in range(steps):
        chosen = rng.choice(len(usable), size=size, replace=False)
        optimizer.zero_grad()
        losses = [loss_fn(estimator(tensors[k][0][None])[:, :, 0], tensors[k][1][None]) for k in chosen]
        loss = torch.stack(losses).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(estimator.parameters(), max_norm=1.0)
        optimizer.step()
        scheduler.step()
        estimator.project_parameters()
    estimator.finalize_parameters()
    return estimator.linear.weight.detach()[0].numpy()  # type: ignore[no-any-return]


def same_ranking(a: Sequence[float], b: Sequence[float]) -> bool:
    """Whether ``a`` and ``b`` order their items the same, ties included."""
    return bool(np.array_equal(np.unique(a, return_inverse=True)[1], np.unique(b, return_inverse=True)[1]))


def compare(ranker: Any, pairs: Sequence[Any], targets: Sequence[np.ndarray], steps: int) -> dict[str, Any]:
    """The report the script prints, for ``ranker`` (``at2``, causal) on ``pairs`` with
    ``targets`` (one gain per sentence) as the training targets. Both feature paths run once on
    the first pair before they are timed (the model loaded, the first pass's costs paid)."""
    from sourcesum.rankers.lm.at2 import fit_head_weights

    ranker.features(pairs[:1])
    package_features(PackageTask(ranker, pairs[0]))
    started = time.perf_counter()
    ours = ranker.features(pairs)
    ours_seconds = time.perf_counter() - started
    started = time.perf_counter()
    tasks = [PackageTask(ranker, pair) for pair in pairs]
    theirs = [package_features(task) for task in tasks]
    package_seconds = time.perf_counter() - started
    recipe = (steps, ranker.lr, ranker.batch, ranker.seed)
    theta = fit_head_weights(ours, targets, *recipe)
    package_theta = package_fit(ranker.lm().model, theirs, targets, *recipe)
    scores = [rows @ theta for rows in ours]
    package = [package_scores(task, package_theta) for task in tasks]
    return {
        "pairs": len(pairs),
        "features": int(len(theta)),
        "steps": steps,
        "max_feature_diff": max(float(np.max(np.abs(a - b))) for a, b in zip(ours, theirs, strict=True)),
        "max_abs_feature": max(float(np.max(np.abs(a))) for a in ours),
        "max_weight_diff": float(np.max(np.abs(theta - package_theta))),
        "max_abs_weight": float(np.max(np.abs(theta))),
        "max_score_diff": max(float(np.max(np.abs(a - b))) for a, b in zip(scores, package, strict=True)),
        "same_ranking": sum(same_ranking(a, b) for a, b in zip(scores, package, strict=True)),
        "ranker_feature_seconds": round(ours_seconds, 2),
        "package_feature_seconds": round(package_seconds, 2),
    }


def main() -> int:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", default="xsum_pegasus")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--steps", type=int, default=200, help="optimiser steps of both fits")
    parser.add_argument("--packages", help="a folder holding at2 (pip install --target)")
    args = parser.parse_args()
    if args.packages:
        sys.path.append(args.packages)  # after the environment's own packages, which win
    import_package()
    import torch
    from sourcesum.data import load_split
    from sourcesum.rankers import create_ranker

    torch.manual_seed(0)
    pairs = list(load_split(args.split).pairs[: args.pairs])
    ranker = create_ranker("at2", dtype="float32", device="cpu")
    gains = create_ranker("perplexity_gain", dtype="float32", device="cpu").score_batch(pairs)
    report = compare(ranker, pairs, [np.asarray(g, dtype=float) for g in gains], args.steps)
    print(json.dumps({"split": args.split, "model": ranker.model, **report}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
