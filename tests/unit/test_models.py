"""Privacy models: hand-computed cases (boundaries included), parameters, registry, feasibility."""

from __future__ import annotations

import math

import numpy as np
import pytest

from anonlab import EncodedTable, Hierarchy, flat_hierarchy, open_engine, taxonomy_hierarchy
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.exceptions import HierarchyError, InputError, ParameterError
from anonlab.models import (
    MODELS,
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
    build_model,
    check_feasible,
    model_parameters,
)


def stats_of(counts, values=None, attr="s", extra=None) -> ClassStats:
    """Class statistics with the given per-class value counts (one row per class)."""
    f = np.asarray(counts, dtype=np.int64)
    vals = np.array(
        values if values is not None else [f"v{i}" for i in range(f.shape[1])], dtype=object
    )
    sens = {attr: SensitiveHistogram(vals, f)}
    for name, (v2, c2) in (extra or {}).items():
        sens[name] = SensitiveHistogram(np.array(v2, dtype=object), np.asarray(c2, dtype=np.int64))
    return ClassStats(
        columns=("q",), levels=(0,), sizes=f.sum(axis=1), n_rows=int(f.sum()), sensitive=sens
    )


def ok(model: PrivacyModel, stats: ClassStats) -> list[bool]:
    return [bool(x) for x in model.class_ok(stats)]


HIER = taxonomy_hierarchy({"a": ["ab"], "b": ["ab"], "c": ["cd"], "d": ["cd"]}, attribute="s")


# ------------------------------------------------------------------ k-anonymity
def test_k_anonymity():
    s = stats_of([[2, 0], [1, 2], [3, 2]])
    assert ok(KAnonymity(3), s) == [False, True, True]
    assert ok(KAnonymity(2), s) == [True, True, True]  # equality passes
    assert KAnonymity(1).holds(s)
    assert KAnonymity(3).value(s) == 2
    assert KAnonymity(4).min_class_size == 4


@pytest.mark.parametrize("k", [0, -1, 2.5, True, "3", None])
def test_k_anonymity_bad_k(k):
    with pytest.raises(
        ParameterError, match=r"The 'k' parameter of KAnonymity must be an int >= 1"
    ):
        KAnonymity(k)


# ------------------------------------------------------------------ distinct l-diversity
def test_distinct_l_diversity():
    s = stats_of([[2, 0, 0], [1, 1, 0], [1, 1, 1]])
    assert ok(DistinctLDiversity("s", 2), s) == [False, True, True]
    assert ok(DistinctLDiversity("s", 3), s) == [False, False, True]
    assert DistinctLDiversity("s", 2).value(s) == 1
    assert DistinctLDiversity("s", 3).min_class_size == 3


def test_null_sensitive_value_is_a_value_of_its_own():
    t = EncodedTable.from_rows([("a", "x"), ("a", None), ("b", "x"), ("b", "y")], ["q", "s"])
    s = open_engine(t).class_stats(["q"], sensitive=["s"])
    assert ok(DistinctLDiversity("s", 2), s) == [True, True]


@pytest.mark.parametrize("ell", [0, 1.5, "2"])
def test_distinct_bad_l(ell):
    with pytest.raises(ParameterError, match="'l' parameter of DistinctLDiversity"):
        DistinctLDiversity("s", ell)


# ------------------------------------------------------------------ entropy l-diversity
def test_entropy_equality_allowed():
    # a class of exactly l equally frequent values has entropy ln l: it passes
    for ell in range(2, 30):
        for m in (1, 3, 7):
            s = stats_of([[m] * ell])
            assert EntropyLDiversity("s", ell).holds(s), (ell, m)
            assert not EntropyLDiversity("s", ell + 0.01).holds(s)


