"""``sourcesum cite``: what to cite and report for the declared board: the dataset's paper(s),
its data at the pinned commit the board's header names, and this harness as BibTeX; the
board's inputs digest; what identifies each plugin row; and the entry key of every declared
row on every split (the board, its held-out test and its task boards).

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
    p.add_argument(
        "--scores-dir",
        help="your store, read over data/scores (the committed board, leaderboard.toml without "
        "--scores-dir, reads data/scores alone)",
    )
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
        data_bibtex,
        declared_entries,
        harness_revision,
        plugin_rows,
        software_bibtex,
    )
    from sourcesum.data import dataset

    path = Path(args.declaration) if args.declaration else paths.DECLARATION_PATH
    declaration = read_declaration(path)
    ds = dataset(declaration.dataset)
    from sourcesum.cli.common import declared_stores

    stores = declared_stores(args.scores_dir, args.declaration)
    revision = harness_revision()
    digest: str | None = None
    incomplete = 0
    rows: list[dict[str, Any]] = []
    entries: list[dict[str, Any]] = []
    try:
        board = collect_declared(declaration, stores)
    except IncompleteLeaderboard as exc:
        incomplete = incomplete_count(str(exc))
    else:
        digest = board.inputs_sha256
        rows = [row.as_dict() for row in plugin_rows(board)]
        entries = [row.as_dict() for row in declared_entries(board)]

    def cited(each: Any) -> dict[str, Any]:
        source = next(iter(each.sources().values()))
        return {
            "name": each.name,
            "title": each.title,
            "bibtex": each.citation.strip() or None,
            "data": {
                "repository": source.repository,
                "commit": source.commit,
                "license": source.license,
                "bibtex": data_bibtex(each),
            },
        }

    return {
        "dataset": cited(ds),
        "tasks": [cited(dataset(task.dataset)) for task in declaration.tasks],
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
            "scores_dir": str(stores.root),
            "stores": [str(store.root) for store in stores.stores],
            "inputs_sha256": digest,
            "incomplete_entries": incomplete,
        },
        "plugin_rows": rows,
        "entries": entries,
    }


def format_citation(payload: dict[str, Any]) -> str:
    """The text form: BibTeX first (the other lines are ``%`` comments or follow the entries,
    so the output pastes into a ``.bib`` file as it is), then the board and its plugin rows."""
    data, software, board = payload["dataset"], payload["software"], payload["board"]
    lines = [f"% {data['title']}, the dataset of this board: cite its paper"]
    lines += [data["bibtex"]] if data["bibtex"] else [f"% dataset {data['name']} declares no citation"]
    lines += ["", f"% its data, at the commit the board's header names ({data['data']['repository']})"]
    lines.append(data["data"]["bibtex"])
    for task in payload["tasks"]:
        lines += ["", f"% {task['title']}, a transfer task on this board: cite its paper"]
        lines += [task["bibtex"]] if task["bibtex"] else [f"% dataset {task['name']} declares no citation"]
        lines += [f"% its data ({task['data']['repository']})", task["data"]["bibtex"]]
    lines += ["", f"% {software['title']}, the harness that computed the board", software["bibtex"]]
    if software["commit"] is None:
        lines.append(
            f"% no commit is known (sourcesum does not run from a git checkout): version {software['version']} only"
        )
    lines += ["", f"board: {board['declaration']} (entries from {' over '.join(board['stores'])})"]
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
    if payload["entries"]:
        lines.append("entries of the declared rows (split: key), board by board:")
        for part in dict.fromkeys(row["board"] for row in payload["entries"]):
            lines.append(f"  {part}:")
            for row in (r for r in payload["entries"] if r["board"] == part):
                keys = ", ".join(f"{split}: {key}" for split, key in row["entries"].items())
                lines.append(f"    {row['row']}: {keys}")
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
