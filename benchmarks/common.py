"""Shared helpers of the anonlab benchmark scripts (not part of the package).

* where the shared data sets live (``ANONLAB_SHARED`` overrides the default),
* the UCI Adult layout and a loader of its 30,162 complete rows,
* a best-of-N timer, peak-RSS readers, machine information and the result writer,
* a plain-text table printer.

Run the benchmarks with the project interpreter, e.g.
``/work/main/.venv/bin/python benchmarks/bench_adult_diagnosis.py``.
"""

from __future__ import annotations

import csv
import datetime as _dt
import gc
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

HERE = Path(__file__).resolve().parent
PROJECT = HERE.parent
RESULTS = HERE / "results"
CACHE = HERE / ".cache"
PEERS = HERE / "peers"
PEER_VENV = HERE / ".peer-venv"
PEER_PYTHON = PEER_VENV / "bin" / "python"

T = TypeVar("T")
#: Load average when the benchmark started (other processes may share the machine).
_LOAD_AT_START = list(os.getloadavg()) if hasattr(os, "getloadavg") else None

# ----------------------------------------------------------------------------- data
ADULT_NAMES: tuple[str, ...] = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status",
    "occupation", "relationship", "race", "sex", "capital-gain", "capital-loss",
    "hours-per-week", "native-country", "income",
)  # fmt: skip
#: The 8 usual quasi-identifiers of Adult (2^8 - 1 = 255 non-empty subsets).
ADULT_QI: tuple[str, ...] = (
    "age", "workclass", "education", "marital-status", "occupation", "race", "sex",
    "native-country",
)  # fmt: skip
ADULT_COMPLETE_ROWS = 30_162


def shared_dir() -> Path:
    """Directory of the shared data sets: ``$ANONLAB_SHARED`` or ``<project>/../shared``."""
    env = os.environ.get("ANONLAB_SHARED")
    path = Path(env).expanduser() if env else PROJECT.parent / "shared"
    if not path.is_dir():
        die(
            f"shared data directory not found: {path}\n"
            "Set ANONLAB_SHARED to the directory that holds datasets/adult/ and "
            "datasets/census-income-kdd/."
        )
    return path


def shared_file(*parts: str) -> Path:
    """A file under the shared directory; exit with a clear message if it is missing."""
    path = shared_dir().joinpath(*parts)
    if not path.is_file():
        die(f"data file not found: {path}\n(see {path.parent / 'README.md'} for its origin)")
    return path


def adult_csv_options() -> Any:
    """How to parse the raw UCI ``adult.data`` (no header, ``", "`` separated, ``?`` = null)."""
    from anonlab import CsvOptions

    return CsvOptions(separator=",", header=False, names=ADULT_NAMES, strip=True, na_values=("?",))


def load_adult_complete() -> Any:
    """Read ``adult.data`` with anonlab and drop the rows with a null (must give 30,162)."""
    from anonlab import read_table

    table = read_table(
        shared_file("datasets", "adult", "adult.data"), csv_options=adult_csv_options()
    ).drop_nulls()
    assert table.n_rows == ADULT_COMPLETE_ROWS, (
        f"expected {ADULT_COMPLETE_ROWS} complete Adult rows, got {table.n_rows}"
    )
    return table


def write_table_csv(table: Any, path: Path, columns: Sequence[str] | None = None) -> Path:
    """Write an anonlab EncodedTable as a plain CSV with a header (labels, no nulls expected)."""
    cols = list(columns) if columns is not None else list(table.names)
    values = [table.column(c).labels() for c in cols]
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(cols)
        w.writerows(zip(*values))
    return path


# ----------------------------------------------------------------------------- ARX
#: Where ../shared/tools/arx/build.sh builds ARX 3.9.2 and its harnesses by default.
ARX_BUILD = Path("/tmp/arx")


def arx_classpath(where: str | Path = "auto") -> str | None:
    """ARX 3.9.2's class path (its classes, jars and harnesses), or None where it is not built.

    ``where`` is ``"auto"`` (``$ARX_CP``, else the build in :data:`ARX_BUILD`), a build
    directory (build.sh's ``WORK``: it holds ``harness/`` and ``arx-classes/``) or a class
    path. None too when ``java`` is not on the PATH.
    """
    if shutil.which("java") is None:
        return None
    where = str(where)
    if where == "auto":
        if os.environ.get("ARX_CP"):
            return os.environ["ARX_CP"]
        where = str(ARX_BUILD)
    build = Path(where)
    if not build.is_dir():
        return where if ":" in where else None  # a class path as given
    if not (build / "harness").is_dir() or not (build / "arx-classes").is_dir():
        return None
    script = shared_dir() / "tools" / "arx" / "build.sh"
    printed = subprocess.run(
        ["bash", str(script), "--print-cp"],
        capture_output=True,
        text=True,
        env={**os.environ, "WORK": str(build)},
    )
    found = re.search(r"ARX_CP=['\"]?([^'\"\n]+)", printed.stdout)
    return found.group(1) if printed.returncode == 0 and found else None


