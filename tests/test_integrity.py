"""Numbers that cannot be silently wrong: typed parameters, configurations known without an
instance, the declared leaderboard, a score store that verifies itself, store layers that never
disagree silently, concurrent writers, reversible exports, and one-line errors for bad input.

Unit tests run on the synthetic dataset ``synthnews`` (tests/fixtures/synthetic); the tests
marked ``real_data`` check the committed board and store themselves."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Literal

import pytest
from sourcesum import paths
from sourcesum.board import collect_declared, read_declaration
from sourcesum.cli import main
from sourcesum.data import load_split
from sourcesum.errors import ParameterError, ScoreFileError
from sourcesum.outputs.trec import export_name, label_of
from sourcesum.rankers import BUILTIN_RANKERS, RANKERS, Ranker, create_ranker
from sourcesum.runner.configs import Configuration
from sourcesum.runner.run import run_ranker
from sourcesum.store.entry import ScoreEntry
from sourcesum.store.migrate import migrate
from sourcesum.store.stores import ScoreStore, StoreStack, read_entry

SYNTHETIC = Path(__file__).resolve().parent / "fixtures" / "synthetic"


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# --- typed parameters ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text,value",
    [
        ("False", False),
        ("no", False),
        ("OFF", False),
        ("0", False),
        ("true", True),
        ("Yes", True),
        ("on", True),
        ("1", True),
    ],
)
def test_boolean_spellings_parse_by_type(text, value):
    ranker = create_ranker("rouge1", use_stemmer=text)
    assert ranker.use_stemmer is value
    assert ranker.label == ("rouge1" if value else "rouge1(use_stemmer=False)")


@pytest.mark.parametrize(
    "name,param,value,fragment",
    [
        ("rouge1", "use_stemmer", "maybe", "rouge1.use_stemmer=maybe: expected a boolean"),
        ("bm25", "variant", "foo", "bm25.variant=foo: expected one of okapi, plus, l"),
        ("bm25", "k1", "abc", "bm25.k1=abc: expected a number >= 0"),
        ("bm25", "b", "1.5", "bm25.b=1.5: expected a number >= 0 and <= 1"),
        ("tfidf", "idf", "foo", "tfidf.idf=foo: expected one of split, document"),
        ("rouge1", "measure", "foo", "rouge1.measure=foo: expected one of fmeasure"),
        ("random", "seed", "1.5", "random.seed=1.5: expected an integer"),
        ("random", "sede", "1", "ranker 'random' has no parameter 'sede'; it accepts seed"),
    ],
)
def test_bad_parameter_values_name_the_parameter(name, param, value, fragment):
    with pytest.raises(ParameterError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        create_ranker(name, **{param: value})


def test_equal_values_are_one_configuration():
    a, b = create_ranker("bm25", k1="1"), create_ranker("bm25", k1=1.0)
    assert a.get_params() == b.get_params() and a.get_params()["k1"] == 1.0
    assert isinstance(create_ranker("bm25", k1=1).k1, float)
    assert create_ranker("lexrank", threshold="none").threshold is None
    # one configuration, one key: the class computes it from either spelling
    assert Configuration.of("bm25", {"k1": "1"}).entry_key("synth_alpha_sys", "sha") == Configuration.of(
        "bm25", {"k1": 1.0}
    ).entry_key("synth_alpha_sys", "sha")
    assert Configuration.of("bm25", {"k1": "1"}).params == a.get_params()


class _SimplePlugin(Ranker):
    """A plugin written the simple way: types come from annotations and defaults."""

    name = "simple_plugin_test"

    def __init__(
        self,
        flag: bool = True,
        count: int = 2,
        mode: Literal["a", "b"] = "a",
        anything=None,
        ratio: float | None = None,
    ):
        self.flag, self.count, self.mode, self.anything, self.ratio = flag, count, mode, anything, ratio

    def score(self, pair):
        return [0.0] * pair.n_sentences


def test_plugin_parameter_types_come_from_annotations_and_defaults():
    values = _SimplePlugin.canonical_params(
        {"flag": "off", "count": "3", "mode": "b", "anything": "[1, 2]", "ratio": "none"}
    )
    assert values == {"flag": False, "count": 3, "mode": "b", "anything": [1, 2], "ratio": None}
    assert _SimplePlugin.canonical_params({"anything": "plain text"}) == {"anything": "plain text"}
    with pytest.raises(ParameterError, match="simple_plugin_test.mode=c: expected one of a, b"):
        _SimplePlugin.canonical_params({"mode": "c"})
    with pytest.raises(ParameterError, match="simple_plugin_test.count=x: expected an integer"):
        _SimplePlugin.canonical_params({"count": "x"})
    full = _SimplePlugin.full_params({"count": "3"})
    assert full == {"flag": True, "count": 3, "mode": "a", "anything": None, "ratio": None}
    assert _SimplePlugin.label_for(full) == "simple_plugin_test(count=3)"
    assert full == _SimplePlugin(count=3).get_params()


def test_list_shows_every_parameter(capsys):
    code, out, _ = run_cli(capsys, "list", "--json")
    assert code == 0
    rankers = {r["name"]: r for r in json.loads(out)["rankers"]}
    bm25 = {p["name"]: p for p in rankers["bm25"]["parameters"]}
    assert bm25["variant"]["choices"] == ["okapi", "plus", "l"] and bm25["k1"]["default"] == 1.5
    assert {p["name"] for p in rankers["embedding"]["parameters"] if p["runtime"]} == {"device", "batch_size"}


# --- configurations: labels and keys without an instance ---------------------------------------

_PROMPT = "Rate how much the sentence contributes to the summary.\nSummary: {summary}\nSentence: {sentence}\n"


def _configurations() -> list:
    """Every built-in with its defaults, then non-default parameter sets whose canonical form is
    computed (dtype resolved, feature groups ordered, bases completed, a template pinned)."""
    cases = [
        # llm_judge's default template is the paper's prompt file (published data)
        pytest.param(name, {}, id=name, marks=[pytest.mark.real_data] if name == "llm_judge" else [])
        for name in BUILTIN_RANKERS
    ]
    cases += [
        pytest.param("random", {"seed": "3"}, id="random-seed-text"),
        pytest.param("bm25", {"k1": "1", "variant": "plus"}, id="bm25-k1-int"),
        pytest.param("lexrank", {"threshold": "none"}, id="lexrank-none"),
        pytest.param("rouge1", {"use_stemmer": "off"}, id="rouge1-bool-text"),
        pytest.param("pmi", {"dtype": "auto"}, id="lm-dtype-auto"),
        pytest.param("perplexity_gain", {"dtype": "auto", "device": "cpu"}, id="lm-dtype-auto-cpu"),
        pytest.param("attention", {"dtype": "bfloat16", "batch_size": 2}, id="lm-runtime-batch"),
        pytest.param("fusion", {"rankers": "tfidf, bm25", "method": "rrf"}, id="fusion-bases-order"),
        pytest.param(
            "fusion",
            {"rankers": '[{"ranker": "bm25", "params": {"k1": 1}}, "random"]'},
            id="fusion-bases-json",
        ),
        pytest.param("learned", {"features": "length,position"}, id="learned-features-order"),
        pytest.param("learned", {"features": " length "}, id="learned-features-spaces"),
        pytest.param(
            "learned",
            {"model": "lambdamart", "trees": "50", "protocol": "kfold", "folds": 3},
            id="learned-lambdamart-kfold",
        ),
        pytest.param("llm_judge", {"mode": "listwise"}, id="llm-listwise"),
        pytest.param("llm_judge", {"mode": "listwise", "dtype": "auto"}, id="llm-dtype-auto"),
        pytest.param("llm_judge", {"template": "{tmp}/prompt.txt"}, id="llm-template-file"),
        pytest.param(
            "llm_judge",
            {"mode": "listwise", "backend": "openai", "base_url": "http://127.0.0.1:9/v1", "dtype": "auto"},
            id="llm-openai",
        ),
    ]
    return cases


@pytest.mark.parametrize("name,params", _configurations())
def test_a_configuration_is_known_without_an_instance(name, params, tmp_path):
    """``Configuration.of`` (class and parameters only) gives the parameters, label and keys an
    instance has, so the board and the store never build a ranker."""
    (tmp_path / "prompt.txt").write_text(_PROMPT)
    params = {k: v.replace("{tmp}", str(tmp_path)) if isinstance(v, str) else v for k, v in params.items()}
    config = Configuration.of(name, params)
    ranker = create_ranker(name, **params)
    assert config.params == ranker.get_params() and config.label == ranker.label
    # parameters left out of the key at their defaults (e.g. the LM rankers' backend) are absent
    unkeyed = {k for k in getattr(type(ranker), "unkeyed_defaults", {}) if k not in config.params}
    assert set(config.params) | unkeyed == set(ranker.parameters()) - set(type(ranker).runtime_params)
    assert "auto" != config.params.get("dtype", "") or params.get("backend") == "openai"
    same = Configuration.of_ranker(ranker)
    for split in ("synth_alpha_sys", "synth_beta_ref"):
        assert config.key_version(split) == same.key_version(split)
        assert config.entry_key(split, "sha") == same.entry_key(split, "sha")
    # canonical parameters are a fixed point: the stored params give the same configuration
    again = Configuration.of(name, config.params)
    assert again.params == config.params and again.label == config.label


def test_canonical_forms_of_computed_parameters(tmp_path):
    reordered = Configuration.of("learned", {"features": "length,position"})
    assert reordered.params == Configuration.of("learned").params  # the default, "position,length"
    assert reordered.label == Configuration.of("learned").label
    assert "features=length," in Configuration.of("learned", {"features": " length "}).label
    assert Configuration.of("learned", {"features": ""}).params["features"] == ""
    assert Configuration.of("pmi", {"dtype": "auto", "device": "cpu"}).params["dtype"] in (
        "float32",
        "bfloat16",
    )
    fusion = Configuration.of("fusion", {"rankers": "tfidf,bm25"})
    assert [b["ranker"] for b in fusion.params["rankers"]] == ["bm25", "tfidf"]
    assert fusion.params == Configuration.of("fusion", {"rankers": "bm25,tfidf"}).params
    assert [b.label for b in fusion.bases] == ["bm25", "tfidf"]
    assert fusion.bases[0].params == Configuration.of("bm25").params  # every parameter, defaults included
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(_PROMPT)
    pinned = Configuration.of("llm_judge", {"template": str(prompt)}).params["template"]
    assert pinned.startswith(f"{prompt}#sha256=")
    prompt.write_text(_PROMPT + "Answer with a number.\n")  # other contents: another configuration
    assert Configuration.of("llm_judge", {"template": str(prompt)}).params["template"] != pinned
    with pytest.raises(ParameterError, match="has changed since these scores were computed"):
        create_ranker("llm_judge", template=pinned)


def test_labels_and_keys_never_build_a_ranker(monkeypatch):
    def refuse(cls, *args, **kwargs):
        raise AssertionError(f"{cls.__name__} was instantiated")

    monkeypatch.setattr(Ranker, "__new__", refuse)
    learned = Configuration.of("learned", {"rankers": "bm25,tfidf"})
    assert learned.label == "learned(model=logistic, protocol=cross-corpus, rankers=bm25+tfidf)"
    assert learned.protocol.name == "cross-corpus" and [b.ranker for b in learned.bases] == ["bm25", "tfidf"]
    # the key version follows the bases and the training data: other data, other key
    assert learned.key_version("synth_alpha_sys").startswith("1+")
    assert learned.entry_key("synth_alpha_sys", "a") != learned.entry_key("synth_alpha_sys", "b")
    fusion = Configuration.of("fusion", {"rankers": "bm25,tfidf"})
    assert fusion.key_version("synth_alpha_sys") != Configuration.of(
        "fusion", {"rankers": "bm25"}
    ).key_version("synth_alpha_sys")
    assert Configuration.of("random", {"seed": 3}).label == "random(seed=3)"
    with pytest.raises(AssertionError, match="instantiated"):
        create_ranker("random")


# --- the declared leaderboard ----------------------------------------------------------------


def _declare(path: Path, rows: list[str], references: list[str] = (), dataset: str = "synthnews") -> Path:
    text = f'dataset = "{dataset}"\n\n'
    text += "".join(f'[[rows]]\nranker = "{r}"\n\n' for r in rows)
    text += "".join(f'[[references]]\nranker = "{r}"\n\n' for r in references)
    path.write_text(text)
    return path


def test_declared_board_renders_exactly_the_declared_rows(capsys, scores_dir, tmp_path):
    code, _, err = run_cli(
        capsys, "run", "--ranker", "lead,random,oracle", "--split", "synthnews", "--no-progress"
    )
    assert code == 0, err
    declaration = _declare(tmp_path / "leaderboard.toml", ["lead"], ["oracle"])
    out = tmp_path / "board.md"
    code, _, err = run_cli(
        capsys,
        "leaderboard",
        "--declaration",
        str(declaration),
        "--scores-dir",
        str(scores_dir),
        "-o",
        str(out),
    )
    assert code == 0, err
    text = out.read_text()
    assert "| lead |" in text and "| oracle |" in text and "| random |" not in text
    assert "Alpha-Sys" in text and "Beta-Ref" in text and out.with_suffix(".png").is_file()
    # the Python API gives the same rows, the oracle a reference row with nDCG 1 on every column
    board = collect_declared(read_declaration(declaration), ScoreStore(scores_dir, writable=False))
    assert sorted(row.label for row in board.rows) == ["lead", "oracle"]
    assert [s.name for s in board.splits] == [
        "synth_alpha_sys",
        "synth_alpha_ref",
        "synth_beta_sys",
        "synth_beta_ref",
    ]
    oracle = board.row("oracle")
    assert oracle.reference and all(
        oracle.evaluations[s.name].mean(board.measures[0]) == 1.0 for s in board.splits
    )


def test_incomplete_declared_board_writes_nothing_and_says_how_to_fix(capsys, scores_dir, tmp_path):
    run_cli(capsys, "run", "--ranker", "lead", "--split", "synth_alpha_sys", "--no-progress")
    declaration = _declare(tmp_path / "leaderboard.toml", ["lead", "bm25"])
    out = tmp_path / "board.md"
    code, _, err = run_cli(
        capsys,
        "leaderboard",
        "--declaration",
        str(declaration),
        "--scores-dir",
        str(scores_dir),
        "-o",
        str(out),
    )
    assert code == 2 and not out.exists() and not out.with_suffix(".png").exists()
    assert err.startswith("error: 7 declared entries are not complete and valid; nothing was written")
    assert (
        "lead on synth_alpha_ref: missing" in err
        and "compute: sourcesum run --ranker lead --split synth_alpha_ref" in err
    )
    assert "bm25 on synth_alpha_sys: missing" in err and "lead on synth_alpha_sys" not in err


@pytest.mark.real_data
def test_committed_board_is_complete_and_leaderboard_md_is_current(tmp_path, capsys, monkeypatch):
    """The official board renders from the committed store alone, byte-identical to the
    committed leaderboard.md and leaderboard.png (so nothing a user computes can change it),
    from an empty memo (so a poisoned statistics or plot memo cannot reach a commit)."""
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "empty-cache"))
    out = tmp_path / "leaderboard.md"
    code, _, err = run_cli(capsys, "leaderboard", "-o", str(out))
    assert code == 0, err
    assert out.read_text() == paths.LEADERBOARD_PATH.read_text()
    assert out.with_suffix(".png").read_bytes() == paths.LEADERBOARD_PATH.with_suffix(".png").read_bytes()


def test_leaderboard_refuses_a_missing_store_and_all_needs_an_output(capsys, tmp_path):
    code, _, err = run_cli(capsys, "leaderboard", "--scores-dir", str(tmp_path / "typo"))
    assert code == 2 and "no such folder" in err
    code, _, err = run_cli(capsys, "leaderboard", "--all")
    assert code == 2 and "give -o FILE" in err


def test_run_writes_only_to_the_user_store(capsys, tmp_path, monkeypatch):
    """With a committed store below, a run of a committed configuration computes nothing and a
    new configuration lands in the user store only."""
    committed = tmp_path / "committed"
    split = load_split("synth_alpha_sys")
    run_ranker(create_ranker("lead"), split, ScoreStore(committed), progress=False)
    monkeypatch.setattr(paths, "COMMITTED_SCORES_DIR", committed)
    user = tmp_path / "mine"
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(user))
    before = {p: p.read_bytes() for p in committed.glob("*/*.json")}
    assert run_cli(capsys, "run", "--ranker", "lead", "--split", "synth_alpha_sys", "--no-progress")[0] == 0
    assert not user.exists()
    argv = ["run", "--ranker", "random", "-p", "random.seed=3", "--split", "synth_alpha_sys", "--no-progress"]
    assert run_cli(capsys, *argv)[0] == 0
    assert len(list(user.glob("random/synth_alpha_sys.*.json"))) == 1
    assert {p: p.read_bytes() for p in committed.glob("*/*.json")} == before


@pytest.mark.real_data
def test_run_of_a_committed_configuration_reads_the_committed_store(capsys, tmp_path, monkeypatch):
    """The same on the real committed store: lead on xsum_pegasus is read, not recomputed."""
    user = tmp_path / "mine"
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(user))
    before = sorted(p.name for p in paths.COMMITTED_SCORES_DIR.glob("*/*.json"))
    assert run_cli(capsys, "run", "--ranker", "lead", "--split", "xsum_pegasus", "--no-progress")[0] == 0
    assert not user.exists()
    assert sorted(p.name for p in paths.COMMITTED_SCORES_DIR.glob("*/*.json")) == before


# --- a store that verifies itself --------------------------------------------------------------


@pytest.fixture
def one_entry(scores_dir) -> tuple[ScoreStore, ScoreEntry, Path]:
    store = ScoreStore(scores_dir)
    entry = run_ranker(create_ranker("lead"), load_split("synth_alpha_sys"), store, progress=False)
    return store, entry, store.path_for("lead", "synth_alpha_sys", entry.key)


def test_entry_records_key_checksum_and_library_versions(one_entry):
    _, entry, path = one_entry
    header = json.loads(path.read_text())
    assert header["format"] == "sourcesum-scores/3" and header["key"] == entry.key
    assert {"python", "numpy", "sourcesum-bench"} <= set(header["libraries"])
    assert read_entry(path).scores == entry.scores


def test_entry_under_another_name_is_rejected(one_entry):
    store, _, path = one_entry
    wrong = store.root / "bm25" / path.name
    wrong.parent.mkdir()
    shutil.copy(path, wrong)
    with pytest.raises(ScoreFileError, match=r"holds lead on synth_alpha_sys .* belongs at lead/"):
        read_entry(wrong)


def test_edited_scores_and_headers_are_rejected(one_entry):
    _, _, path = one_entry
    text = path.read_text()
    first_value = text.split('": [', 2)[2].split(",")[0]  # first score of a pair
    edited = text.replace(f'": [{first_value},', '": [99.0,', 1)
    assert edited != text
    path.write_text(edited)
    with pytest.raises(ScoreFileError, match="do not match their scores_sha256"):
        read_entry(path)
    path.write_text(text.replace('"version": "1"', '"version": "2"'))
    with pytest.raises(ScoreFileError, match="header key .* does not match"):
        read_entry(path)


def test_garbage_is_an_error_naming_the_file_and_all_mode_skips_it(one_entry, capsys, tmp_path):
    store, _, path = one_entry
    garbage = store.root / "lead" / "synth_alpha_ref.000000000000.json"
    garbage.write_bytes(os.urandom(256) + b"\xff")
    with pytest.raises(ScoreFileError, match="synth_alpha_ref.000000000000.json: not UTF-8"):
        read_entry(garbage)
    out = tmp_path / "all.md"
    code, _, err = run_cli(capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(out))
    assert code == 0 and "synth_alpha_ref.000000000000.json: invalid" in err
    assert "| lead |" in out.read_text()  # the valid entry still makes its row


def test_format_1_entries_migrate_without_touching_scores(one_entry):
    store, entry, path = one_entry
    legacy = json.loads(path.read_text())
    for key in ("key", "libraries", "scores_sha256"):
        legacy.pop(key)
    legacy["format"] = "sourcesum-scores/1"
    path.write_text(json.dumps(legacy))
    with pytest.raises(ScoreFileError, match="sourcesum migrate"):
        read_entry(path)
    assert migrate(store.root) == [path]
    assert read_entry(path).scores == entry.scores


def test_non_canonical_parameters_are_stale_not_merged(scores_dir, capsys, tmp_path):
    split = load_split("synth_alpha_sys")
    good = run_ranker(create_ranker("random", seed=1), split, ScoreStore(scores_dir), progress=False)
    odd = ScoreEntry(**{**good.__dict__, "params": {"seed": "1"}, "scores": dict(good.scores)})
    ScoreStore(scores_dir).save(odd)
    out = tmp_path / "all.md"
    code, _, err = run_cli(capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(out))
    assert code == 0 and "not in canonical form" in err


# --- store layers: read as one, written at the top, never disagreeing silently -------------------


def _subset(entry: ScoreEntry, ids, **changes) -> ScoreEntry:
    return ScoreEntry(**{**entry.__dict__, "scores": {i: list(entry.scores[i]) for i in ids}, **changes})


@pytest.fixture
def layered(tmp_path):
    """random(seed=5) on synth_alpha_sys_all computed whole, and two empty layers: a committed
    (read-only below) and a user store (top)."""
    split = load_split("synth_alpha_sys_all")
    full = run_ranker(
        create_ranker("random", seed=5), split, ScoreStore(tmp_path / "scratch"), progress=False
    )
    committed, user = ScoreStore(tmp_path / "committed"), ScoreStore(tmp_path / "user")
    stack = StoreStack([user, ScoreStore(committed.root, writable=False)])
    return split, full, committed, user, stack


def test_stack_reads_layers_and_writes_the_top(layered):
    split, full, committed, _, stack = layered
    ids = [p.id for p in split]
    committed.save(_subset(full, ids[:2]))
    below = committed.path_for("random", split.name, full.key)
    entry = run_ranker(create_ranker("random", seed=5), split, stack, progress=False)
    assert entry.complete and entry.scores == full.scores
    assert len(read_entry(below).scores) == 2  # the read-only layer is untouched
    assert read_entry(stack.path_for("random", split.name, full.key)).complete
    with pytest.raises(ScoreFileError, match="read-only"):
        stack.stores[1].save(full)


def test_equal_overlapping_pairs_of_layers_merge(layered):
    split, full, committed, user, stack = layered
    ids = [p.id for p in split]
    committed.save(_subset(full, ids[:3]))
    user.save(_subset(full, ids[2:]))  # pair 2 in both layers, with the same scores
    top = user.path_for("random", split.name, full.key)
    files = {p: p.read_bytes() for p in (top, committed.path_for("random", split.name, full.key))}
    loaded = stack.load("random", split.name, full.key)
    assert loaded.complete and loaded.scores == full.scores
    ((path, listed),) = list(stack.entries())  # one entry per key, shown at the top path
    assert path == top and isinstance(listed, ScoreEntry) and listed.scores == full.scores
    counting = create_ranker("random", seed=5)
    assert run_ranker(counting, split, stack, progress=False).scores == full.scores
    assert {p: p.read_bytes() for p in files} == files  # nothing recomputed or rewritten


@pytest.mark.parametrize("conflict", ["scores", "libraries"])
def test_layers_that_disagree_are_an_error_naming_both_files(layered, conflict):
    split, full, committed, user, stack = layered
    ids = [p.id for p in split]
    committed.save(_subset(full, ids[:3]))
    if conflict == "scores":
        changed = _subset(full, ids[2:])
        changed.scores[ids[2]] = [x + 1e-9 for x in changed.scores[ids[2]]]
        expected = f"pair {ids[2]} has different scores in"
    else:
        changed = _subset(full, ids[3:], libraries={**full.libraries, "numpy": "0.0.1"})
        expected = "libraries differs"
    user.save(changed)
    top = user.path_for("random", split.name, full.key)
    below = committed.path_for("random", split.name, full.key)
    with pytest.raises(ScoreFileError) as info:
        stack.load("random", split.name, full.key)
    assert expected in str(info.value) and str(top) in str(info.value) and str(below) in str(info.value)
    ((path, listed),) = list(stack.entries())
    assert path == top and isinstance(listed, ScoreFileError)
    assert expected in str(listed) and str(top) in str(listed) and str(below) in str(listed)
    with pytest.raises(ScoreFileError, match=expected):  # a run never silently picks one layer
        run_ranker(create_ranker("random", seed=5), split, stack, progress=False)


def test_a_layer_conflict_from_the_cli_is_one_error_line(capsys, scores_dir, tmp_path):
    split = load_split("synth_alpha_sys")
    full = run_ranker(
        create_ranker("random", seed=5), split, ScoreStore(tmp_path / "scratch"), progress=False
    )
    ids = [p.id for p in split]
    committed = ScoreStore(paths.COMMITTED_SCORES_DIR)  # the fixture's stand-in for data/scores
    committed.save(_subset(full, ids[:2]))
    changed = _subset(full, ids[1:])
    changed.scores[ids[1]] = [0.5] * len(changed.scores[ids[1]])
    ScoreStore(scores_dir).save(changed)
    top, below = (s.path_for("random", split.name, full.key) for s in (ScoreStore(scores_dir), committed))
    code, _, err = run_cli(
        capsys, "run", "--ranker", "random", "-p", "random.seed=5", "--split", split.name, "--no-progress"
    )
    lines = err.strip().splitlines()
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error: ")
    assert (
        f"pair {ids[1]} has different scores" in lines[0] and str(top) in lines[0] and str(below) in lines[0]
    )
    assert run_cli(capsys, "run", "--ranker", "lead", "--split", "synthnews", "--no-progress")[0] == 0
    out = tmp_path / "all.md"
    code, _, err = run_cli(capsys, "leaderboard", "--all", "--dataset", "synthnews", "-o", str(out))
    assert code == 2 and len(err.strip().splitlines()) == 1 and str(top) in err and str(below) in err
    assert not out.exists()  # every reader refuses the conflict, as `run` does


_SLOW_PLUGIN = """
import time
from sourcesum.rankers import Ranker, register

