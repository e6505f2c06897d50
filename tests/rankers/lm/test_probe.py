"""The ``probe`` ranker on a tiny Llama built from a config: pooled states against a manual
computation, blind vs conditioned inputs, the random control, no leakage under every protocol
(permuted votes of the scored pairs leave their scores bit-identical), the state cache (one LM
pass per document or pair, round trip, damaged entries recomputed), the layer choice by inner
CV, the deterministic MLP, and the parameters."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sourcesum.data import Judgment, dataset, load_split
from sourcesum.errors import ParameterError, RankerError
from sourcesum.rankers import create_ranker, learned
from sourcesum.rankers.lm import probe as probe_module
from sourcesum.rankers.lm import state_cache
from sourcesum.rankers.lm.hidden_states import _TWINS, layout, pooled_states, random_twin
from sourcesum.rankers.lm.loading import register_loaded
from sourcesum.rankers.lm.probe_models import Labelled, choose_layer, fit_mlp
from sourcesum.runner import run_splits
from sourcesum.runner.configs import Configuration
from sourcesum.runner.protocols import PROTOCOLS, FromDataset
from sourcesum.store import ScoreStore
from sourcesum.util import memo
from support.models import tiny_llama, tiny_tokenizer
from support.pairs import make_pair
from support.votes import permute_votes

MODEL = "tiny-probe"
ALPHA = ("synth_alpha_sys", "synth_alpha_ref")
BETA = ("synth_beta_sys", "synth_beta_ref")
DOC = [
    "The council voted to build a bridge over the river.",
    "It rained all week.",
    "The bridge will cost forty million dollars.",
]


@pytest.fixture(scope="module")
def tiny():
    tok = tiny_tokenizer()
    model = tiny_llama(tok)
    register_loaded(MODEL, model, tok)
    return model, tok


def forget() -> None:
    """Nothing fitted, made or remembered in this process before: no probe or learned model, no
    random twin, no state in the in-process memo (the disk cache stays)."""
    probe_module._TRAINED.clear()
    probe_module._MEMO.clear()
    learned._FITTED.clear()
    _TWINS.clear()


@pytest.fixture(autouse=True)
def fresh(tmp_path, monkeypatch):
    """Each test: its own state cache, and nothing from earlier tests."""
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))
    forget()


def probe_scores(store_root, names, **params) -> dict[str, list[float]]:
    """Scores of a new probe on the named splits, into a new store."""
    ranker = create_ranker("probe", model=MODEL, **params)
    runs = run_splits(ranker, [load_split(n) for n in names], ScoreStore(store_root), progress=False)
    return {pair_id: scores for run in runs for pair_id, scores in run.entry.scores.items()}


class CountPasses:
    """Counts forward passes of a model body (the passes that compute states)."""

    def __init__(self, model):
        self.count = 0
        self.handle = model.base_model.register_forward_hook(self.hook)

    def hook(self, *args):
        self.count += 1


# -- states ---------------------------------------------------------------------------------------
def test_pooled_states_equal_a_manual_computation(tiny):
    import torch

    model, tok = tiny
    for summary in (None, "A bridge was approved."):
        context = layout(tok, DOC, summary)
        ids = torch.tensor([context.ids()])
        with torch.no_grad():
            hidden = model(input_ids=ids, output_hidden_states=True).hidden_states  # the whole model
        assert len(hidden) == model.config.num_hidden_layers + 1
        mean, last = pooled_states(model, context, "mean"), pooled_states(model, context, "last")
        assert mean.shape == last.shape == (3, len(DOC), 32) and mean.dtype == np.float16
        for i, (start, segment) in enumerate(zip(context.starts, context.segments, strict=True)):
            tokens = [h[0, start : start + len(segment)].double().numpy() for h in hidden]
            expected = np.stack([t.mean(axis=0) for t in tokens])
            np.testing.assert_allclose(mean[:, i], expected, rtol=2**-10, atol=1e-6)
            assert np.array_equal(last[:, i], np.stack([t[-1] for t in tokens]).astype(np.float16))
    blind, conditioned = layout(tok, DOC, None), layout(tok, DOC, "A bridge was approved.")
    # one segment per sentence, read with a leading space; the summary only in the head
    assert blind.segments == conditioned.segments and len(blind.segments) == len(DOC)
    assert tok.decode(blind.head) == "[CLS] document :"
    assert tok.decode(conditioned.head) == "[CLS] summary : a bridge was approved. document :"
    assert [tok.decode(s) for s in blind.segments] == [tok.decode(tok(s)["input_ids"][1:-1]) for s in DOC]


def test_blind_gives_two_summaries_of_a_document_identical_scores_and_conditioned_does_not(tiny, tmp_path):
    for mode in ("blind", "conditioned"):
        scores = probe_scores(tmp_path / mode, ALPHA, mode=mode, layer=1, C=1.0)
        sys_split, ref_split = (load_split(n) for n in ALPHA)
        for a, b in zip(sys_split.pairs, ref_split.pairs, strict=True):
            assert a.sentences == b.sentences and a.summary != b.summary  # one document, two summaries
            same = scores[a.id] == scores[b.id]
            assert same if mode == "blind" else not same


def test_one_pass_per_document_or_pair_and_none_once_cached(tiny, tmp_path):
    """Cross-corpus on the alpha splits reads the beta splits' states to train: one pass per
    distinct document (blind) or pair (conditioned) of the four splits, then none."""
    model, _ = tiny
    every = [p for name in ALPHA + BETA for p in load_split(name).pairs]
    documents = {p.sentences for p in every}
    pairs = {(p.sentences, p.summary) for p in every}
    for mode, expected in (("blind", len(documents)), ("conditioned", len(pairs))):
        counter = CountPasses(model)
        try:
            probe_scores(tmp_path / f"{mode}-1", ALPHA, mode=mode, layer=1, C=1.0)
            assert counter.count == expected
            counter.count = 0
            probe_scores(tmp_path / f"{mode}-2", ALPHA, mode=mode, layer=0, C=0.1)
            assert counter.count == 0  # another layer and C: every state from the cache
        finally:
            counter.handle.remove()
    files, size = state_cache.size()
    assert files == len(documents) + len(pairs) and size > 0


def test_the_random_control_is_deterministic_and_leaves_torchs_random_state_alone(tiny, tmp_path):
    import torch

    model, _ = tiny
    torch.manual_seed(123)
    before = torch.get_rng_state()
    twin = random_twin(model, 0)
    assert torch.equal(torch.get_rng_state(), before)
    _TWINS.clear()
    again = random_twin(model, 0)
    assert again is not twin
    for (name, a), (_, b) in zip(twin.state_dict().items(), again.state_dict().items(), strict=True):
        assert torch.equal(a, b), name
    assert not torch.equal(twin.model.embed_tokens.weight, model.model.embed_tokens.weight)
    first = probe_scores(tmp_path / "a", ALPHA, weights="random", layer=2, C=1.0)
    forget()
    with pytest.MonkeyPatch.context() as m:
        m.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache2"))  # recomputed, not read back
        second = probe_scores(tmp_path / "b", ALPHA, weights="random", layer=2, C=1.0)
    assert first == second
    pretrained = probe_scores(tmp_path / "c", ALPHA, layer=2, C=1.0)
    assert all(pretrained[i] != first[i] for i in first)


# -- no leakage -----------------------------------------------------------------------------------
PROTOCOL_CASES = {
    # protocol: (scored split, its pairs to permute (None: all), the splits it trains on)
    "cross-corpus": ("synth_alpha_sys", None, BETA),
    "kfold": ("synth_alpha_sys", "fold", None),
    "same-corpus": ("synth_alpha_sys_heldout", None, ALPHA),
    "in-domain": ("synth_alpha_sys", None, ("synth_alpha_ref",)),
    "from-sourcesum": ("synth_claims", None, ALPHA + BETA),
}


@pytest.mark.parametrize("protocol", list(PROTOCOL_CASES))
@pytest.mark.parametrize("mode", ["blind", "conditioned"])
def test_permuting_the_votes_of_the_scored_pairs_leaves_their_scores_unchanged(
    tiny, tmp_path, monkeypatch, protocol, mode
):
    """...and permuting the training pairs' votes (the other folds, under kfold) changes them."""
    if protocol == "in-domain":  # a training split declared for the scored one
        news = type(dataset("synthnews"))
        monkeypatch.setattr(news, "training_splits", {"synth_alpha_sys": ("synth_alpha_ref",)})
    if protocol == "from-sourcesum":  # out of domain: trained on synthnews's board splits
        monkeypatch.setitem(PROTOCOLS._classes, "from-sourcesum", FromDataset("synthnews"))
    name, which, training = PROTOCOL_CASES[protocol]
    params = {"mode": mode, "protocol": protocol, "layer": "cv", "folds": 3}
    before = probe_scores(tmp_path / "before", (name,), **params)
    only = None
    if which == "fold":  # the pairs of one outer fold: the others train on their votes
        split = load_split(name)
        from sourcesum.data.folds import document_folds

        folds = document_folds([p.document_key for p in split], 3, 0)
        only = {p.id for p, f in zip(split, folds, strict=True) if f == 0}
    scored = only or {p.id for p in load_split(name)}
    forget()
    with monkeypatch.context() as m:
        changed = permute_votes(m, (name,), seed=3, only=only)
        # the held-out split's two pairs have uniform labels: no permutation changes them, so
        # there the control below carries the test
        assert changed <= scored and (changed or protocol == "same-corpus")
        after = probe_scores(tmp_path / "after", (name,), **params)
    assert {i: after[i] for i in scored} == {i: before[i] for i in scored}
    if which == "fold":  # control: the other folds were trained on the permuted votes
        assert any(after[i] != before[i] for i in before if i not in changed)
        return
    forget()
    with monkeypatch.context() as m:  # control: the training pairs' votes do reach the scores
        assert permute_votes(m, training, seed=3)
        control = probe_scores(tmp_path / "control", (name,), **params)
    assert control != before


