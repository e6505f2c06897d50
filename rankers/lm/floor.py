"""The tokens each LM ranker runs through the model: per ranker, the tokens through the model
body and the tokens whose logits it needs, over documents grouped as the runner groups them.

``scripts/bench_lm_floor.py`` multiplies these counts by measured matmul throughput for a lower
bound on the rankers' time; the tests hold them against the tokens a ranker really runs (a
forward hook on a tiny model), so the counts are the rankers' real work. The ``probe``
ranker's passes are counted apart (``probe:blind``, ``probe:conditioned``: the states of every
pair, from an empty state cache; the body only, once per document in ``blind`` mode and once per
summary in ``conditioned`` mode); they are not in :data:`RANKERS`' total, and neither is
``contextcite`` (its default 32 ablations: the full context once, the passes of the prefix
tree of each design's distinct ablated contexts, and the summaries sharing that design after
each, with their logits) nor ``at2`` (the pass that reads a pair's features: the
context but its last token once, then per summary the positions that predict it, as many as
its tokens; its fit reads the training pairs' features with the same pass, so a run of the
four splits under ``cross-corpus`` runs this count twice).

A document is ``(sentences, summaries, document)``: ``document`` is its text, from which
``contextcite`` seeds its masks (as :attr:`Pair.document_key <sourcesum.data.pairs.Pair.document_key>`
does); given as ``(sentences, summaries)``, the text is the sentences joined by newlines (as
hand-made pairs have it)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, NamedTuple

from sourcesum.data import Pair, Split
from sourcesum.rankers.lm.contextcite import ContextCiteRanker
from sourcesum.rankers.lm.hidden_states import layout
from sourcesum.rankers.lm.inputs import DEFAULT_TEMPLATE, Context, causal_context, causal_summary
from sourcesum.rankers.lm.perplexity import PerplexityGainRanker
from sourcesum.rankers.lm.prefix_tree import prefix_tree

RANKERS = ("perplexity_gain", "pmi", "attention", "attribution")
"""The rankers whose matmul work is counted and totalled."""
PROBE_MODES = ("blind", "conditioned")
"""The ``probe`` ranker's modes, counted apart (``probe:<mode>``)."""


Document = tuple[Sequence[str], Sequence[str]] | tuple[Sequence[str], Sequence[str], str]
"""``(sentences, summaries)`` or ``(sentences, summaries, document text)``."""


def documents(splits: Iterable[Split]) -> list[tuple[tuple[str, ...], list[str], str]]:
    """``(sentences, distinct summaries, document text)`` per document, across all splits (as the
    runner groups)."""
    groups: dict[tuple[str, tuple[str, ...]], dict[str, None]] = defaultdict(dict)
    texts: dict[tuple[str, tuple[str, ...]], str] = {}
    for split in splits:
        for pair in split.pairs:
            groups[(pair.document_key, pair.sentences)][pair.summary] = None
            texts.setdefault((pair.document_key, pair.sentences), pair.document)
    return [(key[1], list(summaries), texts[key]) for key, summaries in groups.items()]


class ContextCitePlan(NamedTuple):
    """What ``contextcite`` runs for one document: its ``context`` (run once in full), and per
    group of its summaries that share a design, the design's distinct kept-sentence vectors
    (``keeps``: the ablated contexts, run as a prefix tree, each followed by the group) and the
    token counts of the group's summaries."""

    context: Context
    groups: list[tuple[list[tuple[bool, ...]], list[int]]]


def contextcite_plans(
    ranker: ContextCiteRanker, tokenizer: Any, docs: Iterable[Document], window: int | None = None
) -> Iterator[ContextCitePlan]:
    """``ranker``'s plan per document that has a summary it reads: the summaries whose reading
    (context + summary) exceeds ``window`` left out, as under ``overflow=ties``; the designs
    drawn for the remaining ones (:meth:`~ContextCiteRanker.designs`, seeded by the document
    text) and grouped as the ranker shares them (:meth:`~ContextCiteRanker.sharing`)."""
    for doc in docs:
        sentences = tuple(doc[0])
        text = doc[2] if len(doc) > 2 else "\n".join(sentences)
        context = causal_context(tokenizer, sentences, ranker.template)
        length = len(context.ids())
        read = [(s, len(causal_summary(tokenizer, s))) for s in doc[1]]
        read = [(s, n) for s, n in read if window is None or length + n <= window]
        if not read:
            continue
        pairs = [Pair(id="", split="", sentences=sentences, summary=s, document=text) for s, _ in read]
        designs = ranker.designs(pairs)
        groups = []
        for shared in ranker.sharing(designs):
            keeps, _ = ranker.distinct_keeps(len(sentences), designs[shared[0]])
            groups.append((keeps, [read[p][1] for p in shared]))
        yield ContextCitePlan(context, groups)


