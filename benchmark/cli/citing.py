"""``sourcesum cite``: what to cite and report for the declared board: the dataset's paper(s)
and this harness as BibTeX, the board's inputs digest, and what identifies each plugin row.

An incomplete board (a declared entry missing, partial or invalid) still gets its citations:
the command says on stderr that no inputs digest exists and exits 0; a missing or malformed
declaration, or a missing ``--scores-dir``, is bad input (exit 2)."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from sourcesum import paths
from sourcesum.cli.common import SCHEMAS, print_json
from sourcesum.outputs.escape import terminal

PLUGIN_ADVICE = (
    "report the package and its version, the ranker and its version, and each split's entry key "
    "(every entry records them: `libraries`, `version`, `key`)"
)


def add_parsers(sub: Any) -> None:
    p = sub.add_parser(
        "cite", help="BibTeX for the dataset paper and this harness, the board's inputs digest, plugin rows"
    )
    p.add_argument("--declaration", help="the board's declaration (default: leaderboard.toml)")
    p.add_argument("--scores-dir", help="store the declared entries are read from (default: data/scores)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_cite)


def incomplete_count(message: str) -> int:
    """The number of declared entries an :class:`IncompleteLeaderboard` message lists."""
    match = re.match(r"(\d+) declared entr", message)
    return int(match.group(1)) if match else len(message.splitlines()) - 1


def citation_payload(args: argparse.Namespace) -> dict[str, Any]:
    """Everything ``cite`` prints (the JSON fields, module docstring)."""
    from sourcesum.board import IncompleteLeaderboard, collect_declared, read_declaration
    from sourcesum.board.citation import (
        SOFTWARE_AUTHOR,
        SOFTWARE_TITLE,
        harness_revision,
        plugin_rows,
        software_bibtex,
    )
    from sourcesum.data import dataset
    from sourcesum.store.stores import ScoreStore

    path = Path(args.declaration) if args.declaration else paths.DECLARATION_PATH
    declaration = read_declaration(path)
    ds = dataset(declaration.dataset)
    from sourcesum.cli.common import declared_store_root

    root = declared_store_root(args.scores_dir)
    revision = harness_revision()
    digest: str | None = None
    incomplete = 0
    rows: list[dict[str, Any]] = []
    try:
        board = collect_declared(declaration, ScoreStore(root, writable=False))
    except IncompleteLeaderboard as exc:
        incomplete = incomplete_count(str(exc))
    else:
        digest = board.inputs_sha256
        rows = [row.as_dict() for row in plugin_rows(board)]
    return {
        "dataset": {"name": ds.name, "title": ds.title, "bibtex": ds.citation.strip() or None},
        "tasks": [
            {"name": t.name, "title": t.title, "bibtex": t.citation.strip() or None}
            for t in (dataset(task.dataset) for task in declaration.tasks)
        ],
        "software": {
            "title": SOFTWARE_TITLE,
            "author": SOFTWARE_AUTHOR,
            "version": revision.version,
            "commit": revision.commit,
            "dirty": revision.dirty,
            "date": revision.date,
            "bibtex": software_bibtex(revision),
        },
        "board": {
            "declaration": str(path),
            "scores_dir": str(root),
            "inputs_sha256": digest,
            "incomplete_entries": incomplete,
        },
        "plugin_rows": rows,
    }


def format_citation(payload: dict[str, Any]) -> str:
    """The text form: BibTeX first (the other lines are ``%`` comments or follow the entries,
    so the output pastes into a ``.bib`` file as it is), then the board and its plugin rows."""
    data, software, board = payload["dataset"], payload["software"], payload["board"]
    lines = [f"% {data['title']}, the dataset of this board: cite its paper"]
    lines += [data["bibtex"]] if data["bibtex"] else [f"% dataset {data['name']} declares no citation"]
    for task in payload["tasks"]:
        lines += ["", f"% {task['title']}, a transfer task on this board: cite its paper"]
        lines += [task["bibtex"]] if task["bibtex"] else [f"% dataset {task['name']} declares no citation"]
    lines += ["", f"% {software['title']}, the harness that computed the board", software["bibtex"]]
    if software["commit"] is None:
        lines.append(
            f"% no commit is known (sourcesum does not run from a git checkout): version {software['version']} only"
        )
    lines += ["", f"board: {board['declaration']} (entries from {board['scores_dir']})"]
    if board["inputs_sha256"] is not None:
        lines.append(
            f"inputs sha256: {board['inputs_sha256']} (the declaration, the data and every entry's scores)"
        )
    if not payload["plugin_rows"]:
        which = "none" if board["inputs_sha256"] is not None else "not known (the board is incomplete)"
        lines.append(f"plugin rows: {which}; for a row of your own ranker package, {PLUGIN_ADVICE}")
    else:
        lines.append(f"plugin rows: {PLUGIN_ADVICE}")
        for row in payload["plugin_rows"]:
            lines.append(
                f"  {row['row']}: package {row['package']} {row['package_version']}, "
                f"ranker {row['ranker']} version {row['ranker_version']}"
            )
            lines += [f"    {split}: entry {key}" for split, key in row["entries"].items()]
    return "\n".join(lines)


def cmd_cite(args: argparse.Namespace) -> int:
    payload = citation_payload(args)
    if args.json:
        print_json(SCHEMAS["cite"], payload)
    else:
        print(terminal(format_citation(payload)))
    missing = payload["board"]["incomplete_entries"]
    if missing:
        command = "sourcesum leaderboard" + "".join(
            f" --{flag} {value}"
            for flag, value in (("declaration", args.declaration), ("scores-dir", args.scores_dir))
            if value
        )
        entries = f"{missing} declared entr{'y' if missing == 1 else 'ies'}"
        print(
            terminal(
                f"note: the board's inputs are incomplete ({entries} missing, partial or invalid; "
                f"`{command}` names them); no inputs digest"
            ),
            file=sys.stderr,
        )
    return 0
