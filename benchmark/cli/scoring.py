"""Commands that compute or move scores: ``run``, ``merge``, ``migrate`` and ``explain``."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sourcesum.cli.common import SCHEMAS, emit, measures_help, parse_params, positive_int, print_json
from sourcesum.errors import SourceSumError


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("run", help="run rankers over splits (cached) and print NDCG/MAP")
    p.add_argument("--ranker", required=True, help="comma-separated ranker names")
    p.add_argument(
        "--split",
        default="all",
        help="comma-separated split names, or dataset names (their board splits); 'all' = sourcesum's board splits",
    )
    p.add_argument("--param", "-p", action="append", default=[], metavar="RANKER.NAME=VALUE")
    p.add_argument("--measures", default="nDCG,AP", help=measures_help())
    p.add_argument(
        "--scores-dir",
        help="your store, written (default: $SOURCESUM_SCORES_DIR, else "
        "~/.local/share/sourcesum/scores); data/scores is read below it",
    )
    p.add_argument("--no-progress", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument(
        "--limit", type=positive_int, metavar="N", help="quick trial: only the first N pairs of each split"
    )
    p.add_argument("--pairs", metavar="ID[,ID]", help="quick trial: only these pair ids")
    p.add_argument("--shard", metavar="K/N", help="only shard K of N (pairs split by document, 1 <= K <= N)")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("merge", help="merge score stores (e.g. of sharded runs) into one")
    p.add_argument("stores", nargs="+", metavar="STORE", help="score-store folders to merge")
    p.add_argument(
        "--output",
        "-o",
        "--into",
        required=True,
        metavar="STORE",
        help="store to merge into (created if missing; its entries are merged too)",
    )
    p.set_defaults(func=cmd_merge)

    p = sub.add_parser("migrate", help="convert score-store entries of an older format in place")
    p.add_argument("--scores-dir", help="store to migrate (default: your store)")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser(
        "verify",
        help="recompute score entries (a sample of pairs for costly rankers) with the installed rankers and compare",
    )
    p.add_argument(
        "entries", nargs="+", metavar="ENTRY", help="entry files, or store folders (every entry in them)"
    )
    p.add_argument(
        "--sample",
        type=positive_int,
        metavar="N",
        help="pairs per entry (default: all; the LM rankers: a few)",
    )
    p.add_argument("--scores-dir", help="a store to read bases from, over data/scores (default: your store)")
    p.add_argument(
        "--strict",
        action="store_true",
        help="fail an entry whose recorded library versions differ from the installed ones (default: a note)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser(
        "explain",
        help="a trained ranker's fitted models: training data, chosen hyper-parameters, weights or importances",
    )
    p.add_argument("ranker", help="ranker name (e.g. learned)")
    p.add_argument("--param", "-p", action="append", default=[], metavar="RANKER.NAME=VALUE")
    p.add_argument(
        "--split", default="all", help="comma-separated split names; 'all' = sourcesum's board splits"
    )
    p.add_argument(
        "--scores-dir",
        help="your store (stored fits and base scores are read; bases missing are computed into it)",
    )
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_explain)


def selection(args: argparse.Namespace) -> Any:
    """The pairs ``run`` scores: ``--limit``, ``--pairs``, ``--shard`` (default: all)."""
    from sourcesum.runner.selection import Selection, Shard

    pair_ids = frozenset(p.strip() for p in args.pairs.split(",") if p.strip()) if args.pairs else None
    shard = Shard.parse(args.shard) if args.shard else None
    return Selection(limit=args.limit, pair_ids=pair_ids, shard=shard)


def cmd_run(args: argparse.Namespace) -> int:
    from sourcesum.data import load_split, resolve_split_names
    from sourcesum.evaluation.evaluate import evaluate_split
    from sourcesum.evaluation.measures import parse_measures
    from sourcesum.rankers import create_ranker
    from sourcesum.runner.run import run_splits
    from sourcesum.store.stores import open_stores

    names = [n.strip() for n in args.ranker.split(",") if n.strip()]
    if not names:
        raise SourceSumError(f"--ranker {args.ranker!r}: name at least one ranker (see `sourcesum list`)")
    params = parse_params(args.param, names)
    measures = parse_measures(args.measures)  # every argument is checked before any data is read
    rankers = [create_ranker(name, **params[name]) for name in names]
    splits = [load_split(name) for name in resolve_split_names(args.split)]
    store = open_stores(args.scores_dir)
    created = not store.root.exists()
    chosen = selection(args)
    results = []
    for ranker in rankers:
        for run in run_splits(ranker, splits, store, chosen, progress=not args.no_progress):
            if run.pairs:
                evaluation = evaluate_split(run.scored_split(), run.scores(), ranker.label, measures)
                results.append(evaluation.summary())
                if run.partial:
                    results[-1]["partial"] = f"partial ({len(run.pairs)} of {len(run.split)} pairs)"
        report = ranker.report()
        if report and results:
            results[-1]["report"] = report
    emit(results, args.json, "ranker", measures, SCHEMAS["run"])
    if created and store.root.exists():
        import sys

        print(f"note: created the score store {store.root}", file=sys.stderr)
    return 0


def cmd_merge(args: argparse.Namespace) -> int:
    from sourcesum.store.merge import merge_stores

    report = merge_stores([Path(s) for s in args.stores], Path(args.output))
    print(report.summary())
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    from sourcesum import paths
    from sourcesum.rankers import RANKERS
    from sourcesum.store.migrate import migrate

    root = Path(args.scores_dir).expanduser() if args.scores_dir else paths.user_scores_dir()
    if not root.is_dir():
        raise SourceSumError(f"--scores-dir {root}: no such folder")
    versions = {name: cls.library_versions() for name, cls in RANKERS.items()}
    rewritten = migrate(root, versions)
    print(f"migrated {len(rewritten)} entries under {root} (scores unchanged)")
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from sourcesum.data import load_split, resolve_split_names
    from sourcesum.outputs.models import format_model
    from sourcesum.rankers import create_ranker
    from sourcesum.runner.explain import explain
    from sourcesum.store.stores import open_stores

    ranker = create_ranker(args.ranker, **parse_params(args.param, [args.ranker])[args.ranker])
    store = open_stores(args.scores_dir)
    records: list[dict[str, Any]] = [
        {"split": name, "ranker": ranker.label, "models": explain(ranker, load_split(name), store)}
        for name in resolve_split_names(args.split)
    ]
    if args.json:
        print_json(SCHEMAS["explain"], {"explanations": records})
        return 0
    for record in records:
        print(f"{record['ranker']} on {record['split']}:")
        for model in record["models"]:
            print(format_model(model))
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    """Exit 0 when every entry reproduces (bit for bit, or within its ranker's tolerance), 1
    when one does not; bad input is exit 2 as everywhere."""
    from sourcesum.outputs.escape import terminal
    from sourcesum.runner.verify import entry_paths, verify_entry
    from sourcesum.store.stores import open_stores

    paths_ = entry_paths(args.entries)
    layers = open_stores(args.scores_dir).stores
    results = [verify_entry(path, layers, args.sample, args.strict) for path in paths_]
    if args.json:
        print_json(
            SCHEMAS["verify"],
            {"verifications": [{**r.__dict__, "path": str(r.path), "ok": r.ok} for r in results]},
        )
    else:
        for result in results:
            print(terminal(result.summary()))
    return 0 if all(r.ok for r in results) else 1
