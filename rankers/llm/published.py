"""The paper's two prompt templates, located and sha256-verified like the SourceSum splits.

Temporary: the ``literature`` branch adds a shared locator for every file of the paper's
published folder (``sourcesum.published.read_prompt``); once it is on main this module should
be replaced by it. The files (Suhara & Alikaniotis 2024, ``suhara/sourcesum`` at commit
``ba7043a``, ``data/gpt_prompt_v1.txt`` and ``_v2.txt``, Apache-2.0) are looked up in

1. ``$SOURCESUM_PUBLISHED_DIR/<file>``,
2. ``data/published/<file>`` (git-ignored),
3. otherwise downloaded from the pinned URL into ``data/published/``,

and the bytes returned are the bytes checked against the pinned sha256. Never committed.
"""

from __future__ import annotations

import hashlib
import os
import urllib.error
import urllib.request
from pathlib import Path

from sourcesum import paths
from sourcesum.atomic import write_bytes_atomic
from sourcesum.errors import DataError

COMMIT = "ba7043a58f5d48811a2736d1941b9c4d4458c9a1"
URL = "https://raw.githubusercontent.com/suhara/sourcesum/{commit}/data/{file}"
PROMPT_SHA256 = {
    "gpt_prompt_v1.txt": "b3e4e759de69c7f0be73cb8f45fce9ab36ca12c7fa2b8c9a5514115faed86d74",
    "gpt_prompt_v2.txt": "0748680b000c1fc7c5a60088aa1b36310c12637f353437aef1764304c1c54070",
}
ATTRIBUTION = (
    "prompt {version} of Suhara & Alikaniotis (2024), Source Identification in Abstractive "
    "Summarization, EACL; suhara/sourcesum@ba7043a data/gpt_prompt_{version}.txt, Apache-2.0"
)


def _verified(payload: bytes, file: str, where: str) -> bytes:
    actual = hashlib.sha256(payload).hexdigest()
    if actual != PROMPT_SHA256[file]:
        raise DataError(
            f"{where}: sha256 {actual[:12]}... does not match the pinned "
            f"{PROMPT_SHA256[file][:12]}... of {file}; delete it or point SOURCESUM_PUBLISHED_DIR "
            "at an unmodified copy"
        )
    return payload


def read_prompt(version: str) -> str:
    """The verified text of the paper's prompt template ``v1`` or ``v2``."""
    file = f"gpt_prompt_{version}.txt"
    if file not in PROMPT_SHA256:
        raise DataError(f"the paper has no prompt {version!r}; it has v1 and v2")
    folder = os.environ.get("SOURCESUM_PUBLISHED_DIR")
    candidates = [Path(folder).expanduser() / file] if folder else []
    candidates.append(paths.DATA_ROOT / "published" / file)
    for path in candidates:
        if path.is_file():
            try:
                return _verified(path.read_bytes(), file, str(path)).decode("utf-8")
            except OSError as exc:
                raise DataError(f"{path}: cannot be read ({exc})") from exc
        if folder and path == candidates[0]:
            raise DataError(f"SOURCESUM_PUBLISHED_DIR={folder} has no {file}; fix or unset it")
    url = URL.format(commit=COMMIT, file=file)
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            payload = response.read()
    except (urllib.error.URLError, OSError) as exc:
        raise DataError(
            f"cannot download {url} ({exc}); with no network, set SOURCESUM_PUBLISHED_DIR to a "
            f"folder holding {file}"
        ) from exc
    _verified(payload, file, url)
    write_bytes_atomic(candidates[-1], payload)
    return payload.decode("utf-8")
