"""Utility metrics: every formula on small hand-made tables, registry, and ARX parity on adult.

The hand-made table (QIs ``a`` and ``b``, N = 6):

    row  a   b          hierarchy a (height 2)        hierarchy b (height 1)
    1    a1  b1         a1, a2 -> A12 -> *             b1, b2, b3, b4 -> *
    2    a1  b1         a3, a4 -> A34 -> *             (b4 never occurs: |dom_b| = 4)
    3    a2  b1
    4    a3  b2
    5    a3  b2
    6    a4  b3

At T = (1, 0) the classes are (A12, b1): 3 rows, (A34, b2): 2 rows, (A34, b3): 1 row.
``SUPP1`` suppresses (A34, b3) (S = 1, U = 5); ``SUPP2`` also (A34, b2) (S = 3, U = 3).
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from anonlab import EncodedTable, Hierarchy, open_engine
from anonlab.exceptions import ParameterError
from anonlab.metrics import (
    METRICS,
    Aggregate,
    AverageClassSize,
    Discernibility,
    DistortionRatio,
    GlobalCertaintyPenalty,
    Height,
    InformationLeft,
    Loss,
    MonotonicDiscernibility,
    MonotonicNonUniformEntropy,
    MonotonicPrecision,
    NonUniformEntropy,
    NormalizedCertaintyPenalty,
    Precision,
    RankedLoss,
    aggregate,
    build_metric,
    info_left_value,
    info_left_values,
)
from anonlab.metrics.base import MetricContext

QIS = ("a", "b")
ROWS = [("a1", "b1"), ("a1", "b1"), ("a2", "b1"), ("a3", "b2"), ("a3", "b2"), ("a4", "b3")]
HA = Hierarchy(
    [["a1", "A12", "*"], ["a2", "A12", "*"], ["a3", "A34", "*"], ["a4", "A34", "*"]],
    attribute="a",
)
HB = Hierarchy([["b1", "*"], ["b2", "*"], ["b3", "*"], ["b4", "*"]], attribute="b")
H = {"a": HA, "b": HB}
LOG2_3 = math.log2(3)


def trunc10(x: float) -> float:
    """ARX's round(): truncation to 10 decimals."""
    return math.floor(x * 1e10) / 1e10


@pytest.fixture
def env():
    table = EncodedTable.from_rows(ROWS, list(QIS))
    engine = open_engine(table, hierarchies=H)
    base = engine.class_stats(list(QIS))
    ctx = MetricContext(QIS, H, base, table.n_rows, {})

    def at(la: int, lb: int):
        return engine.class_stats(list(QIS), levels={"a": la, "b": lb})

    return ctx, at


def masks(stats):
    """Suppression masks by class key: none, (A34, b3), and (A34, b2) + (A34, b3)."""
    keys = stats.key_labels()
    none = np.zeros(stats.n_classes, dtype=bool)
    s1 = np.array([k == ("A34", "b3") for k in keys])
    s2 = np.array([k[0] == "A34" for k in keys])
    return none, s1, s2


def test_the_classes_are_as_the_docstring_says(env):
    _, at = env
    st = at(1, 0)
    assert sorted(zip(st.key_labels(), st.sizes.tolist())) == [
        (("A12", "b1"), 3),
        (("A34", "b2"), 2),
        (("A34", "b3"), 1),
    ]


# ------------------------------------------------------------------------------------ height
def test_height(env):
    ctx, at = env
    st = at(1, 0)
    none, s1, _ = masks(st)
    assert Height().loss(st, none, ctx) == 1.0  # 1 + 0
    assert Height().loss(st, s1, ctx) == 1.0  # suppression is ignored
    assert Height().lower_bound((2, 1), ctx) == 3.0
    # weights a: 2, b: 1 -> normalised (1, 0.5); at (2, 1): 2*1 + 1*0.5
    assert Height(weights={"a": 2, "b": 1}).loss(at(2, 1), none[:1], ctx) == 2.5
    assert Height.monotonic


# --------------------------------------------------------------------------------- precision
def test_precision_monotonic_ignores_suppression(env):
    ctx, at = env
    st = at(1, 0)
    _, s1, _ = masks(st)
    # t/h = (1/2, 0/1); arithmetic mean = 0.25
    assert MonotonicPrecision().loss(st, s1, ctx) == 0.25
    assert MonotonicPrecision().lower_bound((1, 0), ctx) == 0.25
    assert MonotonicPrecision.monotonic and not Precision.monotonic