def test_entropy_hand_computed():
    s = stats_of([[3, 1], [1, 1], [2, 2]])
    h = -(0.75 * math.log(0.75) + 0.25 * math.log(0.25))  # 0.5623
    m = EntropyLDiversity("s", 1.5)
    assert np.allclose(m.class_entropy(s), [h, math.log(2), math.log(2)])
    assert ok(m, s) == [True, True, True]  # exp(0.5623) = 1.755 >= 1.5
    assert ok(EntropyLDiversity("s", 2), s) == [False, True, True]
    assert EntropyLDiversity("s", 2).value(s) == pytest.approx(math.exp(h))
    assert EntropyLDiversity("s", 2.5).min_class_size == 3
    # needs ceil(l) distinct values: exp(H) = 2 < 2.5
    assert not EntropyLDiversity("s", 2.5).holds(stats_of([[2, 2, 0]]))
    assert EntropyLDiversity("s", 2.5).holds(stats_of([[1, 1, 1]]))
    assert EntropyLDiversity("s", 1).holds(stats_of([[5, 0]]))  # l = 1: always


@pytest.mark.parametrize("ell", [0.5, 0, float("nan"), float("inf"), "2"])
def test_entropy_bad_l(ell):
    with pytest.raises(ParameterError, match="'l' parameter of EntropyLDiversity"):
        EntropyLDiversity("s", ell)


# ------------------------------------------------------------------ recursive (c,l)
def test_recursive_strict_inequality():
    m = RecursiveCLDiversity("s", 2, 2)
    # [4,2]: 4 < 2*2 is false (strict); [3,2]: 3 < 4 true
    assert ok(m, stats_of([[4, 2], [3, 2]])) == [False, True]
    # columns unsorted: sorted descending [4,2,1], tail r_2 + r_3 = 3, 4 < 6
    assert ok(m, stats_of([[1, 4, 2]])) == [True]
    assert ok(RecursiveCLDiversity("s", 1, 3), stats_of([[2, 2, 2]])) == [False]  # 2 < 2
    assert ok(RecursiveCLDiversity("s", 1.5, 3), stats_of([[2, 2, 2]])) == [True]  # 2 < 3
    assert ok(RecursiveCLDiversity("s", 3, 3), stats_of([[4, 1, 1]])) == [False]  # 4 < 3
    assert ok(RecursiveCLDiversity("s", 5, 3), stats_of([[4, 1, 1]])) == [True]  # 4 < 5


def test_recursive_needs_l_distinct_values():
    m = RecursiveCLDiversity("s", 100, 2)
    assert ok(m, stats_of([[5, 0, 0], [5, 1, 0]])) == [False, True]
    assert m.value(stats_of([[5, 0, 0], [5, 1, 0]])) == math.inf
    assert m.min_class_size == 2


def test_recursive_value_is_the_threshold():
    s = stats_of([[4, 2, 1], [3, 3, 3]])
    m = RecursiveCLDiversity("s", 1, 2)
    assert m.value(s) == pytest.approx(4 / 3)  # max(4/3, 3/6)
    assert not RecursiveCLDiversity("s", 4 / 3, 2).holds(s)  # strict at c = c*
    assert RecursiveCLDiversity("s", 4 / 3 + 1e-9, 2).holds(s)


@pytest.mark.parametrize(("c", "ell"), [(0, 2), (-1, 2), (2, 0), (2, 1.5), ("2", 2)])
def test_recursive_bad_parameters(c, ell):
    with pytest.raises(ParameterError, match="parameter of RecursiveCLDiversity"):
        RecursiveCLDiversity("s", c, ell)


# ------------------------------------------------------------------ t-closeness
def test_equal_t_closeness_boundary():
    s = stats_of([[2, 0], [0, 2], [1, 1]])
    m = EqualTCloseness("s", 0.5)
    assert np.allclose(m.class_distance(s), [0.5, 0.5, 0.0])
    assert ok(m, s) == [True, True, True]  # equality passes
    assert ok(EqualTCloseness("s", 0.49), s) == [False, False, True]
    assert m.value(s) == 0.5


def test_equal_t_closeness_counts_values_absent_from_the_class():
    # p = (1/3, 1/3, 1/3); class 1 q = (1, 0, 0): (2/3 + 1/3 + 1/3) / 2 = 2/3
    s = stats_of([[2, 0, 0], [0, 1, 1], [0, 1, 1]])
    assert EqualTCloseness("s", 1).class_distance(s)[0] == pytest.approx(2 / 3)
    assert EqualTCloseness("s", 2 / 3).holds(s)


