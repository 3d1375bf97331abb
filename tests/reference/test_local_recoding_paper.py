"""Local recoding against the worked examples of paper 002 (Wong, Li, Fu, Wang, 2009).

* Table 8: the full-domain solution (``optimal``) generalizes every tuple to (male, 1965, 435*);
  Table 9 (a)-(c): Progressive generalizes Birth, removes the trunk {t1, t2}, leaves the stub
  t3, then generalizes Postcode and removes {t3, t4};
* Table 10: the trunk {t1, t2}, Lemma 5's further-removal count 2, the further removal of
  {t3, t4} at 435*, and t5, t6 generalized to 43**;
* Table 11 and Figure 2: Top-Down with Postcode as the only quasi-identifier, step by step.
"""

from __future__ import annotations

import pytest

from anonlab import EncodedTable, Hierarchy, anonymize
from anonlab.algorithms.local_recoding._setup import LocalProblem
from anonlab.algorithms.local_recoding.top_down import top_down
from anonlab.jobs import build_problem, load_job
from tests.reference.test_alpha_k_paper import T5_COLS as COLS
from tests.reference.test_alpha_k_paper import TABLE10A

TABLE8A = [
    ("male", "May 1965", "4351", "n"),
    ("male", "Jun 1965", "4351", "c"),
    ("male", "Jul 1965", "4351", "n"),
    ("male", "Aug 1965", "4352", "n"),
]


def postcode(codes):
    """Figure 1(a): P0 -> P1 (435*) -> P2 (43**) -> P3 (4***) -> P4 (****)."""
    return Hierarchy(
        [[p, p[:3] + "*", p[:2] + "**", p[:1] + "***", "****"] for p in codes],
        attribute="Postcode",
    )


GENDER = Hierarchy([["male", "*"], ["female", "*"]], attribute="Gender")
BIRTH_MONTHS = Hierarchy(  # Figure 1(b): month -> year -> *
    [[f"{m} 1965", "1965", "*"] for m in ("May", "Jun", "Jul", "Aug")], attribute="Birth"
)
BIRTH_YEAR = Hierarchy([["1965", "*"]], attribute="Birth")


def job(hierarchies, algorithm, **extra):
    return {
        "quasi_identifiers": {q: {"hierarchy": h} for q, h in hierarchies.items()},
        "sensitive": ["Sens"],
        "models": [
            {"alpha_k_anonymity": {"attribute": "Sens", "alpha": 0.5, "k": 2, "values": "c"}}
        ],
        "metric": "distortion",
        "algorithm": algorithm,
        **extra,
    }


def released(result, columns=COLS):
    return [tuple(row) for row in zip(*(result.columns[c] for c in columns))]


TABLE8_H = {"Gender": GENDER, "Birth": BIRTH_MONTHS, "Postcode": postcode(["4351", "4352"])}


def test_table8b_is_the_full_domain_solution():
    res = anonymize(EncodedTable.from_rows(TABLE8A, COLS), job(TABLE8_H, "optimal"))
    assert res.transformation == {"Gender": 0, "Birth": 1, "Postcode": 1}
    assert released(res) == [
        ("male", "1965", "435*", "n"),
        ("male", "1965", "435*", "c"),
        ("male", "1965", "435*", "n"),
        ("male", "1965", "435*", "n"),
    ]
    assert res.loss == pytest.approx(8 / 28)  # 4 tuples x (B1 + P1) over 4 x (1 + 2 + 4)


def test_table9_progressive_trunks_and_stub():
    res = anonymize(EncodedTable.from_rows(TABLE8A, COLS), job(TABLE8_H, "progressive"))
    # Table 9(c): the trunk {t1, t2} keeps its postcode; the stub t3 joins t4 at 435*
    assert released(res) == [
        ("male", "1965", "4351", "n"),
        ("male", "1965", "4351", "c"),
        ("male", "1965", "435*", "n"),
        ("male", "1965", "435*", "n"),
    ]
    a, b, c = res.search.rounds
    # Table 9(a): no class of the raw table passes; Birth has the highest entropy
    assert a["levels"] == {"Gender": 0, "Birth": 0, "Postcode": 0}
    assert (a["passing_classes"], a["trunk_rows"], a["further_removed"]) == (0, 0, 0)
    assert a["generalized"] == "Birth" and a["entropy"] == pytest.approx(2.0)
    # Table 9(b): {t1, t2, t3} passes; its trunk {t1, t2} (1 = ceil(0.5 * 2) sensitive) is
    # removed, the stub t3 stays; then Postcode (entropy of {4351, 4352} = 1) is generalized
    assert b["levels"] == {"Gender": 0, "Birth": 1, "Postcode": 0}
    assert (b["passing_classes"], b["trunk_rows"], b["further_removed"]) == (1, 2, 0)
    assert b["generalized"] == "Postcode" and b["entropy"] == pytest.approx(1.0)
    # Table 9(c): {t3, t4} at 435* has no sensitive tuple (no trunk): further removal
    assert c["levels"] == {"Gender": 0, "Birth": 1, "Postcode": 1}
    assert (c["trunk_rows"], c["q_max"], c["further_removed"]) == (0, 2, 2)
    assert res.search.trunks == 1 and res.search.loops == 2
    assert res.summary["rows_per_level"]["Postcode"] == {0: 2, 1: 2}
    # local recoding loses less than the full-domain solution: 6/28 against 8/28
    assert res.loss == pytest.approx(6 / 28)
    assert res.search.distortion_ratio == pytest.approx(res.loss)


