"""Local Hugging Face causal LMs as LLM-judge backends (loaded by :mod:`sourcesum.rankers.lm.loading`).

Shared work per pair: the prompts of a pair's sentences are tokenized in full, and their longest
common token prefix (instruction, summary, ...) is run once; each sentence's remaining tokens
are run in batches on top of that prefix's key/value cache (right-padded; the logits are read at
each row's last real token). The prefix itself starts from the previous pair's prefix cache as
far as their tokens agree (the paper's instruction text is the same for every pair). Deeper nodes of the rating tree (multi-token scales) reuse each
sentence's cache: only the rating tokens of the path are run, with explicit positions and the
padding masked. Tokenizing the whole prompt first (not prefix and suffix separately) keeps the
tokens identical to a plain forward pass over each prompt.
"""

from __future__ import annotations

import copy
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, cast

import numpy as np
from sourcesum.errors import RankerError
from sourcesum.rankers.llm.scale import Scale
from sourcesum.rankers.llm.scoring import Dist, Rating, rating_distributions
from sourcesum.rankers.lm.engine import accepts, cache_arguments, last_logits_only, returned_cache
from sourcesum.rankers.lm.loading import LoadedLM, load_lm


def common_prefix_length(rows: Sequence[Sequence[int]]) -> int:
    """Length of the longest common prefix, leaving at least one token in every row."""
    shortest = min(len(r) for r in rows)
    length = 0
    while length < shortest - 1 and all(r[length] == rows[0][length] for r in rows):
        length += 1
    return length


@lru_cache(maxsize=8)
def _token_texts(tokenizer: Any) -> tuple[str, ...]:
    return tuple(tokenizer.decode([i]) for i in range(len(tokenizer)))


@lru_cache(maxsize=32)
def candidate_tokens(tokenizer: Any, continuation: str, root: bool) -> tuple[np.ndarray, list[str]]:
    """Ids and texts of the tokens that may continue a rating: their text (at the root, after
    leading whitespace) starts with a continuation character. Every other token ends it."""
    ids, texts = [], []
    for i, text in enumerate(_token_texts(tokenizer)):
        head = text.lstrip() if root else text
        if head[:1] and head[0] in continuation:
            ids.append(i)
            texts.append(text)
    return np.asarray(ids, dtype=np.int64), texts


@dataclass
class _Chunk:
    """A batch of sentence prompts run on the prefix: its cache, mask and row lengths."""

    cache: Any
    mask: Any
    lengths: Any