def test_precision_non_monotonic(env):
    ctx, at = env
    st = at(1, 0)
    none, s1, _ = masks(st)
    # no suppression: (0.5 + 0) / 2
    assert Precision().loss(st, none, ctx) == pytest.approx(0.25, abs=1e-15)
    # S = 1, U = 5: v_a = (5*0.5 + 1)/6 = 3.5/6, v_b = (5*0 + 1)/6 = 1/6; mean = 0.375
    assert Precision().loss(st, s1, ctx) == pytest.approx(0.375, abs=1e-15)
    # gamma = 0.25: sFactor = 0.5, gFactor = 1: v_a = (2.5 + 0.5)/6, v_b = 0.5/6
    assert Precision(gamma=0.25).loss(st, s1, ctx) == pytest.approx((3.0 / 6 + 0.5 / 6) / 2)
    # gamma = 0.75: gFactor = 0.5, sFactor = 1: v_a = (5*0.5*0.5 + 1)/6 = 2.25/6, v_b = 1/6
    assert Precision(gamma=0.75).loss(st, s1, ctx) == pytest.approx((2.25 / 6 + 1 / 6) / 2)
    # SUM with weights a: 1, b: 3 -> (1/3, 1): 3.5/6/3 + 1/6
    p = Precision(aggregate="sum", weights={"a": 1, "b": 3})
    assert p.loss(st, s1, ctx) == pytest.approx(3.5 / 18 + 1 / 6)
    # the lower bound is the generalization-only value (gamma 0.5)
    assert Precision().lower_bound((1, 0), ctx) == pytest.approx(0.25, rel=1e-11)
    assert Precision().lower_bound((1, 0), ctx) <= Precision().loss(st, none, ctx)


# ---------------------------------------------------------------------------- discernibility
def test_discernibility(env):
    ctx, at = env
    st = at(1, 0)
    none, s1, s2 = masks(st)
    assert MonotonicDiscernibility().loss(st, s1, ctx) == 14.0  # 3^2 + 2^2 + 1^2
    assert Discernibility().loss(st, none, ctx) == 14.0
    assert Discernibility().loss(st, s1, ctx) == 19.0  # 9 + 4 + N*1 = 9 + 4 + 6
    assert Discernibility().loss(st, s2, ctx) == 27.0  # 9 + 6*2 + 6*1
    # bound: at most min(4 base classes, 2 x 3 labels) = 4 classes at (1, 0) -> 36 / 4
    assert Discernibility().lower_bound((1, 0), ctx) == 9.0
    # from the classes at (1, 0) (3, 2, 1) every generalization has DM* >= 14; with k = 2
    # the record of the class of one costs at least 2 in an anonymous one: 9 + 4 + 2
    assert Discernibility().successor_bound(st.sizes, ctx) == 14.0
    assert Discernibility().successor_bound(st.sizes, replace(ctx, min_class_size=2)) == 15.0
    # at the top: one class of 6 -> 36 (N^2 / 1)
    assert MonotonicDiscernibility().lower_bound((2, 1), ctx) == 36.0


# ---------------------------------------------------------------------------------------- AECS
def test_aecs(env):
    ctx, at = env
    st = at(1, 0)
    none, s1, s2 = masks(st)
    assert AverageClassSize().loss(st, none, ctx) == 2.0  # 6 / 3 classes
    assert AverageClassSize().loss(st, s1, ctx) == 2.0  # 6 / (2 + 1 suppressed class)
    assert AverageClassSize().loss(st, s2, ctx) == 3.0  # 6 / (1 + 1)
    # gamma = 0.25: sFactor = 0.5, gFactor = 1 -> 6 / (2*0.5 + 1) = 3
    assert AverageClassSize(gamma=0.25).loss(st, s1, ctx) == 3.0
    # gamma = 0.75: sFactor = 1, gFactor = 0.5 -> 6 / (2 + 0.5)
    assert AverageClassSize(gamma=0.75).loss(st, s1, ctx) == 2.4
    # gamma = 0: sFactor = 0 and nothing suppressed -> 6 / 0
    assert AverageClassSize(gamma=0.0).loss(st, none, ctx) == math.inf
    # bound: at most min(4 base classes, 2 x 3 labels) = 4 classes at (1, 0) -> 6 / 4
    assert AverageClassSize().lower_bound((1, 0), ctx) == 1.5
    # a generalization of (1, 0) has at most 3 classes (+ the suppressed records): 6 / 4;
    # with k = 2 at most 2 + 1 // 2 = 2 classes of two or more: 6 / 3
    assert AverageClassSize().successor_bound(st.sizes, ctx) == 1.5
    assert AverageClassSize().successor_bound(st.sizes, replace(ctx, min_class_size=2)) == 2.0


