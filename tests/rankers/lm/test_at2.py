"""``at2``: per-head attention features against a manual computation, the head-weight fit, and
training under a protocol that withholds the votes (tiny Llama, synthetic corpora)."""

from __future__ import annotations

import numpy as np
import pytest
from sourcesum.data import load_split
from sourcesum.errors import LabelAccessError, ScoreFileError
from sourcesum.rankers import RANKERS, create_ranker
from sourcesum.rankers.context import WithheldJudgments
from sourcesum.rankers.lm.at2 import fit_head_weights
from sourcesum.rankers.lm.inputs import DEFAULT_TEMPLATE, causal_context, causal_summary
from sourcesum.runner.configs import Configuration
from sourcesum.runner.run import run_splits
from sourcesum.store.entry import ScoreEntry
from sourcesum.store.stores import ScoreStore, StoreStack
from support.models import register_eager
from support.pairs import make_pair
from support.votes import ALPHA, BETA, permute_votes

MODEL = "tiny-at2"
DOC = [
    "The council voted to build a bridge over the river.",
    "It rained all week.",
    "The bridge will cost forty million dollars.",
    "A bakery opened downtown.",
]


@pytest.fixture(scope="module")
def tiny_eager():
    return register_eager(MODEL, seed=5)


def test_features_are_the_per_head_attention_predicting_the_summary_to_each_sentence(tiny_eager):
    import torch

    model, tok = tiny_eager
    pairs = [make_pair(DOC, s, pair_id=f"d__{i}") for i, s in enumerate(["A bridge was approved.", "Rain."])]
    features = create_ranker("at2", model=MODEL, batch_size=2).features(pairs)
    context = causal_context(tok, DOC, DEFAULT_TEMPLATE)
    layers, heads = model.config.num_hidden_layers, model.config.num_attention_heads
    for pair, got in zip(pairs, features, strict=True):
        summary = list(causal_summary(tok, pair.summary))
        ids = torch.tensor([context.ids() + summary])
        with torch.no_grad():
            attentions = model(input_ids=ids, output_attentions=True).attentions  # one uncached pass
        queries = range(len(context.ids()) - 1, ids.shape[1] - 1)  # the positions predicting the summary
        expected = np.zeros((len(DOC), layers * heads))
        for layer in range(layers):
            for head in range(heads):
                weights = attentions[layer][0, head].double().numpy()
                for i, (start, segment) in enumerate(zip(context.starts, context.segments, strict=True)):
                    mass = [weights[q, start : start + len(segment)].sum() for q in queries]
                    expected[i, layer * heads + head] = np.mean(mass)
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6)


def test_fitted_head_weights_reproduce_the_targets_better_than_uniform_weights():
    rng = np.random.default_rng(0)
    truth = np.array([3.0, 0.0, 0.0, 1.0, 0.0, 0.0])
    features = [rng.random((8, 6)) for _ in range(40)]
    targets = [x @ truth + 0.05 * rng.standard_normal(8) for x in features]
    theta = fit_head_weights(features, targets, steps=300, lr=0.05, batch=16, seed=0)
    assert abs(np.abs(theta).sum() - 1) < 1e-12  # L1-normalised, as the package finalises it

    def mean_correlation(weights):
        return np.mean([np.corrcoef(x @ weights, t)[0, 1] for x, t in zip(features, targets, strict=True)])

    uniform = mean_correlation(np.full(6, 1 / 6))
    fitted = mean_correlation(theta)
    assert fitted > 0.95 and fitted > uniform + 0.1
    assert set(np.argsort(-theta)[:2]) == {0, 3}
    again = fit_head_weights(features, targets, steps=300, lr=0.05, batch=16, seed=0)
    np.testing.assert_array_equal(theta, again)  # deterministic


def test_withheld_judgments_refuse_every_read():
    withheld = WithheldJudgments(("synth_beta_sys",))
    for read in (lambda: withheld[0], lambda: len(withheld), lambda: list(withheld)):
        with pytest.raises(LabelAccessError, match="withheld"):
            read()


def test_at2_is_zero_shot_though_it_trains_under_a_protocol():
    config = Configuration.of("at2", {"dtype": "float32"})
    assert config.protocol is not None and config.protocol.votes is False
    assert [b.label for b in config.bases] == [
        Configuration.of("perplexity_gain", {"dtype": "float32"}).label
    ]
    assert Configuration.of("learned", {"rankers": "bm25"}).protocol.votes is True


