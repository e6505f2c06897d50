"""Per-layer hidden states of a causal LM, pooled per document sentence, and the inputs they read.

**Inputs** (``mode``), token ids, each sentence tokenized on its own with a leading space
(:func:`~sourcesum.rankers.lm.inputs.causal_context` with ``space_every_sentence``):

- ``blind``: ``<s> Document: s_1 s_2 ... s_n``. A causal model's states of ``s_i`` depend on
  the document only, so every summary of a document gets the same states (one pass per document);
- ``conditioned``: ``<s> Summary: <summary>\\n\\nDocument: s_1 ... s_n``: every sentence's
  states attend to the summary (one pass per pair).

**States.** One forward pass of the model body (no output layer) with ``output_hidden_states``
gives ``L + 1`` states per token: index 0 the input embeddings, ``l`` the output of block ``l``,
``L`` the last block's output after the final norm (as transformers returns them). A sentence's
state at a layer is the **mean** over its tokens (``pool="mean"``) or its **last** token's state
(``pool="last"``); a sentence the tokenizer reads as no token (an empty one, under a tokenizer
that drops spaces) gets zeros. :func:`pooled_states` returns them as one ``(L + 1, n_sentences, d)`` array
rounded to float16, the form they are cached in (:mod:`~sourcesum.rankers.lm.state_cache`, whose
keys hold this module's code) and always used in, so cached and fresh states give the same scores.

**Random weights** (the control): :func:`random_twin` re-initialises the model's architecture
from its config (transformers' own initialisation) with a fixed seed, forking torch's random
state so nothing else is disturbed.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
from sourcesum.errors import RankerError
from sourcesum.rankers.lm.inputs import Context, causal_context, start_tokens

MODES = ("blind", "conditioned")
POOLS = ("mean", "last")
BLIND_TEMPLATE = "Document: {document}{summary}"
"""The blind layout as a causal template (its summary placeholder is never filled)."""
CONDITIONED_HEAD = "Summary: {summary}\n\nDocument:"


def layout(tokenizer: Any, sentences: Sequence[str], summary: str | None) -> Context:
    """The input of a pair (module docstring): blind when ``summary`` is None, else
    conditioned on it. The context's segments are the sentences; it has no middle."""
    blind = causal_context(tokenizer, sentences, BLIND_TEMPLATE, space_every_sentence=True)
    if summary is None:
        return blind
    head_text = CONDITIONED_HEAD.replace("{summary}", summary)
    head = start_tokens(tokenizer) + tuple(tokenizer(head_text, add_special_tokens=False)["input_ids"])
    return replace(blind, head=head)


def n_states(model: Any) -> int:
    """``L + 1``: the embeddings and every block's output."""
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    return int(config.num_hidden_layers) + 1


def hidden_size(model: Any) -> int:
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    return int(config.hidden_size)


def pooled_states(model: Any, context: Context, pool: str) -> np.ndarray:
    """``(L + 1, n_sentences, d)`` float16: each sentence's states pooled over its tokens at
    every layer (module docstring), from one pass over ``context.ids()``."""
    import torch  # here, so that importing this module loads no model library

    if pool not in POOLS:
        raise RankerError(f"pool must be one of {POOLS}, got {pool!r}")
    with torch.inference_mode():
        ids = torch.tensor([context.ids()], dtype=torch.long, device=model.device)
        out = model.base_model(input_ids=ids, output_hidden_states=True, use_cache=False)
        layers = torch.stack([h[0].float() for h in out.hidden_states])  # (L + 1, T, d)
        pooled = []
        for start, segment in zip(context.starts, context.segments, strict=True):
            end = start + len(segment)
            if not segment:  # a sentence the tokenizer reads as nothing has no state: zeros
                pooled.append(torch.zeros_like(layers[:, 0]))
            else:
                pooled.append(layers[:, start:end].mean(dim=1) if pool == "mean" else layers[:, end - 1])
        states = torch.stack(pooled, dim=1).cpu().numpy().astype(np.float16)
    if not np.isfinite(states).all():
        raise RankerError(
            "a pooled hidden state exceeds float16's range (65504); it cannot be cached as such"
        )
    return states


_TWINS: dict[tuple[int, int, str], Any] = {}
"""Randomly initialised twins by (id of the pretrained model, seed, matmul), kept for the process."""


def random_twin(model: Any, seed: int, matmul: str = "default") -> Any:
    """The architecture of ``model`` re-initialised from its config with ``seed``, on
    ``model``'s device, in eval mode, prepared as ``model`` was
    (:func:`~sourcesum.rankers.lm.models.prepare_model`: exact kernels, reduced Linear layers
    where ``model`` has them, ``matmul``); made once per process."""
    key = (id(model), seed, matmul)
    if key not in _TWINS:
        import torch
        from sourcesum.rankers.lm.loading import prepare_model
        from transformers import AutoModelForCausalLM

        config = copy.deepcopy(model.config)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            twin = AutoModelForCausalLM.from_config(config, attn_implementation="sdpa", dtype=torch.float32)  # type: ignore[no-untyped-call]  # unannotated in transformers
        twin.to(model.device).eval()
        prepare_model(twin, getattr(model, "reduced_linears_dtype", None), matmul)
        _TWINS[key] = twin
    return _TWINS[key]


def weights_digest(model: Any) -> str:
    """sha256 over a model's parameters and buffers (names, dtypes, shapes, bytes): the identity
    of weights that no file names (in-memory models)."""
    import hashlib

    import torch

    hasher = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        data = tensor.detach().cpu().contiguous()
        hasher.update(f"{name}|{data.dtype}|{tuple(data.shape)}".encode())
        hasher.update(data.reshape(-1).view(torch.uint8).numpy().tobytes())
    return hasher.hexdigest()