# ------------------------------------------------------------------------------------ entropy
def test_non_uniform_entropy(env):
    ctx, at = env
    st = at(1, 0)
    none, s1, s2 = masks(st)
    # a: a(a1)=2, a(a2)=1, a(a3)=2, a(a4)=1; b(A12) = b(A34) = 3
    # G_a = 2 log2(2/3) + log2(1/3) + 2 log2(2/3) + log2(1/3) = 4 - 6 log2 3; G_b = 0 (level 0)
    v_a = trunc10(6 * LOG2_3 - 4)
    assert MonotonicNonUniformEntropy().loss(st, s2, ctx) == pytest.approx(v_a, rel=1e-13)
    assert NonUniformEntropy().loss(st, none, ctx) == pytest.approx(v_a, rel=1e-13)
    # one suppressed record: c(A34) = 1 = S and c(b3) = 1 = S -> the extra terms are 0
    assert NonUniformEntropy().loss(st, s1, ctx) == pytest.approx(v_a, rel=1e-13)
    # S = 3: c_a(A34) = 3 -> 3 log2(3/3) = 0; c_b(b2) = 2, c_b(b3) = 1:
    # 2 log2(2/3) + log2(1/3) = 2 - 3 log2 3 -> v_b = 3 log2 3 - 2
    v_b = trunc10(3 * LOG2_3 - 2)
    assert NonUniformEntropy().loss(st, s2, ctx) == pytest.approx(v_a + v_b, rel=1e-13)
    # gamma = 0.25 (sFactor 0.5): v_b = 0.5 (3 log2 3 - 2)
    assert NonUniformEntropy(gamma=0.25).loss(st, s2, ctx) == pytest.approx(
        v_a + trunc10(0.5 * (3 * LOG2_3 - 2)), rel=1e-13
    )
    # gamma = 0.75 (gFactor 0.5, sFactor 1): v_a = 0.5 (6 log2 3 - 4)
    assert NonUniformEntropy(gamma=0.75).loss(st, s2, ctx) == pytest.approx(
        trunc10(0.5 * (6 * LOG2_3 - 4)) + v_b, rel=1e-13
    )
    # weights a: 1, b: 2 -> (0.5, 1)
    w = NonUniformEntropy(weights={"a": 1, "b": 2})
    assert w.loss(st, s2, ctx) == pytest.approx(0.5 * v_a + v_b, rel=1e-13)
    assert NonUniformEntropy().lower_bound((1, 0), ctx) == pytest.approx(v_a, rel=1e-13)
    assert MonotonicNonUniformEntropy.monotonic and not NonUniformEntropy.monotonic


def test_entropy_is_zero_at_the_bottom_and_counts_every_record_at_the_top(env):
    ctx, at = env
    bottom = at(0, 0)
    assert NonUniformEntropy().loss(bottom, np.zeros(bottom.n_classes, dtype=bool), ctx) == 0.0
    # at (2, 1) every value goes to *: G_a = 2 log2(2/6) * 2 + 1 log2(1/6) * 2,
    # G_b = 3 log2(3/6) + 2 log2(2/6) + log2(1/6)
    g_a = 4 * math.log2(2 / 6) + 2 * math.log2(1 / 6)
    g_b = 3 * math.log2(3 / 6) + 2 * math.log2(2 / 6) + math.log2(1 / 6)
    got = NonUniformEntropy().loss(at(2, 1), np.zeros(1, dtype=bool), ctx)
    assert got == pytest.approx(trunc10(-g_a) + trunc10(-g_b), rel=1e-13)


