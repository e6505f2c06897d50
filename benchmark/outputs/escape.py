"""Escaping for every output a label or a path can reach, so no text can inject structure.

Labels are derived from ranker names (``[A-Za-z][A-Za-z0-9_]*``) and canonical parameters
(string parameters may hold no control character), and file paths come from the user, so the
outputs still escape what they print:

* :func:`md_cell`: a Markdown table cell or list item (``|`` and ``\\`` escaped, ``& < >`` as
  HTML entities, control characters as escapes, line breaks folded);
* :func:`md_code`: a Markdown code span fenced by more backticks than the text holds (control
  characters as escapes);
* :func:`latex`: every LaTeX special character (``\\ { } $ & # ^ _ ~ % < > |``);
* :func:`terminal`: control characters shown as escapes (``\\x1b``), never sent raw to a
  terminal.
"""

from __future__ import annotations

import re
import unicodedata

_LATEX = {
    "\\": r"\textbackslash{}",
    "{": r"\{",
    "}": r"\}",
    "$": r"\$",
    "&": r"\&",
    "#": r"\#",
    "^": r"\textasciicircum{}",
    "_": r"\_",
    "~": r"\textasciitilde{}",
    "%": r"\%",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}


_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def md_cell(text: str) -> str:
    """``text`` safe inside a Markdown table cell or list item: line breaks folded, control
    characters shown as escapes (:func:`terminal`), ``\\`` and ``|`` escaped, and ``&``, ``<``, ``>``
    as HTML entities (so no text becomes markup)."""
    folded = terminal(re.sub(r"[\r\n]+", " ", text))
    escaped = folded.replace("\\", "\\\\").replace("|", "\\|")
    return "".join(_HTML.get(char, char) for char in escaped)


def md_code(text: str) -> str:
    """``text`` as one Markdown code span (fenced by one backtick more than its longest run; a
    code span shows ``<`` and ``&`` as they are), control characters shown as escapes."""
    folded = terminal(re.sub(r"[\r\n]+", " ", text))
    longest = max((len(run) for run in re.findall(r"`+", folded)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if folded.startswith("`") or folded.endswith("`") else ""
    return f"{fence}{pad}{folded}{pad}{fence}"


def latex(text: str) -> str:
    """``text`` with every LaTeX special character escaped."""
    return "".join(_LATEX.get(char, char) for char in text)


def terminal(text: str) -> str:
    """``text`` with control characters (other than newline and tab) written as escapes."""
    return "".join(
        char
        if char in "\n\t" or unicodedata.category(char) != "Cc"
        else char.encode("unicode_escape").decode()
        for char in text
    )
