#!/usr/bin/env bash
# Build and check a release: the sdist and the wheel of the version pyproject.toml names, built
# from a clean checkout into dist/, checked with `twine check --strict`, their sha256 printed;
# with --tag, the annotated git tag v<version> on HEAD once every check passed.
#
#   bash scripts/release.sh            build and check (needs the release extra: build, twine)
#   bash scripts/release.sh --tag      the same, then tag HEAD v<version>
#
# Refuses (exit 2, one `error:` line) when the working tree has changes to tracked files, when
# CHANGELOG.md has no "## <version>" section, when the package's __version__ differs from
# pyproject.toml's, or when the tag exists already. Uploading is left to the maintainer
# (`twine upload dist/sourcesum_bench-<version>*`).
set -euo pipefail
cd "$(dirname "$0")/.."

tag=0
case "${1:-}" in
  "") ;;
  --tag) tag=1 ;;
  -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "error: unknown argument: $1 (usage: bash scripts/release.sh [--tag])" >&2; exit 2 ;;
esac

py=.venv/bin/python
[ -x "$py" ] || py=python3
version="$("$py" -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')"
package_version="$(sed -n 's/^__version__ = "\(.*\)"$/\1/p' benchmark/__init__.py)"
[ "$package_version" = "$version" ] \
  || { echo "error: benchmark/__init__.py says __version__ $package_version, pyproject.toml $version" >&2; exit 2; }
grep -q "^## $version\b" CHANGELOG.md \
  || { echo "error: CHANGELOG.md has no '## $version' section" >&2; exit 2; }
[ -z "$(git status --porcelain --untracked-files=no)" ] \
  || { echo "error: the working tree has uncommitted changes to tracked files: commit them first" >&2; exit 2; }
if [ "$tag" = 1 ] && git rev-parse -q --verify "refs/tags/v$version" >/dev/null; then
  echo "error: the tag v$version exists already" >&2; exit 2
fi
"$py" -c 'import build, twine' 2>/dev/null \
  || { echo "error: build and twine are missing: bash scripts/setup.sh --extras release" >&2; exit 2; }

# Build from an export of HEAD (what the package needs), so no untracked or ignored file gets in;
# build makes the sdist, then the wheel from the sdist (so the sdist is proven complete).
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
git archive --format=tar HEAD pyproject.toml README.md benchmark rankers data/manifest.json | tar -x -C "$work"
rm -f dist/sourcesum_bench-"$version"*
# The wheel's file times are HEAD's commit time, so rebuilding a commit gives the same wheel bytes
# (the sdist's gzip and PKG-INFO times still vary).
SOURCE_DATE_EPOCH="${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct HEAD)}"
export SOURCE_DATE_EPOCH
"$py" -m build --no-isolation --sdist --wheel --outdir "$PWD/dist" "$work" >/dev/null
"$py" -m twine check --strict dist/sourcesum_bench-"$version"*
sha256sum dist/sourcesum_bench-"$version"*

if [ "$tag" = 1 ]; then
  git tag -a "v$version" -m "sourcesum-bench $version"
  echo "tagged v$version on $(git rev-parse --short HEAD)"
fi