# --------------------------------------------------------------------------------------- loss
def test_loss_default_gamma(env):
    ctx, at = env
    st = at(1, 0)
    _, s1, _ = masks(st)
    # shares: A12, A34 cover 2 of 4 rows -> 0.5; b at level 0 -> 1/4 (b4 counts in |dom_b|)
    # acc_a = 3*0.5 + 2*0.5 + 1 (suppressed record) = 3.5; min_a = 6/4 = 1.5
    v_a = trunc10((3.5 - 1.5) / (6 - 1.5))  # 0.4444444444
    # acc_b = 3/4 + 2/4 + 1 = 2.25; min_b = 6/4 = 1.5
    v_b = trunc10((2.25 - 1.5) / (6 - 1.5))  # 0.1666666666
    assert (v_a, v_b) == (0.4444444444, 0.1666666666)
    got = Loss(aggregate="rank").loss(st, s1, ctx)
    assert isinstance(got, RankedLoss) and got.ranks == (v_a, v_b)
    # default GEOMETRIC_MEAN: sqrt((v_a + 1)(v_b + 1)) - 1
    geo = math.pow(v_a + 1, 0.5) * math.pow(v_b + 1, 0.5) - 1
    assert Loss().loss(st, s1, ctx) == pytest.approx(geo, rel=1e-15)
    assert Loss(aggregate="sum").loss(st, s1, ctx) == pytest.approx(v_a + v_b)
    assert Loss(aggregate="arithmetic").loss(st, s1, ctx) == pytest.approx((v_a + v_b) / 2)
    assert Loss(aggregate="max").loss(st, s1, ctx) == v_a


def test_loss_gamma(env):
    ctx, at = env
    st = at(1, 0)
    _, s1, _ = masks(st)
    # gamma = 0.75: gFactor = 0.5, sFactor = 1
    # acc_a = 0.5*(1.5 + 1.0) + 1 = 2.25, min_a = 0.5*6/4 = 0.75 -> 1.5/5.25
    # acc_b = 0.5*(0.75 + 0.5) + 1 = 1.625, min_b = 0.75 -> 0.875/5.25
    got = Loss(gamma=0.75, aggregate="rank").loss(st, s1, ctx)
    assert got.ranks == (trunc10(1.5 / 5.25), trunc10(0.875 / 5.25))
    # gamma = 0.25: gFactor = 1, sFactor = 0.5; a suppressed record costs
    # share + 0.5*(1 - share): a: 0.5 + 0.25 = 0.75, b: 0.25 + 0.375 = 0.625
    # acc_a = 2.5 + 0.75 = 3.25 -> 1.75/4.5; acc_b = 1.25 + 0.625 = 1.875 -> 0.375/4.5
    got = Loss(gamma=0.25, aggregate="rank").loss(st, s1, ctx)
    assert got.ranks == (trunc10(1.75 / 4.5), trunc10(0.375 / 4.5))
    # gamma = 0: sFactor = 0, a suppressed record costs only its share
    # acc_a = 2.5 + 0.5 = 3 -> 1.5/4.5; acc_b = 1.25 + 0.25 = 1.5 -> 0
    got = Loss(gamma=0.0, aggregate="rank").loss(st, s1, ctx)
    assert got.ranks == (trunc10(1.5 / 4.5), 0.0)
    # gamma = 1: gFactor = 0 -> min = 0, acc = suppressed records: 1/6 each
    got = Loss(gamma=1.0, aggregate="rank").loss(st, s1, ctx)
    assert got.ranks == (trunc10(1 / 6), trunc10(1 / 6))


def test_loss_weights_and_rank(env):
    ctx, at = env
    st = at(1, 0)
    _, s1, _ = masks(st)
    v_a, v_b = 0.4444444444, 0.1666666666
    # weights a: 4, b: 2 -> (1, 0.5) (normalised by the largest)
    loss = Loss(aggregate="rank", weights={"a": 4, "b": 2}).loss(st, s1, ctx)
    assert loss.ranks == (v_a, v_b * 0.5)
    # weights in the context are used when the metric has none
    ctx_w = MetricContext(QIS, H, ctx.base, ctx.n_rows, {"a": 1.0, "b": 4.0})
    loss = Loss(aggregate="rank").loss(st, s1, ctx_w)
    assert loss.ranks == (v_b, v_a * 0.25)  # (0.25 v_a, v_b) sorted descending
    # all weights zero -> all 1
    loss = Loss(aggregate="rank", weights={"a": 0, "b": 0}).loss(st, s1, ctx)
    assert loss.ranks == (v_a, v_b)
    # geometric with weights follows ARX's source: prod(((v + 1) w) ** (1/m)) - 1
    geo = Loss(weights={"a": 4, "b": 2}).loss(st, s1, ctx)
    assert geo == pytest.approx(math.sqrt((v_a + 1) * 1.0) * math.sqrt((v_b + 1) * 0.5) - 1)