def test_ordered_t_closeness_numeric_order():
    # values 1, 10, 2 (as stored); numeric order 1 < 2 < 10
    s = stats_of([[1, 1, 0], [0, 0, 2]], values=["1", "10", "2"])
    # p = (1: .25, 2: .5, 10: .25); class 1 q = (.5, 0, .5): r = (.25, -.5, .25),
    # cumulative .25, -.25, 0 -> .5 / (M - 1) = .25
    m = OrderedTCloseness("s", 0.25)
    assert np.allclose(m.class_distance(s), [0.25, 0.25])
    assert m.holds(s)
    # an explicit (here lexicographic) order: cumulative .25, .5, 0 -> .375
    lex = OrderedTCloseness("s", 0.25, order=["1", "10", "2"])
    assert np.allclose(lex.class_distance(s), [0.375, 0.375])
    assert not lex.holds(s)


def test_ordered_t_closeness_lexicographic_and_errors():
    s = stats_of([[1, 1, 0], [0, 0, 2]], values=["a", "c", "b"])  # order a < b < c
    assert np.allclose(OrderedTCloseness("s", 1).class_distance(s), [0.25, 0.25])
    with pytest.raises(ParameterError, match="'b' of sensitive attribute 's' is missing"):
        OrderedTCloseness("s", 1, order=["a", "c"]).class_ok(s)
    with pytest.raises(ParameterError, match="twice"):
        OrderedTCloseness("s", 1, order=["a", "a"])
    with pytest.raises(ParameterError, match="'order'"):
        OrderedTCloseness("s", 1, order="abc")
    assert OrderedTCloseness("s", 0).holds(stats_of([[3], [2]]))  # M = 1: distance 0


def test_ordered_distance_uses_every_value_of_the_column():
    # M = 4 although each class holds 2 values
    s = stats_of([[1, 1, 0, 0], [0, 0, 1, 1]], values=["1", "2", "3", "4"])
    # p = .25 each; class 1 r = (.25,.25,-.25,-.25), cumulative .25,.5,.25,0 -> 1/3
    assert np.allclose(OrderedTCloseness("s", 1).class_distance(s), [1 / 3, 1 / 3])


def test_hierarchical_t_closeness_hand_computed():
    # hierarchy a,b -> ab; c,d -> cd; * (H = 2)
    s = stats_of([[2, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 2]], values=["a", "b", "c", "d"])
    m = HierarchicalTCloseness("s", 7 / 12, HIER)
    # class 1: move 1/6 a->b (cost 1/2), 1/2 ab->cd (cost 1): 1/12 + 1/2 = 7/12
    assert np.allclose(m.class_distance(s), [7 / 12, 1 / 3, 7 / 12])
    assert m.holds(s)  # equality passes
    assert not HierarchicalTCloseness("s", 0.58, HIER).holds(s)
    assert m.value(s) == pytest.approx(7 / 12)


def test_hierarchical_with_flat_hierarchy_equals_equal_distance():
    s = stats_of([[3, 1, 0, 2], [0, 1, 4, 1], [1, 1, 1, 1]], values=["a", "b", "c", "d"])
    flat = flat_hierarchy(["a", "b", "c", "d"])
    assert np.allclose(
        HierarchicalTCloseness("s", 1, flat).class_distance(s),
        EqualTCloseness("s", 1).class_distance(s),
    )


def test_hierarchical_null_and_missing_values():
    s = stats_of([[1, 1], [1, 1]], values=["a", None])
    assert np.allclose(HierarchicalTCloseness("s", 0, HIER).class_distance(s), [0, 0])
    with pytest.raises(HierarchyError, match="'z'"):
        HierarchicalTCloseness("s", 1, HIER).class_ok(stats_of([[1]], values=["z"]))


def test_hierarchical_bad_hierarchy():
    with pytest.raises(ParameterError, match="must be a Hierarchy"):
        HierarchicalTCloseness("s", 0.2, "h.csv")  # type: ignore[arg-type]
    with pytest.raises(ParameterError, match="height >= 1"):
        HierarchicalTCloseness("s", 0.2, Hierarchy([["a"], ["b"]]))


