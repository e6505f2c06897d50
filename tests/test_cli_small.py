"""Small command-line behaviours: ``export`` needs ``-o``; ``show --list`` lists pair ids;
``--help`` is plain text; ``evaluate`` refuses a TREC run read as SourceSum JSON; ``site``
reports the index page and its plot apart; and every JSON output carries its ``schema`` and
exactly the fields docs/json.md documents (both ways), on the synthetic datasets."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
from typing import Any

import pytest
from helpers import declaration
from sourcesum.cli import DESCRIPTION, build_parser, main
from sourcesum.cli.common import SCHEMAS
from sourcesum.data import dataset, load_split
from sourcesum.paths import PROJECT_ROOT

DOC = PROJECT_ROOT / "docs" / "json.md"
PLUGIN = importlib.util.find_spec("sourcesum_overlap") is not None
"""The example plugin is installed (scripts/test.sh installs it): the cited board gets its row."""


def run_cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# -- export -o ----------------------------------------------------------------------------------
def test_export_needs_an_output_folder(capsys, scores_dir, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(capsys, "export", "--dataset", "synthnews")
    assert code == 2 and out == ""
    assert err.strip() == (
        "error: sourcesum export: the following arguments are required: --output/-o "
        "(see sourcesum export --help)"
    )
    assert list(tmp_path.iterdir()) == [scores_dir]  # no ./trec
    # every `sourcesum export` the README shows in a code block still parses
    readme = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    shown = [
        line.split("#")[0].strip()
        for line in readme.splitlines()
        if line.startswith("sourcesum export ") or line.startswith("$ sourcesum export ")
    ]
    assert "sourcesum export -o /tmp/sourcesum-trec" in shown
    for line in shown:
        args = build_parser().parse_args(shlex.split(line.removeprefix("$ "))[1:])
        assert args.output


# -- show --list --------------------------------------------------------------------------------
def test_show_list_prints_pair_ids_with_split_document_and_summary(capsys):
    split = load_split("synth_alpha_sys")
    code, out, _ = run_cli(capsys, "show", "--list", split.name, "--width", "80")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["pair", "split", "document", "summary"]
    assert len(lines) == 1 + len(split) and all(len(line) <= 80 for line in lines)
    for line, pair in zip(lines[1:], split.pairs, strict=True):
        assert line.startswith(f"{pair.id}  ") and f"  {split.name}  " in line
        assert (
            " ".join(pair.sentences[0].split())[:10] in line and " ".join(pair.summary.split())[:10] in line
        )
    code, out, _ = run_cli(capsys, "show", "--list", "synthnews", "--json")
    listed = json.loads(out)
    assert code == 0 and listed["schema"] == "sourcesum-pairs/1"
    board = ("synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref")
    expected = [(p.id, name) for name in board for p in load_split(name).pairs]
    assert [(r["id"], r["split"]) for r in listed["pairs"]] == expected
    first = listed["pairs"][0]
    assert (
        first["summary"] == split.pairs[0].summary and first["first_sentence"] == split.pairs[0].sentences[0]
    )
    assert first["sentences"] == split.pairs[0].n_sentences


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (["show"], "show: give a pair id (`sourcesum show --list [SPLIT]` lists them)"),
        (["show", "x__0", "--list", "synth_alpha_sys"], "give a pair id or --list, not both"),
        (["show", "--list", "nosuch"], "unknown split 'nosuch'"),
    ],
)
def test_show_without_or_with_both_is_one_error_line(capsys, argv, fragment):
    code, _, err = run_cli(capsys, *argv)
    assert code == 2 and fragment in err and len(err.strip().splitlines()) == 1


# -- --help -------------------------------------------------------------------------------------
def test_help_is_plain_text(capsys):
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0 and " ".join(DESCRIPTION.split()) in " ".join(out.split())
    assert "cite" in out
    commands = re.search(r"\{([a-z,]+)\}", out).group(1).split(",")
    assert {"list", "run", "evaluate", "leaderboard", "cite", "show", "export"} <= set(commands)
    for command in [None, *commands]:
        code, text, _ = run_cli(capsys, *([command] if command else []), "--help")
        assert code == 0
        for markup in ("``", ":mod:", ":func:", ":class:", ":data:", ":meth:"):
            assert markup not in text, (command, markup)
        assert not re.search(r"^\s*\.\. ", text, re.MULTILINE), command  # no RST directive


# -- evaluate on a TREC run without --format trec -------------------------------------------------
def test_evaluate_a_trec_run_without_format_trec_says_so(capsys, tmp_path):
    split = load_split("synth_alpha_sys")
    run_file = tmp_path / "lead.run"
    run_file.write_text(
        "".join(f"{p.id} Q0 s{i} {i + 1} {-i} lead\n" for p in split for i in range(p.n_sentences))
    )
    for extra in ([], ["--field", "score"]):
        code, _, err = run_cli(capsys, "evaluate", str(run_file), *extra)
        assert code == 2 and len(err.strip().splitlines()) == 1
        assert (
            err.startswith(f"error: evaluate {run_file}: this is a TREC run file")
            and "pass --format trec" in err
        )
    code, out, _ = run_cli(capsys, "evaluate", str(run_file), "--format", "trec", "--json")
    assert code == 0 and json.loads(out)["results"][0]["split"] == split.name
    # JSON that is not a TREC run keeps its own message
    broken = tmp_path / "broken.json"
    broken.write_text("[{")
    code, _, err = run_cli(capsys, "evaluate", str(broken), "--field", "s")
    assert code == 2 and "not valid JSON" in err and "--format trec" not in err


# -- site: page and plot sizes apart ------------------------------------------------------------
def test_site_reports_the_page_and_the_plot_apart(capsys, scores_dir, tmp_path):
    assert main(["run", "--ranker", "lead,random,oracle", "--split", "synthnews", "--no-progress"]) == 0
    capsys.readouterr()
    out_dir = tmp_path / "site"
    code, out, _ = run_cli(capsys, "site", "--all", "--dataset", "synthnews", "-o", str(out_dir))
    assert code == 0

    def kb(name: str) -> str:
        return f"{name} {(out_dir / name).stat().st_size / 1024:.0f} KB"

    explorers = [f"explore-{name}.html" for name in dataset("synthnews").board_splits()]  # board order
    assert sorted(explorers) == sorted(p.name for p in out_dir.glob("explore-*.html"))
    sizes = ", ".join([kb("index.html"), kb("plot.png")] + [kb(e) for e in explorers])
    assert out.strip().endswith(f"rows; {sizes})")


# -- JSON: schema and fields as docs/json.md documents them -------------------------------------
SECTION = re.compile(r"^## `sourcesum ([^`]+)`\s*$")
SCHEMA = re.compile(r"^Schema: `([^`]+)`\s*$")
BLOCK = re.compile(r"^(?:Top-level fields|Fields of `([^`]+)`)(.*):\s*(?:as `([^`]+)`\.)?\s*$")
BULLET = re.compile(r"^- ((?:`[^`]+`(?:, )?)+)( \*\(optional\)\*)?:")


def documented() -> dict[str, dict[str, Any]]:
    """docs/json.md by command: its schema and, per path (``""`` = top level), the documented
    field names and which of them are optional."""
    sections: dict[str, dict[str, Any]] = {}
    current: dict[str, Any] | None = None
    block: str | None = None
    for line in DOC.read_text(encoding="utf-8").splitlines():
        if match := SECTION.match(line):
            current = sections.setdefault(match.group(1), {"schema": None, "blocks": {}, "aliases": {}})
            block = None
        elif current is None:
            continue
        elif match := SCHEMA.match(line):
            current["schema"] = match.group(1)
        elif match := BLOCK.match(line):
            block = match.group(1) or ""
            if match.group(3):
                current["aliases"][block] = match.group(3)
                block = None
            else:
                current["blocks"][block] = {}
        elif block is not None and (match := BULLET.match(line)):
            for name in re.findall(r"`([^`]+)`", match.group(1)):
                current["blocks"][block][name] = bool(match.group(2))
    return sections


def at(payload: Any, path: str) -> list[dict[str, Any]]:
    """The objects at ``path`` (``a.b[]``: items of list ``b``; ``a.b{}``: values of map ``b``)."""
    items = [payload]
    for token in path.split(".") if path else []:
        name, suffix = token.rstrip("[]{}"), token[len(token.rstrip("[]{}")) :]
        items = [item[name] for item in items if isinstance(item, dict) and name in item]
        if suffix == "[]":
            items = [x for item in items for x in item]
        elif suffix == "{}":
            items = [x for item in items for x in item.values()]
    return [item for item in items if isinstance(item, dict)]


def expand(name: str, measures: dict[str, list[str]]) -> list[str]:
    """``<m>_ci`` -> ``ndcg_ci``, ``map_ci`` (``<M>``: measure names)."""
    names = [name]
    for placeholder, values in measures.items():
        names = [n.replace(placeholder, v) for n in names for v in values] if placeholder in name else names
    return names


@pytest.fixture(scope="module")
def outputs(tmp_path_factory) -> dict[str, dict[str, Any]]:
    """Every JSON output on the synthetic datasets, by the command as docs/json.md heads it."""
    import contextlib
    import io

    from sourcesum import paths

    root = tmp_path_factory.mktemp("json")
    scores = root / "scores"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCESUM_SCORES_DIR", str(scores))
        patch.setattr(paths, "COMMITTED_SCORES_DIR", root / "committed")

        def run(*argv: str) -> dict[str, Any]:
            buffer = io.StringIO()
            with contextlib.redirect_stdout(buffer):
                code = main(list(argv))
            assert code == 0, argv
            result: dict[str, Any] = json.loads(buffer.getvalue())
            return result

        rows = ("lead", "random", "bm25") + (("overlap",) if PLUGIN else ())
        splits = "synthnews,synth_alpha_sys_all,synth_claims"
        out = {
            "run --json": run(
                "run", "--ranker", ",".join([*rows, "oracle"]), "--split", splits, "--json", "--no-progress"
            )
        }
        board = root / "board.toml"
        board.write_text(
            declaration(rows=rows)
            + '\n[[tasks]]\ndataset = "synthclaims"\n'
            + "".join(f'[[tasks.rows]]\nranker = "{r}"\n\n' for r in ("lead", "bm25"))
            + '\n[heldout]\nsplits = ["synth_alpha_sys_all"]\n'
            + "".join(f'[[heldout.rows]]\nranker = "{r}"\n\n' for r in ("lead", "random", "bm25"))
        )
        declared = ("--declaration", str(board), "--scores-dir", str(scores))
        # a second board whose held-out test is pending: tfidf has no entry on the held-out split
        pending = root / "pending.toml"
        pending.write_text(board.read_text() + '[[heldout.rows]]\nranker = "tfidf"\n')
        out["leaderboard --format json"] = [
            run("leaderboard", *declared, "--format", "json"),
            run(
                "leaderboard", "--declaration", str(pending), "--scores-dir", str(scores), "--format", "json"
            ),
        ]
        out["cite --json"] = run("cite", *declared, "--json")
        out["list --json"] = run("list", "--json")
        out["compare --json"] = run("compare", "lead", "random", "--split", "synth_alpha_sys", "--json")
        split = load_split("synth_beta_sys")
        out["show PAIR --json"] = run("show", split.pairs[0].id, "--json")
        out["show --list --json"] = run("show", "--list", split.name, "--json")
        out["verify --json"] = run("verify", str(scores / "lead"), "--json")
        out["explain --json"] = run(
            "explain", "learned", "-p", "learned.rankers=bm25,lead", "--split", "synth_alpha_sys", "--json"
        )
        lines = [f"{p.id} Q0 s{i} {i + 1} {-i} lead\n" for p in split for i in range(p.n_sentences)]
        run_file = root / "lead.run"
        run_file.write_text("".join(lines))
        out["evaluate --json"] = run("evaluate", str(run_file), "--format", "trec", "--json")
    return out


def test_every_json_output_is_documented_field_by_field(outputs):
    """For each output and each path docs/json.md documents: every field of the output is
    documented, every documented field not marked optional is present, and the top level
    matches exactly. All differences are reported at once."""
    docs = documented()
    assert set(docs) == set(outputs), "docs/json.md heads one section per JSON output"
    measures = {"<m>": ["ndcg", "map"], "<M>": ["nDCG", "AP"]}
    problems: list[str] = []
    for command, output in outputs.items():
        doc = docs[command]
        payloads = output if isinstance(output, list) else [output]  # several: fields are pooled
        for payload in payloads:
            if payload["schema"] != doc["schema"] or next(iter(payload)) != "schema":
                problems.append(
                    f"{command}: schema {payload['schema']!r} first, documented {doc['schema']!r}"
                )
        for path, fields in doc["blocks"].items():
            objects = [obj for payload in payloads for obj in at(payload, path)]
            for alias, target in doc["aliases"].items():
                if target == path:
                    objects += [obj for payload in payloads for obj in at(payload, alias)]
            if path == "plugin_rows[]" and not objects:  # the board has a plugin row when one is installed
                assert not PLUGIN, "the example plugin is installed, so the cited board has its row"
                continue
            if not objects:
                problems.append(f"{command}: docs/json.md documents `{path}`, which the output lacks")
                continue
            allowed = {name for field in fields for name in expand(field, measures)}
            required = {
                name for field, optional in fields.items() if not optional for name in expand(field, measures)
            }
            seen = {key for obj in objects for key in obj}
            if path == "":
                required = allowed
            if seen - allowed:
                problems.append(f"{command} `{path or 'top level'}`: undocumented {sorted(seen - allowed)}")
            if required - seen:
                problems.append(
                    f"{command} `{path or 'top level'}`: documented, absent {sorted(required - seen)}"
                )
    assert problems == []


def test_every_schema_is_documented_once():
    docs = documented()
    schemas = [doc["schema"] for doc in docs.values()]
    assert sorted(schemas) == sorted([*SCHEMAS.values(), "sourcesum-leaderboard/3"])
    assert all(re.fullmatch(r"sourcesum-[a-z]+/[1-9][0-9]*", s) for s in schemas)
