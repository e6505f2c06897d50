"""``sourcesum leaderboard`` and ``sourcesum site``: render a board (declared, or every usable
entry with ``--all``) through its view-model."""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sourcesum import paths
from sourcesum.cli.common import measures_help
from sourcesum.errors import SourceSumError
from sourcesum.evaluation.measures import Measure
from sourcesum.outputs.escape import md_code, terminal

SCORES_DIR_HELP = (
    "your store, read over data/scores (default: $SOURCESUM_SCORES_DIR, else "
    "~/.local/share/sourcesum/scores); the committed board (leaderboard.toml without "
    "--scores-dir) reads data/scores alone"
)


def add_parsers(sub: Any) -> None:
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
    p.add_argument(
        "--dataset", default="sourcesum", help="--all: the dataset whose board splits are the columns"
    )
    p.add_argument("--measures", default="nDCG,AP", help=measures_help())
    p.add_argument("--scores-dir", help=SCORES_DIR_HELP)
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
        "--dataset", default="sourcesum", help="--all: the dataset whose board splits are the columns"
    )
    p.add_argument("--scores-dir", help=SCORES_DIR_HELP)
    p.set_defaults(func=cmd_site)


def declared_or_all_board(args: argparse.Namespace, measures: Sequence[Measure]) -> Any:
    """The board ``leaderboard`` and ``site`` render: the rows declared in leaderboard.toml (or
    ``--declaration``), read from the stores :func:`~sourcesum.cli.common.declared_stores` names
    (the committed board: data/scores alone; any other: your store over data/scores); with
    ``--all``, every usable entry of ``--scores-dir`` (default: your store) over data/scores."""
    from sourcesum.board import collect_declared, read_declaration
    from sourcesum.board.collect import collect_stores

    if args.all:
        return collect_stores(
            args.scores_dir, args.dataset, measures=measures, include_unknown=True, merge_agreeing=True
        )
    from sourcesum.cli.common import declared_stores

    stores = declared_stores(args.scores_dir, args.declaration)
    declaration = Path(args.declaration) if args.declaration else paths.DECLARATION_PATH
    return collect_declared(read_declaration(declaration), stores, measures=measures)


def board_text(args: argparse.Namespace) -> Any:
    """Where the board's scores come from and the command that renders it again, in words
    (:class:`~sourcesum.outputs.markdown.BoardText`, the Markdown header)."""
    from sourcesum.outputs.markdown import BoardText

    # an installed package without a checkout has no committed store beside it: say so
    committed = paths.COMMITTED_SCORES_DIR.is_dir()
    if args.all:
        store = md_code(paths.shown(args.scores_dir)) if args.scores_dir else "your score store"
        return BoardText(
            f"every usable entry of {store}" + (" and of the committed `data/scores/`" if committed else ""),
            "`sourcesum leaderboard --all -o FILE`"
            + (f" with {md_code('--scores-dir ' + paths.shown(args.scores_dir))}" if args.scores_dir else ""),
        )
    if not (args.scores_dir or args.declaration):
        return BoardText()
    from sourcesum.board.collect import reads_committed_only
    from sourcesum.cli.common import declared_stores

    if reads_committed_only(declared_stores(args.scores_dir, args.declaration)):
        scores = "the committed files in `data/scores/`"
    else:
        store = md_code(paths.shown(args.scores_dir)) if args.scores_dir else "your score store"
        scores = f"the files in {store}" + (" over the committed `data/scores/`" if committed else "")
    rows = paths.shown(args.declaration) if args.declaration else "leaderboard.toml"
    return BoardText(
        f"{scores}, the rows of {md_code(rows)}",
        md_code(
            "sourcesum leaderboard"
            + "".join(
                f" --{flag} {paths.shown(value)}"
                for flag, value in (("declaration", args.declaration), ("scores-dir", args.scores_dir))
                if value
            )
        ),
    )


def check_board_inputs(args: argparse.Namespace) -> None:
    """The declaration and store named on the command line, checked before anything else."""
    from sourcesum.board import read_declaration

    if args.declaration and not args.all:
        read_declaration(Path(args.declaration))
    if args.scores_dir and not Path(args.scores_dir).expanduser().is_dir():
        raise SourceSumError(f"--scores-dir {args.scores_dir}: no such folder")


def committed_inputs(args: argparse.Namespace, measures: Sequence[Measure]) -> bool:
    """The board comes from the committed declaration, the committed store and the default
    measures: the only board that may be written to the tracked ``leaderboard.md``."""
    from sourcesum.board import LEADERBOARD_MEASURES

    def same(given: str | None, committed: Path) -> bool:
        return given is None or Path(given).expanduser().resolve() == committed.resolve()

    return (
        not args.all
        and same(args.declaration, paths.DECLARATION_PATH)
        and same(args.scores_dir, paths.COMMITTED_SCORES_DIR)
        and tuple(measures) == LEADERBOARD_MEASURES
    )


