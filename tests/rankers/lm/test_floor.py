"""scripts/bench_lm_floor.py counts exactly the tokens the LM rankers run through the model body
(:mod:`sourcesum.rankers.lm.floor`), so its lower bound on their time rests on their real work
(counted here with a forward hook on a tiny Llama), for hand-made pairs and for the runner's
cross-split document groups of the synthetic splits. The counts are computed in process; one
test runs the script as ``python scripts/bench_lm_floor.py --counts-only`` runs it, in this
process, on the tiny model saved to a folder and checks that it prints those counts."""

from __future__ import annotations

import json

import pytest
from sourcesum.data import load_split
from sourcesum.paths import PROJECT_ROOT
from sourcesum.rankers import create_ranker
from sourcesum.rankers.lm.floor import documents as floor_documents
from sourcesum.rankers.lm.floor import token_counts
from sourcesum.rankers.lm.inputs import DEFAULT_TEMPLATE, causal_context, causal_summary
from sourcesum.rankers.lm.loading import register_loaded
from sourcesum.runner.run import run_splits
from sourcesum.store.stores import ScoreStore
from support.models import tiny_llama, tiny_tokenizer
from support.pairs import make_pair
from support.scripts import run_as_main

SENTENCES = [
    "The council voted to build a bridge over the river.",
    "Work starts in May and should take two years.",
    "Residents had asked for a crossing for decades.",
    "The mayor called it a historic day for the town.",
]
SUMMARIES = ["A bridge will be built after a council vote.", "The town gets its long-awaited bridge."]


HAND_DOCUMENTS = [(SENTENCES, SUMMARIES)]
"""The hand-made pairs' one document, as the floor groups it."""


@pytest.fixture(scope="module")
def floor():
    """``floor(documents=..., splits=..., shortlist=..., window=...)``: the token counts per ranker
    (:func:`token_counts`, what the script prints with ``--counts-only``) with the tiny model's
    tokenizer, for hand-made documents or synthetic splits (no window unless given), and the
    summaries of each document."""
    tokenizer = tiny_tokenizer()

    def ask(documents=None, splits=None, shortlist: int = 0, window: int = 0) -> dict:
        docs = (
            documents
            if documents is not None
            else floor_documents([load_split(n) for n in splits.split(",")])
        )
        counts = token_counts(tokenizer, docs, shortlist, window or None)
        return {"summaries": [len(doc[1]) for doc in docs], "rankers": counts}

    return ask


def test_the_script_prints_the_counts_of_its_documents(floor, tmp_path, monkeypatch, capsys):
    """``bench_lm_floor.py --counts-only`` on the tiny model saved to a folder, the hand-made
    documents in a file: it prints :func:`token_counts` of them, read with that model's tokenizer.
    The script runs in this process as ``python scripts/bench_lm_floor.py`` runs it (``runpy`` as
    ``__main__``), so torch and transformers are not imported a second time."""
    model = tmp_path / "tiny-floor"
    tokenizer = tiny_tokenizer()
    tiny_llama(tokenizer).save_pretrained(model)
    tokenizer.save_pretrained(model)
    path = tmp_path / "documents.json"
    path.write_text(json.dumps(HAND_DOCUMENTS), encoding="utf-8")
    argv = [
        "--counts-only",
        "--model",
        str(model),
        "--shortlist",
        "2",
        "--window",
        "0",
        "--documents",
        str(path),
    ]
    script = PROJECT_ROOT / "scripts" / "bench_lm_floor.py"
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))
    run_as_main(script, argv, monkeypatch)
    done = capsys.readouterr()
    printed = json.loads(done.out)
    expected = floor(documents=HAND_DOCUMENTS, shortlist=2)
    assert (printed["summaries"], printed["rankers"]) == (expected["summaries"], expected["rankers"])
    assert (printed["shortlist"], printed["window"]) == (2, None)


@pytest.fixture(scope="module")
def counted():
    """The tiny model (sdpa and eager twins) registered for the rankers, and a token counter."""
    tokenizer = tiny_tokenizer()
    tally = {"body": 0}

    def count(module, args, kwargs):
        ids, mask = kwargs["input_ids"], kwargs.get("attention_mask")
        new = ids.shape[1]
        tally["body"] += int(mask[:, -new:].sum()) if mask is not None else ids.numel()

    base = None
    for eager in (False, True):
        model = tiny_llama(tokenizer, attn_implementation="eager" if eager else "sdpa")
        if base is not None:
            model.load_state_dict(base.state_dict())
        base = model
        loaded = register_loaded("tiny-floor", model, tokenizer, eager_attention=eager)
        loaded.model.register_forward_pre_hook(count, with_kwargs=True)
    return tokenizer, tally


@pytest.mark.parametrize("ranker", ["perplexity_gain", "pmi", "attention", "contextcite"])
def test_the_floor_counts_the_tokens_the_ranker_runs(counted, floor, ranker):
    tokenizer, tally = counted
    pairs = [make_pair(SENTENCES, s, pair_id=f"hand__{i}") for i, s in enumerate(SUMMARIES)]
    expected = floor(documents=HAND_DOCUMENTS)["rankers"][ranker]
    tally["body"] = 0
    create_ranker(ranker, model="tiny-floor", device="cpu").score_batch(pairs)
    assert tally["body"] == expected["body"]


def test_the_floor_counts_the_passes_that_read_at2s_features(counted, floor):
    """``at2`` scores a pair from one pass (its features); its fit reads the training pairs'
    features with the same pass, so the count of the scored pairs is the whole inference."""
    tokenizer, tally = counted
    pairs = [make_pair(SENTENCES, s, pair_id=f"hand__{i}") for i, s in enumerate(SUMMARIES)]
    expected = floor(documents=HAND_DOCUMENTS)["rankers"]["at2"]
    tally["body"] = 0
    create_ranker("at2", model="tiny-floor", device="cpu").features(pairs)
    assert tally["body"] == expected["body"] > 0


