#!/usr/bin/env python3
"""Time pycanon's k-anonymity over a list of quasi-identifier subsets.

Run with the peer venv (benchmarks/.peer-venv/bin/python, see setup_peers.sh):
    python pycanon_k.py --csv data.csv --subsets-json subsets.json [--sep ,] [--repeat 1]
Prints one JSON object:
    {"tool": "pycanon", "version": ..., "n_subsets": ..., "seconds": ..., "k": [...], ...}
"seconds" covers only the subset loop (CSV/JSON reading excluded); with
--repeat N it is the minimum over N runs (all runs are in "all_seconds").
"""

import os
import sys
import time
from importlib.metadata import version

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import emit, load, parse_args  # noqa: E402
from pycanon import anonymity  # noqa: E402


def main():
    args = parse_args(__doc__)
    df, subsets = load(args)
    times, ks = [], None
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        # signature: k_anonymity(data: pd.DataFrame, quasi_ident: list | np.ndarray) -> int
        run = [int(anonymity.k_anonymity(df, list(s))) for s in subsets]
        times.append(time.perf_counter() - t0)
        ks = run
    emit("pycanon", version("pycanon"), subsets, times, ks, len(df))


if __name__ == "__main__":
    main()
