"""Run inside the peer venv (pycanon 1.3.5): read cases as JSON on stdin, print pycanon's values.

Each case is {"name", "columns", "rows", "qi", "sa", "numeric": [columns to cast to float]}.
Nulls are JSON null (pandas NaN). Output: {name: {"k", "l", "entropy_l", "alpha", "c", "c_l",
"beta", "enhanced_beta", "delta", "t"}} with floats (NaN as null).
"""

import json
import math
import sys
from importlib.metadata import version

import pandas as pd
from pycanon import anonymity


def _num(x):
    x = float(x)
    return None if math.isnan(x) else x


def main():
    cases = json.load(sys.stdin)
    out = {"_version": version("pycanon")}
    for case in cases:
        df = pd.DataFrame(case["rows"], columns=case["columns"])
        for col in case.get("numeric", []):
            df[col] = df[col].astype(float)
        qi, sa = case["qi"], [case["sa"]]
        alpha, _ = anonymity.alpha_k_anonymity(df, qi, sa)
        c, c_l = anonymity.recursive_c_l_diversity(df, qi, sa)
        out[case["name"]] = {
            "k": _num(anonymity.k_anonymity(df, qi)),
            "l": _num(anonymity.l_diversity(df, qi, sa)),
            "entropy_l": _num(anonymity.entropy_l_diversity(df, qi, sa)),
            "alpha": _num(alpha),
            "c": _num(c),
            "c_l": _num(c_l),
            "beta": _num(anonymity.basic_beta_likeness(df, qi, sa)),
            "enhanced_beta": _num(anonymity.enhanced_beta_likeness(df, qi, sa)),
            "delta": _num(anonymity.delta_disclosure(df, qi, sa)),
            "t": _num(anonymity.t_closeness(df, qi, sa)),
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
