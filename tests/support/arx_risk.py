"""ARX 3.9.2's risk estimates of a table (the ``ArxRisk`` harness of ../shared/tools/arx).

``arx_classpath()`` is the class path of a built ARX (``$ARX_CP``, else the one ``build.sh
--print-cp`` prints once /tmp/arx/harness/ArxRisk.class exists), or None; tests that need ARX
skip where it is None.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

HARNESS = Path("/tmp/arx/harness/ArxRisk.class")


@cache
def arx_classpath(shared: Path) -> str | None:
    if os.environ.get("ARX_CP"):
        return os.environ["ARX_CP"]
    build = shared / "tools" / "arx" / "build.sh"
    if not (HARNESS.exists() and build.exists() and shutil.which("java")):
        return None
    printed = subprocess.run(
        ["bash", str(build), "--print-cp"], capture_output=True, text=True, check=False
    ).stdout
    found = re.search(r"ARX_CP=['\"]?([^'\"\n]+)", printed)
    return found.group(1) if found else None


def arx_risk(
    classpath: str, data: Path, qis: list[str], fraction: float, *, sep: str = ","
) -> dict[str, Any]:
    """ARX's JSON for ``data`` under ``qis`` at ``fraction`` (risk threshold 0.2)."""
    out = subprocess.run(
        [
            "java",
            "-cp",
            classpath,
            "ArxRisk",
            "--data",
            str(data),
            "--sep",
            sep,
            "--qis",
            ",".join(qis),
            "--fraction",
            repr(fraction),
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    ).stdout
    line = [text for text in out.splitlines() if text.startswith("{")][-1]
    result: dict[str, Any] = json.loads(line)
    return result
