#!/usr/bin/env python3
"""Q3 (largest 5-anonymous attribute subsets) on UCI Census-Income (KDD), 199,523 rows.

The 12 candidate attributes are the file's first 12 columns (age ... hispanic origin); the
search space is 2^12 - 1 = 4,095 subsets. Times are best of --repeat with a fresh engine
(open_engine + question: partition computation included, reading the gzip CSV excluded) and with
a warm engine (same engine asked again). The answer is checked with pandas: each returned subset
is 5-anonymous and adding any other candidate attribute breaks that (maximality).

    /work/main/.venv/bin/python benchmarks/bench_census_kdd.py [--repeat 3] [--no-check]

Writes benchmarks/results/census_kdd.json.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import best_of, print_table  # noqa: E402

from anonlab import CsvOptions, diagnose, open_engine, read_table  # noqa: E402

# Column names from datasets/census-income-kdd/README.md (from census-income.names).
CENSUS_NAMES: tuple[str, ...] = (
    "age", "class of worker", "detailed industry recode", "detailed occupation recode",
    "education", "wage per hour", "enroll in edu inst last wk", "marital stat",
    "major industry code", "major occupation code", "race", "hispanic origin", "sex",
    "member of a labor union", "reason for unemployment", "full or part time employment stat",
    "capital gains", "capital losses", "dividends from stocks", "tax filer stat",
    "region of previous residence", "state of previous residence",
    "detailed household and family stat", "detailed household summary in household",
    "instance weight", "migration code-change in msa", "migration code-change in reg",
    "migration code-move within reg", "live in this house 1 year ago",
    "migration prev res in sunbelt", "num persons worked for employer",
    "family members under 18", "country of birth father", "country of birth mother",
    "country of birth self", "citizenship", "own business or self employed",
    "fill inc questionnaire for veteran's admin", "veterans benefits", "weeks worked in year",
    "year", "income",
)  # fmt: skip
CENSUS_ROWS = 199_523
K = 5
N_ATTRS = 12


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-check", action="store_true", help="skip the pandas answer check")
    args = ap.parse_args()
    assert len(CENSUS_NAMES) == 42
    path = common.shared_file("datasets", "census-income-kdd", "census-income.data.gz")
    opts = CsvOptions(separator=",", header=False, names=CENSUS_NAMES, strip=True, na_values=("?",))
    t0 = time.perf_counter()
    table = read_table(path, csv_options=opts)
    read_s = time.perf_counter() - t0
    assert table.n_rows == CENSUS_ROWS, f"expected {CENSUS_ROWS} rows, got {table.n_rows}"
    attrs = list(CENSUS_NAMES[:N_ATTRS])
    nulls = int(table.null_mask(attrs).sum())
    cards = {a: int(table.column(a).cardinality) for a in attrs}
    print(
        f"Census-Income (KDD): {table.n_rows:,} rows (gzip CSV read: {read_s:.3f} s, not timed "
        f"below); {nulls} rows with a null in the {N_ATTRS} attributes"
    )

    fresh_best, fresh_all, ans = best_of(
        lambda: diagnose(open_engine(table), attributes=attrs, k=K), args.repeat
    )
    eng = open_engine(table)
    diagnose(eng, attributes=attrs, k=K)
    warm_best, warm_all, _ = best_of(lambda: diagnose(eng, attributes=attrs, k=K), args.repeat)

    checked = None if args.no_check else check_answer(table, attrs, ans.subsets)

    print_table(
        ["question", "fresh s", "warm s", "evaluations", "of subsets", "maximal subsets"],
        [
            [
                f"Q3 k={K}, {N_ATTRS} attributes",
                fresh_best,
                warm_best,
                ans.evaluations,
                2**N_ATTRS - 1,
                len(ans.subsets),
            ]
        ],
        title=f"anonlab on Census-Income (KDD) ({table.n_rows:,} rows), best of {args.repeat}",
    )
    print("maximal 5-anonymous subsets:")
    for s in ans.subsets:
        print("  " + ", ".join(s))
    if checked is not None:
        print("pandas check (each subset 5-anonymous and maximal): OK")
    res = {
        "n_rows": table.n_rows,
        "attributes": attrs,
        "cardinalities": cards,
        "rows_with_null_in_attributes": nulls,
        "k": K,
        "repeat": args.repeat,
        "read_gzip_csv_s": read_s,
        "Q3": {
            "fresh_s": fresh_best,
            "fresh_all_s": fresh_all,
            "warm_s": warm_best,
            "warm_all_s": warm_all,
            "evaluations": ans.evaluations,
            "subsets": ans.subsets,
            "checked_with_pandas": checked,
        },
    }
    print(f"\nwrote {common.write_results('census_kdd', res)}")


def check_answer(table, attrs: list[str], subsets: list[list[str]]) -> bool:
    """Each subset is K-anonymous; adding any other attribute makes it fail (pandas groupby)."""
    import pandas as pd

    df = pd.DataFrame({a: table.column(a).codes for a in attrs})

    def k_of(cols: list[str]) -> int:
        return int(df.groupby(cols, sort=False, dropna=False).size().min())

    for s in subsets:
        assert k_of(s) >= K, f"{s} is not {K}-anonymous"
        for a in attrs:
            if a not in s:
                assert k_of(s + [a]) < K, f"{s} is not maximal: adding {a!r} keeps k >= {K}"
    return True


if __name__ == "__main__":
    main()
