"""Collecting the fast loop imports none of the heavy libraries: PyTorch, scikit-learn, SciPy,
Hugging Face datasets and the openai client are imported by the tests that call them, when they
run, so that ``pytest --collect-only`` (and every run's collection) stays a few CPU seconds."""

from __future__ import annotations

import subprocess
import sys

import pytest
from sourcesum.paths import PROJECT_ROOT

HEAVY = ("torch", "transformers", "sklearn", "scipy", "datasets", "openai")

_COLLECT = """
import sys
import pytest
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # `import name` fails: collection must not need it
sys.exit(pytest.main(["--collect-only", "-q", "-p", "no:cacheprovider", "-m", "not slow and not real_data",
                      "--ignore=tests/e2e/test_llm_server.py"]))
"""


@pytest.mark.slow  # collects the whole suite in a subprocess (~3 s)
def test_collecting_the_fast_loop_imports_no_heavy_library():
    done = subprocess.run(
        [sys.executable, "-c", _COLLECT, ",".join(HEAVY)],
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    errors = [line for line in done.stdout.splitlines() if line.startswith("ERROR")]
    assert done.returncode == 0 and not errors, "\n".join(errors) or done.stdout[-3000:] + done.stderr[-3000:]
