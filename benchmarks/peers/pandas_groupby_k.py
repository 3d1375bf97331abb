#!/usr/bin/env python3
"""Baseline: k-anonymity per quasi-identifier subset via a plain pandas groupby.

Runs in any python with pandas:
    python pandas_groupby_k.py --csv data.csv --subsets-json subsets.json [--sep ,] [--repeat 1]
Prints one JSON object:
    {"tool": "pandas-groupby", "version": <pandas version>, "n_subsets": ..., "seconds": ..., "k": [...], ...}
"seconds" covers only the subset loop (CSV/JSON reading excluded); with
--repeat N it is the minimum over N runs (all runs are in "all_seconds").
"""

import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pandas as pd  # noqa: E402
from _common import emit, load, parse_args  # noqa: E402


def main():
    args = parse_args(__doc__)
    df, subsets = load(args)
    times, ks = [], None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        run = [int(df.groupby(list(s), dropna=False, sort=False).size().min()) for s in subsets]
        times.append(time.perf_counter() - t0)
        ks = run
    emit("pandas-groupby", pd.__version__, subsets, times, ks, len(df))


if __name__ == "__main__":
    main()
