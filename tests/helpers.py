"""Hand-made pairs and splits for ranker tests, and the example budget of property tests."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from sourcesum.data import Judgment, Pair, Split

QUICK = os.environ.get("SOURCESUM_QUICK_TESTS") == "1"
"""True in the fast loop (``pytest -m "not slow"``; set by conftest.py)."""


def examples(full: int) -> int:
    """A property test's hypothesis example count: ``full`` in the full suite (what CI runs),
    a tenth of it (at least 50) in the fast loop."""
    return full if not QUICK else max(50, full // 10)


def make_pair(sentences: list[str], summary: str, pair_id: str = "hand__0", split: str = "hand") -> Pair:
    """A pair's inputs (no labels: rankers never see them)."""
    return Pair(
        id=pair_id,
        split=split,
        corpus="test",
        model="test",
        original_id=pair_id,
        summary_idx=0,
        sentences=tuple(sentences),
        summary=summary,
        document="\n".join(sentences),
        reference_summary=summary,
    )


def make_split(
    name: str,
    pairs: Sequence[Pair],
    votes: Sequence[Sequence[Sequence[int]]] | None = None,
    min_relevant: float = 2,
) -> Split:
    """A split of hand-made pairs; ``votes[i][j]`` are the annotators' 0/1 votes on sentence
    ``j`` of pair ``i`` (default: two annotators voting 0 everywhere)."""
    votes = votes or [[(0, 0)] * p.n_sentences for p in pairs]
    judgments = tuple(Judgment.from_votes(v) for v in votes)
    return Split(
        name, "hand", name, Path(f"<{name}>"), f"sha-of-{name}", tuple(pairs), judgments, min_relevant
    )


def declaration(
    rows: Sequence[str | tuple[str, str]] = ("lead", "random", "bm25"),
    references: Sequence[str] = ("oracle",),
    dataset: str | None = "synthnews",
    published: Sequence[str] = (),
) -> str:
    """The text of a board declaration (``leaderboard.toml``): ``rows`` are ranker names or
    ``(name, TOML inline table of params)``."""
    lines = [f'dataset = "{dataset}"', ""] if dataset else []
    for row in rows:
        name, params = (row, "") if isinstance(row, str) else row
        lines += ["[[rows]]", f'ranker = "{name}"'] + ([f"params = {params}"] if params else []) + [""]
    for name in references:
        lines += ["[[references]]", f'ranker = "{name}"', ""]
    for method in published:
        lines += ["[[published]]", f'method = "{method}"', ""]
    return "\n".join(lines)


def tiny_tokenizer():
    """all-MiniLM-L6-v2's WordPiece tokenizer with [CLS]/[SEP] as BOS/EOS (offline)."""
    from sourcesum.rankers.device import resolve_sentence_model
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(resolve_sentence_model("all-MiniLM-L6-v2"))
    tokenizer.bos_token, tokenizer.eos_token = "[CLS]", "[SEP]"
    return tokenizer


def tiny_llama(tokenizer, dtype=None, seed: int = 0, attn_implementation: str = "sdpa"):
    """A randomly initialised 2-layer Llama (hidden size 32) built from a config; the same
    ``seed`` gives the same weights under either attention implementation."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=tokenizer.vocab_size,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=512,
    )
    torch.manual_seed(seed)
    model = LlamaForCausalLM._from_config(config, attn_implementation=attn_implementation)
    model.apply(model._init_weights)
    return model.to(dtype or torch.float32).eval()


def tiny_bart(
    tokenizer, dtype=None, seed: int = 0, attn_implementation: str = "sdpa", scale_embedding: bool = True
):
    """A randomly initialised 2+2-layer BART (d_model 32, scaled embeddings unless told
    otherwise) built from a config."""
    import torch
    from transformers import BartConfig, BartForConditionalGeneration

    config = BartConfig(
        vocab_size=tokenizer.vocab_size,
        d_model=32,
        encoder_layers=2,
        decoder_layers=2,
        encoder_attention_heads=4,
        decoder_attention_heads=4,
        encoder_ffn_dim=64,
        decoder_ffn_dim=64,
        max_position_embeddings=512,
        scale_embedding=scale_embedding,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
        decoder_start_token_id=tokenizer.cls_token_id,
    )
    torch.manual_seed(seed)
    model = BartForConditionalGeneration._from_config(config, attn_implementation=attn_implementation)
    return model.to(dtype or torch.float32).eval()


def tiny_gpt2(tokenizer, dtype=None, seed: int = 0):
    """A randomly initialised 2-layer GPT-2 (n_embd 32): computes wholly in ``dtype`` (Llama's
    RMSNorm rounds through float32, too coarse for finite differences)."""
    import torch
    from transformers import GPT2Config, GPT2LMHeadModel

    config = GPT2Config(
        vocab_size=tokenizer.vocab_size,
        n_embd=32,
        n_layer=2,
        n_head=4,
        n_positions=512,
        bos_token_id=tokenizer.cls_token_id,
        eos_token_id=tokenizer.sep_token_id,
    )
    torch.manual_seed(seed)
    model = GPT2LMHeadModel._from_config(config, attn_implementation="sdpa")
    return model.to(dtype or torch.float32).eval()