class LocalBackend:
    """A causal LM run in-process (``chat``: the prompt is the user turn of the chat template)."""

    def __init__(self, model: str, device: str, dtype: str, batch_size: int, chat: bool):
        self.model_name, self.device, self.dtype = model, device, dtype
        self.batch_size, self.chat = batch_size, chat
        self._last: tuple[list[int], Any] | None = None

    def lm(self) -> LoadedLM:
        loaded = load_lm(self.model_name, self.device, self.dtype)
        if loaded.seq2seq:
            raise RankerError(f"llm_judge needs a causal LM; {self.model_name} is encoder-decoder")
        return loaded

    def encode(self, prompt: str) -> list[int]:
        """Token ids of ``prompt``: as the user turn of the chat template plus the assistant
        header (``chat``), else as plain text with the tokenizer's special tokens."""
        tokenizer = self.lm().tokenizer
        if self.chat:
            if not getattr(tokenizer, "chat_template", None):
                raise RankerError(f"model {self.model_name} has no chat template; use chat=false")
            text = tokenizer.apply_chat_template(
                [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
            )
            return list(tokenizer(text, add_special_tokens=False)["input_ids"])
        return list(tokenizer(prompt)["input_ids"])

    def _check_length(self, rows: Sequence[Sequence[int]], extra: int, pair_id: str) -> None:
        config = self.lm().model.config
        limit = getattr(config, "max_position_embeddings", None) or getattr(config, "n_positions", None)
        longest = max(len(r) for r in rows) + extra
        if limit is not None and longest > limit:
            raise RankerError(
                f"pair {pair_id}: a prompt of {longest} tokens exceeds {self.model_name}'s context "
                f"window of {limit}"
            )

    def rate(self, prompts: Sequence[str], scale: Scale, min_prob: float, pair_id: str) -> list[Rating]:
        """The rating distribution of each prompt (one pair's sentences), exact up to
        ``min_prob`` pruning."""
        import torch

        lm = self.lm()
        model, device = lm.model, lm.device
        rows = [self.encode(p) for p in prompts]
        depth = max(len(r) for r in scale.ratings) + 1
        self._check_length(rows, depth, pair_id)
        tables = {root: candidate_tokens(lm.tokenizer, scale.continuation, root) for root in (True, False)}
        keep = not scale.single_token
        with torch.inference_mode():
            shared = common_prefix_length(rows)
            prefix = self._prefix(model, device, rows[0][:shared]) if shared else None
            roots: list[Any] = [None] * len(rows)
            where: list[tuple[_Chunk, int] | None] = [None] * len(rows)
            for start in range(0, len(rows), self.batch_size):
                index = list(range(start, min(start + self.batch_size, len(rows))))
                chunk, logits = self._run_suffixes(
                    model, device, prefix, shared, [rows[i][shared:] for i in index]
                )
                for j, i in enumerate(index):
                    roots[i] = logits[j]
                    where[i] = (chunk, j) if keep else None

            def oracle(nodes: Sequence[tuple[int, tuple[Hashable, ...]]]) -> list[Dist]:
                if not nodes[0][1]:
                    return [self._dist(roots[i], tables[True]) for i, _ in nodes]
                return self._expand(model, device, nodes, where, tables[False])

            return rating_distributions(scale, len(rows), oracle, min_prob)

    def _prefix(self, model: Any, device: str, ids: list[int]) -> Any:
        """The KV cache of ``ids``, reusing the previous pair's prefix cache as far as the two
        agree (the instruction before the summary is the same for every pair)."""
        import torch

        kept = 0
        if self._last is not None:
            old_ids, old_cache = self._last
            while kept < min(len(old_ids), len(ids) - 1) and old_ids[kept] == ids[kept]:
                kept += 1
        cache = None
        if kept:
            cache = copy_cache(old_cache)  # kept > 0: self._last is set
            if cache.get_seq_length() > kept:
                cache.crop(kept - cache.get_seq_length())
        new = torch.tensor([ids[kept:]], device=device)
        mask = torch.ones((1, len(ids)), dtype=torch.long, device=device)
        out = model(
            input_ids=new,
            attention_mask=mask,
            use_cache=True,
            **last_logits_only(model),
            **cache_arguments(model, cache),
        )
        cache = returned_cache(out)
        self._last = (list(ids), cache)
        return cache

    def _run_suffixes(
        self, model: Any, device: str, prefix: Any, shared: int, suffixes: Sequence[Sequence[int]]
    ) -> tuple[_Chunk, Any]:
        import torch

        width = max(len(s) for s in suffixes)
        ids = torch.zeros((len(suffixes), width), dtype=torch.long)
        mask = torch.zeros((len(suffixes), shared + width), dtype=torch.long)
        mask[:, :shared] = 1
        for j, suffix in enumerate(suffixes):
            ids[j, : len(suffix)] = torch.tensor(suffix, dtype=torch.long)
            mask[j, shared : shared + len(suffix)] = 1
        ids, mask = ids.to(device), mask.to(device)
        cache = None
        if prefix is not None:
            cache = copy_cache(prefix)
            if len(suffixes) > 1:
                cache.batch_repeat_interleave(len(suffixes))
        last = torch.tensor([len(s) - 1 for s in suffixes], device=device)
        keep = torch.unique(last)  # the vocabulary projection only where logits are read
        extra = {"logits_to_keep": keep} if accepts(model, "logits_to_keep") else {}
        out = model(
            input_ids=ids, attention_mask=mask, use_cache=True, **extra, **cache_arguments(model, cache)
        )
        column = torch.searchsorted(keep, last) if extra else last
        logits = out.logits[torch.arange(len(suffixes), device=device), column]
        return _Chunk(returned_cache(out), mask, mask.sum(1)), logits

    def _expand(
        self,
        model: Any,
        device: str,
        nodes: Sequence[tuple[int, tuple[Hashable, ...]]],
        where: Sequence[tuple[_Chunk, int] | None],
        table: tuple[np.ndarray, list[str]],
    ) -> list[Dist]:
        """Distributions after each node's path, read on its sentence's cache."""
        import torch

        out: list[Dist | None] = [None] * len(nodes)
        # Only called below the root of a multi-token scale, where every sentence has a chunk.
        located = cast("Sequence[tuple[_Chunk, int]]", where)
        groups: dict[int, list[int]] = {}
        for k, (i, _) in enumerate(nodes):
            groups.setdefault(id(located[i][0]), []).append(k)
        for members in groups.values():
            chunk = located[nodes[members[0]][0]][0]
            for start in range(0, len(members), self.batch_size):
                part = members[start : start + self.batch_size]
                rows = torch.tensor([located[nodes[k][0]][1] for k in part], device=device)
                paths = torch.tensor([list(nodes[k][1]) for k in part], dtype=torch.long, device=device)
                cache = copy_cache(chunk.cache)
                cache.batch_select_indices(rows)
                steps = paths.shape[1]
                mask = torch.cat([chunk.mask[rows], torch.ones_like(paths)], dim=1)
                positions = chunk.lengths[rows].unsqueeze(1) + torch.arange(steps, device=device)
                logits = model(
                    input_ids=paths,
                    attention_mask=mask,
                    position_ids=positions,
                    use_cache=True,
                    **last_logits_only(model),
                    **cache_arguments(model, cache),
                ).logits[:, -1]
                for j, k in enumerate(part):
                    out[k] = self._dist(logits[j], table)
        return out  # type: ignore[return-value]

    @staticmethod
    def _dist(logits: Any, table: tuple[np.ndarray, list[str]]) -> Dist:
        import torch

        ids, texts = table
        logp = torch.log_softmax(logits.float(), dim=-1).double().cpu().numpy()
        probs = np.exp(logp[ids])
        stop = max(0.0, 1.0 - float(probs.sum()))
        return Dist(
            [(t, float(p), int(i)) for t, p, i in zip(texts, probs, ids, strict=True)], stop, exact=True
        )

    def generate(self, prompt: str, max_new_tokens: int, pair_id: str) -> str:
        """The greedy answer to ``prompt`` (listwise mode)."""
        import torch

        lm = self.lm()
        ids = self.encode(prompt)
        self._check_length([ids], max_new_tokens, pair_id)
        with torch.inference_mode():
            tokens = torch.tensor([ids], device=lm.device)
            out = lm.model.generate(
                input_ids=tokens,
                attention_mask=torch.ones_like(tokens),
                max_new_tokens=max_new_tokens,
                do_sample=False,
                pad_token_id=lm.tokenizer.pad_token_id or lm.tokenizer.eos_token_id,
            )
        return cast(str, lm.tokenizer.decode(out[0, len(ids) :], skip_special_tokens=True))


def copy_cache(cache: Any) -> Any:
    """A copy of a KV cache that later updates leave the original alone. transformers' cache
    layers replace their tensors on update, select, repeat and crop (never write in place), so
    copying the layer objects suffices; other caches are deep-copied."""
    layers = getattr(cache, "layers", None)
    if not isinstance(layers, list):
        return copy.deepcopy(cache)
    new = copy.copy(cache)
    new.layers = [copy.copy(layer) for layer in layers]
    return new