@register
class SlowLength(Ranker):
    name = "slow_length_test"
    runtime_params = ("delay",)
    batch_pairs = 1

    def __init__(self, delay: float = 0.0):
        self.delay = delay

    def score(self, pair):
        time.sleep(self.delay)
        return [float(len(s)) for s in pair.sentences]
"""


@pytest.mark.slow  # two CLI subprocesses on one entry (about 10 s)
def test_concurrent_writers_never_lose_finished_pairs(tmp_path):
    """A slow and a fast process fill one entry; the file only ever grows and ends complete,
    and the slow writer's saves after the fast one finished keep the fast one's pairs."""
    (tmp_path / "slow_plugin.py").write_text(_SLOW_PLUGIN)
    store = tmp_path / "store"
    script = textwrap.dedent(f"""
        import sys
        import slow_plugin
        import synthetic_datasets
        from sourcesum.data import load_split
        from sourcesum.rankers import create_ranker
        from sourcesum.runner.run import run_ranker
        from sourcesum.store.stores import ScoreStore
        run_ranker(create_ranker("slow_length_test", delay=float(sys.argv[1])),
                   load_split("synth_alpha_sys_all"), ScoreStore({str(store)!r}), progress=False)
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(SYNTHETIC)])}
    n_pairs = len(load_split("synth_alpha_sys_all"))
    counts: list[int] = []

    def observe() -> None:
        for path in store.glob("slow_length_test/*.json"):
            try:
                counts.append(len(read_entry(path).scores))
            except ScoreFileError:
                pass

    slow = subprocess.Popen([sys.executable, "-c", script, "1.5"], env=env)
    deadline = time.monotonic() + 60
    while not counts and slow.poll() is None and time.monotonic() < deadline:  # its first pair saved
        observe()
        time.sleep(0.05)
    fast = subprocess.Popen([sys.executable, "-c", script, "0"], env=env)
    slow_ran_past_fast = False
    while slow.poll() is None or fast.poll() is None:
        observe()
        if fast.poll() is not None and slow.poll() is None:
            slow_ran_past_fast = True
        time.sleep(0.05)
    assert slow.returncode == 0 and fast.returncode == 0
    (path,) = store.glob("slow_length_test/*.json")
    assert len(read_entry(path).scores) == n_pairs
    assert slow_ran_past_fast and counts[0] < n_pairs
    assert counts == sorted(counts) and n_pairs in counts[:-1]  # never shrank, complete before the end


