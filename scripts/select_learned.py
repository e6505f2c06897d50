"""Selection log of the `learned` row of the leaderboard: every configuration tried, and only
inside the training corpus.

Protocol (fixed before any learned score on an evaluation split was computed; commit
"Freeze the learned configuration" holds it together with leaderboard.toml):

- **Frozen configuration** (fixed in advance, not chosen from data):
  ``learned(rankers=FROZEN_BASES, protocol=cross-corpus, model=logistic, normalization=zscore,
  features=position,length)``: every base-ranker candidate with committed entries on all four
  splits (the gradient ``attribution`` rankers had entries on XSum only at the freeze, and the
  cross-corpus model for XSum is fitted on CNN/DM, so they could not be features), the default
  model, the per-pair z-scores of the issue's own check, position and length.
- **Chosen from data, inside the training corpus only**: ``C`` and ``l1_ratio`` (L1 or L2), by
  grouped 5-fold cross-validation (folds by document, seed 0) over the training pairs, as the
  ranker does in ``fit``: part 1 below prints every (C, l1_ratio) tried for both models (CNN/DM
  -> scores XSum, XSum -> scores CNN/DM) and the one chosen.
- **For the record** (they do not change the frozen choice): part 2 runs the ``kfold``
  protocol, i.e. 5-fold CV by document inside each split of each *training* corpus, for a few
  alternatives: the issue's four bases, no position/length features, rank normalisation,
  LambdaMART, and the unsupervised fusions of the same bases.
- Then the frozen configuration is evaluated once on the four splits (`sourcesum run`, entries
  committed under data/scores) and compared with the best published system of each cell
  (``scripts/learned_vs_published.py``).

Before the freeze, during development, these ran on evaluation splits: ``fusion`` CombSUM
(z-score) and RRF of bertscore+bm25+embedding (smoke tests, all four splits), and ``learned`` on
lexrank+random (not candidates; smoke tests).

Usage: ``python scripts/select_learned.py [-o docs/learned-selection.md]`` (about 10 minutes on 2
CPU cores; LambdaMART dominates).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from sourcesum import paths
from sourcesum.data import load_split
from sourcesum.evaluation import evaluate
from sourcesum.measures import AP, NDCG
from sourcesum.rankers import create_ranker
from sourcesum.store import ScoreStore, StoreStack

FROZEN_BASES = "attention,bertscore,bm25,embedding,lead,perplexity_gain,pmi,rouge1,rouge2,rougeL,tfidf"
ISSUE_BASES = "bertscore,bm25,embedding,perplexity_gain"
FROZEN: dict[str, Any] = {
    "rankers": FROZEN_BASES,
    "protocol": "cross-corpus",
    "model": "logistic",
    "normalization": "zscore",
    "features": "position,length",
}

ALTERNATIVES: list[tuple[str, str, dict[str, Any]]] = [
    ("frozen configuration", "learned", {**FROZEN, "protocol": "kfold"}),
    (
        "issue's four bases + position",
        "learned",
        {**FROZEN, "protocol": "kfold", "rankers": ISSUE_BASES, "features": "position"},
    ),
    ("no position/length features", "learned", {**FROZEN, "protocol": "kfold", "features": ""}),
    ("rank normalisation", "learned", {**FROZEN, "protocol": "kfold", "normalization": "rank"}),
    ("LambdaMART", "learned", {"rankers": FROZEN_BASES, "protocol": "kfold", "model": "lambdamart"}),
    ("fusion CombSUM z-score (unsupervised)", "fusion", {"rankers": FROZEN_BASES}),
    ("fusion RRF k=60 (unsupervised)", "fusion", {"rankers": FROZEN_BASES, "method": "rrf"}),
]

CORPORA = {"CNN/DM": ["cnn_pegasus", "cnn_reference"], "XSum": ["xsum_pegasus", "xsum_reference"]}


def store_stack(tmp: Path) -> StoreStack:
    return StoreStack([ScoreStore(tmp), ScoreStore(paths.COMMITTED_SCORES_DIR, writable=False)])


def inner_selection(store: StoreStack) -> list[str]:
    """Part 1: the frozen procedure's hyper-parameter search, per training corpus."""
    lines = ["## 1. Hyper-parameters of the frozen configuration (inner CV inside the training corpus)", ""]
    ranker = create_ranker("learned", **FROZEN)
    ranker.store = store
    for evaluated in ("XSum", "CNN/DM"):
        split = load_split(CORPORA[evaluated][0])
        [model] = ranker.explain(split.pairs)
        lines += [
            f"Model that scores {evaluated}: fitted on {' + '.join(model['trained_on'])} "
            f"({model['pairs']} pairs); chosen C = {model['C']:g}, l1_ratio = {model['l1_ratio']:g}.",
            "",
            "| C | l1_ratio | pooled nDCG | pooled AP | objective | chosen |",
            "|---:|---:|---:|---:|---:|---|",
        ]
        for row in model["cv"]:
            lines.append(
                f"| {row['C']:g} | {row['l1_ratio']:g} | {row['ndcg']:.4f} | {row['ap']:.4f} | "
                f"{row['objective']:.4f} | {'yes' if row.get('selected') else ''} |"
            )
        lines += ["", "Weights (standardised features):", ""]
        lines += [
            f"- `{name}`: {weight:+.4f}"
            for name, weight in sorted(model["weights"].items(), key=lambda kv: -abs(kv[1]))
        ]
        lines.append("")
    return lines


