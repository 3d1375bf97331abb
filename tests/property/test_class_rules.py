"""A model's rule (``PrivacyModel.class_rule``) says of every class what its ``class_ok``
says, run as plain Python and compiled by numba, ties included: t is drawn among the classes'
own distances, c among their own ratios (a strict inequality), k and l among their sizes and
distinct values."""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.models import (
    DistinctLDiversity,
    EqualTCloseness,
    KAnonymity,
    RecursiveCLDiversity,
    build_model,
)

_COMPILED: dict[object, object] = {}
VALUES = np.array(["p", "q", "r", "s", None], dtype=object)


def compiled(function):
    """The rule compiled by numba, as the PrivacyFrost2 kernels compile it (once)."""
    if function not in _COMPILED:
        _COMPILED[function] = numba.njit(function)
    return _COMPILED[function]


def draw_model(name, hist, data):
    """A model of ``name`` whose parameter is often a tie with one of the classes."""
    if name == "k_anonymity":
        ties = {int(x) for x in hist.sum(axis=1) if x >= 1}
        return KAnonymity(data.draw(st.sampled_from(sorted(ties | {1, 7}))))
    if name == "distinct_l_diversity":
        return DistinctLDiversity("s", data.draw(st.integers(1, hist.shape[1] + 1)))
    if name == "equal_t_closeness":
        stats = ClassStats(("a",), (-1,), hist.sum(axis=1), int(hist.sum()),
                           sensitive={"s": SensitiveHistogram(VALUES[: hist.shape[1]], hist)})  # fmt: skip
        with np.errstate(invalid="ignore"):
            dist = EqualTCloseness("s", 0.5).class_distance(stats)
        ties = [float(x) for x in dist if x <= 1.0]
        t = data.draw(st.sampled_from(ties) | st.floats(0.0, 1.0) if ties else st.floats(0, 1))
        return EqualTCloseness("s", t)
    lq = data.draw(st.integers(1, hist.shape[1] + 1))
    desc = -np.sort(-hist, axis=1)
    tail = desc[:, lq - 1 :].sum(axis=1) if lq <= desc.shape[1] else np.zeros(len(desc))
    ratios = [float(h) / float(t) for h, t in zip(desc[:, 0], tail) if t > 0 and h > 0]
    c = data.draw(st.sampled_from(ratios) | st.floats(0.1, 5.0) if ratios else st.floats(0.1, 5))
    return RecursiveCLDiversity("s", c, lq)


@pytest.mark.slow
@given(
    st.integers(1, 5).flatmap(
        lambda w: st.lists(
            st.lists(st.integers(0, 5), min_size=w, max_size=w), min_size=1, max_size=10
        )
    ),  # fmt: skip
    st.sampled_from(
        ["k_anonymity", "distinct_l_diversity", "recursive_cl_diversity", "equal_t_closeness"]
    ),  # fmt: skip
    st.data(),
)
def test_rule_equals_class_ok(counts, name, data):
    hist = np.array(counts, dtype=np.int64)
    sizes = hist.sum(axis=1)
    stats = ClassStats(("a",), (-1,), sizes, int(sizes.sum()),
                       sensitive={"s": SensitiveHistogram(VALUES[: hist.shape[1]], hist)})  # fmt: skip
    model = draw_model(name, hist, data)
    rule = model.class_rule()
    assert rule is not None
    with np.errstate(invalid="ignore"):  # an empty table's 0 / 0 fails, as NaN
        want = model.class_ok(stats)
    params = np.array(rule.params, dtype=np.float64)
    table = hist.sum(axis=0)
    for c in range(hist.shape[0]):
        if model.sensitive_attributes:
            args = (int(sizes[c]), hist[c], table, int(table.sum()), params)
        else:  # no sensitive attribute: no counts
            empty = np.zeros(0, dtype=np.int64)
            args = (int(sizes[c]), empty, empty, int(sizes.sum()), params)
        assert rule.function(*args) == bool(want[c])
        assert compiled(rule.function)(*args) == bool(want[c])


def test_only_the_models_own_class_has_its_rule():
    """A subclass (which may judge otherwise) and a model without a rule judge themselves."""

    class Stricter(DistinctLDiversity):
        pass

    assert DistinctLDiversity("s", 2).class_rule() is not None
    assert Stricter("s", 2).class_rule() is None
    assert build_model("entropy_l_diversity", {"attribute": "s", "l": 2}).class_rule() is None
    assert build_model("ordered_t_closeness", {"attribute": "s", "t": 0.2}).class_rule() is None