@pytest.fixture(scope="module")
def targets_store(tiny_eager, tmp_path_factory):
    """A store holding the targets' entries (perplexity_gain on the tiny model, both corpora),
    computed once; each test reads it below a fresh store of its own."""
    folder = tmp_path_factory.mktemp("at2-targets")
    ranker = create_ranker("perplexity_gain", model=MODEL)
    run_splits(ranker, [load_split(n) for n in ALPHA + BETA], ScoreStore(folder), progress=False)
    return folder


def _stack(top, targets):
    return StoreStack([ScoreStore(top), ScoreStore(targets, writable=False)])


def _at2_scores(store, names, **params):
    ranker = create_ranker("at2", model=MODEL, steps=20, lr=0.05, batch=4, **params)
    runs = run_splits(ranker, [load_split(n) for n in names], store, progress=False)
    return {pid: s for run in runs for pid, s in run.entry.scores.items()}


def test_at2_reads_no_vote_of_the_training_or_scored_corpus(targets_store, tmp_path, monkeypatch):
    before = _at2_scores(_stack(tmp_path / "before", targets_store), ALPHA)
    assert set(before) == {p.id for n in ALPHA for p in load_split(n)}
    assert any(np.ptp(s) > 0 for s in before.values())
    with monkeypatch.context() as m:  # every vote of both corpora permuted
        assert permute_votes(m, ALPHA + BETA, seed=3)
        after = _at2_scores(_stack(tmp_path / "after", targets_store), ALPHA)
    assert after == before


def test_a_run_computes_the_targets_on_the_training_corpus_only(tiny_eager, tmp_path):
    """The ablation targets are read on the training pairs alone, so scoring a corpus never
    computes them on it (on WiCE's pages that would be hours of leave-one-out passes)."""
    store = ScoreStore(tmp_path)
    scores = _at2_scores(store, ALPHA)
    assert set(scores) == {p.id for n in ALPHA for p in load_split(n)}
    made = {(path.parent.name, entry.split) for path, entry in store.entries()}
    assert made == {("perplexity_gain", n) for n in BETA} | {("at2", n) for n in ALPHA}


def test_reading_a_withheld_vote_in_train_is_an_error_naming_the_ranker(targets_store, tmp_path, monkeypatch):
    cls = RANKERS.get("at2")
    monkeypatch.setattr(cls, "train", lambda self, data: data.judgments[0])
    with pytest.raises(LabelAccessError, match=r"ranker at2\(.*\) read a withheld vote in train\(\)"):
        _at2_scores(_stack(tmp_path / "s", targets_store), ALPHA[:1])


def _fitted_entries(top, targets_store):
    """at2 run on ALPHA into the store at ``top``: {split: (path, entry)} and the fit's key."""
    _at2_scores(_stack(top, targets_store), ALPHA)
    entries = {e.split: (path, e) for path, e in ScoreStore(top).entries() if e.ranker == "at2"}
    return entries, "+".join(BETA)


def _rewrite(path, entry, scores=None, fits=None):
    """``entry`` written back at ``path`` (valid checksums) with other scores or fits."""
    changed = ScoreEntry(**{**entry.__dict__, "verified": None})
    changed.scores = dict(entry.scores if scores is None else scores)
    changed.fits = dict(entry.fits if fits is None else fits)
    path.write_text(changed.to_json())
    return changed


def test_the_weights_are_stored_with_the_entries_they_score_and_explain_reads_them(
    targets_store, tmp_path, monkeypatch
):
    """Each entry holds the fit that scored it (under its training splits); explain prints the
    stored weights with no model loaded, no feature pass and no targets."""
    from sourcesum.runner.explain import explain

    entries, key = _fitted_entries(tmp_path / "s", targets_store)
    fits = [entries[n][1].fits for n in ALPHA]
    assert list(fits[0]) == [key] and fits[0] == fits[1]  # both corpora's splits: one fit on the other
    fit = fits[0][key]
    assert fit["trained_on"] == list(BETA) and fit["heads"] == 4 and len(fit["weights"]) == 2 * 4

    cls = RANKERS.get("at2")
    for method in ("features", "lm", "train"):
        monkeypatch.setattr(cls, method, lambda *a, **k: pytest.fail("explain did not read the stored fit"))
    ranker = create_ranker("at2", model=MODEL, steps=20, lr=0.05, batch=4)
    [model] = explain(ranker, load_split(ALPHA[0]), ScoreStore(tmp_path / "s"))  # no targets here
    assert model["fit"] == "stored" and model["weights"] == fit["weights"]


