#!/usr/bin/env python3
"""The first run's compilation of anonlab's kernels, with an empty cache, and the next run's
(issue 51 item 7).

numba compiles a kernel on its first call and caches its machine code on disk; a later
process loads it. For each job this script runs ``anonlab anonymize`` on the bundled UCI
Adult (every job of ``examples/``) in a fresh process with an empty ``NUMBA_CACHE_DIR`` (the
first run), then again with the same folder (the next run), and reports both wall times,
their difference (the compilation) and the notes the command printed on stderr (the
announcement, with its estimate, and at the end how long each family's compilation took). A
last run changes the models only (their judge is compiled per set of models). The estimates
in ``anonlab._compiled._FAMILIES`` come from here.

    .venv/bin/python benchmarks/bench_compile.py [--jobs pf2,k5]

Writes benchmarks/results/compile.json.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import print_table  # noqa: E402

EXAMPLES = common.PROJECT / "examples"
ADULT = common.PROJECT / "src" / "anonlab" / "datasets" / "adult.csv.gz"
JOBS = {
    "pf2": EXAMPLES / "adult_privacyfrost2.yaml",  # partial domain: PrivacyFrost2's kernels
    "k5": EXAMPLES / "adult_k5.yaml",  # optimal full-domain search
    "local": EXAMPLES / "adult_local_recoding.yaml",  # (alpha,k) local recoding
    "nonhomogeneous": EXAMPLES / "adult_nonhomogeneous.yaml",  # murakami_uno's phase 2 kernel
    "personalized": EXAMPLES / "adult_personalized.yaml",
    "local_suppression": EXAMPLES / "adult_local_suppression.yaml",
    "microaggregation": EXAMPLES / "adult_microaggregation.yaml",  # the MDAV kernel
}


def _run(job: Path, cache: Path, out: Path) -> tuple[float, list[str]]:
    """Wall seconds of one ``anonlab anonymize`` process and its notes."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NUMBA_")}
    env["NUMBA_CACHE_DIR"] = str(cache)
    env["PYTHONPATH"] = str(common.PROJECT / "src")
    cli = [sys.executable, "-c", "from anonlab.cli import main; main()"]
    cmd = [*cli, "anonymize", str(ADULT), "--job", str(job)]
    t0 = time.perf_counter()
    res = subprocess.run(
        [*cmd, "--output", str(out), "--json"], env=env, capture_output=True, text=True
    )
    seconds = time.perf_counter() - t0
    if res.returncode != 0:
        common.die(f"{job.name}: {res.stderr.strip()}")
    notes = [ln for ln in res.stderr.splitlines() if ln.startswith("note: compil")]
    return seconds, notes


def _said(notes: list[str]) -> float:
    """The seconds of compilation the notes report (``note: compiled ... in 9.1 s``)."""
    return sum(float(n.rsplit(" in ", 1)[1][:-2]) for n in notes if n.startswith("note: compiled"))


def _other_models(job: Path, folder: Path) -> Path:
    """The PrivacyFrost2 job with recursive (c,l)-diversity for distinct l-diversity."""
    text = job.read_text().replace(
        "distinct_l_diversity: {attribute: occupation, l: 2}",
        "recursive_cl_diversity: {attribute: occupation, l: 2, c: 3}",
    )
    text = text.replace("hierarchies/", f"{EXAMPLES / 'hierarchies'}/")
    path = folder / "pf2_other_models.yaml"
    path.write_text(text)
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", default=",".join(JOBS), help="of: " + ", ".join(JOBS))
    args = parser.parse_args()
    rows = []
    results: dict[str, object] = {}
    with tempfile.TemporaryDirectory(prefix="anonlab-bench-compile-") as tmp:
        folder = Path(tmp)
        for name in args.jobs.split(","):
            cache = folder / f"numba-{name}"
            first, notes = _run(JOBS[name], cache, folder / "out.csv")
            warm, again = _run(JOBS[name], cache, folder / "out.csv")
            entry = {"first_s": first, "next_s": warm, "notes": notes, "notes_next": again}
            entry["compiled_s"] = _said(notes)
            rows.append([name, f"{first:.1f}", f"{warm:.1f}", f"{first - warm:.1f}",
                         f"{_said(notes):.1f}"])  # fmt: skip
            if name == "pf2":
                other, more = _run(_other_models(JOBS[name], folder), cache, folder / "out.csv")
                entry["other_models_s"] = other
                entry["notes_other_models"] = more
                rows.append(
                    ["pf2, other models", f"{other:.1f}", "", f"{other - warm:.1f}",
                     f"{_said(more):.1f}"]
                )  # fmt: skip
            results[name] = entry
            for note in notes:
                print(f"  {name}: {note}")
    print_table(
        ["job", "first run s", "next run s", "first - next s", "compiled s (notes)"],
        rows,
        "anonlab anonymize on UCI Adult, empty numba cache, then the same cache",
    )
    print("results:", common.write_results("compile", {"jobs": results}))


if __name__ == "__main__":
    main()