@pytest.mark.parametrize("t", [-0.1, 1.1, float("nan"), "0.2", None])
def test_t_closeness_bad_t(t):
    for cls in (EqualTCloseness, OrderedTCloseness):
        with pytest.raises(ParameterError, match=f"The 't' parameter of {cls.__name__}"):
            cls("s", t)


# ------------------------------------------------------------------ (alpha, k)
def test_alpha_k_refined_ceiling():
    # alpha = 0.1, k = 2 (paper 002, text before Definition 5): a class of two may hold one
    # sensitive row under Definition 5 (1 <= ceil(0.2)) but not under Definition 4
    s = stats_of([[1, 1]], values=["hiv", "flu"])
    assert AlphaKAnonymity("s", 0.1, 2, values="hiv").holds(s)
    assert not AlphaKAnonymity("s", 0.1, 2, values="hiv", refined=False).holds(s)


def test_alpha_k_refined_is_not_monotonic_under_generalization():
    parts = stats_of([[1, 1], [1, 1]], values=["hiv", "flu"])
    merged = stats_of([[2, 2]], values=["hiv", "flu"])
    m = AlphaKAnonymity("s", 0.1, 2, values="hiv")
    assert m.holds(parts) and not m.holds(merged)
    assert m.monotonic_generalization is False
    assert AlphaKAnonymity("s", 0.1, 2, values="hiv", refined=False).monotonic_generalization
    assert AlphaKAnonymity("s", 0.1, 2).monotonic_generalization


def test_alpha_k_ceiling_tolerates_binary_rounding():
    # 0.1 * 30 = 3.0000000000000004 in binary floating point; the cap is 3, not 4
    m = AlphaKAnonymity("s", 0.1, 2, values="hiv")
    assert m.holds(stats_of([[3, 27]], values=["hiv", "flu"]))
    assert not m.holds(stats_of([[4, 26]], values=["hiv", "flu"]))


def test_alpha_k_simple_boundaries_and_k():
    s = stats_of([[2, 2], [1, 1], [3, 1], [1, 0]], values=["hiv", "flu"])
    m = AlphaKAnonymity("s", 0.5, 2, values="hiv")
    # [2,2]: 2 <= ceil(2) ok; [1,1]: ok; [3,1]: 3 > 2; [1,0]: size 1 < k
    assert ok(m, s) == [True, True, False, False]
    assert m.value(s) == 1.0
    assert m.min_class_size == 2


def test_alpha_k_combined_sensitive_values():
    s = stats_of([[1, 1, 2], [2, 0, 2]], values=["hiv", "cancer", "flu"])
    m = AlphaKAnonymity("s", 0.5, 2, values={"hiv", "cancer"})
    assert ok(m, s) == [True, True]
    assert ok(AlphaKAnonymity("s", 0.4, 2, values=["hiv", "cancer"], refined=False), s) == [
        False,
        False,
    ]
    assert m.params()["values"] == ["cancer", "hiv"]


def test_alpha_k_general_and_multi():
    s = stats_of(
        [[1, 1], [2, 0]], values=["x", "y"], extra={"u": (["a", "b", "c"], [[1, 1, 0], [1, 0, 1]])}
    )
    assert ok(AlphaKAnonymity("s", 0.5, 2), s) == [True, False]
    assert ok(AlphaKAnonymity("u", 0.5, 2), s) == [True, True]
    multi = AlphaKAnonymity(["s", "u"], 0.5, 2)
    assert multi.variant == "multi"
    assert multi.sensitive_attributes == ("s", "u")
    assert ok(multi, s) == [True, False]
    assert multi.value(s) == 1.0
    assert AlphaKAnonymity(["s", "u"], 1.0, 2).holds(s)  # alpha = 1 leaves k-anonymity


def test_alpha_k_unknown_sensitive_value():
    s = stats_of([[1, 1]], values=["hiv", "flu"])
    with pytest.raises(ParameterError, match="'HIV' .* does not occur .* Did you mean 'hiv'"):
        AlphaKAnonymity("s", 0.5, 2, values="HIV").class_ok(s)


@pytest.mark.parametrize("alpha", [0, 0.0, -0.5, 1.5, float("nan"), "0.5", None])
def test_alpha_k_bad_alpha(alpha):
    with pytest.raises(
        ParameterError, match=r"The 'alpha' parameter of AlphaKAnonymity .*\(0, 1\]"
    ):
        AlphaKAnonymity("s", alpha, 2)