# -- the cache ------------------------------------------------------------------------------------
def test_the_state_cache_round_trips_and_refuses_another_shape_or_dtype(capsys):
    key = {"what": "states", "n": 3}
    array = np.arange(24, dtype=np.float16).reshape(2, 3, 4)
    assert state_cache.recall(key, (2, 3, 4)) is None
    state_cache.keep(key, array)
    back = state_cache.recall(key, (2, 3, 4))
    assert back is not None and back.dtype == np.float16 and np.array_equal(back, array)
    assert state_cache.recall({**key, "n": 4}, (2, 3, 4)) is None  # another key: a miss
    assert not capsys.readouterr().err
    # asked for another shape: refused (one note), never reshaped
    assert state_cache.recall(key, (2, 3, 5)) is None
    assert capsys.readouterr().err.count("note:") == 1
    with pytest.raises(TypeError, match="float16"):
        state_cache.keep(key, array.astype(np.float32))
    assert state_cache.size()[0] == 1


def test_the_state_cache_is_the_memos_data_only_sealed_and_keyed_by_its_code(monkeypatch):
    key = {"what": "states"}
    array = np.ones((2, 1, 3), dtype=np.float16)
    state_cache.keep(key, array)
    (record,) = (memo.root() / state_cache.KIND).rglob("*.rec")
    assert record.read_bytes().startswith(memo.MAGIC)  # a sealed memo record, no pickle
    # another version of the code that computes states: another key, a miss
    with monkeypatch.context() as edited:
        edited.setattr(state_cache, "STATE_MODULES", ("sourcesum.rankers.lm.inputs",))
        assert state_cache.recall(key, (2, 1, 3)) is None
    assert state_cache.recall(key, (2, 1, 3)) is not None
    # the memo off (--no-memo): neither read nor written
    with memo.settings(read=False, write=False):
        assert state_cache.recall(key, (2, 1, 3)) is None
        state_cache.keep({"what": "other"}, array)
    assert state_cache.size()[0] == 1


