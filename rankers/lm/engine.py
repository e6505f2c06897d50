"""Shared-work likelihood computations for the LM rankers (all under ``torch.inference_mode``).

Causal models: a context is run once and its key/value cache kept; each continuation batch
(summaries, or sentences for PMI) reuses that cache instead of re-reading the context, and a
leave-one-sentence-out variant reuses the cache of the prefix before the removed sentence, so
only the tokens after it are recomputed; variants with short suffixes run together in one batch
(:func:`run_variants`: each row masks the shared prefix beyond its own and gets explicit
positions), and so do their summaries, because small passes run the matmuls far below their
peak (float32 scores move by float32 rounding only: at most 5.7e-6 over the four splits, rankings
identical). Reusing a cache copies nothing: :func:`cache_view`
builds a new cache from views of the old one (a dynamic cache grows by concatenation, which
leaves the viewed tensors untouched). A run over a context keeps the logits of its last
position only. Under reduced precision, continuations are read in length-sorted buckets
(:func:`length_buckets`), so little of a batch is padding; in float32 they keep the layout the
committed float32 scores were computed with (:func:`batches`). Variants that delete several
sentences (ContextCite's ablated contexts) run as a prefix tree instead
(:func:`causal_kept_nll`): the tokens variants share before their first difference run once.
Seq2seq models: the encoder runs once over all variants of a document (batched); every summary
of the document reuses those encoder states.

All losses are *mean token negative log-likelihoods* of the continuation (nats per token).
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import torch
from sourcesum.rankers.lm.inputs import Context, recomputed
from sourcesum.rankers.lm.precision import computes_in_float32
from sourcesum.rankers.lm.prefix_tree import prefix_tree

_T = TypeVar("_T")


def _chunks(items: Sequence[_T], size: int) -> Iterator[Sequence[_T]]:
    for start in range(0, len(items), max(1, size)):
        yield items[start : start + size]


def length_buckets(lengths: Sequence[int], size: int, slack: int = 32) -> list[list[int]]:
    """Indices of ``lengths`` in batches of at most ``size``, sorted by length (shortest first).

    A batch is closed early when widening it to the next length would add more than ``slack``
    padded tokens (``rows x growth``): a forward pass costs about as much as ``slack`` tokens
    more, so a narrower batch is then cheaper. The order inside a batch is the sorted order.
    """
    order = sorted(range(len(lengths)), key=lambda i: (lengths[i], i))
    batches: list[list[int]] = []
    for i in order:
        current = batches[-1] if batches else None
        if (
            current is None
            or len(current) >= max(1, size)
            or len(current) * (lengths[i] - lengths[current[-1]]) > slack
        ):
            batches.append([i])
        else:
            current.append(i)
    return batches


def batches(model: Any, lengths: Sequence[int], size: int, bucketed: bool | None = None) -> list[list[int]]:
    """Row indices per forward pass: :func:`length_buckets` when ``bucketed`` (default: when the
    model computes in reduced precision), else consecutive chunks of ``size`` in input order.

    Padding a row to another width changes float32 rounding (a few 1e-7 on a loss), so float32
    keeps the batches its committed scores were computed with, and their cache keys stay valid;
    under bfloat16 such noise is far below the precision's own."""
    if bucketed is None:
        bucketed = not computes_in_float32(model)
    if bucketed:
        return length_buckets(lengths, size)
    indices = list(range(len(lengths)))
    return [list(chunk) for chunk in _chunks(indices, size)]


def pad_batch(rows: Sequence[Sequence[int]], device: str) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(r) for r in rows)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    mask = torch.zeros((len(rows), width), dtype=torch.long)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = 1
    return ids.to(device), mask.to(device)


def accepts(model: Any, keyword: str) -> bool:
    """Whether ``model.forward`` takes ``keyword`` (it varies across transformers versions)."""
    return keyword in inspect.signature(model.forward).parameters


def cache_arguments(model: Any, cache: Any) -> dict[str, Any]:
    """The keyword that passes a KV cache: ``cache`` (transformers >= 5.x) or ``past_key_values``."""
    return {"cache" if accepts(model, "cache") else "past_key_values": cache}