def alternatives(store: StoreStack) -> list[str]:
    """Part 2: kfold (CV inside the split) of each alternative on the training corpora's splits."""
    lines = [
        "## 2. Alternatives, CV inside each training corpus (for the record)",
        "",
        "`kfold` protocol (5 folds by document, seed 0) on each split of the corpus; fusion rows "
        "are unsupervised and simply scored there. Mean nDCG / MAP per split.",
        "",
    ]
    splits = [s for names in CORPORA.values() for s in names]
    lines += [
        "| configuration | " + " | ".join(splits) + " | seconds |",
        "|---|" + "---:|" * (len(splits) + 1),
    ]
    for title, name, params in ALTERNATIVES:
        ranker = create_ranker(name, **params)
        ranker.store = store
        start = time.perf_counter()
        cells = []
        for split_name in splits:
            split = load_split(split_name)
            ranker.fit(split.pairs)
            scores = {pair.id: list(ranker.score(pair)) for pair in split}
            result = evaluate(split, scores, ranker.label, (NDCG, AP))
            cells.append(f"{result.mean(NDCG):.4f} / {result.mean(AP):.4f}")
        elapsed = time.perf_counter() - start
        lines.append(f"| {title}: `{ranker.label}` | " + " | ".join(cells) + f" | {elapsed:.0f} |")
        print(lines[-1], file=sys.stderr)
    lines += [
        "",
        "Reading: the CNN/DM columns are CV inside the corpus that trains the model scoring XSum; "
        "the XSum columns are CV inside the corpus that trains the model scoring CNN/DM.",
        "",
    ]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-o", "--output", default="docs/learned-selection.md")
    parser.add_argument("--tmp", default="/tmp/sourcesum-selection-store")
    args = parser.parse_args()
    store = store_stack(Path(args.tmp))
    lines = [
        "# Selection log of the `learned` leaderboard row",
        "",
        "Written by `python scripts/select_learned.py`; the protocol is in that script's docstring.",
        "",
        f"Frozen configuration: `{create_ranker('learned', **FROZEN).label}` with normalization=zscore, "
        "features=position,length, C and l1_ratio by inner CV.",
        "",
    ]
    lines += inner_selection(store)
    lines += alternatives(store)
    text = "\n".join(lines) + "\n"
    Path(args.output).parent.mkdir(parents=True, exist_ok=True)
    Path(args.output).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
