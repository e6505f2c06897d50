"""The package as a wheel: pyproject.toml lists every subpackage; a wheel built from the checkout
holds every module and data file of ``benchmark/`` and ``rankers/`` (the templates and the site's
files included); installed into a fresh virtual environment, away from the checkout and its
editable install, every module of the installed ``sourcesum`` imports from there and renders
the committed board; the release (sdist, then the wheel built from it) passes ``twine check``.

The wheel is built (``pip wheel --no-deps --no-build-isolation``) from a copy of the package
folders and pyproject.toml, so the checkout's ``build/`` cannot leak stale files into it. The
fresh environment has no site packages of its own but the wheel; the libraries the package
imports come from this interpreter's site-packages, added by a ``.pth`` line (which, unlike a
site folder, runs none of the ``.pth`` files there: the editable install stays out). A module
whose import needs a library that is not installed here is skipped, naming the library; any
other failure fails."""

from __future__ import annotations

import json
import os
import shutil
import site
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
from sourcesum.paths import PROJECT_ROOT

FOLDERS = {"benchmark": "sourcesum", "rankers": "sourcesum/rankers"}
"""Source folder -> where its files go in the wheel (pyproject.toml's package-dir)."""

OPTIONAL = {"torch", "transformers", "sentence_transformers", "bert_score", "lexrank", "gguf", "openai"}
"""Libraries a module may need that an environment may lack (the LM rankers' and the judge's)."""

KNOWN_GAPS: dict[str, str] = {}
"""Modules known not to import from an installed wheel, and why: the test fails on any other
failure, and on one of these that imports (so the entry is removed with the fix)."""

_IMPORT_ALL = r"""
import importlib, importlib.util, json, pkgutil, sys
import sourcesum
optional = set(sys.argv[1].split(","))
imported, skipped, failed = ["sourcesum"], {}, {}
def walk_error(name):
    failed[name] = f"walking the package: {sys.exc_info()[1]!r}"
for info in pkgutil.walk_packages(sourcesum.__path__, "sourcesum.", onerror=walk_error):
    if info.name.rsplit(".", 1)[-1] == "__main__":  # runs the command line when imported
        continue
    try:
        importlib.import_module(info.name)
    except ImportError as exc:
        top = (exc.name or "").partition(".")[0]
        if top in optional and importlib.util.find_spec(top) is None:
            skipped[info.name] = top
        else:
            failed[info.name] = repr(exc)
    except Exception as exc:
        failed[info.name] = repr(exc)
    else:
        imported.append(info.name)
from sourcesum.outputs.templating import TEMPLATES
print(json.dumps({"file": sourcesum.__file__, "prefix": sys.prefix, "imported": imported,
                  "skipped": skipped, "failed": failed,
                  "templates": sorted(p.name for p in TEMPLATES.iterdir())}))
"""


