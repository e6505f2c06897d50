"""Pinned sources: where a dataset's files come from, and how a local copy is found and verified.

A :class:`Source` is one upstream repository at one commit: its URL template (``{commit}`` and
``{path}``), license, citation and the sha256 of every file the harness reads from it. The
built-in datasets' sources are pinned in ``data/manifest.json`` (:func:`manifest_source`); a
plugin dataset may declare its own. A file of a source is looked for in

1. ``$<env_var>/<file>`` (the source's environment variable, e.g. ``SOURCESUM_DATA_DIR``),
2. ``data/<download_dir>/<file>`` (earlier downloads; git-ignored),
3. else downloaded from the pinned URL into ``data/<download_dir>/``,

and the bytes parsed are the bytes checked against the sha256 (:func:`read_verified`: read
once, no cache in between), so an edited copy can never be scored.

**Unpinned files** (development of a plugin dataset): a source may pin a file with ``sha256 =
None`` while its bytes still change. Such a file is read only from a local copy (never
downloaded) and only when ``SOURCESUM_ALLOW_UNPINNED=1`` is set; its split's data checksum is
then ``unpinned-`` followed by a digest of the bytes read (:func:`file_checksum`), so every score
entry computed on it records ``data_sha256 = "unpinned-..."`` and every board built from it says
so (:attr:`sourcesum.data.Split.unpinned`). Without the variable such a file is an error.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from sourcesum import paths
from sourcesum.errors import DataError, UnknownNameError
from sourcesum.util.files import write_bytes_atomic
from sourcesum.util.hashing import sha256_bytes

ALLOW_UNPINNED_VAR = "SOURCESUM_ALLOW_UNPINNED"
"""Set to ``1`` to read files whose source pins no sha256 (module docstring)."""
UNPINNED_PREFIX = "unpinned-"
"""How a data checksum computed from unpinned bytes starts (entries and boards show it)."""


class UnpinnedDataWarning(UserWarning):
    """Data was read from files without a pinned sha256 (``SOURCESUM_ALLOW_UNPINNED=1``)."""


def allow_unpinned() -> bool:
    """``SOURCESUM_ALLOW_UNPINNED=1`` is set: unpinned files may be read (with a warning)."""
    return os.environ.get(ALLOW_UNPINNED_VAR) == "1"


@dataclass(frozen=True)
class PinnedFile:
    """One file of a source: its name, sha256 and canonical URL, and where copies are found."""

    name: str
    file: str
    sha256: str | None
    """The pinned sha256; None for a file not pinned yet (module docstring)."""
    url: str
    kind: str = "file"
    """What it is, in words, for messages (``file``, ``published file``...)."""
    env_var: str = "SOURCESUM_DATA_DIR"
    download_dir: Path = field(default=paths.DOWNLOAD_DIR)
    split: str = ""
    """The split it is read for, if any (messages name it)."""

    @property
    def pinned(self) -> bool:
        return self.sha256 is not None

    @property
    def described(self) -> str:
        """``file xsum_pegasus.json (split xsum_pegasus)``, ``published file gpt_prompt_v1.txt``."""
        return f"{self.kind} {self.file}" + (f" (split {self.split})" if self.split else "")


@dataclass(frozen=True)
class Source:
    """A pinned upstream source (see the module docstring)."""

    name: str
    repository: str
    commit: str
    url_template: str
    license: str
    files: Mapping[str, Mapping[str, str | None]]
    """File name -> ``{"path": path in the repository, "sha256": hex}`` (``"sha256": None``: not
    pinned yet, read only under ``SOURCESUM_ALLOW_UNPINNED=1``)."""
    env_var: str
    download_dir: str
    """Folder under ``data/`` where downloads land (git-ignored)."""
    citation: str = ""
    title: str = ""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Other fields of the source's manifest entry (e.g. the published methods)."""

    def file(self, name: str, kind: str = "file", split: str = "") -> PinnedFile:
        """The pinned file ``name`` (read for ``split``, if given); :class:`UnknownNameError` if
        the source has none."""
        entry = self.files.get(name)
        if entry is None:
            raise UnknownNameError(f"source {self.name} pins no file {name!r}")
        url = self.url_template.format(commit=self.commit, path=entry.get("path") or name, file=name)
        return PinnedFile(
            name,
            name,
            entry.get("sha256"),
            url,
            kind,
            self.env_var,
            paths.DATA_ROOT / self.download_dir,
            split,
        )

    @property
    def unpinned_files(self) -> list[str]:
        """The files the source does not pin a sha256 for."""
        return [name for name, entry in self.files.items() if entry.get("sha256") is None]

    def describe(self) -> dict[str, Any]:
        """Repository, commit, license, URL template and the number of pinned files (for
        ``sourcesum list --json`` and the data cards)."""
        return {
            "name": self.name,
            "repository": self.repository,
            "commit": self.commit,
            "license": self.license,
            "url_template": self.url_template,
            "files": len(self.files),
            "unpinned_files": len(self.unpinned_files),
            "env_var": self.env_var,
            "citation": self.citation,
        }


@cache
def manifest() -> dict[str, Any]:
    """The parsed ``data/manifest.json``."""
    loaded: dict[str, Any] = json.loads(paths.MANIFEST_PATH.read_text(encoding="utf-8"))
    return loaded


