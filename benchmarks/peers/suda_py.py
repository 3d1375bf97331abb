#!/usr/bin/env python3
"""Time the ``suda`` package (ONS Data Science Campus, pandas) on a CSV's quasi-identifiers.

Run with the peer venv (benchmarks/.peer-venv/bin/python, see setup_peers.sh):
    python suda_py.py --csv data.csv --columns a,b,c --max-msu 4 [--repeat 1]
Prints one JSON object:
    {"tool": "suda", "version": ..., "seconds": ..., "msu": [...], "n_rows": ..., ...}
"seconds" covers only suda.suda() (CSV reading excluded); with --repeat N it is the minimum
over N runs. "msu" is, per row in the file's order, the size of its smallest unique
attribute set of at most --max-msu attributes (0: none): the package's "msu" column. (The
package scores every unique set, minimal or not, so its "suda" scores are not sdcMicro's.)
"""

import argparse
import json
import time
from importlib.metadata import version

import pandas as pd
from suda import suda


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--columns", required=True, help="comma-separated quasi-identifiers")
    ap.add_argument("--max-msu", type=int, required=True)
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    columns = args.columns.split(",")
    source = pd.read_csv(args.csv, dtype=str, keep_default_na=False)
    times, result = [], None
    for _ in range(args.repeat):
        df = source[columns].copy()  # (suda() converts the columns in place)
        t0 = time.perf_counter()
        result = suda(df, max_msu=args.max_msu, columns=columns)
        times.append(time.perf_counter() - t0)
    msu = result.sort_index()["msu"].fillna(0).astype(int).tolist()
    print(
        json.dumps(
            {
                "tool": "suda",
                "version": version("suda"),
                "seconds": min(times),
                "all_seconds": times,
                "repeat": len(times),
                "n_rows": len(source),
                "msu": msu,
            }
        )
    )


if __name__ == "__main__":
    main()