def test_a_resumed_entry_is_scored_by_the_fit_it_stores_and_one_without_its_fit_is_refused(
    targets_store, tmp_path, monkeypatch
):
    """Resuming restores the stored fit instead of fitting again (scores are linear in the
    weights: doubled weights, doubled scores); a partial entry whose scores have no stored fit
    cannot be resumed, nor merged with a fitted one."""
    from sourcesum.errors import StoreConflict
    from sourcesum.store.entry import merge_entries

    top = tmp_path / "s"
    entries, key = _fitted_entries(top, targets_store)
    path, entry = entries[ALPHA[0]]
    first, *rest = sorted(entry.scores)
    doubled = {**entry.fits[key], "weights": [2 * w for w in entry.fits[key]["weights"]]}
    _rewrite(path, entry, scores={first: entry.scores[first]}, fits={key: doubled})
    with monkeypatch.context() as m:
        m.setattr(RANKERS.get("at2"), "train", lambda *a: pytest.fail("the stored fit was not restored"))
        resumed = _at2_scores(_stack(top, targets_store), ALPHA[:1])
    for pid in rest:
        assert resumed[pid] == pytest.approx([2 * v for v in entry.scores[pid]], rel=1e-9, abs=1e-12)

    unfitted = _rewrite(path, entry, scores={first: entry.scores[first]}, fits={})
    with pytest.raises(ScoreFileError, match="saved without the fit that made them"):
        _at2_scores(_stack(top, targets_store), ALPHA[:1])
    with pytest.raises(StoreConflict, match="its scores come without the fit that made them"):
        merge_entries([("fitted", entry), ("unfitted", unfitted)])

    from sourcesum.runner.explain import explain

    _rewrite(path, entry, fits={})  # complete, written before fits were stored
    ranker = create_ranker("at2", model=MODEL, steps=20, lr=0.05, batch=4)
    [model] = explain(ranker, load_split(ALPHA[0]), _stack(top, targets_store))
    assert model["fit"] == "refitted"


def test_verify_compares_the_stored_fit_with_the_refit(targets_store, tmp_path):
    from sourcesum.runner.verify import verify_entry

    entries, key = _fitted_entries(tmp_path / "s", targets_store)
    layers = [ScoreStore(targets_store, writable=False)]
    path, entry = entries[ALPHA[0]]
    assert verify_entry(path, layers).ok
    weights = entry.fits[key]["weights"]
    _rewrite(path, entry, fits={key: {**entry.fits[key], "weights": [weights[0] + 0.01, *weights[1:]]}})
    outcome = verify_entry(path, layers)
    assert not outcome.ok and f"its stored fit on {key} differs by 0.01" in "; ".join(outcome.problems)


def test_explain_prints_where_the_weights_were_fitted_and_the_largest_heads(targets_store, tmp_path):
    from sourcesum.outputs.models import format_model
    from sourcesum.runner.explain import explain

    ranker = create_ranker("at2", model=MODEL, steps=20, lr=0.05, batch=4)
    [model] = explain(ranker, load_split(ALPHA[0]), _stack(tmp_path / "s", targets_store))
    assert model["fit"] == "new"  # no entry yet: fitted now
    assert model["trained_on"] == list(BETA) and model["pairs"] == sum(len(load_split(n)) for n in BETA)
    assert len(model["weights"]) == model["features"] == 2 * 4  # the tiny Llama: 2 layers x 4 heads
    weights = [h["weight"] for h in model["top_heads"]]
    assert weights == sorted(weights, key=lambda w: -abs(w))
    text = format_model(model)
    assert f"fitted on {' + '.join(BETA)}" in text and "votes withheld" in text and "fitted now" in text
    assert f"layer {model['top_heads'][0]['layer']} head {model['top_heads'][0]['head']}" in text


@pytest.mark.slow
@pytest.mark.real_data
def test_every_committed_entry_stores_the_weights_that_reproduce_its_scores():
    """Each committed at2 entry stores the fit that scored it: restored (no refit), it re-scores
    the entry's first document within the ranker's reproduction tolerance."""
    from sourcesum.paths import COMMITTED_SCORES_DIR

    entries = [e for _, e in ScoreStore(COMMITTED_SCORES_DIR, writable=False).entries() if e.ranker == "at2"]
    assert len(entries) >= 8  # the four board splits and the four held-out splits
    tolerance = RANKERS.get("at2").reproduction_tolerance
    for entry in entries:
        assert len(entry.fits) == 1, f"{entry.split}: {list(entry.fits)}"  # one assignment per split
        ranker = Configuration.of(entry.ranker, entry.params).create(device="cpu")
        ranker.restore_fitted_state(next(iter(entry.fits.values())))
        split = load_split(entry.split)
        pairs = [p for p in split if p.document_key == split.pairs[0].document_key]
        for pair, scores in zip(pairs, ranker.score_batch(pairs), strict=True):
            gap = np.abs(np.array(scores) - np.array(entry.scores[pair.id])).max()
            assert gap <= tolerance, (entry.split, pair.id, gap)