def returned_cache(output: Any) -> Any:
    """The KV cache in a model output, under either of its names."""
    cache = getattr(output, "cache", None)
    return cache if cache is not None else output.past_key_values


def cache_view(model: Any, cache: Any, length: int | None = None, batch: int = 1) -> Any:
    """A new dynamic cache with the first ``length`` positions of ``cache`` (all if ``None``),
    repeated ``batch`` times: views, no copy. Appending to it (``torch.cat``) never changes
    ``cache``, so one context cache serves every continuation batch and ablation variant."""
    from transformers import DynamicCache

    data = []
    for layer in cache.layers:
        keys, values = layer.keys, layer.values
        if length is not None:
            keys, values = keys[..., :length, :], values[..., :length, :]
        if batch > 1:
            keys, values = keys.expand(batch, -1, -1, -1), values.expand(batch, -1, -1, -1)
        data.append((keys, values))
    return DynamicCache(ddp_cache_data=data, config=model.config)


def last_logits_only(model: Any) -> dict[str, Any]:
    """``logits_to_keep=1`` where the model accepts it: a context run needs its last logits only."""
    return {"logits_to_keep": 1} if accepts(model, "logits_to_keep") else {}


def _token_nll(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Per-token NLL, computed in float32 whatever the model dtype."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    return -logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def _mean_continuation_nll(
    first: torch.Tensor, logits: torch.Tensor, ids: torch.Tensor, mask: torch.Tensor
) -> np.ndarray:
    """Mean NLL per row of the tokens ``ids`` (``mask`` 1 on real ones), predicted by ``first``
    (``(rows, vocab)``: the context's last logits) for the first token and by ``logits[:, :-1]``
    for the rest."""
    predictions = torch.cat([first.unsqueeze(1), logits[:, :-1]], dim=1)
    return ((_token_nll(predictions, ids) * mask).sum(1) / mask.sum(1)).cpu().numpy()


@dataclass
class CausalState:
    """A context run through the model: its cache, attention mask and last-position logits."""

    cache: Any
    mask: list[int]
    last_logits: torch.Tensor


@torch.inference_mode()
def run_context(
    model: Any,
    ids: Sequence[int],
    mask: Sequence[int] | None = None,
    reuse: CausalState | None = None,
    reuse_length: int = 0,
) -> CausalState:
    """Run ``ids`` (mask ``mask``); with ``reuse``, keep its first ``reuse_length`` positions.

    The reused prefix must be identical in ids and mask; only the rest is computed.
    """
    mask = list(mask) if mask is not None else [1] * len(ids)
    device = model.device
    cache = None
    if reuse is not None and reuse_length > 0:
        reuse_length = min(reuse_length, len(ids) - 1)  # keep >= 1 new token for the logits
        cache = cache_view(model, reuse.cache, reuse_length)
    else:
        reuse_length = 0
    new = torch.tensor([list(ids[reuse_length:])], dtype=torch.long, device=device)
    full_mask = torch.tensor([mask], dtype=torch.long, device=device)
    out = model(
        input_ids=new,
        attention_mask=full_mask,
        use_cache=True,
        **cache_arguments(model, cache),
        **last_logits_only(model),
    )
    return CausalState(returned_cache(out), mask, out.logits[0, -1])


def expand_state(model: Any, state: CausalState, batch: int) -> tuple[Any, torch.Tensor]:
    """A cache of the state for ``batch`` rows (see :func:`cache_view`) and its attention mask."""
    mask = torch.tensor([state.mask], dtype=torch.long, device=model.device).expand(batch, -1)
    return cache_view(model, state.cache, batch=batch), mask


@torch.inference_mode()
def continuation_nll(
    model: Any,
    state: CausalState,
    continuations: Sequence[Sequence[int]],
    batch_size: int,
    bucketed: bool | None = None,
) -> np.ndarray:
    """Mean token NLL of each continuation read right after ``state`` (cache reused; batches
    from :func:`batches`)."""
    device = model.device
    out = np.empty(len(continuations))
    for rows in batches(model, [len(c) for c in continuations], batch_size, bucketed):
        ids, cmask = pad_batch([continuations[i] for i in rows], device)
        batch = len(rows)
        cache, context_mask = expand_state(model, state, batch)
        logits = model(
            input_ids=ids,
            attention_mask=torch.cat([context_mask, cmask], dim=1),
            use_cache=True,
            **cache_arguments(model, cache),
        ).logits
        first = state.last_logits.unsqueeze(0).expand(batch, -1)
        out[rows] = _mean_continuation_nll(first, logits, ids, cmask)
    return out


