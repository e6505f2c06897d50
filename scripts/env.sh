# Sourced by the entry scripts: activate the venv and find the data.
# shellcheck disable=SC1091
. .venv/bin/activate
# Use a local copy of SourceSum beside the checkout when there is one (our machines have no
# internet); otherwise the harness looks in data/sourcesum, then downloads the pinned files.
if [ -z "${SOURCESUM_DATA_DIR:-}" ] && [ -d ../shared/sourcesum ]; then
  SOURCESUM_DATA_DIR="$(cd ../shared/sourcesum && pwd)"
  export SOURCESUM_DATA_DIR
fi
# Likewise for the paper's published per-sentence outputs (never committed).
if [ -z "${SOURCESUM_PUBLISHED_DIR:-}" ] && [ -d ../shared/sourcesum-published ]; then
  SOURCESUM_PUBLISHED_DIR="$(cd ../shared/sourcesum-published && pwd)"
  export SOURCESUM_PUBLISHED_DIR
fi
# Likewise for the WiCE and QMSum-evidence datasets (folders laid out like ../shared/wice and
# ../shared/qmsum-evidence; otherwise data/wice, data/qmsum, then the pinned downloads).
if [ -z "${SOURCESUM_WICE_DIR:-}" ] && [ -d ../shared/wice ]; then
  SOURCESUM_WICE_DIR="$(cd ../shared/wice && pwd)"
  export SOURCESUM_WICE_DIR
fi
if [ -z "${SOURCESUM_QMSUM_DIR:-}" ] && [ -d ../shared/qmsum-evidence ]; then
  SOURCESUM_QMSUM_DIR="$(cd ../shared/qmsum-evidence && pwd)"
  export SOURCESUM_QMSUM_DIR
fi
export HF_HUB_OFFLINE="${HF_HUB_OFFLINE:-1}" TOKENIZERS_PARALLELISM=false
