"""``sourcesum evaluate``: scores produced elsewhere (SourceSum-format JSON or TREC runs).

The format is never guessed: ``--format`` says it (default ``sourcesum``). A TREC run given
without ``--format trec`` is recognised by its first line and refused with that hint."""

from __future__ import annotations

import argparse
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sourcesum.cli.common import SCHEMAS, emit, measures_help
from sourcesum.errors import SourceSumError
from sourcesum.outputs.escape import terminal

if TYPE_CHECKING:
    import pandas as pd
    from sourcesum.evaluation.measures import Measure


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("evaluate", help="evaluate a score file produced elsewhere")
    p.add_argument("file")
    p.add_argument("--field", help="annotation field holding the scores (SourceSum format)")
    p.add_argument(
        "--format",
        choices=["sourcesum", "trec"],
        default="sourcesum",
        help="sourcesum: the split's JSON with a score field per sentence (default); trec: a TREC run",
    )
    p.add_argument("--split", help="split name (default: inferred from the pair ids)")
    p.add_argument("--measures", default="nDCG,AP", help=measures_help())
    p.add_argument(
        "--per-pair",
        action="store_true",
        help="also each pair's value of each measure (a table after the means; JSON: per_pair)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_evaluate)


def looks_like_trec(path: Path) -> bool:
    """The first non-blank line of ``path`` is a TREC run line (``qid Q0 docno rank score tag``:
    six fields, an integer rank, a numeric score). False for anything but a readable regular
    file (the reader then names the problem; a pipe is not read twice)."""
    if not path.is_file():
        return False
    try:
        with path.open("rb") as handle:
            head = handle.read(4096)
    except OSError:
        return False
    for line in head.decode("utf-8", "replace").splitlines():
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            return False
        try:
            int(parts[3])
            float(parts[4])
        except ValueError:
            return False
        return True
    return False


def cmd_evaluate(args: argparse.Namespace) -> int:
    from sourcesum.data import dataset_of, load_split
    from sourcesum.evaluation.evaluate import evaluate_split
    from sourcesum.evaluation.measures import parse_measures
    from sourcesum.outputs.text import format_table
    from sourcesum.store.scorefiles import (
        check_against_split,
        infer_split,
        read_sourcesum_json,
        read_trec_run,
    )

    if args.format == "sourcesum":
        if looks_like_trec(Path(args.file)):
            raise SourceSumError(
                f"evaluate {args.file}: this is a TREC run file ('qid Q0 docno rank score tag' lines), "
                "not SourceSum-format JSON; pass --format trec"
            )
        if not args.field:
            raise SourceSumError("evaluate: --field KEY is required for SourceSum-format files")
        loaded = read_sourcesum_json(Path(args.file), args.field)
        system, system_key = args.field, "field"
    else:
        loaded = read_trec_run(Path(args.file))
        system, system_key = args.field or Path(args.file).stem, "run"
    if args.split:
        dataset_of(args.split)
        split = load_split(args.split)
    else:
        split = infer_split(loaded)
    check_against_split(loaded, split)
    measures = parse_measures(args.measures)
    evaluation = evaluate_split(split, loaded.scores, system, measures, source=str(loaded.path))
    evaluation.nan_replaced = loaded.nan_replaced
    record = evaluation.summary(system_key=system_key)
    record["nan_replaced"] = loaded.nan_replaced
    record["all_nan_pairs"] = loaded.all_nan_pairs
    if args.per_pair:
        record["per_pair"] = per_pair_records(evaluation.per_pair, measures)
    emit([record], args.json, system_key, measures, SCHEMAS["evaluate"])
    if args.per_pair and not args.json:
        columns = ["pair_id"] + [m.json_key for m in measures]
        rows = [{k: math.nan if v is None else v for k, v in r.items()} for r in record["per_pair"]]
        print()
        print(terminal(format_table(rows, columns, ["pair"] + [m.display_name for m in measures])))
    return 0


def per_pair_records(per_pair: pd.DataFrame, measures: Sequence[Measure]) -> list[dict[str, Any]]:
    """One record per pair of a per-pair table, in its order: ``pair_id`` and each measure's
    value under its JSON key (``None`` where the measure is undefined on the pair)."""
    return [
        {
            "pair_id": str(pair_id),
            **{m.json_key: float(row[m.name]) if math.isfinite(row[m.name]) else None for m in measures},
        }
        for pair_id, row in per_pair.iterrows()
    ]