@dataclass
class VariantStates:
    """Several contexts run as one batch, each reusing a prefix of one run context (one row each).

    Row ``r`` of the cache holds the shared context's first ``P`` positions (``P`` = the longest
    reused prefix; the part beyond the row's own prefix is masked), then the row's new tokens,
    left-padded to the widest (padding masked), so every row's last token sits in the last
    column. ``mask`` is the attention mask over those columns, ``ends[r]`` the position id of the
    row's next token, ``last_logits[r]`` its logits at the last position."""

    cache: Any
    mask: torch.Tensor
    ends: list[int]
    last_logits: torch.Tensor


@torch.inference_mode()
def run_variants(
    model: Any, shared: CausalState, variants: Sequence[tuple[Sequence[int], Sequence[int], int]]
) -> VariantStates:
    """Run the contexts ``variants`` = ``(ids, mask, reuse)`` in one forward pass: each reuses the
    first ``reuse`` positions of ``shared`` (its ids and mask there must equal those ``shared``
    was run with) and computes the rest at positions ``reuse, reuse + 1, ...``, as
    :func:`run_context` would one at a time."""
    device = model.device
    reuses = [min(reuse, len(ids) - 1) for ids, _, reuse in variants]  # >= 1 new token each
    prefix = max(reuses)
    width = max(len(ids) - reuse for (ids, _, _), reuse in zip(variants, reuses, strict=True))
    rows = len(variants)
    ids_t = torch.zeros((rows, width), dtype=torch.long)
    positions = torch.zeros((rows, width), dtype=torch.long)
    mask = torch.zeros((rows, prefix + width), dtype=torch.long)
    for r, ((ids, row_mask, _), reuse) in enumerate(zip(variants, reuses, strict=True)):
        n = len(ids) - reuse
        ids_t[r, width - n :] = torch.tensor(list(ids[reuse:]), dtype=torch.long)
        positions[r, width - n :] = torch.arange(reuse, len(ids))
        mask[r, :reuse] = torch.tensor(list(row_mask[:reuse]), dtype=torch.long)
        mask[r, prefix + width - n :] = torch.tensor(list(row_mask[reuse:]), dtype=torch.long)
    cache = cache_view(model, shared.cache, prefix, batch=rows)
    mask = mask.to(device)
    out = model(
        input_ids=ids_t.to(device),
        attention_mask=mask,
        position_ids=positions.to(device),
        use_cache=True,
        **cache_arguments(model, cache),
        **last_logits_only(model),
    )
    ends = [len(ids) for ids, _, _ in variants]
    return VariantStates(returned_cache(out), mask, ends, out.logits[:, -1])


def select_rows(model: Any, cache: Any, rows: torch.Tensor) -> Any:
    """A new dynamic cache holding rows ``rows`` of ``cache`` (copies; repeats allowed)."""
    from transformers import DynamicCache

    data = [(layer.keys[rows], layer.values[rows]) for layer in cache.layers]
    return DynamicCache(ddp_cache_data=data, config=model.config)


@torch.inference_mode()
def variants_continuation_nll(
    model: Any, states: VariantStates, continuations: Sequence[Sequence[int]], batch_size: int
) -> np.ndarray:
    """``(rows, n_continuations)`` mean token NLLs of each continuation read right after each
    row of ``states``; every (row, continuation) is one sequence, ``batch_size`` per pass."""
    device = model.device
    items = [(r, j) for r in range(len(states.ends)) for j in range(len(continuations))]
    out = np.empty((len(states.ends), len(continuations)))
    for chunk in batches(model, [len(continuations[j]) for _, j in items], batch_size):
        chosen = [items[k] for k in chunk]
        rows = torch.tensor([r for r, _ in chosen], device=device)
        ids, cmask = pad_batch([continuations[j] for _, j in chosen], device)
        width = ids.shape[1]
        positions = torch.tensor(
            [[states.ends[r] + t for t in range(width)] for r, _ in chosen], device=device
        )
        logits = model(
            input_ids=ids,
            attention_mask=torch.cat([states.mask[rows], cmask], dim=1),
            position_ids=positions,
            use_cache=True,
            **cache_arguments(model, select_rows(model, states.cache, rows)),
        ).logits
        nll = _mean_continuation_nll(states.last_logits[rows], logits, ids, cmask)
        for (r, j), value in zip(chosen, nll, strict=True):
            out[r, j] = value
    return out