def manifest_source(name: str, env_var: str, download_dir: str) -> Source:
    """The source ``name`` as pinned in ``data/manifest.json``."""
    entry = manifest()["sources"].get(name)
    if entry is None:
        raise UnknownNameError(f"data/manifest.json pins no source {name!r}")
    known = {"repository", "commit", "url_template", "license", "files", "citation", "title"}
    return Source(
        name=name,
        repository=entry["repository"],
        commit=entry["commit"],
        url_template=entry["url_template"],
        license=entry["license"],
        files=entry["files"],
        env_var=env_var,
        download_dir=download_dir,
        citation=entry.get("citation", ""),
        title=entry.get("title", ""),
        extra={k: v for k, v in entry.items() if k not in known},
    )


def verify(path: Path, info: PinnedFile, payload: bytes | None = None) -> bytes:
    """The bytes of ``path`` (or ``payload``, already read from it) if their sha256 matches the
    pin, else :class:`DataError` naming ``path``. Callers parse exactly the returned bytes. An
    unpinned file's bytes are returned only under ``SOURCESUM_ALLOW_UNPINNED=1``."""
    payload = path.read_bytes() if payload is None else payload
    if info.sha256 is None:
        if not allow_unpinned():
            raise DataError(
                f"{path}: {info.described} has no pinned sha256 (its source pins null); pin it, or "
                f"set {ALLOW_UNPINNED_VAR}=1 to read it unpinned while developing (score entries and "
                "boards then record the data as 'unpinned')"
            )
        return payload
    actual = sha256_bytes(payload)
    if actual != info.sha256:
        raise DataError(
            f"{path}: sha256 {actual[:12]}... does not match the pinned {info.sha256[:12]}... "
            f"for {info.described}; delete the file or point {info.env_var} at an unmodified copy"
        )
    return payload


def file_checksum(info: PinnedFile, payload: bytes) -> str:
    """What a file contributes to its split's data checksum: its pinned sha256, or for an
    unpinned file ``unpinned-`` and the sha256 of ``payload`` (the bytes read and parsed)."""
    return info.sha256 if info.sha256 is not None else UNPINNED_PREFIX + sha256_bytes(payload)


def warn_unpinned(what: str, files: list[str]) -> None:
    """The :class:`UnpinnedDataWarning` for data read from unpinned ``files``."""
    warnings.warn(
        f"{what} is read from unpinned files ({', '.join(files)}; {ALLOW_UNPINNED_VAR}=1): its data "
        "checksum starts 'unpinned-', and every entry and board computed on it says so",
        UnpinnedDataWarning,
        stacklevel=3,
    )


def download(info: PinnedFile, dest_dir: Path, url: str | None = None) -> Path:
    """Fetch ``info.url`` (or ``url``) into ``dest_dir``, verify it, then move it in place."""
    url = url or info.url
    if info.sha256 is None:
        raise DataError(
            f"{info.described} has no pinned sha256, so it is never downloaded; set "
            f"{info.env_var} to a folder holding {info.file}"
        )
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            payload = response.read()
    except (urllib.error.URLError, OSError) as exc:
        raise DataError(
            f"cannot download {info.described} from {url} ({exc}); with no network, set "
            f"{info.env_var} to a folder holding {info.file}"
        ) from exc
    actual = sha256_bytes(payload)
    if actual != info.sha256:
        raise DataError(
            f"download of {url} has sha256 {actual[:12]}..., expected {info.sha256[:12]}...; "
            "nothing was saved"
        )
    path = dest_dir / info.file
    write_bytes_atomic(path, payload)
    return path


def local_copy(info: PinnedFile) -> Path | None:
    """The local copy of ``info`` that :func:`locate` would use, without downloading: the file
    in ``$<env_var>`` when the variable is set (None if absent there), else in the download
    folder (None if absent)."""
    env_dir = paths.env_dir(info.env_var)
    candidate = (env_dir if env_dir is not None else info.download_dir) / info.file
    return candidate if candidate.is_file() else None


def locate(info: PinnedFile) -> Path:
    """A local path for ``info`` (``$<env_var>``, then its download folder, else a verified
    download). Not verified here: :func:`read_verified` checks the bytes it parses."""
    env_dir = paths.env_dir(info.env_var)
    if env_dir is not None:
        candidate = env_dir / info.file
        if not candidate.is_file():
            raise DataError(
                f"{info.env_var}={env_dir} has no {info.file}; fix the variable or unset it "
                f"to use {info.download_dir} or the download"
            )
        return candidate
    candidate = info.download_dir / info.file
    if candidate.is_file():
        return candidate
    return download(info, info.download_dir)


def read_verified(info: PinnedFile, warn: bool = True) -> tuple[Path, bytes]:
    """The located file of ``info`` and its bytes, read once and checked against the pinned
    sha256: the bytes verified are the bytes parsed (no cache in between). An unpinned file is
    read only under ``SOURCESUM_ALLOW_UNPINNED=1``, with an :class:`UnpinnedDataWarning`
    (``warn=False``: the caller warns)."""
    path = locate(info)
    try:
        payload = path.read_bytes()
    except OSError as exc:
        raise DataError(f"{path}: cannot be read ({exc})") from exc
    verified = verify(path, info, payload)
    if warn and info.sha256 is None:
        warn_unpinned(info.described, [str(path)])
    return path, verified
