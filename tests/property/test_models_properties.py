"""Hypothesis properties of the privacy models.

* Models flagged ``monotonic_generalization`` stay satisfied when classes are merged.
* Every model is invariant to the order of the classes.
* The vectorised checks equal a per-class pure-Python oracle written from the definitions.
* ``value()`` is consistent with ``class_ok`` (the model holds exactly at its value).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonlab import flat_hierarchy, taxonomy_hierarchy
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.models import (
    AlphaKAnonymity,
    BasicBetaLikeness,
    DeltaDisclosure,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    EntropyLDiversity,
    EqualTCloseness,
    HierarchicalTCloseness,
    KAnonymity,
    OrderedTCloseness,
    PrivacyModel,
    RecursiveCLDiversity,
)

VALUES = ["1", "2", "3", "10", "20"]
HIER = taxonomy_hierarchy(
    {
        "1": ["low", "num"],
        "2": ["low", "num"],
        "3": ["low", "num"],
        "10": ["high", "num"],
        "20": ["high", "num"],
    },
    attribute="s",
)
HIER_FLAT = flat_hierarchy(VALUES, attribute="s")


def stats_of(counts: np.ndarray, extra: np.ndarray | None = None) -> ClassStats:
    f = np.asarray(counts, dtype=np.int64)
    sens = {"s": SensitiveHistogram(np.array(VALUES[: f.shape[1]], dtype=object), f)}
    if extra is not None:
        sens["u"] = SensitiveHistogram(np.array(["a", "b", "c"], dtype=object), extra)
    return ClassStats(("q",), (0,), f.sum(axis=1), int(f.sum()), sensitive=sens)


@st.composite
def partitions(draw, max_classes=7):
    n_values = draw(st.integers(1, len(VALUES)))
    n_classes = draw(st.integers(1, max_classes))
    rows = draw(
        st.lists(
            st.lists(st.integers(0, 4), min_size=n_values, max_size=n_values).filter(
                lambda r: sum(r) > 0
            ),
            min_size=n_classes,
            max_size=n_classes,
        )
    )
    extra = draw(
        st.lists(
            st.lists(st.integers(0, 3), min_size=3, max_size=3),
            min_size=n_classes,
            max_size=n_classes,
        )
    )
    counts = np.array(rows, dtype=np.int64)
    # the second attribute must describe the same rows: rescale its counts per class
    ex = np.array(extra, dtype=np.int64)
    ex[:, 0] = counts.sum(axis=1) - ex[:, 1:].sum(axis=1)
    ex = np.where(ex[:, :1] < 0, np.column_stack([counts.sum(axis=1), 0 * ex[:, 1:]]), ex)
    groups = draw(st.lists(st.integers(0, 2), min_size=n_classes, max_size=n_classes))
    perm = draw(st.permutations(list(range(n_classes))))
    return counts, ex, np.array(groups), np.array(perm)


def model_list(n_values: int) -> list[PrivacyModel]:
    first = VALUES[0]
    out: list[PrivacyModel] = [
        KAnonymity(2),
        KAnonymity(3),
        DistinctLDiversity("s", 2),
        EntropyLDiversity("s", 1.5),
        EntropyLDiversity("s", 2),
        RecursiveCLDiversity("s", 2, 2),
        RecursiveCLDiversity("s", 3, 2),
        RecursiveCLDiversity("s", 1, 1),
        EqualTCloseness("s", 0.2),
        EqualTCloseness("s", 0.5),
        OrderedTCloseness("s", 0.2),
        OrderedTCloseness("s", 1 / 3),
        HierarchicalTCloseness("s", 0.25, HIER),
        HierarchicalTCloseness("s", 0.5, HIER),
        AlphaKAnonymity("s", 0.5, 2),
        AlphaKAnonymity("s", 2 / 3, 1),
        AlphaKAnonymity(["s", "u"], 0.75, 2),
        AlphaKAnonymity("s", 0.5, 2, values=first, refined=False),
        AlphaKAnonymity("s", 0.3, 1, values=first),
        BasicBetaLikeness("s", 0.5),
        BasicBetaLikeness("s", 1),
        EnhancedBetaLikeness("s", 0.5),
        EnhancedBetaLikeness("s", 2),
        DeltaDisclosure("s", 0.5),
        DeltaDisclosure("s", 1),
    ]
    return out


def merge(counts: np.ndarray, groups: np.ndarray) -> np.ndarray:
    labels = np.unique(groups)
    return np.stack([counts[groups == g].sum(axis=0) for g in labels])


@pytest.mark.slow
@given(partitions())
def test_monotonic_models_survive_merging(part):
    counts, extra, groups, _ = part
    fine = stats_of(counts, extra)
    coarse = stats_of(merge(counts, groups), merge(extra, groups))
    for model in model_list(counts.shape[1]):
        if not model.monotonic_generalization:
            continue
        if model.holds(fine):
            assert model.holds(coarse), model
        if model.monotonic_suppression:
            # a merged class that contains a passing class passes
            passing = model.class_ok(fine)
            for i, g in enumerate(np.unique(groups)):
                if passing[groups == g].any():
                    assert model.class_ok(coarse)[i], model


@pytest.mark.slow
@given(partitions())
def test_models_are_invariant_to_class_order(part):
    counts, extra, _, perm = part
    a = stats_of(counts, extra)
    b = stats_of(counts[perm], extra[perm])
    for model in model_list(counts.shape[1]):
        assert np.array_equal(model.class_ok(a)[perm], model.class_ok(b)), model
        va, vb = model.value(a), model.value(b)
        assert va == vb or (math.isnan(va) and math.isnan(vb)), model


# ------------------------------------------------------------------ oracles
def oracle_ok(model: PrivacyModel, counts: np.ndarray, extra: np.ndarray) -> list[bool]:
    """A per-class, pure-Python reading of each definition (exact fractions where possible)."""
    vals = VALUES[: counts.shape[1]]
    total = [int(x) for x in counts.sum(axis=0)]
    n_all = sum(total)
    out = []
    for row, row_u in zip(counts.tolist(), extra.tolist()):
        n = sum(row)
        present = [i for i, f in enumerate(row) if f > 0]
        q = [Fraction(f, n) for f in row]
        p = [Fraction(t, n_all) for t in total]
        if isinstance(model, KAnonymity):
            res = n >= model.k
        elif isinstance(model, DistinctLDiversity):
            res = len(present) >= model.l
        elif isinstance(model, EntropyLDiversity):
            h = -sum(float(q[i]) * math.log(float(q[i])) for i in present)
            res = len(present) >= math.ceil(model.l) and h >= math.log(model.l) - 1e-9
        elif isinstance(model, RecursiveCLDiversity):
            r = sorted(row, reverse=True)
            res = len(present) >= model.l and r[0] < model.c * sum(r[model.l - 1 :])
        elif isinstance(model, EqualTCloseness):
            d = sum(abs(p[i] - q[i]) for i in range(len(row))) / 2
            res = float(d) <= model.t
        elif isinstance(model, OrderedTCloseness):
            order = sorted(range(len(row)), key=lambda i: float(vals[i]))
            cum, d = Fraction(0), Fraction(0)
            for i in order:
                cum += q[i] - p[i]
                d += abs(cum)
            res = len(row) == 1 or float(d / (len(row) - 1)) <= model.t
        elif isinstance(model, HierarchicalTCloseness):
            res = float(hier_emd(q, p, vals)) <= model.t
        elif isinstance(model, AlphaKAnonymity):
            res = n >= model.k
            if model.values is not None:
                fs = sum(row[vals.index(v)] for v in model.values)
                if model.refined:
                    cap = math.ceil(Fraction(str(model.alpha)) * n)
                    res = res and fs <= cap
                else:
                    res = res and float(Fraction(fs, n)) <= model.alpha
            else:
                for attr in model.attributes:
                    r = row if attr == "s" else row_u
                    res = res and float(Fraction(max(r), n)) <= model.alpha
        elif isinstance(model, BasicBetaLikeness):
            res = all(float((q[i] - p[i]) / p[i]) <= model.beta for i in present)
        elif isinstance(model, EnhancedBetaLikeness):
            res = all(
                float((q[i] - p[i]) / p[i]) <= min(model.beta, -math.log(float(p[i])))
                for i in present
            )
        elif isinstance(model, DeltaDisclosure):
            res = all(abs(math.log2(float(q[i] / p[i]))) < model.delta for i in present)
        else:  # pragma: no cover
            raise AssertionError(model)
        out.append(bool(res))
    return out


def hier_emd(q, p, vals) -> Fraction:
    """EMD with the tree distance of HIER by the closed form of Li et al. (Section 4.2):
    the sum over inner nodes N of (height(N)/H) * min(pos, neg) of the children's extras."""

    def node(v, level):
        return HIER.generalize([v], level)[0] if level < HIER.height else "*"

    extras = {(0, v): p[i] - q[i] for i, v in enumerate(vals)}
    cost = Fraction(0)
    for level in range(1, HIER.height + 1):
        groups: dict[str, list[Fraction]] = {}
        for (lv, label), e in extras.items():
            assert lv == level - 1
            parent = node(next(v for v in vals if node(v, level - 1) == label), level)
            groups.setdefault(parent, []).append(e)
        extras = {}
        for parent, es in groups.items():
            pos = sum((e for e in es if e > 0), Fraction(0))
            neg = -sum((e for e in es if e < 0), Fraction(0))
            cost += Fraction(level, HIER.height) * min(pos, neg)
            extras[(level, parent)] = pos - neg
    return cost