def test_loss_lower_bound_is_the_generalization_only_loss(env):
    ctx, at = env
    st = at(1, 0)
    none, s1, s2 = masks(st)
    lb = Loss(aggregate="rank").lower_bound((1, 0), ctx)
    # every record at its generalized value: acc_a = 6*0.5 = 3 -> 1.5/4.5; acc_b = 1.5 -> 0
    assert lb.ranks == (trunc10(1.5 / 4.5), 0.0)
    assert lb == Loss(aggregate="rank").loss(st, none, ctx)
    for mask in (s1, s2):
        for m in (Loss(), Loss(aggregate="rank"), Loss(gamma=0.2), Loss(gamma=0.8)):
            assert m.lower_bound((1, 0), ctx) <= m.loss(st, mask, ctx)


def test_rank_orders_lexicographically():
    a, b = RankedLoss([0.2, 0.5]), RankedLoss([0.5, 0.1])
    assert a.ranks == (0.5, 0.2) and float(a) == 0.5
    assert b < a and a > b and b != a and RankedLoss([0.1, 0.5]) == b
    assert sorted([a, b]) == [b, a]
    assert str(a) == "[0.5, 0.2]"
    assert aggregate([0.2, 0.5], [1.0, 0.5], Aggregate.RANK).ranks == (0.25, 0.2)


# ---------------------------------------------------------------------------------- NCP / GCP
def test_ncp_and_gcp(env):
    ctx, at = env
    st = at(1, 0)
    none, s1, _ = masks(st)
    # a at level 1: |A12| = |A34| = 2 of |A*| = 4 -> (2-1)/(4-1) = 1/3 per record;
    # b at level 0: 0. No suppression: NCP = 6/3 = 2
    assert NormalizedCertaintyPenalty().loss(st, none, ctx) == pytest.approx(2.0)
    # one suppressed record counts 1 per QI: NCP_a = 5/3 + 1, NCP_b = 1 -> 11/3
    assert NormalizedCertaintyPenalty().loss(st, s1, ctx) == pytest.approx(11 / 3)
    # GCP = NCP / (|QIDs| |T|) = (11/3) / 12
    assert GlobalCertaintyPenalty().loss(st, s1, ctx) == pytest.approx(11 / 36)
    # weights a: 2, b: 1 -> (1, 0.5): NCP = 8/3 + 0.5; GCP = NCP / (6 * 1.5)
    assert NormalizedCertaintyPenalty(weights={"a": 2, "b": 1}).loss(st, s1, ctx) == pytest.approx(
        8 / 3 + 0.5
    )
    assert GlobalCertaintyPenalty(weights={"a": 2, "b": 1}).loss(st, s1, ctx) == pytest.approx(
        (8 / 3 + 0.5) / 9
    )
    # the top of both hierarchies: every value is A* -> GCP = 1
    assert GlobalCertaintyPenalty().loss(at(2, 1), np.zeros(1, dtype=bool), ctx) == 1.0
    assert GlobalCertaintyPenalty().lower_bound((1, 0), ctx) == pytest.approx(2 / 12)


# --------------------------------------------------------------------------------- distortion
def test_distortion_ratio(env):
    ctx, at = env
    st = at(1, 0)
    none, s1, _ = masks(st)
    # heights H_a = 2, H_b = 1; fully generalized distortion = 6 * 3 = 18
    # no suppression: 6 * (1 + 0) / 18
    assert DistortionRatio().loss(st, none, ctx) == pytest.approx(6 / 18)
    # one suppressed record is at the root: 5 * 1 + 1 * 3 = 8 -> 8/18
    assert DistortionRatio().loss(st, s1, ctx) == pytest.approx(8 / 18)
    # weights a: 1, b: 2 -> (0.5, 1): (0.5 (5*1 + 1*2) + (5*0 + 1*1)) / (6 (0.5*2 + 1))
    assert DistortionRatio(weights={"a": 1, "b": 2}).loss(st, s1, ctx) == pytest.approx(4.5 / 12)
    assert DistortionRatio().lower_bound((1, 0), ctx) == pytest.approx(1 / 3)
    assert DistortionRatio().lower_bound((2, 1), ctx) == 1.0


