#!/usr/bin/env bash
# Set up (idempotent), then run the test suite. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh
# The example plugin, which tests/test_examples.py drives through the CLI (its own tests run too).
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
