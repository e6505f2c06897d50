"""Transfer tasks (sourcesum.board.view.transfer): another dataset's board declared beside the main
one ([[tasks]]) and the transfer summary, which matches rows that differ only in an
unscorable-policy parameter, or in a training protocol where both fit on one dataset's board pairs
outside the scored corpus, on the synthetic datasets."""

from __future__ import annotations

import json
from pathlib import Path

from sourcesum.board import read_declaration
from sourcesum.data import dataset, load_split
from sourcesum.errors import RankerError
from sourcesum.params import Param
from sourcesum.rankers import RANKERS
from sourcesum.rankers.base import Ranker, register
from sourcesum.rankers.context import ProtocolSpec, TrainingData
from sourcesum.runner.protocols import PROTOCOLS, FromDataset
from support.boards import declaration


@register
class ShortStop(Ranker):
    """Lead's order; a pair of fewer than 3 sentences is unscorable: ``overflow=error`` stops on
    it, ``ties`` scores it all 0 (a test ranker with an unscorable-policy parameter)."""

    name = "short_stop_test"
    param_specs = {
        "overflow": Param(
            str, "unscorable pairs: stop or ties", choices=("error", "ties"), unscorable_policy=True
        ),
        "step": Param(float, "the score drop per position", min=0.0),
    }

    def __init__(self, overflow: str = "error", step: float = 1.0):
        self.overflow, self.step = overflow, step

    def score(self, pair):
        if pair.n_sentences < 3:
            if self.overflow == "error":
                raise RankerError(f"pair {pair.id} is too short")
            return [0.0] * pair.n_sentences
        return [-self.step * i for i in range(pair.n_sentences)]


@register
class FittedStep(Ranker):
    """Lead's order, each position ``step`` below the one before it, ``step`` = the mean sentence
    count of the training pairs: fitted under ``protocol`` on their inputs, their votes withheld
    (a zero-shot test ranker with a training-protocol parameter)."""

    name = "fitted_step_test"
    param_specs = {
        "protocol": Param(
            str,
            "where step is fitted",
            choices=("cross-corpus", "from-synthnews", "kfold"),
            training_protocol=True,
        ),
    }

    def __init__(self, protocol: str = "cross-corpus"):
        self.protocol, self.step = protocol, 0.0

    @classmethod
    def training_protocol(cls, params) -> ProtocolSpec:
        extra = {"folds": 2, "seed": 0} if params["protocol"] == "kfold" else {}
        return ProtocolSpec(str(params["protocol"]), extra, votes=False)

    def train(self, data: TrainingData) -> None:
        self.step = sum(p.n_sentences for p in data.pairs) / len(data.pairs)

    def score(self, pair):
        return [-self.step * i for i in range(pair.n_sentences)]


