"""Local suppression (sdcMicro's localSuppression, Templ, Kowarik & Meindl 2015, section 5.2)
on a worked example computed by hand.

Seven records, three key attributes ``a`` (the most important), ``b``, ``c`` (the least
important), k = 2, flat hierarchies (value -> ``*``)::

    row  a   b   c        distinct tuple   records
    r1   a1  b1  c1       t1 (a1,b1,c1)    r1, r2
    r2   a1  b1  c1       t2 (a1,b1,c2)    r3
    r3   a1  b1  c2       t3 (a1,b2,c2)    r4
    r4   a1  b2  c2       t4 (a2,b2,c2)    r5, r6
    r5   a2  b2  c2       t5 (a2,b1,c3)    r7
    r6   a2  b2  c2
    r7   a2  b1  c3

Round 1. Frequencies 2, 1, 1, 2, 1: t2, t3, t5 are below k. The frequency each would have
with one more blank (a blank matches any value):

* t2: a blank -> (*,b1,c2) matches t2 only: 1; b blank -> (a1,*,c2) matches t2, t3: 2;
  c blank -> (a1,b1,*) matches t1 (2 records), t2: 3. b and c reach k; the least important
  of them is c: **r3.c blank**.
* t3: a -> (*,b2,c2): t3, t4 = 3; b -> (a1,*,c2): t2, t3 = 2; c -> (a1,b2,*): 1. a and b
  reach k; the least important is b: **r4.b blank**.
* t5: every single blank leaves it alone (1, 1, 1): none reaches k, no attribute raises it,
  so the least important one: **r7.c blank**.

Round 2. t1 (a1,b1,c1) matches t1, t2 = (a1,b1,*): 3; t2 matches t1, t2, t3 = (a1,*,c2):
4; t3 matches t2, t3: 2; t4 matches t4: 2; t5 = (a2,b1,*) matches only itself: 1. For t5:
a -> (*,b1,*) matches t1, t2, t3, t5 = 5; b -> (a2,*,*) matches t4, t5 = 3. Both reach k;
the less important is b: **r7.b blank**.

Round 3. t5 = (a2,*,*) matches t4, t5: 3; every record has at least 2 compatible records
(t3 = (a1,*,c2) exactly 2). The release, 4 blank cells of 21 (GCP = 4/21, each blank counting
1 as the root of a flat hierarchy)::

    r1 a1 b1 c1 (3)   r2 a1 b1 c1 (3)   r3 a1 b1 * (4)   r4 a1 * c2 (2)
    r5 a2 b2 c2 (3)   r6 a2 b2 c2 (3)   r7 a2 * *  (3)

With ``limits: {c: 1}``, round 1 offers c to t2 (it reaches k) before t5 (it does not): t2
takes the one cell, t5 keeps c3. Round 2: t5 = (a2,b1,c3) with a blank, (*,b1,c3), matches
t2 = (a1,b1,*) and itself: 2, k reached; with b blank, (a2,*,c3) matches itself only; c is
spent: **r7.a blank**. The release then has 3 blank cells: r3.c, r4.b, r7.a.
"""

from __future__ import annotations

import numpy as np
import pytest

import anonlab
from anonlab.exceptions import ParameterError
from anonlab.release.blanks import wildcard_frequencies
from tests.support.wildcard_reference import pairwise_frequencies

ROWS = [
    ("a1", "b1", "c1"),
    ("a1", "b1", "c1"),
    ("a1", "b1", "c2"),
    ("a1", "b2", "c2"),
    ("a2", "b2", "c2"),
    ("a2", "b2", "c2"),
    ("a2", "b1", "c3"),
]


def _table() -> anonlab.EncodedTable:
    return anonlab.EncodedTable.from_columns(
        {name: [r[j] for r in ROWS] for j, name in enumerate("abc")}
    )


def _job(**params: object) -> dict[str, object]:
    return {
        "quasi_identifiers": {"a": {}, "b": {}, "c": {}},
        "models": [{"k_anonymity": {"k": 2}}],
        "metric": "gcp",
        "algorithm": {
            "name": "local_suppression",
            "importance": ["a", "b", "c"],
            "generalize": "none",  # (sdcMicro's plain local suppression)
            **params,
        },
    }


def _released(result: anonlab.AnonymizationResult) -> list[tuple[str, ...]]:
    return list(zip(*(list(result.columns[q]) for q in "abc")))


def test_the_worked_example_blanks_the_four_cells_found_by_hand():
    result = anonlab.anonymize(_table(), _job())
    assert _released(result) == [
        ("a1", "b1", "c1"),
        ("a1", "b1", "c1"),
        ("a1", "b1", "*"),
        ("a1", "*", "c2"),
        ("a2", "b2", "c2"),
        ("a2", "b2", "c2"),
        ("a2", "*", "*"),
    ]
    assert result.search.evaluated == 3  # three rounds of counting
    assert result.search.unsafe_before == 3  # r3, r4, r7
    assert result.search.blanked_per_attribute == {"a": 0, "b": 2, "c": 2}
    assert result.release.verification.k_after == 2  # r4 = (a1,*,c2): r3 and itself
    assert result.loss == pytest.approx(4 / 21)


def test_the_worked_example_frequencies_by_hand():
    """The released records' frequencies, as the text above counts them."""
    released = [
        ("a1", "b1", "c1"),
        ("a1", "b1", "c1"),
        ("a1", "b1", "*"),
        ("a1", "*", "c2"),
        ("a2", "b2", "c2"),
        ("a2", "b2", "c2"),
        ("a2", "*", "*"),
    ]
    by_hand = [3, 3, 4, 2, 3, 3, 3]
    assert pairwise_frequencies(released) == by_hand
    table = anonlab.EncodedTable.from_columns(
        {name: [r[j] for r in released] for j, name in enumerate("abc")}
    )
    codes = np.stack([table[q].codes for q in "abc"], axis=1)
    blank = np.stack([table[q].labels() == "*" for q in "abc"], axis=1)
    assert wildcard_frequencies(codes, blank).tolist() == by_hand


def test_a_limit_moves_the_blank_to_another_attribute():
    result = anonlab.anonymize(_table(), _job(limits={"c": 1}))
    assert _released(result)[2] == ("a1", "b1", "*")
    assert _released(result)[3] == ("a1", "*", "c2")
    assert _released(result)[6] == ("*", "b1", "c3")
    assert result.search.blanked_per_attribute == {"a": 1, "b": 1, "c": 1}
    assert result.release.verification.k_after == 2


def test_limits_that_leave_nothing_to_blank_are_refused():
    with pytest.raises(ParameterError, match="cannot make 3 records 2-anonymous"):
        anonlab.anonymize(_table(), _job(limits={"a": 0, "b": 0, "c": 0}))