def source_files() -> dict[str, Path]:
    """Every file of the package folders by its path in the wheel (caches left out)."""
    files = {}
    for folder, target in FOLDERS.items():
        root = PROJECT_ROOT / folder
        for path in sorted(root.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc":
                rel = path.relative_to(root)
                if folder == "benchmark" and rel.parts[0] == "rankers":
                    continue
                files[f"{target}/{rel.as_posix()}"] = path
    return files


def module_names() -> set[str]:
    """The dotted name of every module of the package, from its source files."""
    names = set()
    for name in source_files():
        if name.endswith(".py"):
            parts = name[: -len(".py")].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            names.add(".".join(parts))
    return names


def test_pyproject_lists_every_subpackage():
    """setuptools installs exactly the packages pyproject.toml lists: a folder left out is
    missing from the wheel, although the editable checkout imports it."""
    with open(PROJECT_ROOT / "pyproject.toml", "rb") as f:
        listed = set(tomllib.load(f)["tool"]["setuptools"]["packages"])
    packages = {
        name.rsplit("/", 1)[0].replace("/", ".") for name in source_files() if name.endswith("/__init__.py")
    }
    data_folders = {
        name.rsplit("/", 1)[0].replace("/", ".") for name in source_files() if not name.endswith(".py")
    }
    missing = sorted((packages | data_folders) - listed)
    assert not missing, f"pyproject.toml's [tool.setuptools] packages lacks {missing}"


def package_source(root: Path) -> Path:
    """``root/source``: a copy of what the package is built from (the package folders, caches
    left out and links kept, pyproject.toml, README.md and the data manifest they link to), as
    ``scripts/release.sh`` exports it from git, so the checkout's ``build/`` cannot leak in."""
    source = root / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for folder in FOLDERS:
        shutil.copytree(PROJECT_ROOT / folder, source / folder, ignore=ignore, symlinks=True)
    for name in ("pyproject.toml", "README.md", "data/manifest.json"):
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(PROJECT_ROOT / name, source / name)
    return source


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The wheel built from :func:`package_source`."""
    root = tmp_path_factory.mktemp("wheel")
    source = package_source(root)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q"]
        + ["-w", str(root / "dist"), str(source)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (path,) = (root / "dist").glob("sourcesum_bench-*.whl")
    return path


@pytest.mark.slow  # builds the wheel (~30 s on 2 busy cores)
def test_the_wheel_holds_every_module_and_data_file(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    missing = sorted(set(source_files()) - names)
    assert not missing, f"the wheel lacks {missing}"
    templates = {n for n in names if n.startswith("sourcesum/outputs/templates/")}
    assert {
        "sourcesum/outputs/templates/leaderboard.md.j2",
        "sourcesum/outputs/templates/site.css",
    } <= templates


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory) -> Path:
    """The python of a fresh virtual environment with the wheel installed in it (and this
    interpreter's libraries, not its editable checkout, after it)."""
    root = tmp_path_factory.mktemp("venv")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=300)
    python = venv / "bin" / "python"
    install = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q"]
        + ["--no-deps", "--force-reinstall", "--no-index", str(wheel)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    own = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    libraries = [p for p in site.getsitepackages() if Path(p).is_dir()]
    (own / "zz-outer-libraries.pth").write_text("".join(f"{p}\n" for p in libraries))
    return python


def run_installed(
    python: Path, cwd: Path, *argv: str, keep: tuple[str, ...] = ()
) -> subprocess.CompletedProcess[str]:
    """``python ARGV`` from ``cwd``, with no PYTHONPATH and none of the tests' settings but the
    ``SOURCESUM_*`` variables named in ``keep``."""
    env = {k: v for k, v in os.environ.items() if k in keep or not k.startswith(("SOURCESUM_", "PYTHON"))}
    env.update(PYTHONPATH="", PYTHONNOUSERSITE="1", HF_HUB_OFFLINE="1")
    return subprocess.run([str(python), *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


@pytest.mark.slow  # the wheel, a fresh environment, then every module imported there (~70 s)
def test_every_module_of_the_installed_package_imports(installed, tmp_path):
    done = run_installed(installed, tmp_path, "-c", _IMPORT_ALL, ",".join(sorted(OPTIONAL)))
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout)
    venv = Path(report["prefix"]).resolve()
    assert Path(report["file"]).resolve().is_relative_to(venv), (
        f"sourcesum was imported from {report['file']}, not from the wheel installed in {venv}"
    )
    gaps = {m: e for m, e in report["failed"].items() if m in KNOWN_GAPS}
    assert {m: e for m, e in report["failed"].items() if m not in gaps} == {}
    fixed = sorted(set(KNOWN_GAPS) - set(gaps))
    assert not fixed, f"{fixed} now import from the wheel: remove them from KNOWN_GAPS"
    for module, library in report["skipped"].items():
        print(f"skipped {module}: {library} is not installed")
    expected = {m for m in module_names() if not m.endswith("__main__")}
    assert set(report["imported"]) | set(report["skipped"]) | set(gaps) == expected
    assert set(report["templates"]) == {
        Path(name).name for name in source_files() if name.startswith("sourcesum/outputs/templates/")
    }
    if gaps:
        pytest.xfail("; ".join(f"{m} {KNOWN_GAPS[m]} ({e})" for m, e in gaps.items()))


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    """The folder holding the sdist and the wheel as ``scripts/release.sh`` builds them:
    ``python -m build --no-isolation`` on :func:`package_source`, which makes the sdist and then
    the wheel from the sdist."""
    root = tmp_path_factory.mktemp("release")
    source = package_source(root)
    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "build",
            "--no-isolation",
            "--sdist",
            "--wheel",
            "--outdir",
            str(root / "dist"),
        ]
        + [str(source)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return root / "dist"


@pytest.mark.slow  # the sdist, the wheel built from it, twine (~40 s on 2 busy cores)
def test_the_release_passes_twine_check_and_its_wheel_equals_the_direct_one(release, wheel):
    """The distributions ``scripts/release.sh`` makes pass ``twine check --strict`` (metadata and
    the README as the long description render), and the wheel built from the sdist holds the
    same files as the wheel built from the checkout: the sdist lacks nothing (the manifest,
    reached through a link in the checkout, included as a file)."""
    version = tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
        "version"
    ]
    sdist = release / f"sourcesum_bench-{version}.tar.gz"
    from_sdist = release / f"sourcesum_bench-{version}-py3-none-any.whl"
    assert sdist.is_file() and from_sdist.is_file(), sorted(p.name for p in release.iterdir())
    checked = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", str(sdist), str(from_sdist)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2, checked.stdout
    with zipfile.ZipFile(from_sdist) as a, zipfile.ZipFile(wheel) as b:
        assert sorted(a.namelist()) == sorted(b.namelist())
        manifest = "sourcesum/data/manifest.json"
        assert a.read(manifest) == (PROJECT_ROOT / "data" / "manifest.json").read_bytes()


PROVENANCE = ("- **Data**:", "- **Regenerate**:")
"""The board's two lines that say where it was read from, which differ by design between the
committed board and one rendered from another store or declaration path."""


@pytest.mark.slow  # renders the whole board from the installed wheel (seconds with the memo warm)
@pytest.mark.real_data
def test_the_installed_wheel_renders_the_committed_board(installed, tmp_path):
    """Installed from the wheel, with no checkout on its path, the package renders the committed
    board from the checkout's declaration and store: every line equal to ``leaderboard.md`` but
    the two provenance lines, and those name the same inputs sha256."""
    out = tmp_path / "leaderboard.md"
    done = run_installed(
        installed,
        tmp_path,
        "-m",
        "sourcesum",
        "leaderboard",
        "--declaration",
        str(PROJECT_ROOT / "leaderboard.toml"),
        "--scores-dir",
        str(PROJECT_ROOT / "data" / "scores"),
        "-o",
        str(out),
        keep=("SOURCESUM_DATA_DIR", "SOURCESUM_PUBLISHED_DIR", "SOURCESUM_WICE_DIR", "SOURCESUM_QMSUM_DIR")
        + ("SOURCESUM_CACHE_DIR", "SOURCESUM_CONFIG_DIR"),
    )
    assert done.returncode == 0, done.stderr[-3000:]
    committed = (PROJECT_ROOT / "leaderboard.md").read_text(encoding="utf-8").splitlines()
    rendered = out.read_text(encoding="utf-8").splitlines()
    assert [line for line in rendered if not line.startswith(PROVENANCE)] == [
        line for line in committed if not line.startswith(PROVENANCE)
    ]

    def inputs_sha256(lines: list[str]) -> list[str]:
        return [line.split("inputs sha256 `")[1][:64] for line in lines if line.startswith(PROVENANCE[0])]

    assert inputs_sha256(rendered) == inputs_sha256(committed) != []
    # no committed store lies beside an installed package: the board names only the one it read
    (data,) = [line for line in rendered if line.startswith(PROVENANCE[0])]
    assert "over the committed" not in data and "Scores are the files in `" in data, data