def test_alpha_k_bad_other_parameters():
    with pytest.raises(ParameterError, match="'k' parameter of AlphaKAnonymity"):
        AlphaKAnonymity("s", 0.5, 0)
    with pytest.raises(ParameterError, match="single sensitive attribute"):
        AlphaKAnonymity(["s", "u"], 0.5, 2, values="x")
    with pytest.raises(ParameterError, match="'values'"):
        AlphaKAnonymity("s", 0.5, 2, values=[])
    with pytest.raises(ParameterError, match="'attribute'"):
        AlphaKAnonymity([], 0.5, 2)
    with pytest.raises(ParameterError, match="twice"):
        AlphaKAnonymity(["s", "s"], 0.5, 2)
    with pytest.raises(ParameterError, match="'refined'"):
        AlphaKAnonymity("s", 0.5, 2, values="x", refined="yes")  # type: ignore[arg-type]


# ------------------------------------------------------------------ beta-likeness, delta
def test_basic_beta_likeness():
    s = stats_of([[2, 0], [0, 2], [1, 1]])  # p = (.5, .5)
    assert ok(BasicBetaLikeness("s", 1), s) == [True, True, True]  # gain (1-.5)/.5 = 1
    assert ok(BasicBetaLikeness("s", 0.99), s) == [False, False, True]
    assert BasicBetaLikeness("s", 1).value(s) == 1.0


def test_enhanced_beta_likeness():
    s = stats_of([[2, 2], [1, 3]])  # p = (3/8, 5/8)
    # gains: class 1 a (.5 - .375)/.375 = 1/3 <= -ln(.375) = .98; class 2 b .2 <= .47
    assert EnhancedBetaLikeness("s", 1 / 3).holds(s)  # equality passes
    assert ok(EnhancedBetaLikeness("s", 0.3), s) == [False, True]
    assert EnhancedBetaLikeness("s", 5).value(s) == pytest.approx(1 / 3)
    assert BasicBetaLikeness("s", 5).value(s) == pytest.approx(1 / 3)
    # class [3,1]: gain of a = 1 > -ln(3/8) = .98: no beta is enough
    s2 = stats_of([[3, 1], [0, 4]])
    assert not EnhancedBetaLikeness("s", 100).holds(s2)
    assert EnhancedBetaLikeness("s", 100).value(s2) == math.inf
    assert BasicBetaLikeness("s", 100).holds(s2)


@pytest.mark.parametrize("beta", [0, -1, float("inf"), "1"])
def test_beta_bad(beta):
    with pytest.raises(ParameterError, match="'beta' parameter of BasicBetaLikeness"):
        BasicBetaLikeness("s", beta)


def test_delta_disclosure_strict_log2():
    s = stats_of([[2, 0], [0, 2]])  # q/p = 2 for present values; absent ones not checked
    assert DeltaDisclosure("s", 1).value(s) == 1.0
    assert not DeltaDisclosure("s", 1).holds(s)  # strict: |log2 2| = 1 is not < 1
    assert DeltaDisclosure("s", 1.0001).holds(s)
    s2 = stats_of([[1, 3], [3, 1]])  # q/p = .5 and 1.5
    assert DeltaDisclosure("s", 1).value(s2) == 1.0
    assert ok(DeltaDisclosure("s", 0.9), stats_of([[1, 1], [1, 1]])) == [True, True]


def test_delta_disclosure_is_not_monotonic_under_generalization():
    # merging makes 'b' present with a tiny frequency: |log2((1/11)/(21/31))| = 2.9
    fine = stats_of([[10, 0], [0, 1], [0, 20]])
    coarse = stats_of([[10, 1], [0, 20]])
    m = DeltaDisclosure("s", 2)
    assert m.value(fine) == pytest.approx(math.log2(31 / 10))
    assert m.holds(fine) and not m.holds(coarse)


@pytest.mark.parametrize("delta", [0, -0.1, "1"])
def test_delta_bad(delta):
    with pytest.raises(ParameterError, match="'delta' parameter of DeltaDisclosure"):
        DeltaDisclosure("s", delta)


