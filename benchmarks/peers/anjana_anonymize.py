#!/usr/bin/env python3
"""Run the anjana anonymization library on one job and report what it did.

Run with the peer venv (benchmarks/.peer-venv/bin/python, see setup_peers.sh):
    echo '{...job...}' | python anjana_anonymize.py

Input: one JSON object on stdin
    {"data": "/path/adult.csv", "separator": ";",
     "quasi_identifiers": ["age", ...],
     "hierarchies": {"age": "/path/adult_hierarchy_age.csv", ...},
     "identifiers": [], "sensitive": "salary-class" | null,
     "model": "k_anonymity" | "l_diversity" | "recursive_c_l_diversity" | "t_closeness",
     "k": 5, "l": 3, "c": 4, "t": 0.2,   # l, c, t only for their model
     "suppression": 0.05,           # fraction of rows (0..1)
     "repeat": 3}
Data files have a header row; hierarchy files are ARX format (no header,
column 0 = original value, column i = label at level i, last column "*").
Every value is read as a string.

Output: one JSON object on stdout
    {"tool": "anjana", "version": "1.2.3",
     "elapsed_s": best of `repeat` timed anjana calls (file reading excluded),
     "levels": {qi: hierarchy level inferred from the output, -1 if none fits},
     "levels_consistent": false if some QI fits no level,
     "suppressed_rows": input rows - output rows (anjana drops suppressed
                        records), "output_rows": int,
     "k_min": smallest equivalence-class size of the output on the QIs,
     "anjana_stdout": lines anjana printed during the last run,
     "error": null or a message}
The exit code is 0 even when anjana fails; the failure is in "error", and
levels / suppressed_rows / k_min are then {} / null / null ("elapsed_s" and
"output_rows" stay filled when anjana returned an empty result).

Notes on anjana 1.2.3 (from its source):
* The hierarchies argument is {qi: {level: values}} where the values of all
  levels are aligned row by row, i.e. exactly the columns of an ARX file.
* supp_level is a percentage (0..100); the job's fraction is multiplied by 100.
* Suppressed records are dropped (DataFrame.drop + reset_index, which also
  adds an "index" column), not masked with "*".
* l_diversity and t_closeness first apply k-anonymity with the given k.
* When it cannot reach the target, anjana prints a message and returns an
  empty DataFrame instead of raising; this is reported as an error here.
* anjana prints to stdout; that is captured so it cannot corrupt the JSON.
"""

import contextlib
import io
import json
import sys
import time
import traceback
from importlib.metadata import PackageNotFoundError, version

import pandas as pd

MODELS = ("k_anonymity", "l_diversity", "recursive_c_l_diversity", "t_closeness")


def anjana_version():
    """Installed anjana version, or None."""
    try:
        return version("anjana")
    except PackageNotFoundError:
        return None


def read_job(stream):
    """Parse and validate the job JSON; raise ValueError on a bad job."""
    job = json.load(stream)
    if not isinstance(job, dict):
        raise ValueError("job must be a JSON object")
    for key in ("data", "quasi_identifiers", "hierarchies", "model", "k"):
        if key not in job:
            raise ValueError(f"job is missing {key!r}")
    if job["model"] not in MODELS:
        raise ValueError(f"unknown model {job['model']!r}; expected one of {MODELS}")
    missing = [qi for qi in job["quasi_identifiers"] if qi not in job["hierarchies"]]
    if missing:
        raise ValueError(f"no hierarchy for quasi-identifiers {missing}")
    if job["model"] != "k_anonymity" and not job.get("sensitive"):
        raise ValueError(f"model {job['model']} needs a 'sensitive' attribute")
    if job["model"] == "l_diversity" and "l" not in job:
        raise ValueError("model l_diversity needs 'l'")
    if job["model"] == "recursive_c_l_diversity" and ("l" not in job or "c" not in job):
        raise ValueError("model recursive_c_l_diversity needs 'c' and 'l'")
    if job["model"] == "t_closeness" and "t" not in job:
        raise ValueError("model t_closeness needs 't'")
    if int(job.get("repeat", 1)) < 1:
        raise ValueError("repeat must be >= 1")
    return job


def read_data(path, sep):
    """Read a data file with a header row, every value as a string."""
    return pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)


