"""The ``contextcite`` ranker against the authors' package ``context-cite`` on the same model,
masks and inputs. Prints JSON.

For each of the first ``--pairs`` pairs of ``--split`` (default 20 of ``xsum_pegasus``), with the
ranker's own masks (:func:`~sourcesum.rankers.lm.contextcite.draw_masks`) and its token ids (the
document with only the kept sentences, then the summary: ``Context.ids(keep=...)``), the
package computes the summary's logit-probabilities under every mask with its own forward pass
(``context_cite.utils._get_response_logit_probs``: one uncached forward per ablated context,
``batch_size`` 1), aggregates them (``aggregate_logit_probs``) and fits its solver
(``LassoRegression``, alpha 0.01). The script reports the largest difference between the
package's sequence targets and the ranker's (:func:`sequence_logit` of the engine's mean NLLs),
between the package's weights and the ranker's scores, and whether every pair ranks its
sentences the same (ties included).

The package is not a dependency of the harness (it pulls spaCy and NLTK): install it where this
script runs (the ``lm`` and ``crosscheck`` extras: ``bash scripts/setup.sh --extras lm,crosscheck``, or
``--packages DIR`` naming a folder it was installed into with ``pip install --target DIR``).

    python scripts/crosscheck_contextcite.py [--split xsum_pegasus] [--pairs 20] [--packages DIR]
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
    """The package's functions used here, or an ``error:`` line and exit 2."""
    try:
        from context_cite import solver, utils
    except ImportError as exc:
        print(
            f"error: the authors' package context-cite is not importable ({exc}); install the crosscheck extra",
            file=sys.stderr,
        )
        raise SystemExit(2) from exc
    return solver, utils


def compare(ranker: Any, pairs: Sequence[Any]) -> dict[str, Any]:
    """The report the script prints, for ``ranker`` (``contextcite``, causal) on ``pairs``."""
    from datasets import Dataset
    from sourcesum.rankers.lm.contextcite import draw_masks, sequence_logit
    from sourcesum.rankers.lm.engine import causal_kept_nll
    from sourcesum.rankers.lm.inputs import causal_context, causal_summary

    solver, utils = import_package()
    lm = ranker.lm()
    tokenizer, model = lm.tokenizer, lm.model
    started = time.perf_counter()
    ours = ranker.score_batch(pairs)
    ours_seconds = time.perf_counter() - started
    target_diff = weight_diff = 0.0
    same_order = 0
    package_seconds = 0.0
    rows = []
    for pair, scores in zip(pairs, ours, strict=True):
        context = causal_context(tokenizer, pair.sentences, ranker.template)
        response = list(causal_summary(tokenizer, pair.summary))
        masks = draw_masks(
            pair.document_key, list(range(pair.n_sentences)), ranker.ablations, ranker.keep, ranker.seed
        )
        data: dict[str, list[list[int]]] = {"input_ids": [], "attention_mask": [], "labels": []}
        for mask in masks:
            prompt = context.ids(keep=mask)
            data["input_ids"].append(prompt + response)
            data["attention_mask"].append([1] * (len(prompt) + len(response)))
            data["labels"].append([-100] * len(prompt) + response)
        started = time.perf_counter()
        logit_probs = utils._get_response_logit_probs(
            Dataset.from_dict(data), model, tokenizer, len(response), 1
        )
        outputs = utils.aggregate_logit_probs(logit_probs.astype(np.float32))
        weights, _ = solver.LassoRegression(ranker.alpha).fit(masks, outputs, len(response))
        package_seconds += time.perf_counter() - started
        nll = causal_kept_nll(model, context, [tuple(map(bool, m)) for m in masks], [response], 1)[0]
        targets = sequence_logit(nll, len(response))
        target_diff = max(target_diff, float(np.max(np.abs(targets - outputs))))
        gap = float(np.max(np.abs(np.asarray(scores) - weights)))
        weight_diff = max(weight_diff, gap)
        ranks_ours = np.unique(np.asarray(scores), return_inverse=True)[1]
        ranks_package = np.unique(np.asarray(weights), return_inverse=True)[1]
        same = bool(np.array_equal(ranks_ours, ranks_package))
        same_order += same
        rows.append(
            {"pair": pair.id, "sentences": pair.n_sentences, "max_weight_diff": gap, "same_ranking": same}
        )
    return {
        "pairs": len(pairs),
        "ablations": ranker.ablations,
        "max_target_diff": target_diff,
        "max_weight_diff": weight_diff,
        "max_abs_weight": max(float(np.max(np.abs(s))) for s in ours),
        "same_ranking": same_order,
        "ranker_seconds": round(ours_seconds, 1),
        "package_seconds": round(package_seconds, 1),
        "per_pair": rows,
    }


def main() -> int:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", default="xsum_pegasus")
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--packages", help="a folder holding context_cite (pip install --target)")
    args = parser.parse_args()
    if args.packages:
        sys.path.append(args.packages)  # after the environment's own packages, which win
    import_package()
    import torch
    from sourcesum.data import load_split
    from sourcesum.rankers import create_ranker

    torch.manual_seed(0)
    ranker = create_ranker("contextcite", dtype="float32", device="cpu")
    pairs = list(load_split(args.split).pairs[: args.pairs])
    report = compare(ranker, pairs)
    print(json.dumps({"split": args.split, "model": ranker.model, **report}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
