"""Escaping (sourcesum.outputs.escape): every output escapes what it prints."""

from __future__ import annotations

from sourcesum.outputs.escape import latex, md_cell, md_code, terminal


def test_outputs_escape_what_they_print():
    assert md_cell("a | b\nc") == "a \\| b c" and md_code("a`b") == "``a`b``"
    assert latex("50% of $x_1$ & {y} #2 ~ ^ \\ < > |") == (
        r"50\% of \$x\_1\$ \& \{y\} \#2 \textasciitilde{} \textasciicircum{} \textbackslash{} "
        r"\textless{} \textgreater{} \textbar{}"
    )
    assert terminal("evil\x1b[2Jname\x07\n") == "evil\\x1b[2Jname\\x07\n"
