"""Shared fixtures and markers.

The tests mirror the package: ``tests/<folder>/test_<module>.py`` tests the module
``sourcesum.<folder>.<module>`` (``tests/rankers/`` tests ``sourcesum.rankers``), ``tests/e2e``
holds the end-to-end suites and ``tests/architecture`` the checks of the import layers. Helpers
that more than one file uses live in ``tests/support``, imported as ``support.*``: pyproject.toml
puts ``tests`` on the path and imports test files with ``--import-mode=importlib`` (so two
folders may hold test files of one name, and no folder needs an ``__init__.py``).

Unit tests run on the synthetic datasets in ``tests/fixtures/synthetic`` (registered here, as a
plugin would register them), so they need no downloaded data and no network. Tests marked
``real_data`` read the real SourceSum files and the paper's published outputs, found only where
the harness itself looks (``$SOURCESUM_DATA_DIR`` / ``data/sourcesum``, and
``$SOURCESUM_PUBLISHED_DIR`` / ``data/published``; ``scripts/test.sh`` points the variables at
``../shared``): without them those tests are skipped, or fail when ``SOURCESUM_REQUIRE_DATA=1``
(CI). Nothing here looks for ``../shared`` itself.
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
from pathlib import Path

import pytest
from support.data import SYNTHETIC

# pytest rewrites the asserts of every test module it imports (an AST pass over ~100 files, about
# half the CPU time of collection) and keeps the result as a .pyc in __pycache__, unless bytecode
# writing is off: where PYTHONDONTWRITEBYTECODE is set, as on the project's machines, each run
# rewrote every module again. __pycache__ is git-ignored.
sys.dont_write_bytecode = False

# A full garbage collection walks every object the libraries the tests import hold (PyTorch,
# transformers, scikit-learn: about 0.2 CPU s each time once they are loaded), while the tests'
# own cyclic garbage is small: full collections ten times rarer than Python's default (after 100
# young-generation collections, not 10) cut the fast loop's time in the collector from 4.6 to
# 2.2 CPU s (measured with gc.callbacks), at no cost to what any test asserts.
gc.set_threshold(700, 10, 100)

# pytest-xdist's workers share the machine's cores, while each worker's BLAS (numpy's OpenBLAS)
# and PyTorch thread pools default to every core: on 2 cores, 2 workers ran 4 threads that spin
# against each other. Each worker gets its share of the cores unless OMP_NUM_THREADS says
# otherwise; set here, before anything imports numpy or torch (which read it when they load).
_workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT") or 0)
if _workers > 0:
    os.environ.setdefault("OMP_NUM_THREADS", str(max(1, len(os.sched_getaffinity(0)) // _workers)))

if str(SYNTHETIC) not in sys.path:
    sys.path.insert(0, str(SYNTHETIC))
import synthetic_datasets  # noqa: E402,F401  (registers synthnews and synthclaims)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Caches and the memo key (sourcesum.util.memo) of the tests' own, never the user's ~/.cache/sourcesum
# and ~/.config/sourcesum (unless the variables name others, as CI's does): the same folders in
# every session, so what an earlier session kept (memo records, dequantized models) stays usable.
TEST_HOME = Path(tempfile.gettempdir()) / f"sourcesum-tests-{os.getuid()}"
os.environ.setdefault("SOURCESUM_CACHE_DIR", str(TEST_HOME / "cache"))
os.environ.setdefault("SOURCESUM_CONFIG_DIR", str(TEST_HOME / "config"))


def pytest_configure(config: pytest.Config) -> None:
    """The fast loop (``-m "not slow"``) runs property tests on fewer examples
    (tests/support/properties.py) and torch on one thread unless ``OMP_NUM_THREADS`` says otherwise: its tiny models gain
    nothing from a second thread, and on cores shared with other jobs two threads spin against
    them (a tiny-model test took 29 s with two threads, 5.7 s with one, at load average 2.5)."""
    if "not slow" in (config.getoption("markexpr") or ""):
        os.environ["SOURCESUM_QUICK_TESTS"] = "1"
        os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """Skips shared by a group of tests are reported once per group (support/skips.py)."""
    from support.skips import fold

    report = yield
    fold(report, call)
    return report


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("real_data") is None:
        return
    from support.data import real_data_missing, skip_or_fail_without

    skip_or_fail_without(real_data_missing())


@pytest.fixture(scope="session")
def committed_render(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    """The committed board rendered once per run from an empty memo folder, shared by the
    workers (support/committed.py): the result, and the memo folder for warm renders."""
    from support.committed import render_committed_once, run_root

    return render_committed_once(run_root(tmp_path_factory.getbasetemp()))


@pytest.fixture(autouse=True, scope="session")
def own_user_store(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The tests' user score store, unless ``SOURCESUM_SCORES_DIR`` names one: a folder of this
    run (shared by its tests and the processes they start), never the user's
    ``~/.local/share/sourcesum/scores``. Unlike the caches above it starts empty every run, since
    what it holds decides numbers (``scores_dir`` gives a test one of its own)."""
    os.environ.setdefault("SOURCESUM_SCORES_DIR", str(tmp_path_factory.mktemp("user-scores")))


@pytest.fixture(autouse=True)
def fresh_memo_notes() -> None:
    """Each test sees the memo's one-per-command notes afresh."""
    from sourcesum.util import memo

    memo.reset_notes()


@pytest.fixture
def scores_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty user score store, exported as $SOURCESUM_SCORES_DIR for the CLI, over an empty
    stand-in for the committed store (so tests compute instead of reading data/scores)."""
    from sourcesum import paths

    path = tmp_path / "scores"
    path.mkdir()
    monkeypatch.setenv("SOURCESUM_SCORES_DIR", str(path))
    monkeypatch.setattr(paths, "COMMITTED_SCORES_DIR", tmp_path / "committed")
    return path


@pytest.fixture
def data_dir() -> Path:
    return Path(os.environ["SOURCESUM_DATA_DIR"])
