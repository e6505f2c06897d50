"""Prompt templates of the LLM judge: the paper's two prompts as presets, ours for listwise, or a
user file.

Placeholders (replaced in one pass, so text inside a summary is never re-substituted):
``{summary}``, ``{sentence}`` (pointwise), ``{sentences}`` (listwise: one ``[i] text`` line per
sentence, numbered from 1), ``{n}`` (number of sentences), ``{lo}`` and ``{hi}`` (the scale's
ends). A pointwise template needs ``{summary}`` and ``{sentence}``; a listwise one ``{summary}``
and ``{sentences}``.

Presets:

- ``v1``, ``v2``: the paper's prompts (``gpt_prompt_v1.txt``, ``gpt_prompt_v2.txt`` of Suhara &
  Alikaniotis 2024, Apache-2.0; located and sha256-verified by :func:`sourcesum.data.sourcesum.read_prompt`) with
  their scale ends turned into ``{lo}``/``{hi}``. With their own scales (v1: ``0-1.00``, v2:
  ``0-100``) they render byte-for-byte as the paper's text; the paper's text-davinci-003 row used
  v2.
- ``listwise``: ours (the paper has no listwise prompt).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from sourcesum.data.sourcesum import read_prompt
from sourcesum.errors import ParameterError
from sourcesum.rankers.llm.scale import Scale

PRESETS = ("v1", "v2", "listwise")
ATTRIBUTION = (
    "prompt {version} of Suhara & Alikaniotis (2024), Source Identification in Abstractive "
    "Summarization, EACL; suhara/sourcesum@ba7043a data/gpt_prompt_{version}.txt, Apache-2.0"
)
NATIVE_SCALES = {"v1": "0-1.00", "v2": "0-100"}
"""The scale each of the paper's prompts was written for."""

# Exact substrings of the paper's texts that name the scale ends, and their placeholders.
_SCALE_SLOTS = {
    "v1": [
        ("between 0 to 1, where 0 with", "between {lo} to {hi}, where {lo} with"),
        ("and 1 with \u201ccontribute", "and {hi} with \u201ccontribute"),
    ],
    "v2": [
        ("a score from 0 to 100,  0 with", "a score from {lo} to {hi},  {lo} with"),
        ("and 100 with \u201ccontribute", "and {hi} with \u201ccontribute"),
    ],
}

LISTWISE = (
    "This task is to rank the sentences of a news article by how much each contributes to a given "
    "summary of that article. The article's {n} sentences are numbered.\n\n"
    "Summary: {summary}\n\n"
    "Sentences:\n{sentences}\n\n"
    "List the sentence numbers from the sentence that contributes most to the summary to the one "
    "that contributes least, in the form [2] > [1] > [3].\n\n"
    "Ranking: "
)

_PLACEHOLDER = re.compile(r"\{(summary|sentence|sentences|n|lo|hi)\}")


@dataclass(frozen=True)
class Template:
    """A prompt template: its text, where it came from, and its mode."""

    text: str
    source: str
    listwise: bool

    def render(
        self, summary: str, scale: Scale | None = None, sentence: str = "", sentences: Sequence[str] = ()
    ) -> str:
        values = {
            "summary": summary,
            "sentence": sentence,
            "sentences": "\n".join(f"[{i + 1}] {s}" for i, s in enumerate(sentences)),
            "n": str(len(sentences)),
            "lo": scale.lo_text if scale else "",
            "hi": scale.hi_text if scale else "",
        }
        return _PLACEHOLDER.sub(lambda m: values[m.group(1)], self.text)


def preset_text(name: str) -> str:
    """The text of preset ``name`` with its scale slots (see the module doc)."""
    if name == "listwise":
        return LISTWISE
    text = read_prompt(name)
    for original, slotted in _SCALE_SLOTS[name]:
        if text.count(original) != 1:  # pragma: no cover - the sha256 pin rules this out
            raise ParameterError(f"paper prompt {name} does not contain {original!r} once")
        text = text.replace(original, slotted)
    return text


def canonical_template(spec: str) -> str:
    """The canonical form of a ``template`` parameter without loading a preset: ``auto`` and
    preset names as they are, a pinned ``PATH#sha256=HEX`` with its path expanded, a bare path
    pinned by the sha256 of its contents (read here: the scores depend on them)."""
    if spec == "auto" or spec in PRESETS:
        return spec
    path_text, _, pinned = spec.partition("#sha256=")
    if pinned:
        return f"{Path(path_text).expanduser()}#sha256={pinned}"
    path = Path(path_text).expanduser()
    try:
        payload = path.read_bytes()
    except OSError as exc:
        raise ParameterError(
            f"llm_judge.template={spec!r}: not a preset ({', '.join(PRESETS)}) and not a readable file ({exc})"
        ) from exc
    return f"{path}#sha256={hashlib.sha256(payload).hexdigest()[:16]}"


def load_template(spec: str, listwise: bool) -> tuple[Template, str]:
    """The template named by ``spec`` (a preset or a file path) and its canonical spec: a
    preset's name, or ``PATH#sha256=HEX`` pinning a file's contents (a spec that already
    carries a pin must still match it)."""
    if spec in PRESETS:
        if (spec == "listwise") != listwise:
            mode = "listwise" if listwise else "pointwise"
            raise ParameterError(f"llm_judge: preset {spec!r} does not fit mode={mode}")
        source = "ours" if spec == "listwise" else ATTRIBUTION.format(version=spec)
        return Template(preset_text(spec), source, listwise), spec
    path_text, _, pinned = spec.partition("#sha256=")
    path = Path(path_text).expanduser()
    try:
        payload = path.read_bytes()
        text = payload.decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError(
            f"llm_judge.template={spec!r}: not a preset ({', '.join(PRESETS)}) and not a readable "
            f"UTF-8 file ({exc})"
        ) from exc
    digest = hashlib.sha256(payload).hexdigest()[:16]
    if pinned and pinned != digest:
        raise ParameterError(
            f"llm_judge.template: {path} has changed since these scores were computed (sha256 "
            f"{digest}, pinned {pinned})"
        )
    needed = ("{summary}", "{sentences}") if listwise else ("{summary}", "{sentence}")
    missing = [p for p in needed if p not in text]
    if missing:
        mode = "listwise" if listwise else "pointwise"
        raise ParameterError(f"llm_judge.template {path}: a {mode} template needs {', '.join(missing)}")
    return Template(text, str(path), listwise), f"{path}#sha256={digest}"
