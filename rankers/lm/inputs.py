"""Token layout of LM inputs: the document as one token segment per sentence.

Causal models read ``template`` (default ``DEFAULT_TEMPLATE``) with ``{document}`` replaced by
the sentences joined by spaces and ``{summary}`` by the summary; the text before ``{document}``
is the *head*, the text between the two placeholders the *middle*. Seq2seq models read the
document alone as encoder input (plus the tokenizer's special tokens) and the summary as the
decoder target. Each sentence is tokenized on its own (with a leading space after the first),
so "the document without sentence i" is exactly the concatenation without segment i.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from sourcesum.errors import RankerError, SourceSumError

DEFAULT_TEMPLATE = "Document: {document}\n\nSummary:{summary}"

PROMPT_FORMATS = ("tokens", "text")
"""How a prompt goes to a server: the local tokenizer's ids, or their text."""
LOGPROBS_APIS = ("echo", "prompt_logprobs")
"""How a server is asked for a prompt's log-probabilities (OpenAI's echo, or vLLM's
``prompt_logprobs``)."""


@dataclass(frozen=True)
class Context:
    """``head + segments[0] + ... + segments[-1] + middle``: the text the summary is read after."""

    head: tuple[int, ...]
    segments: tuple[tuple[int, ...], ...]
    middle: tuple[int, ...]

    @property
    def starts(self) -> list[int]:
        """Token offset of each segment in the full context."""
        offsets, position = [], len(self.head)
        for segment in self.segments:
            offsets.append(position)
            position += len(segment)
        return offsets

    def ids(self, drop: int | None = None, keep: Sequence[bool] | None = None) -> list[int]:
        """Context token ids, without segment ``drop`` if given, and with only the segments
        ``keep`` marks if given (one flag per segment)."""
        if keep is not None and len(keep) != len(self.segments):
            raise ValueError(f"keep has {len(keep)} flags for {len(self.segments)} segments")
        body = [t for i, s in enumerate(self.segments) if i != drop and (keep is None or keep[i]) for t in s]
        return [*self.head, *body, *self.middle]

    def kept(self, keep: Sequence[bool]) -> tuple[list[int], list[int], int]:
        """The variant with only the segments ``keep`` marks (the others deleted), as the engine
        runs it: ``(ids, mask, reuse)``, ``reuse`` = the positions it shares with the full
        context (up to its first deleted segment; all of them when none is)."""
        ids = self.ids(keep=keep)
        dropped = [i for i, kept in enumerate(keep) if not kept]
        return ids, [1] * len(ids), (self.starts[dropped[0]] if dropped else len(ids))

    def mask(self, hide: int | None = None) -> list[int]:
        """Attention mask over :meth:`ids` (all 1), with segment ``hide`` set to 0."""
        mask = [1] * (len(self.head) + sum(map(len, self.segments)) + len(self.middle))
        if hide is not None:
            start = self.starts[hide]
            mask[start : start + len(self.segments[hide])] = [0] * len(self.segments[hide])
        return mask


def recomputed(length: int, reuse: int) -> int:
    """Tokens a causal variant of ``length`` tokens runs after reusing the first ``reuse``
    positions of a run context: the rest, and at least one (it needs its own last logits)."""
    return length - min(reuse, length - 1)


def split_template(template: str) -> tuple[str, str]:
    """``(head, middle)`` of a causal template, which must end with ``{summary}``."""
    if template.count("{document}") != 1 or not template.endswith("{summary}"):
        raise SourceSumError(f"template {template!r} must contain {{document}} once and end with {{summary}}")
    head, rest = template.split("{document}")
    return head, rest[: -len("{summary}")]


def _plain(tokenizer: Any, text: str) -> tuple[int, ...]:
    return tuple(tokenizer(text, add_special_tokens=False)["input_ids"]) if text else ()


def start_tokens(tokenizer: Any) -> tuple[int, ...]:
    """The token a causal sequence starts with: BOS, else EOS (GPT-2's document separator)."""
    token = tokenizer.bos_token_id if tokenizer.bos_token_id is not None else tokenizer.eos_token_id
    return (token,) if token is not None else ()


@lru_cache(maxsize=4096)
def _segments(
    tokenizer: Any, sentences: tuple[str, ...], space_first: bool = False
) -> tuple[tuple[int, ...], ...]:
    return tuple(_plain(tokenizer, (" " if i or space_first else "") + s) for i, s in enumerate(sentences))


def causal_context(
    tokenizer: Any,
    sentences: Sequence[str],
    template: str,
    space_every_sentence: bool = False,
    start_token: bool = True,
) -> Context:
    """The causal context: :func:`start_tokens` (unless ``start_token=False``), ``template``'s
    head, the sentences and its middle.

    ``space_every_sentence`` tokenizes the first sentence with a leading space too, as a
    tokenizer would read ``"Document: The..."``; the head's one trailing space, if any, is then
    dropped (the first sentence carries it), so no sentence starts with a lone space token.
    """
    head, middle = split_template(template)
    if space_every_sentence and head.endswith(" "):
        head = head[:-1]
    return Context(
        head=(start_tokens(tokenizer) if start_token else ()) + _plain(tokenizer, head),
        segments=_segments(tokenizer, tuple(sentences), space_every_sentence),
        middle=_plain(tokenizer, middle),
    )


def causal_summary(tokenizer: Any, summary: str) -> tuple[int, ...]:
    return _plain(tokenizer, " " + summary)


def seq2seq_context(tokenizer: Any, sentences: Sequence[str]) -> Context:
    """Encoder input: the special tokens the tokenizer adds around a text, around the segments."""
    marker = tokenizer("x", add_special_tokens=False)["input_ids"]
    full = tokenizer("x")["input_ids"]
    at = next(i for i in range(len(full)) if full[i : i + len(marker)] == marker)
    return Context(
        head=tuple(full[:at]),
        segments=_segments(tokenizer, tuple(sentences)),
        middle=tuple(full[at + len(marker) :]),
    )


def seq2seq_summary(tokenizer: Any, summary: str) -> tuple[int, ...]:
    return tuple(tokenizer(text_target=summary)["input_ids"])


class WindowOverflow(RankerError):
    """A pair's input is longer than the model's context window; ``pair_id`` names the pair."""

    def __init__(self, message: str, pair_id: str):
        super().__init__(message)
        self.pair_id = pair_id


def check_length(context: Context, extra: int, limit: int | None, pair_id: str) -> None:
    """A clear error (:class:`WindowOverflow`) when a pair does not fit the model's context window."""
    total = len(context.ids()) + extra
    if limit is not None and total > limit:
        raise WindowOverflow(
            f"pair {pair_id}: {total} tokens exceed the model's limit of {limit}; "
            "use a model with a longer context, or overflow=ties to score such pairs as all ties",
            pair_id,
        )
