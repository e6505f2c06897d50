"""The ``at2`` ranker against the authors' package ``at2`` on the same model, inputs and
training targets. Prints JSON.

For each of the first ``--pairs`` pairs of ``--split`` (default 20 of ``xsum_pegasus``), on the
ranker's token ids (the document, then the summary: ``causal_context`` and ``causal_summary``):

- **features**: the package's ``get_attention_weights`` (attention recomputed from the hidden
  states of one uncached pass over every token but the last, the queries the positions that
  predict the summary's tokens) summed over each sentence's tokens and averaged over the
  queries, as ``AT2Attributor`` aggregates them, against :meth:`AT2Ranker.features`;
- **fit**: the package's ``LinearScoreEstimator`` (uniform start, L1-normalised at the end) and
  ``PearsonCorrelationLoss`` (its ``1e-8`` in the denominator included) under the trainer's
  recipe (Adam, cosine schedule, gradient norm clipped at 1) on the same features, targets and
  sampled pairs per step, in float64, against :func:`fit_head_weights`; the targets are
  ``perplexity_gain``'s gains on the pairs (the model's own leave-one-out effects);
- **scores**: the package's estimator (its fitted weights) on its features against the ranker's
  scores with its own weights, and whether every pair ranks its sentences the same (ties
  included).

The package is not a dependency of the core harness: install the ``crosscheck`` extra
(``bash scripts/setup.sh --extras crosscheck``) or name a folder it was installed into with
``pip install --target`` (``--packages DIR``).

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
        from at2.attribution import attention, score_estimators, trainer
    except ImportError as exc:
        print(f"error: the authors' package at2 is not importable ({exc}); pip install at2", file=sys.stderr)
        raise SystemExit(2) from exc
    return attention, score_estimators, trainer


def package_features(ranker: Any, pair: Any) -> np.ndarray:
    """``(n_sentences, layers x heads)`` from the package's attention weights (module docstring)."""
    import torch
    from sourcesum.rankers.lm.inputs import causal_context, causal_summary

    attention, _, _ = import_package()
    lm = ranker.lm()
    context = causal_context(lm.tokenizer, pair.sentences, ranker.template)
    summary = list(causal_summary(lm.tokenizer, pair.summary))
    ids = torch.tensor([context.ids() + summary], device=lm.model.device)
    with torch.no_grad():
        hidden = lm.model(input_ids=ids, output_hidden_states=True).hidden_states
    hidden_states = [h[:, :-1] for h in hidden]  # as the package's task computes them
    start = len(context.ids())
    weights = attention.get_attention_weights(
        lm.model, hidden_states, attribution_start=start, attribution_end=ids.shape[1], model_type="llama"
    )  # (layers, heads, summary tokens, tokens - 1)
    layers, heads = weights.shape[:2]
    flat = weights.permute(2, 3, 0, 1).reshape(weights.shape[2], weights.shape[3], layers * heads)
    per_source = [
        flat[:, s : s + len(seg)].sum(dim=1) for s, seg in zip(context.starts, context.segments, strict=True)
    ]
    return torch.stack(per_source, dim=1).mean(dim=0).double().cpu().numpy()  # type: ignore[no-any-return]


def package_estimator(width: int) -> Any:
    """The package's ``LinearScoreEstimator`` over ``width`` features, in float64 (its extractor
    is read for the feature count only)."""
    _, score_estimators, _ = import_package()
    extractor = type("Width", (), {"num_features": width})()
    return score_estimators.LinearScoreEstimator(extractor).double()


def package_fit(
    features: Sequence[np.ndarray],
    targets: Sequence[np.ndarray],
    steps: int,
    lr: float,
    batch: int,
    seed: int,
) -> np.ndarray:
    """The head weights the package's estimator and loss reach under its trainer's recipe, on the
    pairs :func:`fit_head_weights` keeps and the same pairs sampled per step (one pair per loss
    call: the package's batches need one sentence count; the mean over the step's pairs is the
    package's ``reduction="mean"``)."""
    import torch

    _, _, trainer = import_package()
    usable = [(x, t) for x, t in zip(features, targets, strict=True) if len(t) >= 2 and np.ptp(t) > 0]
    estimator = package_estimator(usable[0][0].shape[1])
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
    ``targets`` (one gain per sentence) as the training targets."""
    import torch
    from sourcesum.rankers.lm.at2 import fit_head_weights

    started = time.perf_counter()
    ours = ranker.features(pairs)
    ours_seconds = time.perf_counter() - started
    started = time.perf_counter()
    theirs = [package_features(ranker, pair) for pair in pairs]
    package_seconds = time.perf_counter() - started
    recipe = (steps, ranker.lr, ranker.batch, ranker.seed)
    theta = fit_head_weights(ours, targets, *recipe)
    package_theta = package_fit(theirs, targets, *recipe)
    estimator = package_estimator(len(package_theta))
    scores, package_scores = [], []
    with torch.no_grad():
        estimator.linear.weight[0] = torch.as_tensor(package_theta)
        for rows, package_rows in zip(ours, theirs, strict=True):
            scores.append(rows @ theta)
            package_scores.append(estimator(torch.as_tensor(package_rows)[None])[0, :, 0].numpy())
    return {
        "pairs": len(pairs),
        "features": int(len(theta)),
        "steps": steps,
        "max_feature_diff": max(float(np.max(np.abs(a - b))) for a, b in zip(ours, theirs, strict=True)),
        "max_abs_feature": max(float(np.max(np.abs(a))) for a in ours),
        "max_weight_diff": float(np.max(np.abs(theta - package_theta))),
        "max_abs_weight": float(np.max(np.abs(theta))),
        "max_score_diff": max(
            float(np.max(np.abs(a - b))) for a, b in zip(scores, package_scores, strict=True)
        ),
        "same_ranking": sum(same_ranking(a, b) for a, b in zip(scores, package_scores, strict=True)),
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
