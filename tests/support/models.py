"""Tiny models built from configs for the LM and LLM rankers' tests (WordPiece tokenizers,
2-layer Llama, BART and GPT-2), and the offline default LM written as an all-F32 GGUF for a
llama.cpp server (:func:`support.servers.start_llama_server` serves it)."""

from __future__ import annotations

from pathlib import Path


def naive_nll(*args, **kwargs):
    """:func:`sourcesum.rankers.lm.engine.naive_nll`, imported on the first call: the engine
    imports torch, which collecting the suite need not pay for."""
    from sourcesum.rankers.lm.engine import naive_nll

    return naive_nll(*args, **kwargs)


def tiny_tokenizer():
    """all-MiniLM-L6-v2's WordPiece tokenizer with [CLS]/[SEP] as BOS/EOS (offline)."""
    from sourcesum.rankers.device import resolve_sentence_model
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(resolve_sentence_model("all-MiniLM-L6-v2"))
    tokenizer.bos_token, tokenizer.eos_token = "[CLS]", "[SEP]"
    return tokenizer


def small_tokenizer(text: str = ""):
    """A WordPiece tokenizer like :func:`tiny_tokenizer` (lower-cased, [CLS]/[SEP] as BOS/EOS)
    over a vocabulary of ~100 tokens: the special tokens, single characters (word-initial and
    ``##`` continuations) and the words of ``text``; other words are spelled out. For tests of
    what is done with a model (caching, loading, hashing), not of what it scores: a tiny model
    over it is 1/250 of the size over all-MiniLM-L6-v2's 30,522 tokens."""
    import string

    from transformers import BertTokenizer

    characters = string.ascii_lowercase + string.digits + string.punctuation
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *characters]
    vocab += [f"##{c}" for c in string.ascii_lowercase + string.digits]
    vocab += sorted({w for w in text.lower().split() if w.isalpha()})
    tokenizer = BertTokenizer(vocab={token: i for i, token in enumerate(dict.fromkeys(vocab))})
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


def register_eager(name: str, build=None, **options):
    """A tiny model with eager attention (``build(tokenizer, attn_implementation="eager",
    **options)``, :func:`tiny_llama` by default) registered as ``name`` for every ranker, those
    that read attention weights included: ``(model, tokenizer)``."""
    from sourcesum.rankers.lm.loading import register_loaded

    tokenizer = tiny_tokenizer()
    model = (build or tiny_llama)(tokenizer, attn_implementation="eager", **options)
    for eager in (False, True):
        register_loaded(name, model, tokenizer, eager_attention=eager)
    return model, tokenizer


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


def write_f32_gguf(path: Path) -> Path:
    """Write the offline default model (SmolLM2-135M-Instruct) as an all-F32 GGUF at ``path``:
    the very float32 weights the local engine reads (its verified dequantized safetensors copy,
    :func:`sourcesum.rankers.lm.weights.dequantized_copy`), under the shipped Q4 file's metadata and
    tokenizer, written with the ``gguf`` package's writer. Tensors are renamed to llama.cpp's names
    and the query/key projections permuted back to llama.cpp's rotary layout (the inverse of what
    transformers does on loading a GGUF). Each tensor is checked bit for bit against the Q4 file's
    own dequantization (:func:`gguf.dequantize`), so the file is that one's weights in float32."""
    import json

    import gguf
    import numpy as np
    from safetensors.numpy import load_file
    from sourcesum.rankers.lm.weights import DEFAULT_LM, WEIGHTS, dequantized_copy, gguf_location

    folder, filename = gguf_location(DEFAULT_LM)
    reader = gguf.GGUFReader(folder / filename)
    source = dequantized_copy(DEFAULT_LM)
    config = json.loads((source / "config.json").read_text())
    names = gguf.get_tensor_name_map(gguf.MODEL_ARCH.LLAMA, config["num_hidden_layers"])
    state = {
        names.get_name(k, try_suffixes=(".weight", ".bias")): v
        for k, v in load_file(source / WEIGHTS).items()
    }

    def permute(weights, heads: int):  # llama.cpp's convert_hf_to_gguf permutation
        return (
            weights.reshape(heads, 2, weights.shape[0] // heads // 2, *weights.shape[1:])
            .swapaxes(1, 2)
            .reshape(weights.shape)
        )

    writer = gguf.GGUFWriter(path, "llama")
    for field in reader.fields.values():
        if field.name.startswith("GGUF.") or field.name in (
            "general.architecture",
            "general.file_type",
            "general.quantization_version",
        ):
            continue
        kind = field.types[0]
        writer.add_key_value(
            field.name,
            field.contents(),
            kind,
            sub_type=field.types[-1] if kind == gguf.GGUFValueType.ARRAY else None,
        )
    writer.add_file_type(gguf.LlamaFileType.ALL_F32)
    if set(state) != {t.name for t in reader.tensors}:
        raise AssertionError(f"tensors differ: {sorted(set(state) ^ {t.name for t in reader.tensors})}")
    for tensor in reader.tensors:
        weights = state[tensor.name].astype(np.float32)
        if ".attn_q." in tensor.name:
            weights = permute(weights, config["num_attention_heads"])
        elif ".attn_k." in tensor.name:
            weights = permute(weights, config["num_key_value_heads"])
        reference = gguf.dequantize(tensor.data, tensor.tensor_type).reshape(weights.shape)
        if not np.array_equal(reference, weights):
            raise AssertionError(f"{tensor.name}: the dequantized weights differ from the GGUF file's")
        writer.add_tensor(tensor.name, np.ascontiguousarray(weights))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    return path