# ------------------------------------------------------------------ shared behaviour
ALL_MODELS = [
    KAnonymity(2),
    DistinctLDiversity("s", 2),
    EntropyLDiversity("s", 1.5),
    RecursiveCLDiversity("s", 2, 2),
    EqualTCloseness("s", 0.3),
    OrderedTCloseness("s", 0.3),
    HierarchicalTCloseness("s", 0.3, HIER),
    AlphaKAnonymity("s", 0.5, 2),
    AlphaKAnonymity("s", 0.5, 2, values="a"),
    BasicBetaLikeness("s", 1),
    EnhancedBetaLikeness("s", 1),
    DeltaDisclosure("s", 1),
]


@pytest.mark.parametrize("model", ALL_MODELS, ids=repr)
def test_empty_table(model):
    s = stats_of(np.zeros((0, 4), dtype=np.int64), values=["a", "b", "c", "d"])
    assert model.class_ok(s).shape == (0,)
    assert model.holds(s)
    assert model.value(s) == 0


@pytest.mark.parametrize("model", ALL_MODELS, ids=repr)
def test_registry_round_trip(model):
    again = build_model(model.name, model.params())
    assert type(again) is type(model) and again.params() == model.params()
    assert MODELS[model.name] is type(model)


@pytest.mark.parametrize("model", [m for m in ALL_MODELS if m.sensitive_attributes], ids=repr)
def test_missing_sensitive_counts(model):
    s = stats_of([[1, 1]], attr="other")
    with pytest.raises(InputError, match=r"sensitive=\['s'\]"):
        model.class_ok(s)


def test_monotonicity_flags():
    flags = {
        type(m).__name__ + str(getattr(m, "values", "")): (
            m.monotonic_generalization,
            m.monotonic_suppression,
        )
        for m in ALL_MODELS
    }
    assert flags == {
        "KAnonymity": (True, True),
        "DistinctLDiversity": (True, True),
        "EntropyLDiversity": (True, False),
        "RecursiveCLDiversity": (True, False),
        "EqualTCloseness": (True, False),
        "OrderedTCloseness": (True, False),
        "HierarchicalTCloseness": (True, False),
        "AlphaKAnonymityNone": (True, False),
        "AlphaKAnonymity('a',)": (False, False),
        "BasicBetaLikeness": (True, False),
        "EnhancedBetaLikeness": (True, False),
        "DeltaDisclosure": (False, False),
    }
    assert KAnonymity.monotonic_generalization  # readable on the class too


def test_min_class_sizes():
    assert [m.min_class_size for m in ALL_MODELS] == [2, 2, 2, 2, 1, 1, 1, 2, 2, 1, 1, 1]


@pytest.mark.parametrize("attribute", ["", 3, None])
def test_bad_attribute(attribute):
    with pytest.raises(ParameterError, match="'attribute' parameter of DistinctLDiversity"):
        DistinctLDiversity(attribute, 2)


# ------------------------------------------------------------------ registry
def test_models_registry_names():
    assert sorted(MODELS) == sorted(
        [
            "k_anonymity",
            "distinct_l_diversity",
            "entropy_l_diversity",
            "recursive_cl_diversity",
            "equal_t_closeness",
            "ordered_t_closeness",
            "hierarchical_t_closeness",
            "alpha_k_anonymity",
            "basic_beta_likeness",
            "enhanced_beta_likeness",
            "delta_disclosure",
            "personalized_leakage",
            "average_risk",
            "sample_uniqueness",
            "population_uniqueness",
            "k_map",
            "delta_presence",
        ]
    )
    assert model_parameters("recursive_cl_diversity") == (["attribute", "c", "l"], [])
    assert model_parameters("alpha_k_anonymity") == (
        ["attribute", "alpha", "k"],
        ["values", "refined"],
    )


def test_build_model_unknown_name_lists_valid_names():
    with pytest.raises(
        ParameterError, match="Did you mean 'k_anonymity'.*Valid models:.*delta_disclosure"
    ):
        build_model("k_anonimity", {"k": 2})