@pytest.mark.slow
@given(partitions())
def test_vectorised_checks_equal_the_oracle(part):
    counts, extra, _, _ = part
    s = stats_of(counts, extra)
    for model in model_list(counts.shape[1]):
        assert model.class_ok(s).tolist() == oracle_ok(model, counts, extra), model


@given(partitions())
def test_hierarchical_with_flat_hierarchy_is_equal_distance(part):
    counts, _, _, _ = part
    s = stats_of(counts)
    a = HierarchicalTCloseness("s", 1, HIER_FLAT).class_distance(s)
    b = EqualTCloseness("s", 1).class_distance(s)
    assert np.allclose(a, b, rtol=0, atol=1e-15)


@given(partitions())
def test_value_is_consistent_with_class_ok(part):
    counts, extra, _, _ = part
    s = stats_of(counts, extra)
    k = KAnonymity(1).value(s)
    assert KAnonymity(k).holds(s) and not KAnonymity(k + 1).holds(s)
    l_min = DistinctLDiversity("s", 1).value(s)
    assert DistinctLDiversity("s", l_min).holds(s)
    assert not DistinctLDiversity("s", l_min + 1).holds(s)
    e = EntropyLDiversity("s", 1).value(s)
    assert EntropyLDiversity("s", max(1.0, e * (1 - 1e-12))).holds(s)
    assert not EntropyLDiversity("s", e * (1 + 1e-6)).holds(s)
    for cls in (EqualTCloseness, OrderedTCloseness):
        t = cls("s", 0).value(s)
        assert cls("s", t).holds(s)
        if t > 0:
            assert not cls("s", np.nextafter(t, 0)).holds(s)
    t = HierarchicalTCloseness("s", 0, HIER).value(s)
    assert HierarchicalTCloseness("s", t, HIER).holds(s)
    a = AlphaKAnonymity("s", 1, 1).value(s)
    assert AlphaKAnonymity("s", a, k).holds(s)
    assert not AlphaKAnonymity("s", np.nextafter(a, 0), k).holds(s)
    b = BasicBetaLikeness("s", 1).value(s)
    if b > 0:
        assert BasicBetaLikeness("s", b).holds(s)
        assert not BasicBetaLikeness("s", np.nextafter(b, 0)).holds(s)
    eb = EnhancedBetaLikeness("s", 1).value(s)
    if 0 < eb < math.inf:
        assert EnhancedBetaLikeness("s", eb).holds(s)
    elif eb == math.inf:
        assert not EnhancedBetaLikeness("s", 1e300).holds(s)
    d = DeltaDisclosure("s", 1).value(s)
    if d > 0:
        assert not DeltaDisclosure("s", d).holds(s)  # strict
        assert DeltaDisclosure("s", np.nextafter(d, math.inf)).holds(s)
    else:
        assert DeltaDisclosure("s", 1e-9).holds(s)
    c = RecursiveCLDiversity("s", 1, 2).value(s)
    if c < math.inf:
        assert not RecursiveCLDiversity("s", c, 2).holds(s)
        assert RecursiveCLDiversity("s", c * (1 + 1e-9), 2).holds(s)
