#!/usr/bin/env python3
"""A 5-million-row anonymization end to end: reading, search, verification and writing (issue 27).

UCI Adult (the bundled file) repeated to 5,000,000 rows is written once as CSV into
``benchmarks/.cache/``; ``anonlab anonymize`` runs the bundled job ``examples/adult_k5.yaml``
(8 quasi-identifiers, 5-anonymity, 5 % suppression, non-monotonic entropy) on it in a fresh
process per format, and the script reports the process's wall time and peak RSS, with the
output as CSV, gzipped CSV and Parquet.

Reference: before issue 27 (commit a864f67) the same CSV run took 10.71 s and 1,956 MB, of
which about 6 s went to decoding labels row by row in ``io/writers.py`` (``values.tolist()``
and ``pa.array`` of Python strings); measured on this machine on 2026-11-25, byte-identical
output. The writer now gathers each column's labels from its codes in Arrow.

    .venv/bin/python benchmarks/bench_release_write.py [--repeat N]

Writes benchmarks/results/release_write.json.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import print_table  # noqa: E402

ROWS = 5_000_000
BEFORE = {"csv": (10.71, 1956.0)}
JOB = common.HERE.parent / "examples" / "adult_k5.yaml"
CHILD = """
import json, resource, sys, time
import anonlab
t0 = time.perf_counter()
res = anonlab.anonymize(sys.argv[1], sys.argv[2], output=sys.argv[3])
print(json.dumps({"anonymize_s": time.perf_counter() - t0, "search_s": res.elapsed_s,
                  "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "suppressed_rows": res.suppressed_rows, "loss": res.loss}))
"""


def data_file() -> Path:
    """The 5-million-row CSV (made once)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    path = common.HERE / ".cache" / "adult5m.csv"
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        adult = pcsv.read_csv(common.HERE.parent / "src" / "anonlab" / "datasets" / "adult.csv.gz")
        big = pa.concat_tables([adult] * (ROWS // adult.num_rows + 1)).slice(0, ROWS)
        pcsv.write_csv(big, path)
    return path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    data = data_file()
    out_dir = common.HERE / ".cache"
    rows, results = [], {}
    for fmt in ("csv", "csv.gz", "parquet"):
        best: dict | None = None
        for _ in range(args.repeat):
            out = out_dir / f"adult5m_k5.{fmt}"
            cmd = [sys.executable, "-c", CHILD, str(data), str(JOB), str(out)]
            doc = common.run_json_child(cmd)
            doc["output_bytes"] = out.stat().st_size
            if best is None or doc["process_wall_s"] < best["process_wall_s"]:
                best = doc
        assert best is not None
        results[fmt] = best
        before = BEFORE.get(fmt)
        rows.append(
            [
                fmt,
                f"{best['process_wall_s']:.2f}",
                f"{best['anonymize_s']:.2f}",
                f"{best['peak_mib']:,.0f}",
                "-" if before is None else f"{before[0]:.2f} s, {before[1]:,.0f} MB",
                f"{best['output_bytes'] / 1e6:,.0f} MB",
            ]
        )
    print_table(
        ["output", "process s", "anonymize() s", "peak MiB", "before (a864f67)", "output size"],
        rows,
        title=f"anonymize {ROWS:,} rows of Adult (examples/adult_k5.yaml)",
    )
    path = common.write_results(
        "release_write", {"rows": ROWS, "job": str(JOB), "results": results, "before": BEFORE}
    )
    print(f"\nwrote {path}")
    json.dumps(results)


if __name__ == "__main__":
    main()
