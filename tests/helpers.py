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


# -- a float32 llama-cpp-python server of the offline default LM (tests/test_lm_server.py) ---------


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


FAST_ECHO = r"""
import builtins, numpy
import llama_cpp.llama as _llama

TOP = 20

def _sorted(items, *, key=None, reverse=False):
    # llama-cpp-python sorts the whole vocabulary in Python for every position of an echoed
    # prompt (sorted(zip(logprobs, range(n_vocab)), reverse=True), 32 ms a token) and keeps the
    # first `logprobs` entries: the same entries (ties included) from numpy, for logprobs <= TOP.
    if key is None and reverse and type(items) is zip:
        try:
            _, (values, ids) = items.__reduce__()
            _, (array,), at = values.__reduce__()
            _, (span,), at_ids = ids.__reduce__()
        except Exception:
            return builtins.sorted(items, reverse=True)
        array = numpy.asarray(array)
        if at == 0 and at_ids == 0 and array.ndim == 1 and span == range(len(array)) and len(array) > TOP:
            floor = numpy.partition(array, len(array) - TOP)[len(array) - TOP]
            chosen = numpy.nonzero(array >= floor)[0]
            return builtins.sorted(((array[i], int(i)) for i in chosen), reverse=True)
        return builtins.sorted(zip(array, span), reverse=True)
    return builtins.sorted(items, key=key, reverse=reverse)

_llama.sorted = _sorted
import runpy
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
"""
"""The llama-cpp-python server with its per-token sort of the vocabulary done by numpy (see the
comment): the same responses, byte for byte, as long as requests ask for at most 20 logprobs
(tests/test_lm_server.py checks one against the unpatched server)."""


def start_f32_llama_server(gguf: Path, log: Path, fast_echo: bool = True, timeout: float = 300.0):
    """llama-cpp-python's server of ``gguf`` on 127.0.0.1 (as ``llm_server.start_llama_server``
    starts it: one thread, ``--logits_all``), with a float32 KV cache (``--type_k 0 --type_v 0``;
    llama.cpp's default float16 cache moves prompt log-probs by up to 5e-3) and, with
    ``fast_echo``, :data:`FAST_ECHO`'s sort. Returns an ``llm_server.Server``."""
    import os
    import subprocess
    import sys
    import time
    import urllib.request

    from llm_server import MODEL_ALIAS, Server, free_port

    port = free_port()
    launcher = ["-c", FAST_ECHO] if fast_echo else ["-m", "llama_cpp.server"]
    command = [sys.executable, *launcher, "--model", str(gguf), "--model_alias", MODEL_ALIAS]
    command += ["--host", "127.0.0.1", "--port", str(port), "--n_threads", "1", "--n_threads_batch", "1"]
    command += [
        "--logits_all",
        "true",
        "--n_ctx",
        "2048",
        "--type_k",
        "0",
        "--type_v",
        "0",
        "--verbose",
        "false",
    ]
    start = time.monotonic()
    handle = open(log, "wb")
    process = subprocess.Popen(
        command, stdout=handle, stderr=subprocess.STDOUT, env={**os.environ, "OMP_NUM_THREADS": "1"}
    )
    base_url = f"http://127.0.0.1:{port}/v1"
    while time.monotonic() - start < timeout:
        if process.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"{base_url}/models", timeout=2) as response:
                if response.status == 200:
                    return Server(process, base_url, log, time.monotonic() - start)
        except OSError:
            time.sleep(0.5)
    process.kill()
    process.wait()
    raise RuntimeError(
        f"llama-cpp-python server did not start (exit {process.returncode}): {log.read_text()[-2000:]}"
    )


def dataset_missing(name: str, variable: str) -> str | None:
    """Why dataset ``name``'s splits cannot be read here (None when every split has a local
    copy); ``variable`` is the environment variable that locates them."""
    from sourcesum.data import dataset

    ds = dataset(name)
    for spec in ds.splits:
        if not ds.available(spec):
            return f"{ds.title} split {spec.name} has no local copy (set {variable})"
    return None


def skip_or_fail_without(missing: str | None) -> None:
    """A real-data test without its data: skipped, or failed under SOURCESUM_REQUIRE_DATA=1."""
    import os

    import pytest

    if missing is None:
        return
    if os.environ.get("SOURCESUM_REQUIRE_DATA") == "1":
        pytest.fail(f"real_data test without data: {missing}")
    pytest.skip(missing)