VARIANT_TOKENS = 1024
"""Token budget of one batched variant pass (rows x widest new part): small passes run the
matmuls far below their peak, so leave-one-out variants with short suffixes go together."""


def variant_groups(
    lengths: Sequence[int], budget: int = VARIANT_TOKENS, slack: float = 0.25
) -> list[list[int]]:
    """Indices of ``lengths`` (new tokens per variant) in passes: sorted by length, a pass grows
    while ``rows x widest`` stays within ``budget`` and its padding within ``slack`` of its
    tokens. A variant longer than ``budget`` runs alone."""
    groups: list[list[int]] = []
    for i in sorted(range(len(lengths)), key=lambda i: (lengths[i], i)):
        if groups:
            group = groups[-1] + [i]
            widest, real = lengths[i], sum(lengths[k] for k in group)
            if len(group) * widest <= budget and len(group) * widest - real <= slack * real:
                groups[-1] = group
                continue
        groups.append([i])
    return groups


@torch.inference_mode()
def causal_variants_nll(
    model: Any,
    context: Context,
    variants: Sequence[tuple[list[int], list[int], int]],
    summaries: Sequence[Sequence[int]],
    batch_size: int,
    full: CausalState | None = None,
) -> np.ndarray:
    """``(n_summaries, n_variants)`` mean NLLs of each summary read after each context variant
    ``(ids, mask, reuse)``: the first ``reuse`` positions equal the full ``context``'s (ids and
    mask), whose cache (``full``, run here if not given) they reuse. Variants run batched
    (:func:`variant_groups`, :func:`run_variants`), and so do their summaries."""
    full = full if full is not None else run_context(model, context.ids())
    result = np.full((len(summaries), len(variants)), np.nan)
    new_tokens = [recomputed(len(ids), reuse) for ids, _, reuse in variants]
    for group in variant_groups(new_tokens):
        states = run_variants(model, full, [variants[k] for k in group])
        nll = variants_continuation_nll(model, states, summaries, batch_size)
        for row, k in enumerate(group):
            result[:, k] = nll[row]
    return result


@torch.inference_mode()
def causal_kept_nll(
    model: Any,
    context: Context,
    keeps: Sequence[Sequence[bool]],
    summaries: Sequence[Sequence[int]],
    batch_size: int,
    full: CausalState | None = None,
) -> np.ndarray:
    """``(n_summaries, n_keeps)`` mean NLLs of each summary read after each variant of
    ``context`` that keeps only the segments ``keeps[v]`` marks (the others deleted), the
    variants run as :func:`prefix_tree`'s passes (``full``: the full context's state, run here
    if not given); only the states on the current path are held."""
    full = full if full is not None else run_context(model, context.ids())
    result = np.full((len(summaries), len(keeps)), np.nan)
    path: list[tuple[int, CausalState]] = []
    for index, node in enumerate(prefix_tree(context, keeps)):
        while path and path[-1][0] != node.parent:
            path.pop()
        assert node.parent == -1 or path, "prefix_tree's nodes come after their parent"
        parent = path[-1][1] if path else full
        state = run_context(model, node.ids, reuse=parent, reuse_length=node.reuse) if node.run else full
        path.append((index, state))
        if node.members:
            result[:, node.members] = continuation_nll(model, state, summaries, batch_size)[:, None]
    return result


