#!/usr/bin/env bash
# Create/refresh the peer virtualenv used to benchmark other k-anonymity tools
# (pycanon, optionally anjana, suda, microaggregation, anonypy and project-lighthouse-anonymize)
# alongside anonlab. Idempotent.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VENV="$(cd "$HERE/.." && pwd)/.peer-venv"
PY="${PYTHON:-python3}"

if [ ! -x "$VENV/bin/python" ]; then
    echo "[setup_peers] creating $VENV"
    "$PY" -m venv "$VENV"
else
    echo "[setup_peers] reusing $VENV"
fi

PIP=("$VENV/bin/python" -m pip --disable-pip-version-check -q)

# Required peers: fail hard if these do not install.
"${PIP[@]}" install "pycanon==1.3.5" pandas

# Optional peers: warn and continue on failure.
if ! "${PIP[@]}" install "anjana==1.2.3"; then
    echo "[setup_peers] WARNING: could not install 'anjana'; continuing without it" >&2
fi
# suda: the SUDA of the ONS Data Science Campus (pandas), beside bench_suda.py.
if ! "${PIP[@]}" install "suda==0.2.2"; then
    echo "[setup_peers] WARNING: could not install 'suda'; continuing without it" >&2
fi

# microaggregation: a C++ dynamic program (the least SSE of consecutive groups of k..2k-1
# records in a given order), beside bench_microaggregation.py.
if ! "${PIP[@]}" install "microaggregation==0.1.9"; then
    echo "[setup_peers] WARNING: could not install 'microaggregation'; continuing without it" >&2
fi
# anonypy and project-lighthouse-anonymize: Mondrian in Python, beside bench_families.py
# (benchmarks/peers/mondrian_peers.py).
if ! "${PIP[@]}" install "anonypy==0.2.1"; then
    echo "[setup_peers] WARNING: could not install 'anonypy'; continuing without it" >&2
fi
if ! "${PIP[@]}" install "project-lighthouse-anonymize==1.0.0"; then
    echo "[setup_peers] WARNING: could not install 'project-lighthouse-anonymize'; continuing without it" >&2
fi

"$VENV/bin/python" - <<'PY'
from importlib.metadata import version, PackageNotFoundError
for name in ("pycanon", "pandas", "anjana", "suda", "microaggregation", "anonypy",
             "project-lighthouse-anonymize"):
    try:
        print(f"[setup_peers] {name} {version(name)}")
    except PackageNotFoundError:
        print(f"[setup_peers] {name} NOT INSTALLED")
PY
echo "[setup_peers] python: $VENV/bin/python"