# ----------------------------------------------------------------------------- timing
def best_of(
    fn: Callable[[], T], repeat: int = 5, setup: Callable[[], Any] | None = None
) -> tuple[float, list[float], T]:
    """Run ``fn`` ``repeat`` times; return (best seconds, all seconds, last result).

    ``setup`` (untimed) runs before each call. A garbage collection runs before each timed call
    so that one run's garbage is not charged to the next.
    """
    times: list[float] = []
    result: Any = None
    for _ in range(repeat):
        if setup is not None:
            setup()
        gc.collect()
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return min(times), times, result


def peak_rss_mib(who: str = "self") -> float:
    """Peak resident set size in MiB of this process (``"self"``) or its waited-for children.

    For ``"self"`` on Linux this is ``VmHWM`` of /proc/self/status: the high-water mark of this
    process's own address space. ``getrusage(RUSAGE_SELF).ru_maxrss`` is *not* used there
    because Linux carries it over ``fork`` + ``exec``: a child started by a big parent reports
    at least the parent's peak (see :func:`ru_maxrss_mib`).
    """
    if who == "self":
        try:
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            pass
    return ru_maxrss_mib(who)


def ru_maxrss_mib(who: str = "self") -> float:
    """``getrusage(...).ru_maxrss`` in MiB (inherited across fork + exec on Linux)."""
    which = resource.RUSAGE_SELF if who == "self" else resource.RUSAGE_CHILDREN
    kb = resource.getrusage(which).ru_maxrss  # KiB on Linux, bytes on macOS
    return kb / 2**20 if sys.platform == "darwin" else kb / 1024


# ----------------------------------------------------------------------------- reporting
def machine_info() -> dict[str, Any]:
    """Facts that make numbers comparable: CPUs, memory, load, versions, date."""
    import anonlab

    info: dict[str, Any] = {
        "date": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        "cpu_count": os.cpu_count(),
        "cpu_affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "cpu_model": _cpu_model(),
        "mem_total_gib": _mem_total_gib(),
        "load_avg_1_5_15_at_start": _LOAD_AT_START,
        "load_avg_1_5_15_at_end": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "platform": platform.platform(),
        "python": platform.python_version(),
        "python_executable": sys.executable,
        "anonlab": anonlab.__version__,
        "git": _git_state(),
    }
    for mod in ("numpy", "pyarrow", "duckdb", "pandas"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception:  # pragma: no cover - optional dependency
            info[mod] = None
    return info


def _git_state() -> str | None:
    """``<short commit>`` plus ``+dirty`` when src/ has uncommitted changes."""
    import subprocess

    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=PROJECT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--", "src"],
            cwd=PROJECT,
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None
    return head + ("+dirty" if dirty else "")


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def _mem_total_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    except OSError:
        pass
    return None


def write_results(name: str, payload: dict[str, Any]) -> Path:
    """Write ``benchmarks/results/<name>.json`` with machine information added."""
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / f"{name}.json"
    doc = {"benchmark": name, "machine": machine_info(), **payload}
    path.write_text(json.dumps(doc, indent=2) + "\n")
    return path


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> None:
    """Print a plain, aligned text table."""
    cells = [[str(h) for h in headers]] + [[_cell(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    if title:
        print(f"\n{title}")
    line = "  ".join("-" * w for w in widths)
    for j, r in enumerate(cells):
        print(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))
            )
        )
        if j == 0:
            print(line)


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4f}" if v < 10 else f"{v:.2f}"
    return str(v)


def verdict(ok: bool) -> str:
    """``PASS`` or ``FAIL``."""
    return "PASS" if ok else "FAIL"


def goal(value: float, limit: float, *, inclusive: bool = False) -> dict[str, Any]:
    """A goal's record: the value, the limit and whether the value is under it (or at it,
    with ``inclusive``)."""
    return {"value": value, "goal": limit, "pass": value <= limit if inclusive else value < limit}


def print_goals(goals: dict[str, dict[str, Any]], digits: int = 1) -> None:
    """Print each goal (see :func:`goal`) with its verdict."""
    print("\nGoals")
    for name, g in goals.items():
        print(f"  {verdict(g['pass'])}  {name}: {g['value']:,.{digits}f} (goal {g['goal']:,})")


def run_json_child(cmd: list[str]) -> dict[str, Any]:
    """Run a benchmark's child process; return the JSON of its last stdout line, timed.

    The result gets ``process_wall_s``, the child's whole wall time (start-up included).
    """
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        die(f"child failed ({p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    doc: dict[str, Any] = json.loads(p.stdout.strip().splitlines()[-1])
    doc["process_wall_s"] = wall
    return doc


def die(message: str, code: int = 2) -> NoReturn:
    """Print ``message`` to stderr and exit."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(code)