@pytest.mark.parametrize("damage", ["flip", "truncate", "foreign", "missing"])
def test_a_damaged_or_foreign_cached_state_is_recomputed_with_one_note(
    tiny, tmp_path, capsys, monkeypatch, damage
):
    fresh_scores = probe_scores(
        tmp_path / "first", ("synth_alpha_sys",), layer=1, C=1.0, protocol="kfold", folds=3
    )
    capsys.readouterr()
    victim = sorted((tmp_path / "cache").rglob("*.rec"))[0]
    if damage == "flip":
        data = bytearray(victim.read_bytes())
        data[-1] ^= 0xFF
        victim.write_bytes(bytes(data))
    elif damage == "truncate":
        victim.write_bytes(victim.read_bytes()[:50])
    elif damage == "foreign":  # a well-formed record sealed under another user's key
        with monkeypatch.context() as other_user:
            other_user.setenv("SOURCESUM_CONFIG_DIR", str(tmp_path / "other-config"))
            states = np.zeros((1, 1, 1), dtype=np.float16)
            record = memo.Record({"shape": [1, 1, 1]}, {"states": states})
            victim.write_bytes(memo._sealed(memo.memo_key(), state_cache.KIND, victim.stem, record))
    else:
        victim.unlink()
    forget()
    again = probe_scores(tmp_path / "second", ("synth_alpha_sys",), layer=1, C=1.0, protocol="kfold", folds=3)
    assert again == fresh_scores
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    if damage == "missing":
        assert notes == []
    else:
        assert len(notes) == 1 and "unusable" in notes[0] and str(victim) in notes[0]
    forget()
    probe_scores(tmp_path / "third", ("synth_alpha_sys",), layer=1, C=1.0, protocol="kfold", folds=3)
    assert "note:" not in capsys.readouterr().err