# ---------------------------------------------------------------------------------- info left
def test_information_left_value():
    # Definition 9: 1 - (leaves under v* - 1) / leaves of the tree
    assert info_left_value(HA, "a1", 0) == 1.0
    assert info_left_value(HA, "A12", 1) == 0.75  # 1 - (2 - 1)/4
    assert info_left_value(HA, "*", 2) == 0.25  # 1 - (4 - 1)/4: the root keeps 1/|leaves|
    assert info_left_values(HA, 1).tolist() == [0.75, 0.75]
    with pytest.raises(KeyError):
        info_left_value(HA, "nope", 1)


def test_information_left_tuple_and_table(env):
    ctx, at = env
    st = at(1, 0)
    none, s1, _ = masks(st)
    m = InformationLeft()
    keys = st.key_labels()
    tuples = dict(zip(keys, m.tuples(st, s1, ctx).tolist()))
    # (A12, b1): (0.75 + 1)/2; the suppressed (A34, b3) is at both roots: (1/4 + 1/4)/2
    assert tuples[("A12", "b1")] == 0.875
    assert tuples[("A34", "b3")] == 0.25
    # table: (5 * 0.875 + 0.25) / 6; loss = 1 - table
    assert m.table(st, s1, ctx) == pytest.approx((5 * 0.875 + 0.25) / 6)
    assert m.loss(st, s1, ctx) == pytest.approx(1 - (5 * 0.875 + 0.25) / 6)
    sizes = st.sizes.astype(float)
    assert np.dot(sizes, m.tuples(st, s1, ctx)) / 6 == pytest.approx(m.table(st, s1, ctx))
    # one ungeneralized sensitive attribute joins d: (0.75 + 1 + 1)/3 for (A12, b1)
    m2 = InformationLeft(n_sensitive=1)
    assert dict(zip(keys, m2.tuples(st, none, ctx).tolist()))[("A12", "b1")] == pytest.approx(
        2.75 / 3
    )
    assert m2.table(st, none, ctx) == pytest.approx((2.75 / 3 * 6) / 6)
    assert m.lower_bound((1, 0), ctx) == pytest.approx(m.loss(st, none, ctx))


# ----------------------------------------------------------------------------------- registry
@pytest.mark.parametrize(
    ("name", "params", "cls"),
    [
        ("height", {}, Height),
        ("precision", {}, Precision),
        ("precision", {"monotonic": True}, MonotonicPrecision),
        ("discernibility", {}, Discernibility),
        ("discernibility", {"monotonic": True}, MonotonicDiscernibility),
        ("aecs", {"gamma": 0.3}, AverageClassSize),
        ("entropy", {}, NonUniformEntropy),
        ("entropy", {"monotonic": True}, MonotonicNonUniformEntropy),
        ("loss", {"aggregate": "rank", "gamma": 0.2, "weights": {"a": 1}}, Loss),
        ("ncp", {}, NormalizedCertaintyPenalty),
        ("gcp", {"weights": {"a": 2}}, GlobalCertaintyPenalty),
        ("distortion", {}, DistortionRatio),
        ("info_left", {"n_sensitive": 1}, InformationLeft),
    ],
)
def test_build_metric(name, params, cls):
    m = build_metric(name, **params)
    assert type(m) is cls
    assert m.name == name


def test_registry_names_and_defaults():
    assert set(METRICS) == {
        "entropy", "loss", "discernibility", "aecs", "precision", "height",
        "ncp", "gcp", "distortion", "info_left",
    }  # fmt: skip
    assert build_metric("loss").aggregate is Aggregate.GEOMETRIC
    assert build_metric("precision").aggregate is Aggregate.ARITHMETIC
    assert build_metric("entropy").aggregate is Aggregate.SUM
    assert build_metric("height").aggregate is Aggregate.SUM
    assert build_metric("loss", aggregate="GEOMETRIC_MEAN").aggregate is Aggregate.GEOMETRIC
    assert build_metric("height", monotonic=True).monotonic
    assert not build_metric("loss", monotonic=False).monotonic


@pytest.mark.parametrize(
    ("name", "params", "match"),
    [
        ("entropyy", {}, "Valid metrics: entropy, loss, discernibility"),
        ("entropyy", {}, "Did you mean 'entropy'"),
        ("loss", {"gama": 0.3}, "Valid parameters: gamma"),
        ("loss", {"gamma": 1.5}, "gamma"),
        ("loss", {"gamma": True}, "gamma"),
        ("loss", {"aggregate": "median"}, "sum, arithmetic, geometric, max, rank"),
        ("loss", {"monotonic": True}, "no monotonic variant"),
        ("height", {"monotonic": False}, "no non-monotonic variant"),
        ("entropy", {"monotonic": "yes"}, "must be true or false"),
        ("ncp", {"weights": {"a": -1}}, "weight of attribute 'a'"),
        ("ncp", {"weights": [1, 2]}, "mapping"),
        ("info_left", {"n_sensitive": -1}, "n_sensitive"),
        ("discernibility", {"gamma": 0.5}, "Valid parameters: monotonic"),
    ],
)
def test_build_metric_errors(name, params, match):
    with pytest.raises(ParameterError, match=match):
        build_metric(name, **params)


