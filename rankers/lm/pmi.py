"""Pointwise mutual information between the summary and each sentence under a causal LM."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from sourcesum.data import Pair
from sourcesum.errors import SourceSumError
from sourcesum.params import Param
from sourcesum.rankers.base import register
from sourcesum.rankers.lm.base import LMRanker, ServerPlan
from sourcesum.rankers.lm.inputs import causal_summary, start_tokens

if TYPE_CHECKING:
    from sourcesum.rankers.lm.engine import CausalState

DIRECTIONS = ("sentence|summary", "summary|sentence")


@register
class PMIRanker(LMRanker):
    """PMI under a causal LM, from mean token log-likelihoods (as the paper's GPT-2 PMI).

    ``direction="sentence|summary"`` (default, the paper):
    ``score_i = log P(sentence_i | summary) - log P(sentence_i)``; ``"summary|sentence"``:
    ``log P(summary | sentence_i) - log P(summary)``. Texts are read after the model's start
    token (BOS, else EOS) and a conditioning text is followed by a space; every token of the
    scored text counts (the paper's unconditional term skipped the first token). Work shared
    within a document: the conditioning text's cache serves all continuations, and each
    unconditional term is computed once. ``backend=openai``: the same log-likelihoods from a
    server (:mod:`sourcesum.rankers.lm.server`).
    """

    name = "pmi"
    reproduction_tolerance = 5e-4
    """Float32 sums differ in their last bits with the batch layout and the CPU's kernels: the
    committed float32 scores (computed on AMD EPYC) were reproduced within 1e-6 there; on an
    Intel Xeon (model 207, MKL) all 1,211 pairs of the four splits were within 2.03e-4 (a relative
    1.3e-4 of the pair's largest score), every pair ranked the same."""
    version = "1"
    default_batch_size = 16
    uses_template = False
    server_refusal = ""

    param_specs = {
        **LMRanker.param_specs,
        "direction": Param(
            str, "log P(sentence|summary) - log P(sentence), or the reverse", choices=DIRECTIONS
        ),
    }

    def __init__(
        self,
        direction: str = "sentence|summary",
        **options: Any,
    ):
        if direction not in DIRECTIONS:
            raise ValueError(f"direction must be one of {DIRECTIONS}")
        self.direction = direction
        super().__init__(**options)
        self._start: CausalState | None = None  # the start token's cache, shared by all texts

    def _unconditional_nll(self, texts: Sequence[tuple[int, ...]]) -> list[float]:
        """Mean token NLL of each text read after the start token (each distinct text once)."""
        from sourcesum.rankers.lm.engine import continuation_nll, run_context  # loads torch

        lm = self.lm()
        if self._start is None:
            self._start = run_context(lm.model, start_tokens(lm.tokenizer))
        distinct = list(dict.fromkeys(texts))
        nll = continuation_nll(lm.model, self._start, distinct, self.batch_size)
        values = dict(zip(distinct, nll.tolist(), strict=True))
        return [values[t] for t in texts]

    def server_plan(self, pairs: Sequence[Pair]) -> ServerPlan:
        """The scored texts after the start token alone, then after the start token and each
        conditioning text (the ids and texts the local engine reads)."""
        from sourcesum.rankers.lm.server import Continuation, spaced, start_text

        tokenizer = self.server().tokenizer
        start, start_string = start_tokens(tokenizer), start_text(tokenizer)
        sentences = [spaced(tokenizer, s) for s in pairs[0].sentences]
        summaries = [spaced(tokenizer, p.summary) for p in pairs]
        forward = self.direction == "sentence|summary"
        scored, given = (sentences, summaries) if forward else (summaries, sentences)
        scored_names = (
            [f"sentence {i + 1}" for i in range(len(sentences))]
            if forward
            else [f"the summary of pair {p.id}" for p in pairs]
        )
        given_names = (
            [f"the summary of pair {p.id}" for p in pairs]
            if forward
            else [f"sentence {i + 1}" for i in range(len(sentences))]
        )
        where = f"pair {pairs[0].id}" if forward else f"the document of pair {pairs[0].id}"
        items = [
            Continuation(start, ids, start_string, text, f"{where}: {name} alone")
            for (ids, text), name in zip(scored, scored_names, strict=True)
        ]
        for (given_ids, given_text), given_name in zip(given, given_names, strict=True):
            items += [
                Continuation(
                    start + given_ids,
                    ids,
                    start_string + given_text,
                    text,
                    f"{where}: {name} after {given_name}",
                )
                for (ids, text), name in zip(scored, scored_names, strict=True)
            ]

        def finish(nll: Sequence[float]) -> list[Sequence[float]]:
            base, n = list(nll[: len(scored)]), len(scored)
            table = [list(nll[n * (g + 1) : n * (g + 2)]) for g in range(len(given))]
            if forward:  # table[summary][sentence]
                return [[float(b - c) for b, c in zip(base, row, strict=True)] for row in table]
            return [[float(base[j] - table[i][j]) for i in range(len(sentences))] for j in range(len(pairs))]

        return items, finish

    def score_document(self, pairs: Sequence[Pair]) -> list[Sequence[float]]:
        from sourcesum.rankers.lm.engine import continuation_nll, run_context  # loads torch

        lm = self.lm()
        if lm.seq2seq:
            raise SourceSumError(f"pmi needs a causal LM; {self.model} is encoder-decoder")
        tok = lm.tokenizer
        start = start_tokens(tok)
        sentences = [causal_summary(tok, s) for s in pairs[0].sentences]  # " " + text
        summaries = [causal_summary(tok, p.summary) for p in pairs]
        if self.direction == "sentence|summary":
            base = self._unconditional_nll(sentences)
            out: list[Sequence[float]] = []
            for summary in summaries:
                state = run_context(lm.model, start + summary)
                conditional = continuation_nll(lm.model, state, sentences, self.batch_size)
                out.append([float(b - c) for b, c in zip(base, conditional, strict=False)])
            return out
        base = self._unconditional_nll(summaries)
        table = []
        for sentence in sentences:
            state = run_context(lm.model, start + sentence)
            table.append(continuation_nll(lm.model, state, summaries, self.batch_size))
        return [[float(base[j] - table[i][j]) for i in range(len(sentences))] for j in range(len(pairs))]
