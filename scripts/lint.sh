#!/usr/bin/env bash
# Quality gates (CI runs this): ruff lint + format check, and mypy --strict over the whole
# package (benchmark/ and rankers/). mypy cannot follow the package-dir mapping of an editable
# install, so it checks a tree of symlinks laid out as the installed package
# (build/typecheck/sourcesum/...).
set -euo pipefail
cd "$(dirname "$0")/.."
. .venv/bin/activate
python -m pip install -q "ruff==0.17.6" "mypy==2.4.1" 2>/dev/null || python -m pip install -q ruff mypy
ruff check benchmark rankers tests scripts examples 2>/dev/null || ruff check benchmark rankers tests scripts
ruff format --check benchmark rankers tests scripts
tree=build/typecheck
rm -rf "$tree" && mkdir -p "$tree/sourcesum"
for f in benchmark/*; do ln -s "$PWD/$f" "$tree/sourcesum/$(basename "$f")"; done
ln -s "$PWD/rankers" "$tree/sourcesum/rankers"
mypy
