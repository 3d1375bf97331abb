"""(alpha,k)-anonymity against the examples of paper 002 (Wong, Li, Fu, Wang, 2009).

Tables 1-4 (Section 1), Definitions 4-6 and 10-12 (the Table 3 example), Table 6 / Lemma 2
(the generalization property), Table 7 / Lemma 3 (subset property), Table 8 and Lemma 5
(Table 10, further removal).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from anonlab import EncodedTable, Hierarchy, open_engine
from anonlab.models import AlphaKAnonymity, KAnonymity, further_removal_bound

QI = ["Job", "Birth", "Postcode"]
COLS = [*QI, "Illness"]

TABLE1 = [  # Raw medical data set
    ("Cat1", "1975", "4350", "HIV"),
    ("Cat1", "1955", "4350", "HIV"),
    ("Cat1", "1955", "5432", "flu"),
    ("Cat1", "1955", "5432", "fever"),
    ("Cat2", "1975", "4350", "flu"),
    ("Cat2", "1975", "4350", "fever"),
]
TABLE2 = [  # a 2-anonymous data set of Table 1
    ("Cat1", "*", "4350", "HIV"),
    ("Cat1", "*", "4350", "HIV"),
    ("Cat1", "1955", "5432", "flu"),
    ("Cat1", "1955", "5432", "fever"),
    ("Cat2", "1975", "4350", "flu"),
    ("Cat2", "1975", "4350", "fever"),
]
TABLE3 = [  # an alternative 2-anonymous data set
    ("*", "1975", "4350", "HIV"),
    ("*", "*", "4350", "HIV"),
    ("Cat1", "1955", "5432", "flu"),
    ("Cat1", "1955", "5432", "fever"),
    ("*", "*", "4350", "flu"),
    ("*", "1975", "4350", "fever"),
]
TABLE4 = [  # a (0.5, 2)-anonymous table by full-domain generalization
    ("*", "*", "4350", "HIV"),
    ("*", "*", "4350", "HIV"),
    ("*", "*", "5432", "flu"),
    ("*", "*", "5432", "fever"),
    ("*", "*", "4350", "flu"),
    ("*", "*", "4350", "fever"),
]


def stats(rows):
    table = EncodedTable.from_rows(rows, COLS)
    return open_engine(table).class_stats(QI, sensitive=["Illness"])


def hiv(alpha=0.5, k=2, **kw):
    return AlphaKAnonymity("Illness", alpha, k, values="HIV", **kw)


def test_table1_is_not_2_anonymous():
    s = stats(TABLE1)
    assert not KAnonymity(2).holds(s)
    assert KAnonymity(2).value(s) == 1  # (Cat1,1975,4350) and (Cat1,1955,4350) occur once


def test_table2_is_2_anonymous_but_not_alpha_k():
    s = stats(TABLE2)
    assert KAnonymity(2).holds(s)
    assert not hiv().holds(s)  # (Cat1,*,4350) holds two HIV rows: 2 > ceil(0.5 * 2)
    assert not hiv(refined=False).holds(s)
    assert not AlphaKAnonymity("Illness", 0.5, 2).holds(s)
    assert hiv().value(s) == 1.0  # the inferred confidence of HIV in that class


@pytest.mark.parametrize("rows", [TABLE3, TABLE4], ids=["table3", "table4"])
def test_tables_3_and_4_are_alpha_k_anonymous(rows):
    s = stats(rows)
    assert KAnonymity(2).holds(s)
    assert hiv().holds(s)  # Definition 5 (refined)
    assert hiv(refined=False).holds(s)  # Definition 4
    assert AlphaKAnonymity("Illness", 0.5, 2).holds(s)  # Definitions 10-12: all 0.5-rare
    assert hiv().value(s) == 0.5


def test_table3_frequencies_of_definition4():
    # classes {t1,t6}, {t2,t5}, {t3,t4}: |(E,HIV)|/|E| = 0.5, 0.5, 0
    s = stats(TABLE3)
    freq = sorted(hiv().class_values(s).tolist())
    assert freq == [0.0, 0.5, 0.5]
    assert sorted(s.sizes.tolist()) == [2, 2, 2]
    # Definition 5's ceiling: a class of two may hold one HIV row for any alpha > 0
    # (ceil(0.26 * 2) = 1), while Definition 4 needs alpha >= 0.5
    assert hiv(alpha=0.26).holds(s)
    assert not hiv(alpha=0.26, refined=False).holds(s)


def test_table4_refined_versus_fraction():
    # the class (*,*,4350) has 4 rows, 2 with HIV: with alpha = 0.4 Definition 4 fails
    # (0.5 > 0.4) but Definition 5 passes (2 <= ceil(1.6) = 2)
    s = stats(TABLE4)
    assert not hiv(alpha=0.4, refined=False).holds(s)
    assert hiv(alpha=0.4).holds(s)
    assert not hiv(alpha=0.25).holds(s)  # 2 > ceil(1.0) = 1


def test_definition5_example_alpha_01_k_2():
    # "suppose k is set to 2 and alpha to 0.1": with the ceiling a class of two may hold
    # one sensitive tuple (|(E,s)| <= ceil(0.2) = 1); without it, none
    rows = [("Cat1", "*", "4350", "HIV"), ("Cat1", "*", "4350", "flu")]
    s = stats(rows)
    assert hiv(alpha=0.1).holds(s)
    assert not hiv(alpha=0.1, refined=False).holds(s)


# ------------------------------------------------------------------ Table 5 / 6 / 7
T5_COLS = ["Gender", "Birth", "Postcode", "Sens"]
TABLE5 = [
    ("male", "May 1965", "4351", "n"),
    ("male", "Jun 1965", "4351", "c"),
    ("male", "Jul 1965", "4361", "n"),
    ("male", "Aug 1965", "4362", "n"),
]
# Figure 1: Gender G0 -> G1 (*); Birth B0 (month) -> B1 (year) -> B2 (*);
# Postcode P0 -> P1 (435*) -> P2 (43**) -> P3 (4***) -> P4 (*)
H5 = {
    "Gender": Hierarchy([["male", "*"], ["female", "*"]], attribute="Gender"),
    "Birth": Hierarchy(
        [[f"{m} 1965", "1965", "*"] for m in ("May", "Jun", "Jul", "Aug")], attribute="Birth"
    ),
    "Postcode": Hierarchy(
        [[p, p[:3] + "*", p[:2] + "**", p[:1] + "***", "*"] for p in ("4351", "4361", "4362")],
        attribute="Postcode",
    ),
}
Q5 = ["Gender", "Birth", "Postcode"]
GENERAL = AlphaKAnonymity("Sens", 0.5, 2)
SIMPLE = AlphaKAnonymity("Sens", 0.5, 2, values="c")


def engine5():
    return open_engine(EncodedTable.from_rows(TABLE5, T5_COLS), hierarchies=H5)


def at(levels, columns=Q5):
    return engine5().class_stats(columns, dict(zip(columns, levels)), sensitive=["Sens"])


def test_table6a_is_alpha_k_anonymous():
    s = at((0, 1, 1))  # <G0, B1, P1>
    rows = sorted((key, dict(sens["Sens"])) for key, _, sens in s.canonical())
    assert rows == [
        (("male", "1965", "435*"), {"c": 1, "n": 1}),
        (("male", "1965", "436*"), {"n": 2}),
    ]
    assert SIMPLE.holds(s) and GENERAL.holds(s) is False  # {n, n} is not 0.5-rare for 'n'
    assert AlphaKAnonymity("Sens", 1.0, 2).holds(s)


def test_table6b_and_lemma2_generalization_property():
    assert SIMPLE.holds(at((0, 1, 2)))  # Table 6(b): <G0, B1, P2>
    # Lemma 2: every generalization of <G0, B1, P1> is (0.5, 2)-anonymous too
    for g, b, p in itertools.product(range(0, 2), range(1, 3), range(1, 5)):
        assert SIMPLE.holds(at((g, b, p))), (g, b, p)
        assert SIMPLE.value(at((g, b, p))) <= 0.5


def test_table7_lemma3_subset_property():
    # <G0>, <G0, B1> and <B1, P1> are projections of <G0, B1, P1>
    for columns, levels in (
        (["Gender"], (0,)),
        (["Gender", "Birth"], (0, 1)),
        (["Birth", "Postcode"], (1, 1)),
    ):
        assert SIMPLE.holds(at(levels, columns)), columns


def test_table5_itself_is_not_2_anonymous():
    s = at((0, 0, 0))
    assert not SIMPLE.holds(s)
    assert KAnonymity(2).value(s) == 1


def test_table8_full_domain_generalization():
    rows = [
        ("male", "May 1965", "4351", "n"),
        ("male", "Jun 1965", "4351", "c"),
        ("male", "Jul 1965", "4351", "n"),
        ("male", "Aug 1965", "4352", "n"),
    ]
    h = dict(H5)
    h["Postcode"] = Hierarchy(
        [[p, p[:3] + "*", p[:2] + "**", p[:1] + "***", "*"] for p in ("4351", "4352")],
        attribute="Postcode",
    )
    eng = open_engine(EncodedTable.from_rows(rows, T5_COLS), hierarchies=h)
    s = eng.class_stats(Q5, {"Gender": 0, "Birth": 1, "Postcode": 1}, sensitive=["Sens"])
    assert s.n_classes == 1  # Table 8(b): (male, 1965, 435*) x 4
    assert SIMPLE.holds(s)
    assert not SIMPLE.holds(
        eng.class_stats(Q5, {"Gender": 0, "Birth": 1, "Postcode": 0}, sensitive=["Sens"])
    )


# ------------------------------------------------------------------ Lemma 5 (Table 10)
TABLE10A = [
    ("male", "1965", "4351", "n"),
    ("male", "1965", "4351", "c"),
    ("male", "1965", "4351", "n"),
    ("male", "1965", "4352", "n"),
    ("male", "1965", "4363", "n"),
    ("male", "1965", "4374", "c"),
]


def test_lemma5_further_removal_table10():
    # t1, t2 form a trunk; D_r = t3..t6 holds one sensitive tuple (t6)
    d_r = TABLE10A[2:]
    n_r = len(d_r)
    n_s = sum(1 for r in d_r if r[3] == "c")
    assert (n_r, n_s) == (4, 1)
    assert further_removal_bound(n_r, n_s, 0.5) == 2  # floor(4 - 1/0.5)
    # the trunk {t1, t2} is precisely 0.5-deassociated (Definition 8): 1 = ceil(0.5 * 2)
    trunk = TABLE10A[:2]
    assert sum(r[3] == "c" for r in trunk) == int(np.ceil(0.5 * len(trunk)))


def test_lemma5_general_mode_and_rounding():
    # general model (Section 6.1): the minimum over the values (n: 3, c: 1)
    assert further_removal_bound(4, [1, 3], 0.5) == -2
    assert further_removal_bound(40, 3, 0.1) == 10  # 40 - 3/0.1 = 10, not 9
    assert further_removal_bound(10, 0, 0.3) == 10
    with pytest.raises(Exception, match="alpha"):
        further_removal_bound(4, 1, 0)
    with pytest.raises(Exception, match="n_sensitive"):
        further_removal_bound(4, -1, 0.5)