@torch.inference_mode()
def causal_ablation_nll(
    model: Any,
    context: Context,
    summaries: Sequence[Sequence[int]],
    ablation: str,
    batch_size: int,
    only: Sequence[int] | None = None,
) -> np.ndarray:
    """``(n_summaries, n_sentences + 1)`` mean NLLs: column 0 with the full document, column
    ``i + 1`` with sentence ``i`` deleted (``ablation="delete"``) or hidden from attention
    (``"mask"``); with ``only``, just those sentences' columns (the others NaN). Each variant
    reuses the cache of the prefix before sentence ``i`` (:func:`causal_variants_nll`)."""
    full = run_context(model, context.ids())
    result = np.full((len(summaries), len(context.segments) + 1), np.nan)
    result[:, 0] = continuation_nll(model, full, summaries, batch_size)
    chosen = range(len(context.segments)) if only is None else sorted(set(only))
    variants: list[tuple[list[int], list[int], int]] = []
    for i in chosen:
        start = context.starts[i]
        if ablation == "delete":
            ids = context.ids(drop=i)
            variants.append((ids, [1] * len(ids), start))
        else:
            variants.append((context.ids(), context.mask(hide=i), start))
    if variants:
        result[:, [i + 1 for i in chosen]] = causal_variants_nll(
            model, context, variants, summaries, batch_size, full
        )
    return result


@torch.inference_mode()
def seq2seq_variants_nll(
    model: Any,
    variants: Sequence[tuple[list[int], list[int]]],
    summaries: Sequence[Sequence[int]],
    batch_size: int,
) -> np.ndarray:
    """``(n_summaries, n_variants)`` mean NLLs of each summary (decoder target) after each
    encoder input ``(ids, mask)``; the encoder runs once per variant (``batch_size`` per pass)
    for all summaries."""
    device = model.device
    result = np.full((len(summaries), len(variants)), np.nan)
    done = 0
    for chunk in _chunks(variants, batch_size):
        ids, _ = pad_batch([v[0] for v in chunk], device)
        mask, _ = pad_batch([v[1] for v in chunk], device)
        encoded = model.get_encoder()(input_ids=ids, attention_mask=mask)
        for row, summary in enumerate(summaries):
            labels = torch.tensor([list(summary)] * len(chunk), dtype=torch.long, device=device)
            logits = model(encoder_outputs=encoded, attention_mask=mask, labels=labels).logits
            result[row, done : done + len(chunk)] = _token_nll(logits, labels).mean(1).cpu().numpy()
        done += len(chunk)
    return result


@torch.inference_mode()
def seq2seq_ablation_nll(
    model: Any,
    context: Context,
    summaries: Sequence[Sequence[int]],
    ablation: str,
    batch_size: int,
    only: Sequence[int] | None = None,
) -> np.ndarray:
    """Seq2seq version of :func:`causal_ablation_nll` (``only`` likewise): encoder input =
    document variant, decoder target = summary (:func:`seq2seq_variants_nll`)."""
    n = len(context.segments)
    chosen = range(n) if only is None else sorted(set(only))
    if ablation == "delete":
        variants = [(context.ids(), context.mask())] + [
            (context.ids(drop=i), [1] * len(context.ids(drop=i))) for i in chosen
        ]
    else:
        variants = [(context.ids(), context.mask())] + [(context.ids(), context.mask(hide=i)) for i in chosen]
    result = np.full((len(summaries), n + 1), np.nan)
    result[:, [0] + [i + 1 for i in chosen]] = seq2seq_variants_nll(model, variants, summaries, batch_size)
    return result


@torch.inference_mode()
def naive_nll(
    model: Any, seq2seq: bool, context_ids: Sequence[int], context_mask: Sequence[int], summary: Sequence[int]
) -> float:
    """Reference: one unbatched, uncached forward pass over context + summary (the paper's way)."""
    device = model.device
    if seq2seq:
        out = model(
            input_ids=torch.tensor([list(context_ids)], device=device),
            attention_mask=torch.tensor([list(context_mask)], device=device),
            labels=torch.tensor([list(summary)], device=device),
        )
        return float(_token_nll(out.logits[0], torch.tensor(list(summary), device=device)).mean())
    ids = torch.tensor([list(context_ids) + list(summary)], device=device)
    mask = torch.tensor([list(context_mask) + [1] * len(summary)], device=device)
    logits = model(input_ids=ids, attention_mask=mask).logits[0]
    targets = ids[0, len(context_ids) :]
    return float(_token_nll(logits[len(context_ids) - 1 : -1], targets).mean())
