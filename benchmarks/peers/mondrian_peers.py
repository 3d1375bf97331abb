#!/usr/bin/env python3
"""Run a Python Mondrian (anonypy or project-lighthouse-anonymize) on one job and measure it.

Run with the peer venv (benchmarks/.peer-venv/bin/python, see setup_peers.sh):
    echo '{...job...}' | python mondrian_peers.py

Input: one JSON object on stdin
    {"tool": "anonypy" | "lighthouse",
     "csv": "/path/data.csv",            # header row, every value read as a string
     "quasi_identifiers": ["age", ...],
     "numeric": ["age", ...],            # QIs read as numbers (the others are categories)
     "hierarchies": {"education": "/path/arx_hierarchy.csv" | null, ...},
     "k": 5}

Output: one JSON object on stdout
    {"tool", "version", "rows", "seconds": the tool's anonymization call (reading the CSV
     and measuring excluded), "peak_rss_mib": this process's high-water mark,
     "gcp": the common loss of the release, "suppressed_rows", "classes", "k_min",
     "error": null or a message}

The common loss (bench_families.py) is measured here from the release, independently of
the tool's own metrics: per quasi-identifier cell, a number range counts
``(max - min) / (column max - column min)``, a category label ``(leaves under it - 1) /
(leaves - 1)`` (leaves of the ARX hierarchy when given, else the column's distinct values),
a suppressed cell 1; GCP is the mean over rows x quasi-identifiers.

* anonypy 0.2.1 (``Preserver.anonymize_k_anonymity``): numbers released as ``min-max``,
  categories as the set of the partition's values (``a,b``): its label covers that set.
  The partitions are read from ``Mondrian.partition`` (the same call the release makes).
* project-lighthouse-anonymize 1.0.0 (``k_anonymize``, Core Mondrian, one process:
  ``parallelism=None``, data-quality minimums 0 so that it never refuses): numbers released
  as the class mean, categories as a node of the generalization tree (built from the ARX
  hierarchy, or flat). A number's cell is measured by the range of the original values of
  its released class (rows grouped by their released quasi-identifiers).
"""

from __future__ import annotations

import csv
import json
import logging
import resource
import sys
import time
import warnings
from importlib.metadata import version

import numpy as np
import pandas as pd

warnings.filterwarnings("ignore")


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def read_hierarchy(path: str) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as fh:
        return [row for row in csv.reader(fh, delimiter=";") if row]


def leaves_under(rows: list[list[str]]) -> dict[str, int]:
    """Leaves under each label of an ARX hierarchy (a label on several levels: the most)."""
    out: dict[str, int] = {}
    for level in range(len(rows[0])):
        counts: dict[str, int] = {}
        for r in rows:
            counts[r[level]] = counts.get(r[level], 0) + 1
        for lab, c in counts.items():
            out[lab] = max(out.get(lab, 0), c)
    return out