def test_an_unwritable_cache_costs_speed_only(tiny, tmp_path, capsys, monkeypatch):
    blocked = tmp_path / "blocked"
    blocked.write_text("a file where the cache folder would be")
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(blocked))
    scores = probe_scores(tmp_path / "run", ("synth_alpha_sys",), layer=1, C=1.0, protocol="kfold", folds=3)
    assert len(scores) == len(load_split("synth_alpha_sys"))
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    assert len(notes) == 1 and "cannot be written" in notes[0]


# -- probes ---------------------------------------------------------------------------------------
def synthetic_states(signal_layer: int, seed: int = 0) -> Labelled:
    """Twelve documents of 8 sentences, 4 layers of 6 units: the vote share is a logistic
    function of layer ``signal_layer``'s first unit; the other layers are noise."""
    rng = np.random.default_rng(seed)
    data = Labelled([], [], [], [], [], min_relevant=2)
    for doc in range(12):
        states = rng.normal(size=(4, 8, 6)).astype(np.float16)
        share = 1 / (1 + np.exp(-3 * states[signal_layer, :, 0].astype(float)))
        votes = np.round(share * 3)
        data.pair_ids.append(f"d{doc}")
        data.documents.append(f"doc{doc}")
        data.states.append(states)
        data.graded.append(votes)
        data.share.append(votes / 3)
    return data


@pytest.mark.parametrize("signal_layer", [0, 2, 3])
def test_layer_cv_chooses_the_layer_that_carries_the_votes(signal_layer):
    layer, table = choose_layer(synthetic_states(signal_layer), ["synthetic"], folds=4, seed=0)
    assert layer == signal_layer
    assert [row["layer"] for row in table] == [0, 1, 2, 3]
    assert [row.get("selected", False) for row in table] == [i == signal_layer for i in range(4)]
    assert table[signal_layer]["ndcg"] > max(r["ndcg"] for r in table if r["layer"] != signal_layer)


def test_the_mlp_probe_is_deterministic_and_follows_its_seed():
    import torch

    rows = synthetic_states(1).at(1)
    torch.manual_seed(5)
    threads = torch.get_num_threads()
    a, b, c = fit_mlp(rows, 4, 0), fit_mlp(rows, 4, 0), fit_mlp(rows, 4, 1)
    assert torch.get_num_threads() == threads and not torch.are_deterministic_algorithms_enabled()
    x = rows.features[0]
    assert np.array_equal(a.predict(x), b.predict(x))  # bit for bit
    assert not np.array_equal(a.predict(x), c.predict(x))
    assert 1 <= a.best_epoch <= a.epochs and len(a.validation_loss) == a.epochs
    hidden = a.network[0]
    assert (hidden.in_features, hidden.out_features) == (6, 512) and a.network[3].out_features == 256


def test_the_mlp_probe_through_the_runner_is_deterministic(tiny, tmp_path):
    params = {"probe": "mlp", "layer": 2, "protocol": "kfold", "folds": 3}
    first = probe_scores(tmp_path / "a", ("synth_alpha_sys",), **params)
    forget()
    assert probe_scores(tmp_path / "b", ("synth_alpha_sys",), **params) == first


def test_explain_shows_the_chosen_layer_and_its_inner_cv(tiny, tmp_path):
    from sourcesum.runner import explain

    ranker = create_ranker("probe", model=MODEL, layer="cv")
    (described,) = explain(ranker, load_split("synth_alpha_sys"), ScoreStore(tmp_path / "s"))
    assert described["trained_on"] == list(BETA) and described["probe"] == "linear"
    assert [row["layer"] for row in described["layer_cv"]] == [0, 1, 2]
    assert described["layer"] == next(r["layer"] for r in described["layer_cv"] if r.get("selected"))
    assert described["C"] in learned.C_GRID and "weights" not in described