# --- exports ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "label", ["random(seed=1)", "random(seed=-1)", "m(model=org/name x)", "a%2F", "x [abc123]"]
)
def test_export_names_are_reversible(label):
    assert label_of(export_name(label)) == label and "/" not in export_name(label)


def test_export_names_never_collide_and_every_file_is_listed(capsys, scores_dir, tmp_path):
    for seed in ("1", "-1"):
        run_cli(
            capsys,
            "run",
            "--ranker",
            "random",
            "-p",
            f"random.seed={seed}",
            "--split",
            "synth_alpha_sys",
            "--no-progress",
        )
    folder = tmp_path / "trec"
    code, out, err = run_cli(capsys, "export", "--dataset", "synthnews", "-o", str(folder))
    assert code == 0, err
    listed = [Path(line.strip()) for line in out.splitlines()[1:]]
    assert sorted(listed) == sorted(folder.iterdir())
    runs = sorted(p.name for p in folder.glob("*.run"))
    assert runs == ["random(seed=-1).synth_alpha_sys.run", "random(seed=1).synth_alpha_sys.run"]
    assert len(list(folder.glob("*.qrels"))) == 8  # graded and binary for each of the 4 board splits
    assert run_cli(capsys, "export", "--dataset", "synthnews", "-o", str(folder))[0] == 0  # ours: rewritten


