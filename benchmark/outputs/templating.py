"""The Jinja2 environment of the templates in ``sourcesum/outputs/templates`` (Markdown and HTML)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

from sourcesum.errors import SourceSumError

TEMPLATES = Path(__file__).resolve().parent / "templates"


@cache
def environment(autoescape: bool) -> Any:
    """A strict environment (undefined names are errors) over :data:`TEMPLATES`; ``autoescape``
    for HTML. One per process and setting, so each template is compiled once (Jinja2 keeps the
    compiled templates in the environment and recompiles one whose file changed)."""
    try:
        import jinja2
    except ImportError as exc:
        raise SourceSumError("rendering needs Jinja2: pip install jinja2") from exc
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=autoescape,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        undefined=jinja2.StrictUndefined,
    )
