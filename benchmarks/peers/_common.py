"""Shared CLI/IO helpers for the peer-runner scripts (stdlib + pandas only)."""

import argparse
import json

import pandas as pd


def parse_args(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--csv", required=True, help="CSV file with a header row")
    ap.add_argument(
        "--subsets-json", required=True, help="JSON file: list of lists of column names"
    )
    ap.add_argument("--sep", default=",", help="CSV field separator (default ,)")
    ap.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="run the whole subset loop this many times; 'seconds' is the best (minimum) run",
    )
    args = ap.parse_args()
    if args.repeat < 1:
        ap.error("--repeat must be >= 1")
    return args


def load(args):
    df = pd.read_csv(args.csv, sep=args.sep, dtype=str, keep_default_na=False)
    with open(args.subsets_json) as fh:
        subsets = json.load(fh)
    if not isinstance(subsets, list) or not all(
        isinstance(s, list) and s and all(isinstance(c, str) for c in s) for s in subsets
    ):
        raise SystemExit("subsets JSON must be a list of non-empty lists of column names")
    missing = sorted({c for s in subsets for c in s} - set(df.columns))
    if missing:
        raise SystemExit(f"columns not in CSV header: {missing}")
    return df, subsets


def emit(tool, version, subsets, times, ks, n_rows):
    print(
        json.dumps(
            {
                "tool": tool,
                "version": version,
                "n_subsets": len(subsets),
                "seconds": min(times),
                "k": ks,
                "n_rows": n_rows,
                "repeat": len(times),
                "all_seconds": times,
            }
        )
    )