def read_hierarchy(path):
    """Read an ARX hierarchy file into anjana's {level: pd.Series} format."""
    table = pd.read_csv(path, sep=";", header=None, dtype=str, keep_default_na=False)
    return {level: table[col].reset_index(drop=True) for level, col in enumerate(table.columns)}


def build_call(job, data, hierarchies):
    """Return a zero-argument callable that runs the job's anjana model once."""
    from anjana import anonymity

    qis = list(job["quasi_identifiers"])
    ident = list(job.get("identifiers") or [])
    k = int(job["k"])
    supp_level = float(job.get("suppression", 0.0)) * 100.0
    model = job["model"]

    def fresh_hierarchies():
        # anjana may rewrite the per-QI level dicts in place; hand it copies.
        return {qi: dict(levels) for qi, levels in hierarchies.items()}

    if model == "k_anonymity":
        return lambda: anonymity.k_anonymity(data, ident, qis, k, supp_level, fresh_hierarchies())
    if model == "l_diversity":
        return lambda: anonymity.l_diversity(
            data, ident, qis, job["sensitive"], k, int(job["l"]), supp_level, fresh_hierarchies()
        )
    if model == "recursive_c_l_diversity":
        return lambda: anonymity.recursive_c_l_diversity(
            data,
            ident,
            qis,
            job["sensitive"],
            k,
            int(job["c"]),
            int(job["l"]),
            supp_level,
            fresh_hierarchies(),
        )
    return lambda: anonymity.t_closeness(
        data, ident, qis, job["sensitive"], k, float(job["t"]), supp_level, fresh_hierarchies()
    )


def timed_runs(call, repeat):
    """Run `call` `repeat` times; return (last result, best seconds, printed lines)."""
    best, result, printed = None, None, []
    for _ in range(repeat):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            t0 = time.perf_counter()
            result = call()
            elapsed = time.perf_counter() - t0
        best = elapsed if best is None else min(best, elapsed)
        printed = [line for line in buf.getvalue().splitlines() if line.strip()]
    return result, best, printed


def infer_levels(output, qis, hierarchies):
    """Lowest hierarchy level whose labels cover each QI's output values (-1: none)."""
    levels = {}
    for qi in qis:
        values = set(output[qi].astype(str))
        levels[qi] = -1
        for level in sorted(hierarchies[qi]):
            if values <= set(hierarchies[qi][level].astype(str)):
                levels[qi] = level
                break
    return levels


def min_group_size(output, qis):
    """Smallest equivalence class on the QIs, or None for an empty output."""
    if len(output) == 0:
        return None
    return int(output.groupby(list(qis), sort=False, dropna=False).size().min())


def run(job):
    """Execute a validated job and return the result dict (without error handling)."""
    qis = list(job["quasi_identifiers"])
    data = read_data(job["data"], job.get("separator", ";"))
    unknown = [
        c
        for c in qis
        + list(job.get("identifiers") or [])
        + ([job["sensitive"]] if job.get("sensitive") else [])
        if c not in data.columns
    ]
    if unknown:
        raise ValueError(f"columns not in data header: {unknown}")
    hierarchies = {qi: read_hierarchy(job["hierarchies"][qi]) for qi in qis}

    call = build_call(job, data, hierarchies)
    output, elapsed, printed = timed_runs(call, int(job.get("repeat", 1)))

    result = {"elapsed_s": elapsed, "anjana_stdout": printed, "output_rows": int(len(output))}
    if len(output) == 0 or not set(qis) <= set(output.columns):
        detail = "; ".join(printed) or "no message"
        result["error"] = f"anjana returned an empty result ({detail})"
        return result
    levels = infer_levels(output, qis, hierarchies)
    result.update(
        suppressed_rows=int(len(data) - len(output)),
        levels=levels,
        levels_consistent=all(v >= 0 for v in levels.values()),
        k_min=min_group_size(output, qis),
    )
    return result


def main():
    report = {
        "tool": "anjana",
        "version": anjana_version(),
        "elapsed_s": None,
        "levels": {},
        "suppressed_rows": None,
        "output_rows": None,
        "levels_consistent": False,
        "k_min": None,
        "anjana_stdout": [],
        "error": None,
    }
    try:
        report.update(run(read_job(sys.stdin)))
    except Exception as exc:  # report any failure (bad job or anjana) as data
        report["error"] = f"{type(exc).__name__}: {exc}"
        print(traceback.format_exc(), file=sys.stderr)
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
