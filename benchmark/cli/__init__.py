"""The ``sourcesum`` command line.

Commands, one module per group: ``list`` (:mod:`~sourcesum.cli.catalog`); ``run``, ``merge``,
``migrate``, ``verify``, ``explain`` (:mod:`~sourcesum.cli.scoring`); ``evaluate``
(:mod:`~sourcesum.cli.evaluating`); ``leaderboard``, ``site`` (:mod:`~sourcesum.cli.boards`);
``cite`` (:mod:`~sourcesum.cli.citing`); ``compare``, ``show`` (:mod:`~sourcesum.cli.inspecting`);
``export`` (:mod:`~sourcesum.cli.exporting`); ``probe-layers`` (:mod:`~sourcesum.cli.probing`).

Every user-facing failure prints one ``error: ...`` line and exits 2 (``--debug`` shows the
traceback instead). Output for machines is JSON (``--json``) whose first field, ``schema``,
names its format and version (:data:`~sourcesum.cli.common.SCHEMAS`); output for people is
tables. ``sourcesum --help`` shows :data:`DESCRIPTION`, plain text (not this docstring).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

from sourcesum.cli import boards, catalog, citing, evaluating, exporting, inspecting, probing, scoring
from sourcesum.cli.common import Parser
from sourcesum.errors import SourceSumError
from sourcesum.outputs.escape import terminal

COMMAND_MODULES = (catalog, scoring, evaluating, boards, citing, inspecting, exporting, probing)

DESCRIPTION = (
    "SourceSum Bench: a benchmark harness for source sentence detection. Run rankers over the "
    "splits (cached in your score store), evaluate score files produced elsewhere, compare rows "
    "with paired tests, and render the board as Markdown, LaTeX, CSV, JSON or a static site. "
    "'sourcesum cite' prints what to cite. Bad input ends in one 'error: ...' line and exit 2."
)
"""The top-level ``--help`` text: plain text for a terminal."""


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="sourcesum", description=DESCRIPTION)
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    parser.add_argument("--no-memo", action="store_true", help=NO_MEMO_HELP)
    sub = parser.add_subparsers(dest="command", required=True)
    for module in COMMAND_MODULES:
        module.add_parsers(sub)
    for command in sub.choices.values():  # also after the command: `sourcesum leaderboard --no-memo`
        command.add_argument("--no-memo", action="store_true", default=argparse.SUPPRESS, help=NO_MEMO_HELP)
    return parser


NO_MEMO_HELP = "neither read nor write the memo of parsed entries, evaluations and statistics"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or a usage error already printed as one line
        return int(exc.code or 0)
    handler: Callable[[argparse.Namespace], int] = args.func
    from sourcesum.util import memo

    memo.reset_notes()  # each note once per command
    try:
        if args.no_memo:
            with memo.settings(read=False, write=False):
                return handler(args)
        return handler(args)
    except SourceSumError as exc:
        if args.debug:
            raise
        print(f"error: {terminal(str(exc))}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. `sourcesum show ... | head`: the reader has all it wanted
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except OSError as exc:  # a path the user named cannot be written or read
        if args.debug:
            raise
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {terminal(where + str(exc.strerror or exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted; finished pairs are cached, rerun to resume", file=sys.stderr)
        return 130
    except Exception as exc:  # noqa: BLE001 - the one place that turns surprises into one line
        if args.debug:
            raise
        print(
            f"error: unexpected {type(exc).__name__}: {terminal(str(exc))} (rerun with --debug for the traceback)",
            file=sys.stderr,
        )
        return 1


if __name__ == "__main__":
    sys.exit(main())