def test_metrics_need_a_mask_per_class(env):
    ctx, at = env
    st = at(1, 0)
    with pytest.raises(ParameterError, match="one entry per class"):
        Loss().loss(st, np.zeros(2, dtype=bool), ctx)


def test_metrics_ignore_the_order_of_classes(env):
    ctx, at = env
    st = at(1, 0)
    _, s1, _ = masks(st)
    perm = np.array([2, 0, 1])
    from dataclasses import replace

    assert st.keys is not None
    shuffled = replace(st, sizes=st.sizes[perm], keys=st.keys[perm])
    for name in METRICS:
        m = build_metric(name)
        assert m.loss(shuffled, s1[perm], ctx) == pytest.approx(m.loss(st, s1, ctx), rel=1e-14)


# ---------------------------------------------------------------------- ARX parity (adult)
ADULT_QIS = (
    "sex", "age", "race", "marital-status", "education", "native-country", "workclass",
    "salary-class",
)  # fmt: skip
#: Weights of ARX's TestUtilityMetricsLoss.weight(): column i of adult.csv weighs i + 1.
ADULT_WEIGHTS = {
    "sex": 1, "age": 2, "race": 3, "marital-status": 4, "education": 5, "native-country": 6,
    "workclass": 7, "occupation": 8, "salary-class": 9,
}  # fmt: skip


@pytest.fixture(scope="module")
def adult(shared):
    from anonlab import CsvOptions, read_hierarchy, read_table

    d = shared / "datasets" / "arx"
    table = read_table(d / "adult.csv", csv_options=CsvOptions(separator=";", na_values=()))
    hier = {q: read_hierarchy(d / f"adult_hierarchy_{q}.csv", attribute=q) for q in ADULT_QIS}
    engine = open_engine(table, hierarchies=hier)
    base = engine.class_stats(list(ADULT_QIS))
    ctx = MetricContext(ADULT_QIS, hier, base, table.n_rows, {})

    def evaluate(levels, metric, k=5):
        """The loss ARX reports for a node with k-anonymity: violating classes suppressed."""
        st = engine.class_stats(list(ADULT_QIS), levels=dict(zip(ADULT_QIS, levels)))
        loss = metric.loss(st, st.sizes < k, ctx)
        assert metric.lower_bound(tuple(levels), ctx) <= loss
        return loss

    return evaluate


# From ARX's TestUtilityMetrics (adult.csv, KAnonymity(5), the QIs in CSV column order;
# ARX reports the loss of a node with every violating class suppressed).
ARX_UTILITY_CASES = [
    ("aecs", {}, [0, 0, 0, 0, 0, 0, 0, 0], 29.113899613899616),
    ("aecs", {}, [0, 3, 1, 0, 0, 1, 1, 0], 53.38407079646018),
    ("aecs", {}, [1, 2, 1, 2, 0, 2, 0, 1], 93.96261682242991),
    ("aecs", {}, [1, 4, 1, 2, 3, 2, 2, 1], 30162.0),
    ("entropy", {}, [0, 0, 0, 0, 0, 0, 0, 0], 268778.22471939825),
    ("entropy", {}, [0, 1, 0, 1, 0, 2, 1, 1], 199996.96695661292),
    ("entropy", {}, [0, 2, 1, 0, 2, 2, 2, 1], 268749.92540448345),
    ("entropy", {}, [1, 4, 1, 2, 3, 2, 2, 1], 455884.9365769584),
    ("discernibility", {}, [0, 0, 0, 0, 0, 0, 0, 0], 4.63536157e8),
    ("discernibility", {}, [0, 0, 1, 0, 3, 2, 0, 0], 1.10335369e8),
    ("discernibility", {}, [1, 2, 0, 2, 2, 1, 0, 0], 5.4541529e7),
    ("discernibility", {"monotonic": True}, [0, 0, 0, 0, 0, 0, 0, 0], 485542.0),
    ("discernibility", {"monotonic": True}, [1, 1, 0, 1, 0, 2, 0, 0], 4426432.0),
    ("discernibility", {"monotonic": True}, [1, 4, 1, 2, 3, 2, 2, 1], 9.09746244e8),
    ("height", {}, [0, 3, 0, 1, 3, 2, 1, 0], 10.0),
    ("height", {}, [1, 4, 1, 2, 3, 2, 1, 0], 14.0),
    ("precision", {}, [0, 0, 0, 0, 0, 0, 0, 0], 0.5090179696306611),
    ("precision", {}, [0, 0, 0, 2, 1, 2, 0, 0], 0.45063186570298164),
    ("precision", {}, [1, 0, 0, 1, 2, 1, 2, 1], 0.6099534734655084),
    ("precision", {}, [1, 4, 1, 2, 2, 2, 1, 0], 0.7708713226355458),
    ("precision", {"monotonic": True}, [0, 4, 1, 1, 1, 1, 0, 1], 0.5416666666666667),
    ("precision", {"monotonic": True}, [1, 3, 1, 0, 1, 2, 2, 0], 0.6354166666666667),
]


