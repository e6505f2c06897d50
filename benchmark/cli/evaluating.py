"""``sourcesum evaluate``: scores produced elsewhere (SourceSum-format JSON or TREC runs)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sourcesum.cli.common import emit, measures_help
from sourcesum.errors import SourceSumError


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("evaluate", help="evaluate a score file produced elsewhere")
    p.add_argument("file")
    p.add_argument("--field", help="annotation field holding the scores (SourceSum format)")
    p.add_argument("--format", choices=["sourcesum", "trec"], default="sourcesum")
    p.add_argument("--split", help="split name (default: inferred from the pair ids)")
    p.add_argument("--measures", default="nDCG,AP", help=measures_help())
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_evaluate)


def cmd_evaluate(args: argparse.Namespace) -> int:
    from sourcesum.data import dataset_of, load_split
    from sourcesum.evaluation import evaluate_split
    from sourcesum.measures import parse_measures
    from sourcesum.scorefiles import check_against_split, infer_split, read_sourcesum_json, read_trec_run

    if args.format == "sourcesum":
        if not args.field:
            raise SourceSumError("evaluate: --field KEY is required for SourceSum-format files")
        loaded = read_sourcesum_json(Path(args.file), args.field)
        system = args.field
    else:
        loaded = read_trec_run(Path(args.file))
        system = args.field or Path(args.file).stem
    if args.split:
        dataset_of(args.split)
        split = load_split(args.split)
    else:
        split = infer_split(loaded)
    check_against_split(loaded, split)
    measures = parse_measures(args.measures)
    evaluation = evaluate_split(split, loaded.scores, system, measures, source=str(loaded.path))
    evaluation.nan_replaced = loaded.nan_replaced
    record = evaluation.summary(system_key="field")
    record["nan_replaced"] = loaded.nan_replaced
    record["all_nan_pairs"] = loaded.all_nan_pairs
    emit([record], args.json, "field", measures)
    return 0
