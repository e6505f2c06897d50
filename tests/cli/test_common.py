"""What the commands share (sourcesum.cli.common): ``--help`` is plain text; bad input is one
error line with exit status 2; and every JSON output carries its ``schema`` and exactly the
fields docs/json.md documents (both ways), on the synthetic datasets."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest
from sourcesum.cli import DESCRIPTION, main
from sourcesum.cli.common import SCHEMAS
from sourcesum.data import load_split
from sourcesum.paths import PROJECT_ROOT
from sourcesum.rankers.lm.loading import register_loaded
from support.boards import declaration
from support.cli import one_error_line, run_cli
from support.data import SYNTHETIC
from support.models import tiny_llama, tiny_tokenizer

DOC = PROJECT_ROOT / "docs" / "json.md"


PLUGIN = importlib.util.find_spec("sourcesum_overlap") is not None
"""The example plugin is installed (scripts/test.sh installs it): the cited board gets its row."""


# -- --help -------------------------------------------------------------------------------------


def test_help_is_plain_text(capsys):
    code, out, _ = run_cli(capsys, "--help")
    assert code == 0 and " ".join(DESCRIPTION.split()) in " ".join(out.split())
    assert "cite" in out
    commands = re.search(r"\{([a-z,-]+)\}", out).group(1).split(",")
    assert {"list", "run", "evaluate", "leaderboard", "cite", "show", "export"} <= set(commands)
    for command in [None, *commands]:
        code, text, _ = run_cli(capsys, *([command] if command else []), "--help")
        assert code == 0
        for markup in ("``", ":mod:", ":func:", ":class:", ":data:", ":meth:"):
            assert markup not in text, (command, markup)
        assert not re.search(r"^\s*\.\. ", text, re.MULTILINE), command  # no RST directive


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
        sourcesum_file = root / "lead.json"
        sourcesum_file.write_text(
            json.dumps(
                [
                    {
                        "id": p.id,
                        "annotations": [
                            {"sentence": t, "lead": float(-i)} for i, t in enumerate(p.sentences)
                        ],
                    }
                    for p in split
                ]
            )
        )
        out["evaluate --json"] = [  # a TREC run with per-pair values, a SourceSum-format file
            run("evaluate", str(run_file), "--format", "trec", "--per-pair", "--json"),
            run("evaluate", str(sourcesum_file), "--field", "lead", "--json"),
        ]
        patch.setenv("SOURCESUM_CACHE_DIR", str(root / "cache"))
        tokenizer = tiny_tokenizer()
        register_loaded("tiny-json", tiny_llama(tokenizer), tokenizer)
        out["probe-layers --json"] = run(
            "probe-layers", "--model", "tiny-json", "--layers", "1,all", "--protocols", "cross-corpus",
            "--split", "synthnews", "--resamples", "1000", "--compute", "--no-progress", "--json",
        )  # fmt: skip
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


# --- bad input: one error line naming the input, exit 2 --------------------------------------


@pytest.fixture
def bad_files(tmp_path: Path) -> Path:
    rows = json.loads((SYNTHETIC / "synth_alpha_sys.json").read_text())
    for row in rows:
        for ann in row["annotations"]:
            ann["s"] = 0.5
    rows[0]["annotations"][0]["s"] = 10**400
    (tmp_path / "bigint.json").write_text(json.dumps(rows))
    (tmp_path / "string_ann.json").write_text(json.dumps([{"id": "p", "annotations": "abc"}]))
    (tmp_path / "deep.json").write_text("[" * 200_000 + "]" * 200_000)
    (tmp_path / "binary.run").write_bytes(bytes(range(256)) * 4)
    (tmp_path / "afile").write_text("x")
    (tmp_path / "nosuch.toml").write_text('dataset = "nosuch"\n[[rows]]\nranker = "lead"\n')
    (tmp_path / "typo.toml").write_text('[[rows]]\nrankr = "lead"\n')
    return tmp_path


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (
            ["run", "--ranker", "bm25", "-p", "bm25.variant=foo", "--split", "synth_alpha_sys"],
            "bm25.variant=foo",
        ),
        (["run", "--ranker", "bm25", "-p", "bm25.k1=abc", "--split", "synth_alpha_sys"], "bm25.k1=abc"),
        (["run", "--ranker", "tfidf", "-p", "tfidf.idf=foo", "--split", "synth_alpha_sys"], "tfidf.idf=foo"),
        (
            ["run", "--ranker", "rouge1", "-p", "rouge1.measure=foo", "--split", "synth_alpha_sys"],
            "rouge1.measure=foo",
        ),
        (["run", "--ranker", "", "--split", "synth_alpha_sys"], "--ranker '': name at least one ranker"),
        (
            ["run", "--ranker", "lead", "--split", "synth_alpha_sys", "--scores-dir", "{tmp}/afile"],
            "is a file, not a folder",
        ),
        (["run", "--ranker", "lead", "--split", "no_such_split"], "unknown split 'no_such_split'"),
        (["evaluate", "{tmp}", "--field", "x"], "is a folder, not a score file"),
        (["evaluate", "{tmp}/string_ann.json", "--field", "x"], "'annotations' is not a list"),
        (["evaluate", "{tmp}/bigint.json", "--field", "s"], "too large for a float"),
        (["evaluate", "{tmp}/deep.json", "--field", "x"], "nested too deeply"),
        (["evaluate", "{tmp}/binary.run", "--format", "trec"], "binary.run: not UTF-8 text"),
        (
            ["compare", "lead", "random", "--resamples", "0"],
            "--resamples: 0 is not between 1,000 and 100,000",
        ),
        (
            ["compare", "lead", "random", "--resamples", "-5"],
            "--resamples: -5 is not between 1,000 and 100,000",
        ),
        (
            ["compare", "lead", "random", "--split", "synth_alpha_sys_all"],
            "compare works on the board splits",
        ),
        (
            ["leaderboard", "--declaration", "{tmp}/nosuch.toml"],
            "dataset = 'nosuch' is not a registered dataset",
        ),
        (["leaderboard", "--declaration", "{tmp}/typo.toml"], 'needs ranker = "name"'),
        (["export", "--dataset", "synthnews", "-o", "{tmp}/afile"], "is a file, not a folder"),
        (["export", "--dataset", "synthnews", "-o", "/proc/no/such/place"], "error: /proc/no"),
    ],
)
def test_bad_input_is_one_error_line_with_exit_2(capsys, scores_dir, bad_files, argv, fragment):
    argv = [a.replace("{tmp}", str(bad_files)) for a in argv]
    code, _, err = run_cli(capsys, *argv)
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ") and fragment in lines[0], err


SPLIT = "synth_alpha_sys"


@pytest.mark.parametrize(
    "argv,fragment",
    [
        (
            ["run", "--ranker", "learned", "-p", "learned.C=1e300", "--split", SPLIT],
            "learned.C=1e+300: expected a number >= 1e-06 and <= 10000",
        ),
        (
            ["run", "--ranker", "learned", "-p", "learned.seed=-1", "--split", SPLIT],
            "learned.seed=-1: expected an integer >= 0",
        ),
        (["run", "--ranker", "learned", "-p", "learned.folds=500", "--split", SPLIT], "learned.folds=500"),
        (["compare", "lead", "bm25", "--split", SPLIT, "--seed", "-5"], "-5 is not >= 0"),
        (["compare", "lead", "bm25", "--split", SPLIT, "--resamples", "1e8"], "'1e8' is not an integer"),
        (
            ["compare", "lead", "bm25", "--split", SPLIT, "--resamples", "100000000"],
            "is not between 1,000 and 100,000",
        ),
        (
            ["compare", "lead", "bm25", "--split", SPLIT, "--resamples", "1"],
            "is not between 1,000 and 100,000",
        ),
        (
            [
                "run",
                "--ranker",
                "learned",
                "-p",
                "learned.protocol=kfold",
                "-p",
                "learned.folds=50",
                "-p",
                "learned.rankers=lead",
                "--split",
                SPLIT,
            ],
            "50 folds need at least 50 documents",
        ),
    ],
)
def test_nonsense_is_one_clear_error(argv, fragment, scores_dir, capsys):
    assert fragment in one_error_line(capsys, *argv)