def _writes_committed(path: Path) -> bool:
    committed = {paths.LEADERBOARD_PATH.resolve(), paths.LEADERBOARD_PATH.with_suffix(".png").resolve()}
    return path.expanduser().resolve() in committed


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from sourcesum.board import view_of
    from sourcesum.evaluation.measures import parse_measures
    from sourcesum.outputs.latex import is_our_latex, render_latex
    from sourcesum.outputs.markdown import is_our_markdown, plot_name_for, render_markdown
    from sourcesum.outputs.plot import is_our_plot, render_png
    from sourcesum.outputs.tables import is_our_csv, is_our_json, render_csv, render_json
    from sourcesum.util import memo
    from sourcesum.util.files import check_file_target, write_bytes_atomic, write_text_atomic

    measures = parse_measures(args.measures)
    if args.all and args.output is None:
        raise SourceSumError("leaderboard --all: give -o FILE (leaderboard.md holds the declared board)")
    check_board_inputs(args)
    output = args.output
    if output is None and args.format == "markdown":
        output = str(paths.LEADERBOARD_PATH)
    to_file = output not in (None, "-")
    target: Path | None = None
    plot: Path | None = None
    if to_file:
        target = Path(output)
        plot = target.with_name(plot_name_for(target)) if args.format == "markdown" else None
        if not committed_inputs(args, measures) and any(_writes_committed(p) for p in (target, plot) if p):
            raise SourceSumError(
                "leaderboard: the tracked leaderboard.md and leaderboard.png are written only from "
                "leaderboard.toml, data/scores and the default measures; give -o FILE for this board"
            )
        checks = {"markdown": is_our_markdown, "json": is_our_json, "csv": is_our_csv, "latex": is_our_latex}
        for path, is_ours, what in (
            (target, checks[args.format], "leaderboard -o"),
            (plot, is_our_plot, "its plot"),
        ):
            if path is not None and not _writes_committed(path):  # the tracked files are ours by definition
                check_file_target(path, is_ours, what)
    # A tracked file is written only from values computed in this process: no memo reaches it.
    tracked = any(_writes_committed(p) for p in (target, plot) if p)
    with memo.fresh() if tracked else contextlib.nullcontext():
        board = declared_or_all_board(args, measures)
        view = view_of(board)
        if args.format == "markdown":
            plot_name = plot_name_for(Path(output)) if to_file else "leaderboard.png"
            text = render_markdown(view, plot_name, board_text(args))
        elif args.format == "latex":
            text = render_latex(view, ci=args.ci)
        else:
            text = {"json": render_json, "csv": render_csv}[args.format](view)
        png = render_png(view) if plot is not None else None
    if target is None:
        sys.stdout.write(text)
    else:
        write_text_atomic(target, text)
        message = f"wrote {output} ({rows_text(board)})"
        if plot is not None and png is not None:
            write_bytes_atomic(plot, png)
            message += f" and {plot}"
        print(message)
    for item in board.stale:
        print(terminal(f"note: skipped stale score file {item}"), file=sys.stderr)
    for item in board.merged:
        print(terminal(f"note: {item}"), file=sys.stderr)
    print_heldout_pending(board)
    return 0


def print_heldout_pending(board: Any) -> None:
    """On stderr: the declared held-out test is not reported yet, and what computes the rest."""
    pending = board.heldout_pending
    if pending is None:
        return
    print(
        terminal(
            f"note: the held-out test is not reported until its {pending.entries} entries are complete "
            f"({pending.complete} are; {pending.scored:,} of {pending.pairs:,} pairs scored):\n  "
            + "\n  ".join(pending.to_compute)
        ),
        file=sys.stderr,
    )


def cmd_site(args: argparse.Namespace) -> int:
    from sourcesum.board import LEADERBOARD_MEASURES, read_declaration, view_of
    from sourcesum.board.explorer import explorer_data
    from sourcesum.data import dataset
    from sourcesum.outputs.site import build_site, check_site_target

    declared = None if args.all else read_declaration(Path(args.declaration or paths.DECLARATION_PATH))
    names = dataset(args.dataset if declared is None else declared.dataset).board_splits()
    names += [
        s for task in (declared.tasks if declared else ()) for s in dataset(task.dataset).board_splits()
    ]
    out = Path(args.output)
    check_site_target(out, names)  # before the statistics, which take seconds
    board = declared_or_all_board(args, LEADERBOARD_MEASURES)
    explorers = {
        split.name: explorer_data(b, split.name) for b in [board, *board.tasks] for split in b.splits
    }
    pages = build_site(view_of(board), explorers, out)
    print(f"wrote {len(pages)} files to {args.output} ({len(board.rows)} rows; {site_sizes(pages)})")
    for item in board.stale:
        print(terminal(f"note: skipped stale score file {item}"), file=sys.stderr)
    for item in board.merged:
        print(terminal(f"note: {item}"), file=sys.stderr)
    print_heldout_pending(board)
    return 0


def site_sizes(pages: Sequence[Any]) -> str:
    """``index.html 41 KB, plot.png 55 KB, explore-x.html 310 KB, ...``: the size of each page
    and of the plot as written (the index page and its plot apart)."""
    from sourcesum.outputs.site import INDEX_FILE, PLOT_FILE

    written = [Path(page.path) for page in pages]
    shown = [p for p in written if p.name in (INDEX_FILE, PLOT_FILE)]
    shown.sort(key=lambda p: p.name != INDEX_FILE)
    shown += [p for p in written if p.name.startswith("explore-")]
    return ", ".join(f"{p.name} {p.stat().st_size / 1024:.0f} KB" for p in shown)


def rows_text(board: Any) -> str:
    """``29 rows: 20 rankers, 1 reference, 8 published`` (the parts add up to the total)."""
    published = len(board.published_rows)
    reference = sum(1 for r in board.rows if r.reference)
    rankers = len(board.rows) - published - reference
    return f"{len(board.rows)} rows: {rankers} rankers, {reference} reference, {published} published"