def token_counts(
    tokenizer: Any,
    docs: Sequence[Document],
    shortlist: int = 0,
    window: int | None = None,
) -> dict[str, dict[str, int]]:
    """Tokens through the model body, and tokens whose logits are needed, per ranker.

    ``shortlist=K``: ``perplexity_gain`` ablates only the union of its pairs' K BM25-best
    sentences per document, ``contextcite`` only each pair's K (the rankers' own shortlists).
    ``window``: a reading of the whole document (context + summary; the probe's own layout)
    that exceeds it is not run, as under ``overflow=ties``: by every ranker but ``pmi``, which
    reads each sentence alone.
    """
    names = (*RANKERS, *(f"probe:{m}" for m in PROBE_MODES), "contextcite", "at2")
    counts = {name: {"body": 0, "logits": 0} for name in names}
    counts["pmi"]["body"] += 1  # the start token's own pass, once per run
    chooser = PerplexityGainRanker(shortlist=shortlist) if shortlist else None

    def fitting(length: int, tokens: list[tuple[str, int]]) -> list[tuple[str, int]]:
        """The (summary, tokens) pairs whose reading after a context of ``length`` fits."""
        return [(s, n) for s, n in tokens if window is None or length + n <= window]

    for doc in docs:
        sentences, every_summary = doc[0], doc[1]
        # probe: its own layout (the document, after the summary when conditioned), body only
        for mode, readings in (("blind", [None]), ("conditioned", every_summary)):
            lengths = [len(layout(tokenizer, sentences, summary).ids()) for summary in readings]
            counts[f"probe:{mode}"]["body"] += sum(n for n in lengths if window is None or n <= window)
        sentence_tokens = sum(len(causal_summary(tokenizer, s)) for s in sentences)
        tokens = [(s, len(causal_summary(tokenizer, s))) for s in every_summary]
        # each summary is read after the start token; the sentences once per summary + once alone
        pmi = sentence_tokens * (len(tokens) + 1) + sum(1 + n for _, n in tokens)
        counts["pmi"]["body"] += pmi
        counts["pmi"]["logits"] += sentence_tokens * (len(tokens) + 1)

        context = causal_context(tokenizer, sentences, DEFAULT_TEMPLATE)
        length = len(context.ids())
        read = fitting(length, tokens)
        if read:
            summary_tokens = sum(n for _, n in read)
            ablated: Sequence[int] = range(len(sentences))
            if chooser is not None:
                pairs = [
                    Pair(id="", split="", sentences=tuple(sentences), summary=s, document="") for s, _ in read
                ]
                union = chooser.shortlists(pairs)[1]
                ablated = range(len(sentences)) if union is None else union
            # full context + the suffix after each deleted sentence; summaries after each variant
            suffixes = sum(length - context.starts[i] - len(context.segments[i]) for i in ablated)
            variants = len(ablated) + 1
            counts["perplexity_gain"]["body"] += length + suffixes + variants * summary_tokens
            counts["perplexity_gain"]["logits"] += variants * summary_tokens
            counts["attention"]["body"] += length + summary_tokens
            counts["at2"]["body"] += length - 1 + summary_tokens
        # attribution (saliency; its context has no start token and a space before every
        # sentence): the context forward once (its last position's logits), each summary forward
        # with its logits, then one backward pass per summary through the summary, its logits
        # and the first logit (the context's last), and the context; a backward pass that
        # computes input gradients only costs one matmul per Linear, as the forward does. With
        # batch_size > 1 each backward pass also runs through the other summaries of its batch
        # (their gradients are zero): that is overhead, not counted here.
        length = len(causal_context(tokenizer, sentences, DEFAULT_TEMPLATE, True, start_token=False).ids())
        read = fitting(length, tokens)
        if read:
            forward = length + sum(n for _, n in read)
            counts["attribution"]["body"] += forward + sum(length + n for _, n in read)
            counts["attribution"]["logits"] += 1 + sum(n for _, n in read) + sum(1 + n for _, n in read)

    # contextcite: the full context once; per group of summaries sharing a design, the prefix
    # tree of its distinct ablated contexts, the group after each context (with its logits)
    for plan in contextcite_plans(ContextCiteRanker(shortlist=shortlist), tokenizer, docs, window):
        counts["contextcite"]["body"] += len(plan.context.ids())
        for keeps, group_tokens in plan.groups:
            counts["contextcite"]["body"] += sum(node.new_tokens for node in prefix_tree(plan.context, keeps))
            counts["contextcite"]["body"] += len(keeps) * sum(group_tokens)
            counts["contextcite"]["logits"] += len(keeps) * sum(group_tokens)
    return counts
