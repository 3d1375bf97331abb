"""Peer child of bench_microaggregation.py: the PyPI package ``microaggregation`` (0.1.9, C++).

The package computes, by dynamic programming, the least SSE of a partition of the records IN
THE ORDER GIVEN into consecutive groups of k to 2k - 1 records (it returns the SSE only, not
the groups). On values sorted in one dimension that is the optimal univariate
microaggregation (Hansen & Mukherjee 2003); on records sorted by a projection it is a
projection-based microaggregation. Run in the peer venv:

    .peer-venv/bin/python microaggregation_sse.py POINTS.npy K

prints one JSON line: the SSE, the total sum of squares (SST), and the seconds of each call.
"""

import json
import sys
import time

import numpy as np
from microaggregation import calculate_sse_dynamic, calculate_total_variance


def main() -> None:
    points = np.ascontiguousarray(np.load(sys.argv[1]), dtype=np.float64)
    k = int(sys.argv[2])
    t0 = time.perf_counter()
    sse = calculate_sse_dynamic(points, k)
    t1 = time.perf_counter()
    sst = calculate_total_variance(points)
    t2 = time.perf_counter()
    print(json.dumps({"sse": sse, "sst": sst, "sse_s": t1 - t0, "sst_s": t2 - t1}))


if __name__ == "__main__":
    main()
