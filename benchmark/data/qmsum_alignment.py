"""QMSum evidence aligned to candidates: each evidence sentence located in its transcript turn,
and each candidate labelled by the evidence it overlaps (:mod:`sourcesum.data.qmsum` is the
dataset; this module, how its files become pairs and judgments).

**Labels**: each evidence sentence is located in its turn by exact substring (the evidence
``content`` is an exact substring of its turn; when it occurs more than once, the occurrence that
fits the order of the annotators' ``sent_index`` among the meeting's other located evidence
sentences is taken, else the first). A candidate **overlaps** an evidence sentence when their
character ranges in the turn share at least one non-whitespace character; its graded label is
the strongest type among the evidence sentences of its pair it overlaps: ``CES = 2``,
``PES = 1``, none ``0``; binary = CES (``binary_threshold = 2``); soft = graded / 2. Evidence in
a turn outside the span is counted (:func:`matching_report`) but cannot be ranked. A pair with no
evidence, or with all of it outside the span, has no relevant candidate (every measure
undefined); one with no CES inside the span has undefined binary measures (MAP).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sourcesum.data.datasets import ParsedSplit, SplitSpec
from sourcesum.data.pairs import Judgment, Pair
from sourcesum.data.splitting import sentence_spans
from sourcesum.errors import DataError

EVIDENCE_PREFIX = "evidence/"
TRANSCRIPT_PREFIX = "qmsum/data/ALL/"
LABELS = {"CES": 2, "PES": 1}
"""Evidence types and their graded relevance."""
BINARY_MIN = 2
"""Binary relevance: CES."""


@dataclass(frozen=True)
class Candidate:
    """One candidate sentence: its turn, character range in the turn, and speaker."""

    turn: int
    start: int
    end: int
    speaker: str


@dataclass
class Tally:
    """What :func:`matching_report` counts (summed over pairs, meetings, splits)."""

    pairs: int = 0
    queries: int = 0
    meetings: int = 0
    candidates: list[int] = field(default_factory=list)
    evidence: int = 0
    ces: int = 0
    outside: int = 0
    outside_ces: int = 0
    not_located: int = 0
    repeated_in_turn: int = 0
    one_candidate: int = 0
    several_candidates: int = 0
    no_candidate: int = 0
    pairs_no_evidence: int = 0
    pairs_all_outside: int = 0
    pairs_no_relevant: int = 0
    pairs_no_ces: int = 0
    labels: dict[int, int] = field(default_factory=lambda: {0: 0, 1: 0, 2: 0})


def _overlaps(text: str, a: tuple[int, int], b: tuple[int, int]) -> bool:
    """The ranges share at least one non-whitespace character of ``text``."""
    lo, hi = max(a[0], b[0]), min(a[1], b[1])
    return lo < hi and not text[lo:hi].isspace()


def _occurrences(text: str, needle: str) -> list[int]:
    found, at = [], text.find(needle)
    while at >= 0 and needle:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


def locate_turn(text: str, known: Mapping[int, str]) -> dict[int, tuple[int, int] | None]:
    """Character range of each evidence sentence (``sent_index -> content``) of one turn: its
    exact occurrence; when it occurs several times, the first that lies between the located
    sentences of lower and higher ``sent_index`` (else the first); None when absent."""
    found = {i: _occurrences(text, content) for i, content in known.items()}
    fixed = {i: (o[0], o[0] + len(known[i])) for i, o in found.items() if len(o) == 1}
    out: dict[int, tuple[int, int] | None] = {}
    for i, starts in found.items():
        if not starts:
            out[i] = None
        elif len(starts) == 1:
            out[i] = fixed[i]
        else:
            low = max((e for j, (_, e) in fixed.items() if j < i), default=0)
            high = min((s for j, (s, _) in fixed.items() if j > i), default=len(text))
            size = len(known[i])
            fits = [s for s in starts if s >= low and s + size <= high] or [s for s in starts if s >= low]
            start = (fits or starts)[0]
            out[i] = (start, start + size)
    return out


def _query_turns(spans: Any, n_turns: int, where: str) -> list[int]:
    if not isinstance(spans, list) or not spans:
        raise DataError(f"{where}: no relevant_text_span")
    turns: list[int] = []
    for span in spans:
        try:
            first, last = int(span[0]), int(span[1])
        except (TypeError, ValueError, IndexError) as exc:
            raise DataError(f"{where}: relevant_text_span {span!r} is not [first, last]") from exc
        if not 0 <= first <= last < n_turns:
            raise DataError(f"{where}: relevant_text_span {span!r} is outside the {n_turns} turns")
        turns += [t for t in range(first, last + 1) if t not in turns]
    return turns


def _evidence_of(query: Mapping[str, Any], where: str) -> list[list[dict[str, Any]]]:
    evidence = query.get("evidence")
    if not isinstance(evidence, list) or not all(isinstance(e, list) for e in evidence):
        raise DataError(f"{where}: 'evidence' is not a list per summary sentence")
    for per_sentence in evidence:
        for item in per_sentence:
            if not isinstance(item, dict) or item.get("type") not in LABELS:
                raise DataError(f"{where}: evidence {item!r} has no type CES or PES")
            if type(item.get("turn_index")) is not int or type(item.get("sent_index")) is not int:
                raise DataError(f"{where}: evidence {item!r} has no integer turn_index/sent_index")
            if not isinstance(item.get("content"), str) or not item["content"]:
                raise DataError(f"{where}: evidence {item!r} has no content")
    return evidence


def _locate_meeting(
    turns: Sequence[Mapping[str, Any]], queries: Iterable[Mapping[str, Any]], where: str
) -> dict[tuple[int, int, str], tuple[int, int] | None]:
    """Every evidence sentence of the meeting (all its queries, general and specific) located
    in its turn: ``(turn, sent_index, content) -> range``."""
    known: dict[int, dict[int, str]] = {}
    extra: list[tuple[int, int, str]] = []  # a second content under one (turn, sent_index)
    for query in queries:
        for per_sentence in _evidence_of(query, where):
            for item in per_sentence:
                turn, index, content = item["turn_index"], item["sent_index"], item["content"]
                if not 0 <= turn < len(turns):
                    raise DataError(f"{where}: evidence turn_index {turn} is outside the {len(turns)} turns")
                slot = known.setdefault(turn, {})
                if slot.setdefault(index, content) != content:
                    extra.append((turn, index, content))
    located: dict[tuple[int, int, str], tuple[int, int] | None] = {}
    for turn, by_index in known.items():
        for index, span in locate_turn(str(turns[turn]["content"]), by_index).items():
            located[(turn, index, by_index[index])] = span
    for turn, index, content in extra:
        span = locate_turn(str(turns[turn]["content"]), {index: content})[index]
        located[(turn, index, content)] = span
    return located


def parse_meeting(
    meeting: str, evidence_file: Any, transcript_file: Any, split: str, where: str, tally: Tally
) -> list[tuple[Pair, Judgment, str]]:
    """The pairs of one meeting's specific queries (module docstring), counting into ``tally``."""
    if not isinstance(evidence_file, dict) or not isinstance(transcript_file, dict):
        raise DataError(f"{where}: expected a JSON object per meeting")
    turns = transcript_file.get("meeting_transcripts")
    if not isinstance(turns, list) or not all(isinstance(t, dict) and "content" in t for t in turns):
        raise DataError(f"{where}: no meeting_transcripts list of turns")
    annotated = evidence_file.get("qmsum")
    if not isinstance(annotated, dict):
        raise DataError(f"{where}: evidence file has no 'qmsum' object")
    queries = list(annotated.get("specific_query_list") or [])
    spans_of = list(transcript_file.get("specific_query_list") or [])
    if len(queries) != len(spans_of):
        raise DataError(
            f"{where}: {len(queries)} specific queries in the evidence file, {len(spans_of)} in QMSum's"
        )
    located = _locate_meeting(turns, [*queries, *(annotated.get("general_query_list") or [])], where)
    tally.meetings += 1
    out: list[tuple[Pair, Judgment, str]] = []
    for q, (query, spans) in enumerate(zip(queries, spans_of, strict=True)):
        at = f"{where}: specific query {q}"
        if query.get("query") != spans.get("query"):
            raise DataError(f"{at}: the evidence file's query differs from QMSum's")
        sentences = query.get("tokenized_answer")
        evidence = _evidence_of(query, at)
        if not isinstance(sentences, list) or len(sentences) != len(evidence):
            raise DataError(f"{at}: {len(evidence)} evidence lists for its summary sentences")
        tally.queries += 1
        in_span = [
            t
            for t in _query_turns(spans.get("relevant_text_span"), len(turns), at)
            if str(turns[t]["content"]).strip()
        ]
        candidates = [
            Candidate(t, s, e, str(turns[t].get("speaker", "")))
            for t in in_span
            for s, e in sentence_spans(str(turns[t]["content"]))
        ]
        if not candidates:
            raise DataError(f"{at}: its relevant_text_span holds no text")
        texts = tuple(str(turns[c.turn]["content"])[c.start : c.end] for c in candidates)
        document = "\n".join(f"{turns[t].get('speaker', '')}: {turns[t]['content']}" for t in in_span)
        by_turn: dict[int, list[int]] = {}
        for i, c in enumerate(candidates):
            by_turn.setdefault(c.turn, []).append(i)
        for s, (summary, items) in enumerate(zip(sentences, evidence, strict=True)):
            if not isinstance(summary, str) or not summary.strip():
                raise DataError(f"{at}: summary sentence {s} is empty")
            graded = [0] * len(candidates)
            ces_inside = False
            outside = 0
            for item in items:
                label = LABELS[item["type"]]
                tally.evidence += 1
                tally.ces += label == 2
                turn = item["turn_index"]
                span = located[(turn, item["sent_index"], item["content"])]
                if span is None:
                    tally.not_located += 1
                    continue
                text = str(turns[turn]["content"])
                tally.repeated_in_turn += text.count(item["content"]) > 1
                if turn not in by_turn:
                    outside += 1
                    tally.outside += 1
                    tally.outside_ces += label == 2
                    continue
                hits = [
                    i
                    for i in by_turn[turn]
                    if _overlaps(text, (candidates[i].start, candidates[i].end), span)
                ]
                if len(hits) == 1:
                    tally.one_candidate += 1
                elif hits:
                    tally.several_candidates += 1
                else:
                    tally.no_candidate += 1
                for i in hits:
                    graded[i] = max(graded[i], label)
                ces_inside = ces_inside or (label == 2 and bool(hits))
            tally.pairs += 1
            tally.candidates.append(len(candidates))
            tally.pairs_no_evidence += not items
            tally.pairs_all_outside += bool(items) and outside == len(items)
            tally.pairs_no_relevant += not any(graded)
            tally.pairs_no_ces += not ces_inside
            for g in graded:
                tally.labels[g] += 1
            pair = Pair(
                id=f"{Path(meeting).stem}_q{q}_s{s}",
                split=split,
                sentences=texts,
                summary=summary,
                document=document,
                corpus="qmsum",
                original_id=Path(meeting).stem,
                summary_idx=s,
                query=str(query.get("query", "")),
            )
            out.append((pair, Judgment.of(graded, [g / BINARY_MIN for g in graded]), Path(meeting).stem))
    return out


def _load_json(path: Path, payload: bytes) -> Any:
    try:
        return json.loads(payload)
    except (ValueError, RecursionError) as exc:
        raise DataError(f"{path}: cannot be read as JSON ({exc})") from exc


def parse_files(spec: SplitSpec, files: Mapping[str, tuple[Path, bytes]], tally: Tally) -> ParsedSplit:
    """Pairs, judgments and clusters of ``spec`` from its files' verified bytes."""
    parsed: list[tuple[Pair, Judgment, str]] = []
    for name in spec.files:
        if not name.startswith(EVIDENCE_PREFIX):
            continue
        meeting_path = name[len(EVIDENCE_PREFIX) :]
        path, payload = files[name]
        transcript_path, transcript = files[TRANSCRIPT_PREFIX + meeting_path]
        where = f"{path} (with {transcript_path.name})"
        parsed += parse_meeting(
            meeting_path.rsplit("/", 1)[-1],
            _load_json(path, payload),
            _load_json(transcript_path, transcript),
            spec.name,
            where,
            tally,
        )
    return ParsedSplit(
        tuple(p for p, _, _ in parsed),
        tuple(j for _, j, _ in parsed),
        tuple(f"qmsum-meeting-{c}" for _, _, c in parsed),
    )