# -- parameters -----------------------------------------------------------------------------------
def test_parameters_are_canonical_and_keyed():
    config = Configuration.of("probe", {"layer": "07", "mode": "conditioned"})
    assert config.params["layer"] == "7" and config.params["weights"] == "pretrained"
    assert (
        config.label == "probe(layer=7, mode=conditioned, model=SmolLM2-135M-Instruct, protocol=cross-corpus)"
    )
    assert config.protocol is not None and config.protocol.name == "cross-corpus"
    keys = {
        Configuration.of("probe", params).entry_key("xsum_pegasus", "sha")
        for params in ({}, {"layer": "all"}, {"weights": "random"}, {"pool": "last"}, {"C": 1.0})
    }
    assert len(keys) == 5


@pytest.mark.parametrize(
    "params, message",
    [
        ({"layer": "middle"}, "expected a layer index"),
        ({"layer": "-1"}, "expected a layer index"),
        ({"probe": "mlp", "C": 1.0}, "C applies to probe=linear only"),
        ({"probe": "mlp"}, "layer=cv chooses the layer with the linear probe"),
        ({"mode": "both"}, "probe.mode"),
        ({"backend": "openai", "base_url": "http://127.0.0.1:1/v1"}, "hidden states"),
    ],
)
def test_bad_parameters(params, message):
    with pytest.raises(ParameterError, match=message):
        create_ranker("probe", **params)


def test_a_layer_beyond_the_model_is_an_error_naming_it(tiny, tmp_path):
    with pytest.raises(RankerError, match="layer 3 is beyond tiny-probe's layers 0..2"):
        probe_scores(tmp_path / "s", ("synth_alpha_sys",), layer=3, C=1.0)


def test_a_pair_beyond_the_window_scores_ties_and_is_left_out_of_training(tiny, tmp_path):
    long_doc = ["word " * 600, "another sentence here."]
    ranker = create_ranker("probe", model=MODEL, layer=1, C=1.0, overflow="ties")
    with pytest.raises(RankerError, match="not trained"):
        ranker.score_batch([make_pair(DOC, "A bridge.")])
    split = load_split("synth_beta_sys")
    from sourcesum.rankers.context import TrainingData

    too_long = make_pair(long_doc, "A summary.", pair_id="long__0", split="synth_beta_sys")
    data = TrainingData(
        (*split.pairs, too_long), (*split.judgments, Judgment.of([1.0, 0.0], [0.5, 0.0])), ("beta",), 2
    )
    ranker.train(data)
    assert ranker.describe_model()["left_out_pairs"] == 1
    scores = ranker.score_batch([too_long, make_pair(DOC, "A bridge.")])
    assert scores[0] == [0.0, 0.0] and len(set(scores[1])) > 1
    assert ranker.report() == {"overflow_pairs": 1, "overflow_training_pairs": 1}
    strict = create_ranker("probe", model=MODEL, layer=1, C=1.0)
    with pytest.raises(RankerError, match="long__0"):
        strict.train(data)