def test_build_model_unknown_and_missing_parameters():
    with pytest.raises(
        ParameterError, match="Unknown parameter 'kk' of model 'k_anonymity'.*Did you mean 'k'"
    ):
        build_model("k_anonymity", {"kk": 2})
    with pytest.raises(ParameterError, match="needs parameters 'c', 'l'"):
        build_model("recursive_cl_diversity", {"attribute": "s"})
    with pytest.raises(ParameterError, match="'alpha'"):
        build_model("alpha_k_anonymity", {"attribute": "s", "alpha": 1.5, "k": 2})


def test_build_model_defaults_and_hierarchies(tmp_path):
    m = build_model("distinct_l_diversity", {"l": 2}, sensitive=["disease"])
    assert m.sensitive_attributes == ("disease",)
    with pytest.raises(ParameterError, match="needs parameter 'attribute'"):
        build_model("distinct_l_diversity", {"l": 2}, sensitive=["a", "b"])
    h = build_model(
        "hierarchical_t_closeness", {"attribute": "s", "t": 0.2}, hierarchies={"s": HIER}
    )
    assert h.params()["hierarchy"] is HIER
    with pytest.raises(ParameterError, match="needs parameter 'hierarchy'"):
        build_model("hierarchical_t_closeness", {"attribute": "s", "t": 0.2})
    with pytest.raises(ParameterError, match="load_hierarchy"):
        build_model("hierarchical_t_closeness", {"attribute": "s", "t": 0.2, "hierarchy": "h.csv"})
    calls = []

    def loader(path: str, attribute: str) -> Hierarchy:
        calls.append((path, attribute))
        return HIER

    build_model(
        "hierarchical_t_closeness",
        {"attribute": "s", "t": 0.2, "hierarchy": "h.csv"},
        load_hierarchy=loader,
    )
    assert calls == [("h.csv", "s")]
    multi = build_model("alpha_k_anonymity", {"attribute": ["s", "u"], "alpha": 0.5, "k": 2})
    assert multi.sensitive_attributes == ("s", "u")


# ------------------------------------------------------------------ feasibility
def test_l_larger_than_distinct_values_is_a_clear_error():
    s = stats_of([[1, 1, 0], [0, 1, 1]], values=["flu", "hiv", "cold"])
    for model in (
        DistinctLDiversity("s", 4),
        RecursiveCLDiversity("s", 3, 4),
        EntropyLDiversity("s", 3.5),
    ):
        with pytest.raises(
            ParameterError,
            match=r"distinct values of sensitive attribute 's'.*\(3: 'flu', 'hiv', 'cold'\).*Choose l <= 3",
        ):
            check_feasible(model, s)
    check_feasible(DistinctLDiversity("s", 3), s)
    check_feasible(EntropyLDiversity("s", 3), s)


def test_alpha_feasibility():
    s = stats_of([[1, 1, 0], [0, 1, 1]])
    with pytest.raises(ParameterError, match=r"'alpha'.*below 1/3"):
        check_feasible(AlphaKAnonymity("s", 0.3, 2), s)
    check_feasible(AlphaKAnonymity("s", 1 / 3, 2), s)
    check_feasible(AlphaKAnonymity("s", 0.1, 2, values="v0"), s)
    with pytest.raises(ParameterError, match="does not occur"):
        check_feasible(AlphaKAnonymity("s", 0.1, 2, values="nope"), s)
    for m in (KAnonymity(10), EqualTCloseness("s", 0), DeltaDisclosure("s", 0.1)):
        check_feasible(m, s)  # always repairable


def test_models_on_engine_class_stats():
    rows = [("a", "flu"), ("a", "hiv"), ("b", "flu"), ("b", "flu"), ("b", "cold")]
    s = open_engine(EncodedTable.from_rows(rows, ["q", "d"])).class_stats(["q"], sensitive=["d"])
    assert ok(DistinctLDiversity("d", 2), s) == [True, True]
    assert KAnonymity(3).value(s) == 2
    assert AlphaKAnonymity("d", 0.5, 2, values="hiv").holds(s)
    assert AlphaKAnonymity("d", 2 / 3, 2).holds(s)
    assert not AlphaKAnonymity("d", 0.6, 2).holds(s)
