"""The tests' data: the synthetic datasets (``tests/fixtures/synthetic``, registered by
tests/conftest.py) and whether the real data is here (real-data tests skip without it, or fail
under ``SOURCESUM_REQUIRE_DATA=1``)."""

from __future__ import annotations

import json
import os
from pathlib import Path

SYNTHETIC = Path(__file__).resolve().parent.parent / "fixtures" / "synthetic"
"""The synthetic datasets' folder: their files and ``synthetic_datasets.py``."""

BOARD_SPLITS = ("synth_alpha_sys", "synth_alpha_ref", "synth_beta_sys", "synth_beta_ref")
"""synthnews's four board splits (3 pairs each; each corpus's two splits share their documents)."""

SOURCESUM_BOARD = ["xsum_pegasus", "xsum_reference", "cnn_pegasus", "cnn_reference"]
"""SourceSum's four board splits, as ``dataset("sourcesum").board_splits()`` lists them."""


def raw_rows(name: str) -> list[dict]:
    """The rows of a synthnews split, read straight from its fixture file."""
    return json.loads((SYNTHETIC / f"{name}.json").read_text(encoding="utf-8"))


def pinned_file(name: str):
    """The pinned file of the one-file split ``name``."""
    from sourcesum.data import dataset_of, split_spec

    files = dataset_of(name).pinned_files(split_spec(name))
    assert len(files) == 1
    return files[0]


def synthetic_plugin_env(tmp_path: Path) -> dict[str, str]:
    """An environment whose only way to know the synthetic datasets is their entry points: a
    distribution's metadata (``entry_points.txt``) on the path, as ``pip install`` leaves it."""
    dist = tmp_path / "site" / "synthetic_datasets-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: synthetic-datasets\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[sourcesum.datasets]\n"
        "synthnews = synthetic_datasets:SyntheticNews\n"
        "synthclaims = synthetic_datasets:SyntheticClaims\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("SOURCESUM_")}
    env.update(
        PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), str(SYNTHETIC)]),
        SOURCESUM_SCORES_DIR=str(tmp_path / "scores"),
        SOURCESUM_CACHE_DIR=str(tmp_path / "cache"),
        HF_HUB_OFFLINE="1",
    )
    return env


def real_data_missing() -> str | None:
    """Why the real SourceSum data cannot be read locally, or None when it can."""
    from sourcesum.data import dataset
    from sourcesum.data.sources import local_copy

    sourcesum = dataset("sourcesum")
    for spec in sourcesum.splits:
        if not sourcesum.available(spec):
            return f"SourceSum split {spec.name} has no local copy (set SOURCESUM_DATA_DIR)"
    published = sourcesum.sources()["sourcesum-published"]
    for name in published.files:
        if local_copy(published.file(name)) is None:
            return f"published file {name} has no local copy (set SOURCESUM_PUBLISHED_DIR)"
    return None


def dataset_missing(name: str, variable: str) -> str | None:
    """Why dataset ``name``'s splits cannot be read here (None when every split has a local
    copy); ``variable`` is the environment variable that locates them."""
    from sourcesum.data import dataset

    ds = dataset(name)
    for spec in ds.splits:
        if not ds.available(spec):
            return f"{ds.title} split {spec.name} has no local copy (set {variable})"
    return None


def skip_or_fail_without(missing: str | None) -> None:
    """A real-data test without its data: skipped, or failed under SOURCESUM_REQUIRE_DATA=1."""
    import pytest

    if missing is None:
        return
    if os.environ.get("SOURCESUM_REQUIRE_DATA") == "1":
        pytest.fail(f"real_data test without data: {missing}")
    from support.skips import skip_group

    skip_group(missing, __file__)
