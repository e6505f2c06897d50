#!/usr/bin/env bash
# Set up (idempotent), then regenerate leaderboard.md from the committed scores in data/scores.
# To recompute scores first: sourcesum run --ranker NAME --split all (cached, resumable).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
. scripts/env.sh
sourcesum leaderboard "$@"