def test_table10_further_removal_with_lemma5():
    h = {
        "Gender": GENDER,
        "Birth": BIRTH_YEAR,
        "Postcode": postcode(["4351", "4352", "4363", "4374"]),
    }
    res = anonymize(EncodedTable.from_rows(TABLE10A, COLS), job(h, "progressive"))
    first, second, third = res.search.rounds
    # t1, t2 form a trunk; D_r = {t3, t4, t5, t6} holds one sensitive tuple (t6):
    # Lemma 5 lets at most floor(4 - 1/0.5) = 2 tuples be removed further
    assert (first["trunk_rows"], first["q_max"], first["further_removed"]) == (2, 2, 0)
    assert first["generalized"] == "Postcode"
    # Table 10(b): at 435* the tuples t3, t4 pass and are removed (2 <= q_max = 2)
    assert second["levels"]["Postcode"] == 1
    assert (second["rows"], second["q_max"], second["further_removed"]) == (4, 2, 2)
    # "the postcode of tuples t5 and t6 can be generalized": 43**, a trunk of its own
    assert third["levels"]["Postcode"] == 2 and third["trunk_rows"] == 2
    assert list(res.columns["Postcode"]) == ["4351", "4351", "435*", "435*", "43**", "43**"]
    assert res.search.further_removed == 2 and res.search.trunk_rows == 4


TABLE11A = [("1", "4351", "n"), ("2", "4351", "c"), ("3", "4351", "n"), ("4", "4352", "n")]


def table11_job():
    # "No", the paper's tuple number, is shown as it is, knowingly
    return {**job({"Postcode": postcode(["4351", "4352"])}, "top_down"), "insensitive": ["No"]}


def test_table11_top_down_with_postcode():
    table = EncodedTable.from_rows(TABLE11A, ["No", "Postcode", "Sens"])
    res = anonymize(table, table11_job())
    assert released(res, ["No", "Postcode", "Sens"]) == [  # Table 11(b)
        ("1", "4351", "n"),
        ("2", "4351", "c"),
        ("3", "435*", "n"),
        ("4", "435*", "n"),
    ]
    assert res.search.pushed_back == 1 and res.search.unspecialized == 1
    assert res.search.line10 == {"spare rows": 1, "whole children": 0, "not specialized": 0}


def test_figure2_steps():
    table = EncodedTable.from_rows(TABLE11A, ["No", "Postcode", "Sens"])
    lp = LocalProblem.build(build_problem(table, load_job(table11_job())), "top_down")
    steps = top_down(lp, trace=True).trace
    t = {i: i - 1 for i in range(1, 5)}  # tuple number -> row position
    # (a)-(d): one branch per specialization, the four tuples together
    for step, (node, child) in zip(steps, [("****", "4***"), ("4***", "43**"), ("43**", "435*")]):
        assert step["node"] == (node,) and step["children"] == {child: [0, 1, 2, 3]}
        assert step["kept"] == []
    e = steps[3]
    assert e["node"] == ("435*",)
    # (e): two branches; (f): 4352 holds one tuple and goes back to 435*, which then fails;
    # (g): tuple 3 moves up from node B = 4351 so that both pass
    assert e["children"] == {"4351": [t[1], t[2], t[3]], "4352": [t[4]]}
    assert e["pushed_back"] == [t[4]]
    assert e["unspecialized"] == [t[3]]
    assert e["final"] == {"4351": [t[1], t[2]]}
    assert e["kept"] == [t[3], t[4]]
    last = steps[4]
    assert last["node"] == ("4351",) and last["attribute"] is None  # a leaf: nothing below
    assert len(steps) == 5