# -- the layer curve ------------------------------------------------------------------------------
def test_probe_layers_computes_resumably_and_prints_the_curve_from_stored_entries(
    tiny, tmp_path, capsys, scores_dir
):
    from sourcesum import stats
    from sourcesum.cli import main
    from sourcesum.evaluation import evaluate_split
    from sourcesum.evaluation.measures import AP, NDCG, Measure
    from sourcesum.store import open_stores

    argv = [
        "probe-layers",
        "--model",
        MODEL,
        "--split",
        "synthnews",
        "--layers",
        "1,all",
        "-p",
        "probe.folds=3",
    ]
    argv += ["--resamples", "1000", "--no-progress"]
    assert main([*argv, "--json"]) == 2  # nothing stored yet: named, nothing computed
    assert "16 of 16 configurations lack complete entries" in capsys.readouterr().err
    plot = tmp_path / "curve.png"
    assert main([*argv, "--compute", "--json", "--plot", str(plot)]) == 0
    curve = json.loads(capsys.readouterr().out)
    assert plot.read_bytes().startswith(b"\x89PNG")
    assert curve["schema"] == "sourcesum-probelayers/1" and curve["measures"] == [
        "ndcg",
        "map",
        "ndcg_at_10",
        "spearman",
    ]
    assert len(curve["points"]) == 2 * 2 * 2 * 2
    assert {p["layer"] for p in curve["points"][-8:]} == {"all"}  # the costly points last
    # every value is the stored entry's, evaluated and resampled as the board does
    store = open_stores(str(scores_dir))
    measures = (NDCG, AP, Measure.of("nDCG", k=10), Measure.of("Spearman"))
    point = curve["points"][0]
    config = Configuration.of(
        "probe",
        {
            **{k: point[k] for k in ("protocol", "weights", "mode", "layer")},
            "model": MODEL,
            "C": 1.0,
            "folds": 3,
        },
    )
    means = []
    for name in curve["splits"]:
        split = load_split(name)
        entry = store.load("probe", name, config.entry_key(name, split.sha256))
        evaluation = evaluate_split(split, entry.scores, "x", measures)
        for measure in measures:
            cell = point["splits"][name][measure.json_key]
            assert cell["mean"] == pytest.approx(evaluation.mean(measure), abs=1e-6)
            low, high = stats.bootstrap_ci(evaluation.values(measure), 1000, 0, list(split.clusters))
            assert cell["ci"] == pytest.approx([low, high], abs=1e-6)
        means.append(point["splits"][name]["ndcg_at_10"]["mean"])
    assert point["average"]["ndcg_at_10"]["mean"] == pytest.approx(np.mean(means), abs=1e-6)
    # the peaks are the curves' maxima
    for peak in curve["peaks"]:
        for weights in ("pretrained", "random"):
            values = {
                p["layer"]: p["average"][peak["measure"]]["mean"]
                for p in curve["points"]
                if (p["protocol"], p["mode"], p["weights"]) == (peak["protocol"], peak["mode"], weights)
            }
            assert peak[weights] == {"peak_layer": 1, "peak": values["1"], "all": values["all"]}
    # read back from the store alone, the same curve
    forget()
    assert main([*argv, "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == curve


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--modes", "both"], "--modes 'both'"),
        (["--layers", "cv"], "cv is not a layer of the curve"),
        (["--layers", "3-1"], "a range runs from the lower index up"),
        (["--layers", "0-x"], "expected a layer index"),
        (["-p", "probe.layer=3"], "the curve sets it"),
        (["--plot", "curve.svg"], "name a .png file"),
        (["--resamples", "5"], "between 1,000 and 100,000"),
    ],
)
def test_probe_layers_refuses_bad_options(tiny, capsys, extra, message):
    from sourcesum.cli import main

    assert main(["probe-layers", "--model", MODEL, "--split", "synthnews", "--layers", "1", *extra]) == 2
    assert message in capsys.readouterr().err


def test_probe_layers_reads_indices_ranges_and_all_each_once():
    from sourcesum.cli.probing import layer_names

    assert layer_names(MODEL, "0-2, all,1,30-30") == ["0", "1", "2", "all", "30"]


def test_the_states_memo_keeps_the_most_recently_used_within_its_limit():
    memo = probe_module.StatesMemo(limit=3 * 8)
    arrays = {name: np.full(8, i, dtype=np.uint8) for i, name in enumerate("abcd")}
    for name in "abc":
        memo.put(name, arrays[name])
    assert memo.get("a") is arrays["a"]  # now the most recent
    memo.put("d", arrays["d"])  # evicts b, the least recently used
    assert memo.get("b") is None and all(memo.get(n) is arrays[n] for n in "acd") and memo.size == 24
    memo.put("huge", np.zeros(100, dtype=np.uint8))  # larger than the limit: not kept
    assert memo.get("huge") is None and memo.size == 24


@pytest.mark.parametrize("probe, layer", [("linear", "cv"), ("mlp", "1")])
def test_cli_explain_prints_the_probes_layer_and_fit(tiny, capsys, scores_dir, probe, layer):
    from sourcesum.cli import main

    argv = ["explain", "probe", "-p", f"probe.model={MODEL}", "-p", f"probe.probe={probe}"]
    argv += ["-p", f"probe.layer={layer}", "--split", "synth_alpha_sys"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"{probe} probe on layer" in out and "fitted on synth_beta_sys + synth_beta_ref (6 pairs)" in out
    if probe == "linear":
        assert out.count("<- chosen") == 2 and "inner CV layer 2:" in out and "(chosen by inner CV)" in out
    else:
        assert "epochs, the weights of epoch" in out