def test_a_task_board_is_shown_with_a_transfer_summary(tmp_path: Path, capsys, scores_dir, monkeypatch):
    from sourcesum.cli import main

    claims = dataset("synthclaims")
    monkeypatch.setattr(type(claims), "label_notes", lambda self, spec: f"Counted on {spec.title}.")

    text = declaration(rows=("lead", ("random", "{ seed = 0 }"), "bm25"), references=())
    text += (
        '\n[[tasks]]\ndataset = "synthclaims"\nnote = "A note on the claims task."\n'
        + "".join(f'[[tasks.rows]]\nranker = "{r}"\n\n' for r in ("lead", "bm25"))
        + '[[tasks.references]]\nranker = "oracle"\n'
    )
    path = tmp_path / "board.toml"
    path.write_text(text, encoding="utf-8")
    declared = read_declaration(path)
    assert [(t.dataset, [r.ranker for r in t.rows]) for t in declared.tasks] == [
        ("synthclaims", ["lead", "bm25", "oracle"])
    ]
    argv = ["leaderboard", "--declaration", str(path), "--scores-dir", str(scores_dir)]
    out = tmp_path / "board.md"
    assert main(["run", "--ranker", "lead,random,bm25", "--split", "synthnews", "--no-progress"]) == 0
    capsys.readouterr()
    assert main([*argv, "-o", str(out)]) == 2  # the task's entries are missing, and named
    assert "synthclaims: lead on synth_claims: missing" in capsys.readouterr().err
    assert main(["run", "--ranker", "lead,bm25,oracle", "--split", "synth_claims", "--no-progress"]) == 0
    assert main([*argv, "-o", str(out)]) == 0
    board = out.read_text(encoding="utf-8")
    section = board.split("## SynthClaims", 1)[1].split("\n## ", 1)[0]
    assert "A note on the claims task." in section and "| oracle |" in section and "| bm25 |" in section
    # the header states the dataset's label notes and the pairs no sentence is relevant on (the
    # claims whose supporting sets are all empty), which the evaluation leaves undefined
    split = load_split("synth_claims")
    none_relevant = sum(not any(j.graded) for j in split.judgments)
    assert none_relevant >= 1
    stated = f"On Claims, NDCG and MAP are undefined on {none_relevant} of the {len(split)} pairs"
    assert "Counted on Claims." in section and stated in section
    capsys.readouterr()
    assert main(["run", "--ranker", "bm25", "--split", "synth_claims", "--no-progress", "--json"]) == 0
    (result,) = json.loads(capsys.readouterr().out)["results"]
    assert result["undefined"] == {"ndcg": none_relevant, "map": none_relevant}
    transfer = board.split("## Transfer across tasks", 1)[1].split("\n## ", 1)[0]
    assert "SynthNews vs SynthClaims" in transfer
    rows = [line for line in transfer.splitlines() if line.startswith("| ") and "rank on" not in line]
    assert sorted(line.split(" | ")[0].strip("| ") for line in rows) == ["bm25", "lead"]  # on both boards
    # the summary names what it leaves out, and why
    assert "Left out, as not on every board: `random` (not on SynthClaims)." in transfer
    # the Rows section gives every row of every board its keys, the task's included
    rows_section = board.split("## Rows", 1)[1].split("\n## ", 1)[0]
    task_rows = rows_section.split("### SynthClaims", 1)[1]
    for name in ("lead", "bm25", "oracle"):
        (key_path,) = (scores_dir / name).glob("synth_claims.*.json")
        key = key_path.name.split(".")[1]
        assert f"Claims: `{key}`" in task_rows
    site = tmp_path / "site"
    assert main(["site", *argv[1:], "-o", str(site)]) == 0
    page = (site / "index.html").read_text(encoding="utf-8")
    assert 'id="task-synthclaims-rows"' in page and 'id="transfer-table"' in page
    assert "Counted on Claims." in page and stated in page
    # the task's split has an explorer of its own, linked from every page, that reads its graded
    # relevance (no votes) and says so
    import html

    from sourcesum.outputs.site import explorer_file

    explorer = (site / explorer_file("synth_claims")).read_text(encoding="utf-8")
    assert f'href="{explorer_file("synth_claims")}"' in page
    assert "shaded by their graded relevance" in explorer and "share of annotators" not in explorer
    assert html.escape(dataset("synthclaims").relevance_text) in explorer
    data = json.loads(
        explorer.split('<script type="application/json" id="data">', 1)[1].split("</script>")[0]
    )
    assert data["relevance"] == "graded" and sorted(r["label"] for r in data["rankers"]) == [
        "bm25",
        "lead",
        "oracle",
    ]
    main_explorer = (site / explorer_file("synth_alpha_sys")).read_text(encoding="utf-8")
    main_data = main_explorer.split('<script type="application/json" id="data">', 1)[1].split("</script>")[0]
    assert "share of annotators" in main_explorer and json.loads(main_data)["relevance"] == "votes"


def test_complete_entries_under_a_stopping_default_score_as_any_policy_value():
    """An unscorable-policy parameter may differ where one side holds the default; any other
    parameter may not (LM rankers declare ``overflow`` so)."""
    attention = RANKERS.get("attention")
    assert attention.same_scores_when_complete({}, {"overflow": "ties"})
    assert attention.same_scores_when_complete(
        {"overflow": "error", "dtype": "float32"}, {"overflow": "ties"}
    )
    assert attention.same_scores_when_complete({"overflow": "ties"}, {"overflow": "ties"})
    assert not attention.same_scores_when_complete({}, {"overflow": "ties", "layers": "-4:"})
    assert not attention.same_scores_when_complete({"dtype": "bfloat16"}, {"overflow": "ties"})
    assert not RANKERS.get("random").same_scores_when_complete({"seed": 0}, {"seed": 1})
    assert not ShortStop.same_scores_when_complete({"overflow": "ties", "step": 2.0}, {"step": 1.0})


