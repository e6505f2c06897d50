#!/usr/bin/env bash
# Set up the core package only (idempotent; no extras: rendering the board imports none of them,
# so a fresh clone installs no torch and skips the llm extra's llama.cpp build), then regenerate
# leaderboard.md from the committed scores in data/scores. Extra arguments go to `sourcesum
# leaderboard`.
# To recompute scores first, set up everything the rankers need (`bash scripts/setup.sh`: the LM
# rankers need the lm extra, learned the learned one), then: sourcesum run --ranker NAME --split all
# (cached, resumable). SOURCESUM_SETUP_DRY_RUN=1 prints the set-up commands and the board command
# instead of running them (see scripts/setup.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --extras none
if [ -n "${SOURCESUM_SETUP_DRY_RUN:-}" ] && [ "${SOURCESUM_SETUP_DRY_RUN}" != 0 ]; then
  echo "would run: sourcesum leaderboard $*"
  exit 0
fi
. scripts/env.sh
sourcesum leaderboard "$@"
