#!/usr/bin/env python3
"""The time to make the HTML report of UCI Adult (issue 32).

The bundled Adult without its rows with a ``?`` (30,162 rows), S = its 8 quasi-identifiers.
Timed, best of N, in one process after a warm-up (matplotlib's first import and font cache
are not charged): gathering the answers (``anonlab.api.report_data``: profile, Q2, risk,
Q11, Q4, Q3, the sets that single people out; with the job also check, anonymize and the
release's profile), drawing and laying out (``anonlab.report.html.render``), and the whole
``anonlab.report(..., output=...)``; without a job and with ``examples/adult_k5.yaml``. The
command ``anonlab report ... --drop-missing`` is timed as a fresh process (imports included).

    .venv/bin/python benchmarks/bench_report.py [--repeat N]

Writes benchmarks/results/report_adult.json.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import print_table  # noqa: E402

import anonlab  # noqa: E402
from anonlab import api  # noqa: E402
from anonlab.report.html import render  # noqa: E402

JOB = common.PROJECT / "examples" / "adult_k5.yaml"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    table = anonlab.load_adult()
    qi = list(api.ADULT_QUASI_IDENTIFIERS)
    assert table.n_rows == common.ADULT_COMPLETE_ROWS
    out = Path(tempfile.mkdtemp()) / "report.html"
    rows = []
    payload: dict[str, object] = {"rows": table.n_rows, "quasi_identifiers": qi, "cases": {}}
    for case, job in (("diagnosis", None), ("diagnosis + job adult_k5", JOB)):
        render(api.report_data(table, quasi_identifiers=qi, job=job))  # warm-up
        gather, _, data = common.best_of(
            lambda job=job: api.report_data(table, quasi_identifiers=qi, job=job), args.repeat
        )
        draw, _, text = common.best_of(lambda data=data: render(data), args.repeat)
        whole, _, _ = common.best_of(
            lambda job=job: anonlab.report(table, quasi_identifiers=qi, job=job, output=out),
            args.repeat,
        )
        cmd = [sys.executable, "-m", "anonlab", "report", str(api.adult_path()), "--qi"]
        cmd += [",".join(qi), "--drop-missing", "--output", str(out)]
        if job is not None:
            cmd += ["--job", str(job)]
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, capture_output=True)
            times.append(time.perf_counter() - t0)
        command = min(times)
        rows.append([case, gather, draw, whole, command, f"{len(text) / 1024:.0f} KiB"])
        payload["cases"][case] = {  # type: ignore[index]
            "gather_s": gather,
            "render_s": draw,
            "report_s": whole,
            "command_s": command,
            "html_bytes": len(text),
        }
    print_table(
        ["case", "answers (s)", "render (s)", "anonlab.report (s)", "command (s)", "size"],
        rows,
        title=f"HTML report of UCI Adult, {table.n_rows:,} rows, 8 quasi-identifiers "
        f"(best of {args.repeat})",
    )
    print(common.write_results("report_adult", payload))


if __name__ == "__main__":
    main()
