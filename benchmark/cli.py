"""The ``sourcesum`` command line: list, run, evaluate, leaderboard, site, compare, show, explain,
export.

Every user-facing failure prints one ``error: ...`` line and exits 2 (``--debug`` shows the
traceback instead). Output for machines is JSON (``--json``); output for people is tables.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from sourcesum import paths
from sourcesum.errors import SourceSumError


def positive_int(text: str) -> int:
    """argparse type: an integer >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} is not >= 1")
    return value


def parse_params(items: Sequence[str], rankers: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``["random.seed=3"]`` -> ``{"random": {"seed": "3"}}``; the ranker parses each value by its
    declared type (:meth:`Ranker.canonical_params`)."""
    params: dict[str, dict[str, Any]] = {name: {} for name in rankers}
    for item in items:
        target, _, value = item.partition("=")
        ranker, _, key = target.partition(".")
        if not key or not _:
            raise SourceSumError(f"--param {item!r}: expected RANKER.NAME=VALUE, e.g. random.seed=3")
        if ranker not in params:
            raise SourceSumError(f"--param {item!r}: ranker {ranker!r} is not in --ranker")
        params[ranker][key] = value
    return params


def open_stores(scores_dir: str | None, must_exist: bool = False):
    """The user store (``--scores-dir``, else :func:`paths.user_scores_dir`, written by ``run``)
    on top of the committed, read-only ``data/scores``. ``must_exist``: a named ``--scores-dir``
    that does not exist is an error (a typo must not read as an empty store)."""
    from sourcesum.store import ScoreStore, StoreStack

    top = Path(scores_dir).expanduser() if scores_dir else paths.user_scores_dir()
    if scores_dir and must_exist and not top.is_dir():
        raise SourceSumError(f"--scores-dir {scores_dir}: no such folder")
    if top.exists() and not top.is_dir():
        raise SourceSumError(f"--scores-dir {top}: is a file, not a folder")
    layers = [ScoreStore(top)]
    committed = paths.COMMITTED_SCORES_DIR
    if committed.resolve() != top.resolve():
        layers.append(ScoreStore(committed, writable=False))
    return StoreStack(layers)


def _emit(records: list[dict[str, Any]], as_json: bool, system_key: str, measures) -> None:
    from sourcesum.evaluation import result_key
    from sourcesum.render import format_table

    if as_json:
        print(json.dumps({"results": records}, indent=2))
        return
    columns = [system_key, "split", "examples"] + [result_key(m) for m in measures]
    print(format_table(records, columns))
    for record in records:
        if record.get("undefined"):
            print(
                f"note: {record[system_key]} on {record['split']}: measure undefined (no relevant "
                f"sentence) on {record['undefined']} pairs, left out of the mean"
            )
        if record.get("partial"):
            print(
                f"note: {record[system_key]} on {record['split']}: {record['partial']}, cached in the "
                f"normal entry (a full run resumes from them); the leaderboard shows complete entries only"
            )
        if record.get("report"):
            details = ", ".join(f"{k}={v}" for k, v in record["report"].items())
            print(f"note: {record[system_key]} in this run: {details}")
        if record.get("nan_replaced"):
            print(
                f"note: {record['nan_replaced']} NaN scores replaced by 0 in {record['split']} (as the "
                f"paper did); in {record.get('all_nan_pairs', 0)} pair(s) every score was NaN, so all "
                "their sentences tie"
            )


def cmd_list(args: argparse.Namespace) -> int:
    from sourcesum.data import split_info, split_names
    from sourcesum.rankers import RANKERS

    splits = [{"name": n, "title": split_info(n).title, "pairs": split_info(n).pairs} for n in split_names()]
    rankers = [_ranker_listing(name, cls) for name, cls in RANKERS.items()]
    if args.json:
        print(json.dumps({"splits": splits, "rankers": rankers}, indent=2))
        return 0
    print("Splits ('all' = the first four):")
    for s in splits:
        print(f"  {s['name']:<20} {s['pairs']:>4} pairs  {s['title']}")
    print("Rankers (parameter: type = default, accepted values; * = not in the cache key):")
    for r in rankers:
        print(f"  {r['name']:<16} v{r['version']:<3} {r['description']}")
        for p in r["parameters"]:
            star = "*" if p["runtime"] else ""
            print(
                f"      {p['name']}{star}: {p['type']} = {json.dumps(p['default'])}  ({p['accepts']})"
                + (f"  {p['doc']}" if p["doc"] else "")
            )
    return 0


def _ranker_listing(name: str, cls: Any) -> dict[str, Any]:
    import inspect

    parameters = []
    for key, (spec, default) in cls.parameters().items():
        parameters.append(
            {
                "name": key,
                "type": spec.type_name,
                "default": None if default is inspect.Parameter.empty else default,
                "required": default is inspect.Parameter.empty,
                "accepts": spec.accepts,
                "choices": list(spec.choices) if spec.choices is not None else None,
                "min": spec.min,
                "max": spec.max,
                "runtime": key in cls.runtime_params,
                "doc": spec.doc,
            }
        )
    return {
        "name": name,
        "version": cls.version,
        "reference": cls.reference,
        "description": (cls.__doc__ or "").strip().split("\n")[0],
        "parameters": parameters,
    }


def cmd_run(args: argparse.Namespace) -> int:
    from sourcesum.data import load_split, resolve_split_names
    from sourcesum.evaluation import evaluate
    from sourcesum.measures import parse_measures
    from sourcesum.rankers import create_ranker
    from sourcesum.runner import run_splits

    names = [n.strip() for n in args.ranker.split(",") if n.strip()]
    if not names:
        raise SourceSumError(f"--ranker {args.ranker!r}: name at least one ranker (see `sourcesum list`)")
    params = parse_params(args.param, names)
    rankers = [create_ranker(name, **params[name]) for name in names]
    splits = [load_split(name) for name in resolve_split_names(args.split)]
    measures = parse_measures(args.measures)
    store = open_stores(args.scores_dir)
    selection = _selection(args)
    results = []
    for ranker in rankers:
        for run in run_splits(ranker, splits, store, selection, progress=not args.no_progress):
            if run.pairs:
                evaluation = evaluate(run.scored_split(), run.scores(), ranker.label, measures)
                results.append(evaluation.summary())
                if run.partial:
                    results[-1]["partial"] = f"partial ({len(run.pairs)} of {len(run.split)} pairs)"
        report = ranker.report()
        if report and results:
            results[-1]["report"] = report
    _emit(results, args.json, "ranker", measures)
    return 0


def _selection(args: argparse.Namespace):
    """The pairs ``run`` scores: ``--limit``, ``--pairs``, ``--shard`` (default: all)."""
    from sourcesum.runner import Selection, Shard

    pair_ids = frozenset(p.strip() for p in args.pairs.split(",") if p.strip()) if args.pairs else None
    shard = Shard.parse(args.shard) if args.shard else None
    return Selection(limit=args.limit, pair_ids=pair_ids, shard=shard)


def cmd_merge(args: argparse.Namespace) -> int:
    from sourcesum.merge import merge_stores

    report = merge_stores([Path(s) for s in args.stores], Path(args.output))
    print(report.summary())
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    from sourcesum.data import load_split, split_info
    from sourcesum.evaluation import evaluate
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
        split_info(args.split)
        split = load_split(args.split)
    else:
        split = infer_split(loaded)
    check_against_split(loaded, split)
    measures = parse_measures(args.measures)
    evaluation = evaluate(split, loaded.scores, system, measures, source=str(loaded.path))
    evaluation.nan_replaced = loaded.nan_replaced
    record = evaluation.summary(system_key="field")
    record["nan_replaced"] = loaded.nan_replaced
    record["all_nan_pairs"] = loaded.all_nan_pairs
    _emit([record], args.json, "field", measures)
    return 0


def _board(args: argparse.Namespace, with_stats: bool = True, published: bool = True):
    """Every usable entry of the user store over the committed one, plus (``published``) the
    paper's published outputs (compare, show, export)."""
    from sourcesum.leaderboard import collect

    return collect(open_stores(args.scores_dir, must_exist=True), with_stats=with_stats, published=published)


def _declared_or_all_board(args: argparse.Namespace, measures):
    """The board ``leaderboard`` and ``site`` render: the rows declared in leaderboard.toml (or
    ``--declaration``) from data/scores (or ``--scores-dir``); with ``--all``, every usable entry
    of ``--scores-dir`` (default: your store) over data/scores."""
    from sourcesum.leaderboard import collect, collect_declared, read_declaration
    from sourcesum.store import ScoreStore

    if args.all:
        board = collect(open_stores(args.scores_dir, must_exist=True), measures=measures)
        store = f"`{args.scores_dir}`" if args.scores_dir else "your score store"
        board.scores_from = f"every usable entry of {store} and of the committed `data/scores/`"
        board.regenerate = "`sourcesum leaderboard --all -o FILE`" + (
            f" with `--scores-dir {args.scores_dir}`" if args.scores_dir else ""
        )
        return board
    if args.scores_dir:
        root = Path(args.scores_dir).expanduser()
        if not root.is_dir():
            raise SourceSumError(f"--scores-dir {args.scores_dir}: no such folder")
    else:
        root = paths.COMMITTED_SCORES_DIR
    declaration = Path(args.declaration) if args.declaration else paths.DECLARATION_PATH
    board = collect_declared(
        read_declaration(declaration), ScoreStore(root, writable=False), measures=measures
    )
    if args.scores_dir or args.declaration:
        board.scores_from = (
            f"the files in `{args.scores_dir or 'data/scores'}`, the rows of "
            f"`{args.declaration or 'leaderboard.toml'}`"
        )
        board.regenerate = (
            "`sourcesum leaderboard"
            + "".join(
                f" --{flag} {value}"
                for flag, value in (("declaration", args.declaration), ("scores-dir", args.scores_dir))
                if value
            )
            + "`"
        )
    return board


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from sourcesum.atomic import write_bytes_atomic, write_text_atomic
    from sourcesum.measures import parse_measures
    from sourcesum.plot import render_png
    from sourcesum.render import PLOT_NAME, RENDERERS, render_latex

    measures = parse_measures(args.measures)
    if args.all and args.output is None:
        raise SourceSumError("leaderboard --all: give -o FILE (leaderboard.md holds the declared board)")
    board = _declared_or_all_board(args, measures)
    text = render_latex(board, ci=args.ci) if args.format == "latex" else RENDERERS[args.format](board)
    output = args.output
    if output is None and args.format == "markdown":
        output = str(paths.LEADERBOARD_PATH)
    if output in (None, "-"):
        sys.stdout.write(text)
    else:
        write_text_atomic(Path(output), text)
        message = f"wrote {output} ({len(board.rows)} rows)"
        if args.format == "markdown":
            plot = Path(output).with_name(PLOT_NAME)
            write_bytes_atomic(plot, render_png(board))
            message += f" and {plot}"
        print(message)
    for item in board.stale:
        print(f"note: skipped stale score file {item}", file=sys.stderr)
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from sourcesum.compare import compare_rows, format_comparisons
    from sourcesum.data import main_splits, resolve_split_names
    from sourcesum.measures import parse_measures

    names = args.rankers
    if len(names) < 2:
        raise SourceSumError("compare needs at least two rankers")
    splits = resolve_split_names(args.split)
    off_board = [s for s in splits if s not in main_splits()]
    if off_board:
        raise SourceSumError(
            f"--split {args.split}: compare works on the main splits "
            f"({', '.join(main_splits())}), not {', '.join(off_board)}"
        )
    board = _board(args, with_stats=False)
    rows = [board.row(name) for name in names]
    results = compare_rows(
        rows,
        splits,
        parse_measures(args.measures),
        by_document=args.by == "document",
        resamples=args.resamples,
        seed=args.seed,
    )
    if args.json:
        print(json.dumps({"comparisons": [c.as_dict() for c in results]}, indent=2))
    else:
        print(format_comparisons(results))
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from sourcesum.show import default_rows, find_pair, format_view, pair_view

    pair = find_pair(args.pair_id)
    board = _board(args, with_stats=False)
    if args.ranker:
        rankers = [n.strip() for n in args.ranker.split(",") if n.strip()]
    elif args.json:
        rankers = None  # everything
    else:
        rankers = default_rows(board, _declared_labels(), count=4)
    view = pair_view(pair, board, rankers)
    print(json.dumps(view, indent=2) if args.json else format_view(view, width=args.width))
    return 0


def cmd_explain(args: argparse.Namespace) -> int:
    from sourcesum.data import load_split, resolve_split_names
    from sourcesum.rankers import create_ranker

    ranker = create_ranker(args.ranker, **parse_params(args.param, [args.ranker])[args.ranker])
    explain = getattr(ranker, "explain", None)
    if explain is None:
        raise SourceSumError(
            f"ranker {args.ranker!r} fits no model to explain (try `sourcesum explain learned`)"
        )
    ranker.use_store(open_stores(args.scores_dir))
    records = [
        {"split": name, "ranker": ranker.label, "models": explain(load_split(name).pairs)}
        for name in resolve_split_names(args.split)
    ]
    if args.json:
        print(json.dumps({"explanations": records}, indent=2))
        return 0
    for record in records:
        print(f"{record['ranker']} on {record['split']}:")
        for model in record["models"]:
            print(format_model(model))
    return 0


def format_model(model: dict[str, Any]) -> str:
    """One fitted model in words: training data, hyper-parameter, inner CV, weights by size."""
    names = ["C", "l1_ratio"] if model["model"] == "logistic" else ["trees"]
    lines = [
        f"  {model['model']} fitted on {' + '.join(model['trained_on'])} ({model['pairs']} pairs), "
        + ", ".join(f"{n} = {model[n]:g}" for n in names)
        + (" (chosen by inner CV)" if model["cv"] else " (fixed)")
    ]
    for row in model["cv"]:
        mark = "  <- chosen" if row.get("selected") else ""
        tried = ", ".join(f"{n}={row[n]:g}" for n in names if n in row)
        lines.append(f"    inner CV {tried}: nDCG {row['ndcg']:.4f}  AP {row['ap']:.4f}{mark}")
    what = "weight (standardised feature)" if model["model"] == "logistic" else "share of split gain"
    lines.append(f"    {what}:")
    for feature, weight in sorted(model["weights"].items(), key=lambda kv: -abs(kv[1])):
        lines.append(f"      {weight:+.4f}  {feature}")
    return "\n".join(lines)


def _declared_labels() -> list[str]:
    from sourcesum.leaderboard import read_declaration
    from sourcesum.rankers import create_ranker

    declared = read_declaration(paths.DECLARATION_PATH)
    return [create_ranker(d.ranker, **d.params).label for d in declared if not d.published]


def cmd_export(args: argparse.Namespace) -> int:
    from sourcesum.export import export_trec

    written = export_trec(_board(args, with_stats=False, published=False), Path(args.output))
    print(
        f"wrote {len(written)} files to {args.output} (qrels per split, one run per ranker and split, "
        f"and {written[-1].name} listing them):"
    )
    for path in written:
        print(f"  {path}")
    return 0


def cmd_migrate(args: argparse.Namespace) -> int:
    from sourcesum.rankers import RANKERS
    from sourcesum.store import migrate

    root = Path(args.scores_dir).expanduser() if args.scores_dir else paths.user_scores_dir()
    if not root.is_dir():
        raise SourceSumError(f"--scores-dir {root}: no such folder")
    versions = {name: cls.library_versions() for name, cls in RANKERS.items()}
    rewritten = migrate(root, versions)
    print(f"migrated {len(rewritten)} entries under {root} (scores unchanged)")
    return 0


def cmd_site(args: argparse.Namespace) -> int:
    from sourcesum.leaderboard import LEADERBOARD_MEASURES
    from sourcesum.site import build_site, check_output, page_sizes

    out = check_output(Path(args.output))  # before the statistics, which take seconds
    board = _declared_or_all_board(args, LEADERBOARD_MEASURES)
    pages = build_site(board, out)
    sizes = ", ".join(f"{name} {size / 1024:.0f} KB" for name, size in page_sizes(pages).items())
    print(f"wrote {len(pages)} files to {args.output} ({len(board.rows)} rows; {sizes})")
    for item in board.stale:
        print(f"note: skipped stale score file {item}", file=sys.stderr)
    return 0


class _Parser(argparse.ArgumentParser):
    """argparse with the harness's error style: one ``error: ...`` line, exit 2."""

    def error(self, message: str) -> typing.NoReturn:
        self.exit(2, f"error: {self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="sourcesum", description=__doc__.split("\n")[0])
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("list", help="list splits and registered rankers")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_list)

    measures_help = "comma-separated measures (nDCG, nDCG@k, AP, AP(ties=expected), P@k, R@k, RR, Spearman)"
    p = sub.add_parser("run", help="run rankers over splits (cached) and print NDCG/MAP")
    p.add_argument("--ranker", required=True, help="comma-separated ranker names")
    p.add_argument("--split", default="all", help="comma-separated split names; 'all' = main four")
    p.add_argument("--param", "-p", action="append", default=[], metavar="RANKER.NAME=VALUE")
    p.add_argument("--measures", default="nDCG,AP", help=measures_help)
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

    p = sub.add_parser("evaluate", help="evaluate a score file produced elsewhere")
    p.add_argument("file")
    p.add_argument("--field", help="annotation field holding the scores (SourceSum format)")
    p.add_argument("--format", choices=["sourcesum", "trec"], default="sourcesum")
    p.add_argument("--split", help="split name (default: inferred from the pair ids)")
    p.add_argument("--measures", default="nDCG,AP", help=measures_help)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_evaluate)

    p = sub.add_parser("leaderboard", help="regenerate leaderboard.md from the declared rows")
    p.add_argument("--format", choices=["markdown", "csv", "json", "latex"], default="markdown")
    p.add_argument("--output", "-o", help="file to write ('-' = stdout; markdown default: leaderboard.md)")
    p.add_argument("--ci", action="store_true", help="LaTeX: add the 95%% CIs under each value")
    p.add_argument(
        "--all",
        action="store_true",
        help="every usable entry of your store and the committed one, plus every published "
        "output, not the declared rows (needs -o)",
    )
    p.add_argument("--declaration", help="rows to render (default: leaderboard.toml)")
    p.add_argument("--measures", default="nDCG,AP", help=measures_help)
    p.add_argument(
        "--scores-dir",
        help="store to read (declared board: default data/scores; --all: this store over data/scores)",
    )
    p.set_defaults(func=cmd_leaderboard)

    p = sub.add_parser(
        "site", help="static leaderboard site with a per-pair explorer (the leaderboard's rows)"
    )
    p.add_argument("--output", "-o", required=True, metavar="DIR", help="folder to write the site into")
    p.add_argument(
        "--all",
        action="store_true",
        help="every usable entry of your store and the committed one, not the declared rows",
    )
    p.add_argument("--declaration", help="rows to show (default: leaderboard.toml)")
    p.add_argument(
        "--scores-dir",
        help="store to read (declared board: default data/scores; --all: this store over data/scores)",
    )
    p.set_defaults(func=cmd_site)

    p = sub.add_parser("compare", help="paired significance tests between rankers")
    p.add_argument("rankers", nargs="+", help="row labels or ranker names (two or more)")
    p.add_argument("--split", default="all")
    p.add_argument("--measures", default="nDCG,AP", help=measures_help)
    p.add_argument(
        "--by",
        choices=["pair", "document"],
        default="document",
        help="resampling unit (default: document; equals pair on XSum)",
    )
    p.add_argument("--resamples", type=positive_int, default=10_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--scores-dir")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_compare)

    p = sub.add_parser("show", help="one pair: summary, sentences, votes, rankers' scores and ranks")
    p.add_argument("pair_id")
    p.add_argument(
        "--ranker",
        help="comma-separated row labels or ranker names (default: the 4 best "
        "declared rankers; with --json: all)",
    )
    p.add_argument("--width", type=positive_int, default=100, help="terminal columns (default 100)")
    p.add_argument("--scores-dir")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_show)

    p = sub.add_parser(
        "explain",
        help="a trained ranker's fitted models: training data, chosen "
        "hyper-parameters, weights or importances",
    )
    p.add_argument("ranker", help="ranker name (e.g. learned)")
    p.add_argument("--param", "-p", action="append", default=[], metavar="RANKER.NAME=VALUE")
    p.add_argument("--split", default="all", help="comma-separated split names; 'all' = main four")
    p.add_argument("--scores-dir", help="your store (base scores are read, or computed into it)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_explain)

    p = sub.add_parser("migrate", help="convert score-store entries of an older format in place")
    p.add_argument("--scores-dir", help="store to migrate (default: your store)")
    p.set_defaults(func=cmd_migrate)

    p = sub.add_parser("export", help="TREC qrels and run files for every cached ranker")
    p.add_argument("--format", choices=["trec"], default="trec")
    p.add_argument("--output", "-o", default="trec", help="folder (default: ./trec)")
    p.add_argument("--scores-dir")
    p.set_defaults(func=cmd_export)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed as one line
        return int(exc.code or 0)
    handler: Callable[[argparse.Namespace], int] = args.func
    try:
        return handler(args)
    except SourceSumError as exc:
        if args.debug:
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `sourcesum show ... | head`: the reader has all it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:  # a path the user named cannot be written or read
        if args.debug:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted; finished pairs are cached, rerun to resume", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place that turns surprises into one line
        if args.debug:
            raise
        print(
            f"error: unexpected {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
