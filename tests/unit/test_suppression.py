"""compute-k and compute-k-with-suppression (Algorithms 1 and 4, Lemma 2)."""

from __future__ import annotations

import numpy as np
import pytest

from anonlab.diagnosis import compute_k, delta_curve, delta_for_k, k_with_suppression
from anonlab.diagnosis.suppression import suppression_budget


def sizes(*xs: int) -> np.ndarray:
    return np.array(xs, dtype=np.int64)


def test_compute_k():
    assert compute_k(sizes(3, 1, 7)) == 1
    assert compute_k(sizes()) == 0


@pytest.mark.parametrize(
    ("classes", "delta", "expected"),
    [
        ((1, 2, 3, 10), 0.0, (1, 0)),
        ((1, 2, 3, 10), 1 / 16, (2, 1)),  # budget 1: remove the class of 1
        ((1, 2, 3, 10), 2 / 16, (2, 1)),  # budget 2: cannot remove 1+2=3 rows
        ((1, 2, 3, 10), 3 / 16, (3, 3)),
        ((1, 2, 3, 10), 6 / 16, (10, 6)),
        ((1, 2, 3, 10), 1.0, (10, 6)),  # the largest class is never removed
        ((2, 2, 2, 5), 0.25, (2, 0)),  # removing one of equal classes does not raise k
    ],
)
def test_k_with_suppression(classes, delta, expected):
    n = sum(classes)
    assert k_with_suppression(sizes(*classes), n, delta) == expected


def test_budget_is_never_exceeded_unlike_the_papers_loop():
    # the paper's `while partialSum < delta*|r|` would remove 1 and then 5 (6 > 3 rows)
    k, supp = k_with_suppression(sizes(1, 5, 6), 12, 0.25)
    assert supp <= suppression_budget(0.25, 12) == 3
    assert (k, supp) == (5, 1)


def test_budget_floor_is_robust_to_float():
    assert suppression_budget(0.3, 10) == 3
    assert suppression_budget(0.1, 30162) == 3016


def test_delta_for_k():
    assert delta_for_k(sizes(1, 2, 3, 10), 16, 3) == (3 / 16, 3, 3)
    assert delta_for_k(sizes(1, 2, 3, 10), 16, 1) == (0.0, 0, 1)
    assert delta_for_k(sizes(1, 2), 3, 3) == (1.0, 3, 0)


def test_delta_curve_matches_delta_for_k():
    s = sizes(1, 1, 4, 2, 9, 3)
    n = int(s.sum())
    ks = np.arange(1, n + 1)
    deltas, supp = delta_curve(s, n, ks)
    for kk, d, r in zip(ks, deltas, supp):
        assert (d, r) == delta_for_k(s, n, int(kk))[:2]
