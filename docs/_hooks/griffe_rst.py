"""Griffe extension for the API pages: the package's docstrings use reStructuredText roles and
literal blocks (``:class:`Ranker```, ``Example::``); the pages are Markdown. This rewrites, in
every docstring as it is loaded (the source files are not touched):

* ``:role:`~a.b.C``` and ``:role:`a.b.C``` to a code span (``C`` with the ``~``, else the path);
* ````literal```` (reST's inline literal) to a Markdown code span;
* a paragraph ending in ``::`` to one ending in ``:`` (the indented block after it is already a
  Markdown code block).
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const|ref|term):`(~?)([^`]+)`")
_LITERAL = re.compile(r"``(.+?)``", re.DOTALL)


def markdown(text: str) -> str:
    """``text`` with the reST constructs above rewritten as Markdown."""

    def role(match: re.Match[str]) -> str:
        target = match.group(2).strip()
        if match.group(1):
            target = target.rsplit(".", 1)[-1]
        return f"``{target}``"

    text = _ROLE.sub(role, text)
    text = _LITERAL.sub(lambda m: "`" + m.group(1) + "`" if "`" not in m.group(1) else m.group(0), text)
    return re.sub(r"(?<=\S)::$", ":", re.sub(r"\s+::$", "", text, flags=re.MULTILINE), flags=re.MULTILINE)


class RestRolesToMarkdown(griffe.Extension):
    """Rewrite every loaded object's docstring (see the module docstring)."""

    def on_instance(self, *, node: Any, obj: griffe.Object, agent: Any, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown(obj.docstring.value)