class Measure:
    """The common loss of a release, from each row's cells."""

    def __init__(self, df: pd.DataFrame, job: dict) -> None:
        self.df = df
        self.qids = job["quasi_identifiers"]
        self.numeric = set(job["numeric"])
        self.span = {}
        self.domain = {}
        self.under = {}
        for q in self.qids:
            if q in self.numeric:
                x = df[q].astype(float)
                self.span[q] = float(x.max() - x.min())
                continue
            h = job.get("hierarchies", {}).get(q)
            if h:
                rows = read_hierarchy(h)
                self.domain[q] = len(rows)
                self.under[q] = leaves_under(rows)
            else:
                self.domain[q] = int(df[q].nunique())
                self.under[q] = {"*": self.domain[q]}

    def number(self, q: str, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
        s = self.span[q]
        return (hi - lo) / s if s > 0 else np.zeros(lo.size)

    def category(self, q: str, leaves: np.ndarray) -> np.ndarray:
        d = self.domain[q]
        return (leaves - 1.0) / (d - 1) if d > 1 else np.zeros(leaves.size)


def run_anonypy(df: pd.DataFrame, job: dict, m: Measure) -> dict:
    from anonypy import anonypy, mondrian

    data = df[job["quasi_identifiers"]].copy()
    for q in job["quasi_identifiers"]:
        data[q] = data[q].astype(float) if q in m.numeric else data[q].astype("category")
    data["__s"] = 0
    k = int(job["k"])
    t0 = time.perf_counter()
    model = mondrian.Mondrian(data, job["quasi_identifiers"], "__s")
    partitions = model.partition(k)
    anonypy.anonymize(data, partitions, job["quasi_identifiers"], "__s")
    seconds = time.perf_counter() - t0
    total = 0.0
    sizes = []
    for part in partitions:
        sub = data.loc[part]
        sizes.append(len(sub))
        for q in job["quasi_identifiers"]:
            if q in m.numeric:
                x = sub[q].to_numpy(dtype=float)
                total += len(sub) * float(m.number(q, np.array([x.min()]), np.array([x.max()]))[0])
            else:
                cnt = float(sub[q].nunique())
                total += len(sub) * float(m.category(q, np.array([cnt]))[0])
    n = len(data)
    return {
        "version": version("anonypy"),
        "seconds": seconds,
        "gcp": total / (n * len(job["quasi_identifiers"])),
        "suppressed_rows": 0,
        "classes": len(partitions),
        "k_min": int(min(sizes)) if sizes else 0,
    }


def gtree_of(path: str | None, values: list[str]):
    from project_lighthouse_anonymize.gtrees import GTree, make_flat_default_gtree

    if not path:
        return make_flat_default_gtree(set(values))
    rows = read_hierarchy(path)
    tree = GTree()
    nodes: dict[tuple[int, str], object] = {}
    top = len(rows[0]) - 1
    for r in rows:
        parent = None
        for level in range(top, -1, -1):
            key = (level, r[level])
            if key not in nodes:
                nodes[key] = tree.create_node(r[level], parent=parent)
            parent = nodes[key]
    return tree


def run_lighthouse(df: pd.DataFrame, job: dict, m: Measure) -> dict:
    from project_lighthouse_anonymize import (
        default_dq_metric_to_minimum_dq,
        k_anonymize,
        prepare_gtrees,
    )

    qids = job["quasi_identifiers"]
    data = df[qids].copy()
    for q in qids:
        data[q] = data[q].astype(float) if q in m.numeric else data[q].astype(object)
    data["__id"] = np.arange(len(data))
    logger = logging.getLogger("lighthouse")
    logger.setLevel(logging.ERROR)
    trees = {
        q: gtree_of(job.get("hierarchies", {}).get(q), sorted(set(data[q])))
        for q in qids
        if q not in m.numeric
    }
    minimums = {key: 0.0 for key in default_dq_metric_to_minimum_dq()}
    t0 = time.perf_counter()
    trees = prepare_gtrees(logger, data, qids, trees)
    out, _, _ = k_anonymize(
        logger,
        data,
        qids,
        int(job["k"]),
        trees,
        "__id",
        dq_metric_to_minimum_dq=minimums,
        parallelism=None,
    )
    seconds = time.perf_counter() - t0
    n = len(data)
    out = out.dropna(subset=qids, how="all")
    kept = out["__id"].to_numpy(dtype=np.int64)
    suppressed = n - kept.size
    keys = out[qids].astype(str).agg("\x1f".join, axis=1).to_numpy()
    _, cls = np.unique(keys, return_inverse=True)
    total = float(suppressed * len(qids))
    for q in qids:
        if q in m.numeric:
            orig = data[q].to_numpy(dtype=float)[kept]
            frame = pd.DataFrame({"c": cls, "x": orig})
            lo = frame.groupby("c")["x"].transform("min").to_numpy()
            hi = frame.groupby("c")["x"].transform("max").to_numpy()
            total += float(m.number(q, lo, hi).sum())
        else:
            under = m.under[q]
            labels = out[q].astype(str).to_numpy()
            leaves = np.array([under.get(v, 1) for v in labels], dtype=float)
            if "*" in under:
                leaves[labels == "*"] = m.domain[q]
            total += float(m.category(q, leaves).sum())
    sizes = np.bincount(cls) if cls.size else np.zeros(0, dtype=np.int64)
    return {
        "version": version("project-lighthouse-anonymize"),
        "seconds": seconds,
        "gcp": total / (n * len(qids)),
        "suppressed_rows": int(suppressed),
        "classes": int(sizes.size),
        "k_min": int(sizes.min()) if sizes.size else 0,
    }


def main() -> None:
    job = json.loads(sys.stdin.read())
    df = pd.read_csv(job["csv"], dtype=str, keep_default_na=False)
    out = {"tool": job["tool"], "rows": len(df), "k": job["k"], "error": None}
    try:
        m = Measure(df, job)
        run = run_anonypy if job["tool"] == "anonypy" else run_lighthouse
        out.update(run(df, job, m))
    except Exception as exc:  # reported, not raised: the parent prints it
        out["error"] = f"{type(exc).__name__}: {exc}"
    out["peak_rss_mib"] = peak_mib()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