def test_the_transfer_summary_matches_rows_that_differ_only_in_an_unscorable_policy(
    tmp_path: Path, capsys, scores_dir
):
    """SynthNews has no pair under 3 sentences, SynthClaims has: the default stops there, so the
    task runs ``overflow=ties`` and the summary still ranks the method on both boards, saying why;
    a row that differs in another parameter is not matched."""
    from sourcesum.cli import main

    text = declaration(
        rows=("lead", "bm25", "short_stop_test", ("short_stop_test", "{ step = 2.0 }")), references=()
    )
    text += (
        '\n[[tasks]]\ndataset = "synthclaims"\nnote = "Claims."\n'
        '[[tasks.rows]]\nranker = "lead"\n\n[[tasks.rows]]\nranker = "bm25"\n\n'
        '[[tasks.rows]]\nranker = "short_stop_test"\nparams = { overflow = "ties" }\n\n'
        '[[tasks.rows]]\nranker = "short_stop_test"\nparams = { overflow = "ties", step = 3.0 }\n'
    )
    path = tmp_path / "board.toml"
    path.write_text(text, encoding="utf-8")
    run = ["run", "--no-progress", "--ranker"]
    assert main([*run, "lead,bm25,short_stop_test", "--split", "synthnews"]) == 0
    assert main([*run, "short_stop_test", "-p", "short_stop_test.step=2", "--split", "synthnews"]) == 0
    assert main([*run, "short_stop_test", "--split", "synth_claims"]) != 0  # the default stops there
    for params in (["overflow=ties"], ["overflow=ties", "step=3"]):
        argv = [*run, "short_stop_test", "--split", "synth_claims"]
        argv += [arg for p in params for arg in ("-p", f"short_stop_test.{p}")]
        assert main(argv) == 0
    assert main([*run, "lead,bm25", "--split", "synth_claims"]) == 0
    capsys.readouterr()
    out = tmp_path / "board.md"
    assert (
        main(["leaderboard", "--declaration", str(path), "--scores-dir", str(scores_dir), "-o", str(out)])
        == 0
    )
    transfer = out.read_text(encoding="utf-8").split("## Transfer across tasks", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in transfer.splitlines() if line.startswith("| ") and "rank on" not in line]
    assert sorted(line.split(" | ")[0].strip("| ") for line in rows) == ["bm25", "lead", "short_stop_test"]
    assert (
        "`short_stop_test` runs with overflow=error on SynthNews, overflow=ties on SynthClaims. "
        "These rows are one method: overflow=error (the default) stops on every pair another value "
        "would change" in transfer
    )
    # step=2 (news) and step=3 (claims) differ in a scoring parameter: not one method, left out
    note = next(line for line in transfer.splitlines() if line.startswith("`short_stop_test` runs"))
    assert "step" not in note
    assert (
        "Left out, as not on every board: `short_stop_test(step=2.0)` (another configuration on "
        "SynthClaims); `short_stop_test(overflow=ties, step=3.0)` (another configuration on SynthNews)."
    ) in transfer


def test_the_transfer_summary_matches_rows_fitted_on_one_datasets_pairs_outside_the_scored_corpus(
    tmp_path: Path, capsys, scores_dir, monkeypatch
):
    """A zero-shot row fitted ``cross-corpus`` on SynthNews (the other corpus's pairs) and
    ``from-synthnews`` on SynthClaims (all of SynthNews's board pairs) is one method, and the
    summary says why; ``kfold`` on SynthClaims (pairs of the scored split itself) is not."""
    from sourcesum.cli import main

    monkeypatch.setitem(PROTOCOLS._classes, "from-synthnews", FromDataset("synthnews"))
    text = declaration(rows=("lead", "bm25", "fitted_step_test"), references=())
    text += (
        '\n[[tasks]]\ndataset = "synthclaims"\nnote = "Claims."\n'
        '[[tasks.rows]]\nranker = "lead"\n\n[[tasks.rows]]\nranker = "bm25"\n\n'
        '[[tasks.rows]]\nranker = "fitted_step_test"\nparams = { protocol = "from-synthnews" }\n'
    )
    path = tmp_path / "board.toml"
    run = ["run", "--no-progress", "--ranker"]
    assert main([*run, "lead,bm25,fitted_step_test", "--split", "synthnews"]) == 0
    assert main([*run, "lead,bm25", "--split", "synth_claims"]) == 0
    for protocol in ("from-synthnews", "kfold"):
        argv = [*run, "fitted_step_test", "-p", f"fitted_step_test.protocol={protocol}"]
        assert main([*argv, "--split", "synth_claims"]) == 0
    capsys.readouterr()

    def transfer() -> str:
        out = tmp_path / "board.md"
        argv = ["leaderboard", "--declaration", str(path), "--scores-dir", str(scores_dir), "-o", str(out)]
        assert main(argv) == 0
        return out.read_text(encoding="utf-8").split("## Transfer across tasks", 1)[1].split("\n## ", 1)[0]

    def names(section: str) -> list[str]:
        rows = [line for line in section.splitlines() if line.startswith("| ") and "rank on" not in line]
        return sorted(line.split(" | ")[0].strip("| ") for line in rows)

    path.write_text(text, encoding="utf-8")
    section = transfer()
    assert names(section) == ["bm25", "fitted_step_test", "lead"]
    assert (
        "`fitted_step_test` runs with protocol=cross-corpus on SynthNews, protocol=from-synthnews on "
        "SynthClaims. These rows are one method: each is fitted on SynthNews's board pairs, none of "
        "the scored corpus." in section
    )
    path.write_text(text.replace('protocol = "from-synthnews"', 'protocol = "kfold"'), encoding="utf-8")
    section = transfer()
    assert names(section) == ["bm25", "lead"]
    assert "`fitted_step_test` (another configuration on SynthClaims)" in section