@pytest.mark.shared
@pytest.mark.parametrize(("name", "params", "levels", "expected"), ARX_UTILITY_CASES)
def test_arx_parity_utility_metrics(adult, name, params, levels, expected):
    got = adult(levels, build_metric(name, **params))
    # entropy sums logarithms in another order than ARX: equal to the last bits
    assert got == pytest.approx(expected, rel=1e-14 if name == "entropy" else 0, abs=0)


# From ARX's TestUtilityMetrics / TestUtilityMetricsLoss (Loss with RANK; printed vectors).
ARX_LOSS_CASES = [
    ({}, [0, 0, 0, 2, 0, 0, 0, 0], [1.0] + [0.3843909555] * 7),
    (
        {},
        [0, 3, 1, 1, 1, 1, 0, 0],
        [1.0, 0.4535066198, 0.299545786, 0.220264444, 0.2196339765] + [0.0350772495] * 3,
    ),
    ({}, [0, 3, 0, 0, 1, 0, 0, 0], [0.297248193, 0.29678055] + [0.1297659306] * 6),
    ({"gamma": 0.33}, [0, 1, 0, 0, 0, 0, 0, 0], [0.2300344804] + [0.1976148796] * 7),
    (
        {"gamma": 0.66},
        [0, 3, 0, 0, 1, 1, 1, 0],
        [0.2366229645, 0.2359393534, 0.1843930011, 0.1821869476] + [0.0624295471] * 4,
    ),
    ({"gamma": 1.0}, [1, 4, 0, 2, 3, 2, 2, 0], [0.0] * 8),
    (
        {"weights": ADULT_WEIGHTS},
        [1, 3, 0, 0, 0, 0, 0, 0],
        [
            0.1485312645,
            0.11552431683333335,
            0.1111111111111111,
            0.099020843,
            0.08251736916666667,
            0.06932099024444444,
            0.06601389533333334,
            0.0495104215,
        ],
    ),  # fmt: skip
    (
        {"weights": ADULT_WEIGHTS, "gamma": 0.66},
        [1, 3, 0, 0, 1, 0, 0, 0],
        [
            0.12176904994444444,
            0.1045686625,
            0.08133118194444446,
            0.06971244166666667,
            0.06287238585555556,
            0.04912232613333333,
            0.04647496111111111,
            0.03485622083333333,
        ],
    ),  # fmt: skip
]


@pytest.mark.shared
@pytest.mark.parametrize(("params", "levels", "expected"), ARX_LOSS_CASES)
def test_arx_parity_loss_rank(adult, params, levels, expected):
    got = adult(levels, build_metric("loss", aggregate="rank", **params))
    assert list(got.ranks) == expected  # bit for bit


@pytest.mark.shared
def test_arx_parity_loss_default_geometric(adult):
    # TestUtilityMetricsLoss #1 at [0,3,0,0,1,0,0,0] with the default GEOMETRIC_MEAN
    ranks = [0.297248193, 0.29678055] + [0.1297659306] * 6
    expected = 1.0
    for v in ranks:  # ARX multiplies in attribute order; the product commutes up to rounding
        expected *= math.pow(v + 1.0, 1 / 8)
    got = adult([0, 3, 0, 0, 1, 0, 0, 0], build_metric("loss"))
    assert got == pytest.approx(expected - 1.0, rel=1e-14)
