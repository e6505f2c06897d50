"""The generated part of the `learned` selection log (docs/learned-selection.md, below its
marker line; the hand-written history above the marker is kept as it is). Prints and writes (``-o``) Markdown: for the
frozen configuration's two cross-corpus models, the training splits and pairs, every
(C, l1_ratio) of the inner CV with its pooled nDCG, AP and objective, the one chosen, and the
fitted weights; then seven alternatives evaluated on the four evaluation splits (kfold inside
each split; the fusions unsupervised) with their seconds (each row is also printed on stderr as
it lands).

- **Frozen configuration** (declared before its entries were committed, commit "Freeze the
  learned configuration"; its recipe comes from a probe run earlier on the evaluation splits,
  see the history): ``learned(rankers=FROZEN_BASES, protocol=cross-corpus, model=logistic,
  normalization=zscore, features=position,length)``, 11 of the 14 rankers with committed entries
  on the four splits at the freeze (oracle excluded because it reads the votes; lexrank and
  random left out, with no reason recorded).
- **Chosen from data, inside the training corpus only**: ``C`` and ``l1_ratio`` (L1 or L2), by
  grouped 5-fold cross-validation (folds by document, seed 0) over the training pairs, as the
  ranker does in ``train``: part 1 prints every (C, l1_ratio) tried for both models (CNN/DM ->
  scores XSum, XSum -> scores CNN/DM) and the one chosen.
- **Alternatives** (part 2): the frozen configuration under kfold, the probe's four bases plus
  position, no position/length features, rank normalisation, LambdaMART, and the unsupervised
  CombSUM and RRF fusions of the same bases, each on the four evaluation splits. These are
  evaluation-split results; two of them are declared board rows.

Usage: ``python scripts/select_learned.py [-o docs/learned-selection.md]`` (about 10 minutes on 2
CPU cores; LambdaMART dominates). Everything runs through the runner (``sourcesum.runner.run``: it
reads the bases' entries, applies each configuration's training protocol and scores), over a copy
of the committed base-ranker entries (the committed learned and fusion entries left out, so every
configuration is fitted here and its seconds are its fitting and scoring).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sourcesum import paths
from sourcesum.data import load_split
from sourcesum.evaluation.evaluate import evaluate_split
from sourcesum.evaluation.measures import AP, NDCG
from sourcesum.rankers import create_ranker
from sourcesum.runner.configs import Configuration
from sourcesum.runner.explain import explain
from sourcesum.runner.run import run_splits
from sourcesum.store.stores import ScoreStore, StoreStack

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
COMPOSITES = ("learned", "fusion")
"""Committed folders left out of the base store: rankers built from other rankers' scores."""


def copy_bases(target: Path) -> Path:
    """A copy of the committed store without the composites' entries (``target``, created)."""
    for folder in paths.COMMITTED_SCORES_DIR.iterdir():
        if folder.is_dir() and folder.name not in COMPOSITES:
            shutil.copytree(folder, target / folder.name)
    return target


def store_stack(tmp: Path, bases: Path) -> StoreStack:
    """``tmp`` (written: any entry this run computes) over the read-only base entries ``bases``."""
    return StoreStack([ScoreStore(tmp), ScoreStore(bases, writable=False)])


def inner_selection(store: StoreStack) -> list[str]:
    """Part 1: the frozen procedure's hyper-parameter search, per training corpus."""
    lines = ["### 1. Hyper-parameters of the frozen configuration (inner CV inside the training corpus)", ""]
    ranker = create_ranker("learned", **FROZEN)
    for evaluated in ("XSum", "CNN/DM"):
        split = load_split(CORPORA[evaluated][0])
        [model] = explain(ranker, split, store)  # cross-corpus: one model per evaluated corpus
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
    """Part 2: each alternative on the four evaluation splits (kfold inside each split)."""
    lines = [
        "### 2. Alternatives evaluated on the four evaluation splits",
        "",
        "`kfold` protocol (5 folds by document, seed 0) inside each split; fusion rows are "
        "unsupervised and simply scored. Mean nDCG / MAP per split. These are results on the "
        "evaluation splits, not on a separate training set: the first and the sixth rows are the "
        "board's kfold and fusion rows.",
        "",
    ]
    splits = [s for names in CORPORA.values() for s in names]
    lines += [
        "| configuration | " + " | ".join(splits) + " | seconds |",
        "|---|" + "---:|" * (len(splits) + 1),
    ]
    for title, name, params in ALTERNATIVES:
        ranker = create_ranker(name, **params)
        start = time.perf_counter()
        cells = []
        for split_name in splits:
            split = load_split(split_name)
            [run] = run_splits(ranker, [split], store, progress=False)
            result = evaluate_split(split, run.scores(), ranker.label, (NDCG, AP))
            cells.append(f"{result.mean(NDCG):.4f} / {result.mean(AP):.4f}")
        elapsed = time.perf_counter() - start
        lines.append(f"| {title}: `{ranker.label}` | " + " | ".join(cells) + f" | {elapsed:.0f} |")
        print(lines[-1], file=sys.stderr)
    lines.append("")
    return lines


def main() -> None:
    description, _, details = __doc__.partition("\n\n")
    parser = argparse.ArgumentParser(
        description=description, epilog=details, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("-o", "--output", default="docs/learned-selection.md", help="where the log goes")
    parser.add_argument(
        "--tmp",
        help="writable top layer of the store, for the entries this run computes (default: a new "
        "temporary folder, so every configuration is fitted afresh)",
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="sourcesum-selection-"))
    try:
        store = store_stack(Path(args.tmp) if args.tmp else work / "scores", copy_bases(work / "bases"))
        text = selection_log(store)
    finally:
        shutil.rmtree(work)
    output = Path(args.output)
    history = output.read_text(encoding="utf-8").split(MARKER, 1)[0] if output.exists() else ""
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(history + MARKER + "\n\n" + text, encoding="utf-8")
    print(text)


MARKER = "<!-- Everything below is written by `python scripts/select_learned.py`. -->"


def selection_log(store: StoreStack) -> str:
    """The generated part of the log (Markdown)."""
    lines = [
        "## The frozen configuration's selection, and the alternatives",
        "",
        "Written by `python scripts/select_learned.py`; the protocol is in that script's docstring.",
        "",
        f"Frozen configuration: `{Configuration.of('learned', FROZEN).label}` with normalization=zscore, "
        "features=position,length, C and l1_ratio by inner CV.",
        "",
    ]
    lines += inner_selection(store)
    lines += alternatives(store)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