@pytest.mark.parametrize("ranker", ["perplexity_gain", "pmi", "attention", "contextcite"])
def test_the_floor_counts_what_the_runner_runs_across_splits(counted, floor, ranker, tmp_path):
    """On splits that share documents (and a split repeating another's pairs), the floor's
    documents are the runner's cross-split document groups: the same tokens go through the body."""
    tokenizer, tally = counted
    names = ("synth_alpha_sys", "synth_alpha_ref", "synth_alpha_sys_all")
    splits = [load_split(n) for n in names]
    counts = floor(splits=",".join(names))
    assert sorted(counts["summaries"]) == [1, 1, 2, 2, 2]  # five documents
    expected = counts["rankers"][ranker]
    tally["body"] = 0
    run_splits(
        create_ranker(ranker, model="tiny-floor", device="cpu"), splits, ScoreStore(tmp_path), progress=False
    )
    assert tally["body"] == expected["body"]


def test_the_floor_counts_the_passes_attribution_runs(counted, floor):
    """attribution, one summary per batch: its forward passes are the document once and each
    summary once, and its backward passes (counted on a body Linear layer's output gradients) run
    each summary and the whole document again, one pass per summary, as the floor counts; the
    output layer's rows, forward and backward, are the floor's logits."""
    tokenizer, tally = counted
    pairs = [make_pair(SENTENCES, s, pair_id=f"hand__{i}") for i, s in enumerate(SUMMARIES)]
    expected = floor(documents=HAND_DOCUMENTS)["rankers"]["attribution"]
    ranker = create_ranker("attribution", model="tiny-floor", device="cpu", batch_size=1)
    rows = {"backward": 0, "head": 0}

    def count_backward(module, grad_input, grad_output):
        rows["backward" if module is probe else "head"] += grad_output[0].shape[:-1].numel()

    def count_head(module, args):
        rows["head"] += args[0].shape[:-1].numel()

    model = ranker.lm().model
    probe, head = model.model.layers[0].mlp.down_proj, model.get_output_embeddings()
    handles = [
        probe.register_full_backward_hook(count_backward),
        head.register_full_backward_hook(count_backward),
        head.register_forward_pre_hook(count_head),
    ]
    try:
        tally["body"] = 0
        ranker.score_batch(pairs)
    finally:
        for handle in handles:
            handle.remove()
    length = len(ranker.context(ranker.lm(), SENTENCES).ids())
    summary_tokens = [len(ranker.summary_tokens(ranker.lm(), s)) for s in SUMMARIES]
    assert tally["body"] == length + sum(summary_tokens)
    assert rows["backward"] == sum(length + n for n in summary_tokens)
    assert expected["body"] == tally["body"] + rows["backward"]
    assert expected["logits"] == rows["head"]


def test_the_floor_counts_a_shortlisted_perplexity_gain_and_leaves_out_what_overflows(counted, floor):
    """perplexity_gain with shortlist=2 runs exactly the tokens counted with the shortlist; with
    a window that one summary's reading exceeds, that summary's work is left out."""
    tokenizer, tally = counted
    pairs = [make_pair(SENTENCES, s, pair_id=f"hand__{i}") for i, s in enumerate(SUMMARIES)]
    shortlisted = floor(documents=HAND_DOCUMENTS, shortlist=2)["rankers"]["perplexity_gain"]
    tally["body"] = 0
    create_ranker("perplexity_gain", model="tiny-floor", device="cpu", shortlist=2).score_batch(pairs)
    assert (
        tally["body"]
        == shortlisted["body"]
        < floor(documents=HAND_DOCUMENTS)["rankers"]["perplexity_gain"]["body"]
    )
    length = len(causal_context(tokenizer, SENTENCES, DEFAULT_TEMPLATE).ids())
    longer, shorter = sorted(SUMMARIES, key=lambda s: -len(causal_summary(tokenizer, s)))
    window = length + len(causal_summary(tokenizer, shorter))
    assert len(causal_summary(tokenizer, longer)) > len(causal_summary(tokenizer, shorter))
    only_shorter = floor(documents=[(SENTENCES, [shorter])])["rankers"]
    windowed = floor(documents=HAND_DOCUMENTS, window=window)["rankers"]
    assert windowed["attention"] == only_shorter["attention"]
    assert windowed["pmi"] == floor(documents=HAND_DOCUMENTS)["rankers"]["pmi"]


@pytest.mark.parametrize("mode", ["blind", "conditioned"])
def test_the_floor_counts_the_probes_passes(counted, floor, mode, tmp_path, monkeypatch):
    """probe, from an empty state cache: the body reads each document once (blind) or each
    summary's reading once (conditioned), and no logit is computed."""
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))
    pairs = [make_pair(SENTENCES, s, pair_id=f"hand__{i}") for i, s in enumerate(SUMMARIES)]
    expected = floor(documents=HAND_DOCUMENTS)["rankers"][f"probe:{mode}"]
    ranker = create_ranker("probe", model="tiny-floor", device="cpu", mode=mode)
    ran = {"body": 0}

    def count(module, args, kwargs):
        ran["body"] += kwargs["input_ids"].numel()

    handle = ranker.lm().model.base_model.register_forward_pre_hook(count, with_kwargs=True)
    try:
        ranker.pair_states(pairs)
    finally:
        handle.remove()
    assert ran["body"] == expected["body"] > 0 and expected["logits"] == 0
