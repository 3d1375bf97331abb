# Sourced by scripts/demo, scripts/test and scripts/docs: create or update .venv at the repository root.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
PY="${PYTHON:-}"
if [ -z "$PY" ]; then
  for cand in python3.13 python3.12 python3.11 python3; do
    if command -v "$cand" >/dev/null 2>&1 && "$cand" -c "import sys; sys.exit(sys.version_info < (3, 11))" 2>/dev/null; then
      PY="$cand"; break
    fi
  done
fi
if [ -z "$PY" ]; then
  echo "anonlab needs Python >= 3.11; none found (set PYTHON=/path/to/python3.11)." >&2
  exit 1
fi
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
EXTRAS="${1:-}"
STAMP=".venv/.anonlab-installed${EXTRAS:+-$EXTRAS}"
if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${EXTRAS:+[$EXTRAS]}"
  .venv/bin/python -m compileall -q src >/dev/null || true  # byte-code even when PYTHONDONTWRITEBYTECODE is set
  touch "$STAMP"
fi