def test_export_never_overwrites_foreign_files(capsys, scores_dir, tmp_path):
    run_cli(capsys, "run", "--ranker", "lead", "--split", "synth_alpha_sys", "--no-progress")
    folder = tmp_path / "trec"
    folder.mkdir()
    (folder / "synth_alpha_sys.graded.qrels").write_text("my own qrels\n")
    code, _, err = run_cli(capsys, "export", "--dataset", "synthnews", "-o", str(folder))
    assert code == 2 and "would overwrite 1 file(s) that it did not write" in err
    assert (folder / "synth_alpha_sys.graded.qrels").read_text() == "my own qrels\n"


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


_FAILING_FIT = """
from sourcesum.rankers import Ranker, register

@register
class FailingFit(Ranker):
    name = "failing_fit_test"

    def fit(self, pairs):
        raise KeyError("idf table")

    def score(self, pair):
        return [0.0] * pair.n_sentences
"""


def test_a_plugin_whose_fit_raises_is_named(capsys, scores_dir, tmp_path, monkeypatch):
    (tmp_path / "failing_plugin.py").write_text(_FAILING_FIT)
    monkeypatch.syspath_prepend(str(tmp_path))
    import failing_plugin  # noqa: F401  (registers the ranker)

    try:
        code, _, err = run_cli(capsys, "run", "--ranker", "failing_fit_test", "--split", "synth_alpha_sys")
        assert (
            code == 2 and "ranker failing_fit_test failed in fit() on split synth_alpha_sys: KeyError" in err
        )
        assert len(err.strip().splitlines()) == 1 and not list(scores_dir.glob("**/*.json"))
    finally:
        RANKERS._classes.pop("failing_fit_test")
