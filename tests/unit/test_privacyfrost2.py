"""PrivacyFrost2 (Kiyomoto & Miyake 2014): scores on hand-computed values, pre-sampling,
level conventions, result fields and bad-input errors."""

from __future__ import annotations

import math
from collections import Counter

import numpy as np
import pytest

from anonlab import EncodedTable, taxonomy_hierarchy
from anonlab.algorithms._lattice import Lattice, LatticeEvaluator
from anonlab.algorithms.privacyfrost2 import (
    SCORES,
    BasicScore,
    EtaScore,
    LogScore,
    PreSampling,
    Score,
    build_score,
    from_paper_levels,
    presample,
    privacyfrost2,
    restrict_evaluator,
    to_paper_levels,
)
from anonlab.engines import get_engine
from anonlab.exceptions import InputError, ParameterError, PrivacyCheckError
from anonlab.metrics import build_metric
from anonlab.metrics.base import MetricContext
from anonlab.models import build_model
from anonlab.release import Levels, Problem, verify
from tests.support.pf2_reference import released_labels, verify_release

# ---------------------------------------------------------------------------- fixtures

QIS = ("age", "zip", "sex")
H = {
    "age": taxonomy_hierarchy(
        {
            "34": ["30-39", "<50"],
            "36": ["30-39", "<50"],
            "45": ["40-49", "<50"],
            "47": ["40-49", "<50"],
            "53": ["50-59", ">=50"],
            "58": ["50-59", ">=50"],
        },
        attribute="age",
    ),
    "zip": taxonomy_hierarchy(
        {"4350": ["435*", "43**"], "4351": ["435*", "43**"], "4360": ["436*", "43**"]},
        attribute="zip",
    ),
    "sex": taxonomy_hierarchy({"F": ["*"], "M": ["*"]}, attribute="sex"),
}
ROWS = [
    ("34", "4350", "F", "flu"),
    ("36", "4351", "F", "hiv"),
    ("34", "4350", "M", "flu"),
    ("36", "4351", "M", "cold"),
    ("45", "4360", "F", "flu"),
    ("47", "4360", "M", "hiv"),
    ("45", "4360", "F", "cold"),
    ("47", "4360", "M", "flu"),
    ("53", "4350", "F", "hiv"),
    ("58", "4351", "M", "cold"),
    ("53", "4350", "F", "flu"),
    ("58", "4351", "M", "flu"),
]


def make(rows=ROWS, models=(("k_anonymity", {"k": 2}),), suppression=0, mins=None, maxs=None):
    table = EncodedTable.from_rows(rows, [*QIS, "disease"])
    engine = get_engine("numpy", table, hierarchies=H)
    built = [build_model(n, p) for n, p in models]
    sens = sorted({a for m in built for a in m.sensitive_attributes})
    base = engine.class_stats(list(QIS), sensitive=sens, with_rows=True)
    ctx = MetricContext(QIS, H, base, table.n_rows, {})
    ev = LatticeEvaluator(base, H, built, suppression, build_metric("loss"), ctx)
    mins = (0, 0, 0) if mins is None else mins
    maxs = tuple(H[q].height for q in QIS) if maxs is None else maxs
    return ev, Lattice(QIS, tuple(mins), tuple(maxs))


# ---------------------------------------------------------------------------- scores


def test_basic_score_hand_computed():
    # S = sum v_i e_i = 1*2 + 2*3 + 5*1
    assert BasicScore().score([2, 3, 1], [1, 2, 5], [9, 9, 9]) == 13.0


def test_basic_upper_bound_is_the_papers_delta():
    # s' = 13; de-generalizing attribute 1 to at most b = 7 values: delta = (7 - 3) * 2
    assert BasicScore().upper_bound([2, 3, 1], [1, 2, 5], [9, 9, 9], 1, 7) == 13.0 + 8.0


@pytest.mark.parametrize(
    ("d", "x", "eta"),
    [
        (4, [5, 3, 2, 4, 1], [2, 1, 0, 1, 0]),  # x > 4: 2; 2 < x <= 4: 1; x <= 2: 0
        (3, [4, 3, 2, 1], [2, 1, 1, 0]),  # odd d: d/2 = 1.5
        (1, [1, 2], [1, 2]),  # 1/2 < 1 <= 1
    ],
)
def test_eta_function(d, x, eta):
    assert list(EtaScore(d).eta(x)) == eta


def test_eta_score_hand_computed():
    # d = 4: eta(5, 3, 2, 4, 1) = (2, 1, 0, 1, 0); S = 1*2 + 2*1 + 3*0 + 4*1 + 5*0
    assert EtaScore(4).score([5, 3, 2, 4, 1], [1, 2, 3, 4, 5], [9] * 5) == 8.0


def test_log_score_hand_computed():
    # ratios log4/log16 = 0.5, log2/log2 = 1, log1/log5 = 0; times v = (1, 3, 10) -> max 3
    assert LogScore().score([4, 2, 1], [1, 3, 10], [16, 2, 5]) == pytest.approx(3.0)
    # one value left (e = 1): log 1 = 0, whatever the priority
    assert LogScore().score([1, 3], [100, 2], [7, 9]) == pytest.approx(
        2 * math.log(3) / math.log(9)
    )


def test_log_score_single_original_value_counts_zero():
    # e^b = 1 (0/0 in the paper): the term is 0 and does not mask the others
    assert LogScore().score([1, 2], [100, 1], [1, 4]) == pytest.approx(0.5)


def test_scores_are_vectorised_over_tables():
    e = np.array([[1, 2, 3], [3, 3, 3], [2, 1, 4]])
    v, eb = [3, 1, 2], [3, 3, 4]
    for s in (BasicScore(), EtaScore(2), LogScore()):
        many = s.scores(e, v, eb)
        assert list(many) == pytest.approx([s.score(row, v, eb) for row in e])


@pytest.mark.parametrize("score", [BasicScore(), EtaScore(3), LogScore()])
def test_upper_bound_bounds_every_smaller_count(score):
    e, v, eb = np.array([2, 1, 3]), [1, 4, 2], [5, 6, 7]
    for b in range(1, 7):
        bound = score.upper_bound(e, v, eb, 1, b)
        for x in range(1, b + 1):
            trial = e.copy()
            trial[1] = x
            assert score.score(trial, v, eb) <= bound + 1e-12


def test_non_monotone_score_disables_the_bound():
    class Odd(Score):
        name = "odd"
        monotone = False

        def scores(self, counts, priorities, base_counts):
            e = np.atleast_2d(np.asarray(counts, dtype=float))
            return -(e @ np.asarray(priorities, dtype=float))

    assert Odd().upper_bound([1, 2], [1, 1], [2, 2], 0, 2) == math.inf


def test_build_score_registry():
    assert set(SCORES) == {"basic", "eta", "log"}
    assert isinstance(build_score("basic"), BasicScore)
    assert isinstance(build_score("log"), LogScore)
    eta = build_score("eta", d=3)
    assert isinstance(eta, EtaScore) and eta.d == 3 and eta.params() == {"d": 3}
    assert repr(eta) == "EtaScore(d=3)"


def test_build_score_unknown_name_lists_valid_ones():
    with pytest.raises(
        ParameterError, match=r"Unknown PrivacyFrost2 score 'bsic'.*'basic'.*basic, eta, log"
    ):
        build_score("bsic")


@pytest.mark.parametrize("d", [0, -1, 2.5, True, "3", None])
def test_eta_d_must_be_a_positive_int(d):
    with pytest.raises(ParameterError, match=r"'d' parameter of EtaScore must be an int >= 1"):
        build_score("eta", d=d)


def test_build_score_parameter_errors():
    with pytest.raises(ParameterError, match=r"needs the parameter 'd'"):
        build_score("eta")
    with pytest.raises(
        ParameterError, match=r"Unknown parameter 'd' of PrivacyFrost2 score 'basic'"
    ):
        build_score("basic", d=3)


# ---------------------------------------------------------------------------- levels


def test_level_conversion_counts_from_the_root():
    # anonlab level 0 (original values) of a height-3 hierarchy is the paper's level 3
    assert to_paper_levels((0, 2, 1), (3, 2, 1)) == (3, 0, 0)
    assert from_paper_levels(to_paper_levels((0, 2, 1), (3, 2, 4)), (3, 2, 4)) == (0, 2, 1)


# ---------------------------------------------------------------------------- the search


def test_result_satisfies_the_models_and_reports_counts():
    ev, lat = make(
        models=(
            ("k_anonymity", {"k": 2}),
            ("distinct_l_diversity", {"attribute": "disease", "l": 2}),
        )
    )
    calls = []
    res = privacyfrost2(ev, lat, priorities={"age": 3}, progress=lambda a, t: calls.append(a))
    assert ev.evaluate(res.levels, with_loss=False).anonymous
    assert res.transformation == dict(zip(QIS, res.levels))
    assert res.levels_from_root == tuple(H[q].height - lv for q, lv in zip(QIS, res.levels))
    assert res.priorities == (3, 1, 1)
    assert res.order[-1] == "age"  # Sort: ascending priority, a^n is the top priority
    assert res.tables_checked == len(calls) >= 1
    assert res.tables_scored >= 1
    # e of the chosen table, recomputed from the rows
    for j, q in enumerate(QIS):
        labels = H[q].generalize([r[j] for r in ROWS], res.levels[j])
        assert res.value_counts[j] == len(set(labels))
    assert res.base_value_counts == (6, 3, 2)
    assert (
        res.score
        == res.full_domain_score
        == pytest.approx(
            BasicScore().score(res.value_counts, res.priorities, res.base_value_counts)
        )
    )


def test_precomputation_levels():
    ev, lat = make()
    res = privacyfrost2(ev, lat, priorities=[1, 1, 1])
    # step 1: age (34, 36, 45, ... each twice) and zip and sex are 2-anonymous on their own
    assert res.single_attribute_levels == (0, 0, 0)
    # step 2 generalizes every attribute together until the table passes
    lv = res.single_attribute_levels
    while not ev.evaluate(lv, with_loss=False).anonymous:
        lv = tuple(min(a + 1, b) for a, b in zip(lv, lat.max_levels))
    assert res.initial_levels == lv


def test_p_raises_the_single_attribute_threshold():
    ev, lat = make()
    res = privacyfrost2(ev, lat, priorities=[1, 1, 1], p=2)  # (k + p) = 4 per attribute
    assert res.single_attribute_levels == (1, 0, 0)  # ages pair up only at level 1
    assert ev.evaluate(res.levels, with_loss=False).anonymous


def test_maximum_levels_are_never_crossed():
    ev, lat = make(mins=(1, 0, 0), maxs=(1, 1, 1))
    res = privacyfrost2(ev, lat, priorities=[1, 5, 1], partial_domain=True)
    assert all(a <= lv <= b for a, lv, b in zip(lat.min_levels, res.levels, lat.max_levels))
    assert res.partial is not None
    bl = res.partial.base_levels
    assert (bl >= np.array(lat.min_levels)).all() and (bl <= np.array(lat.max_levels)).all()


def test_custom_score_is_accepted():
    class Zip(Score):
        name = "zip_only"

        def scores(self, counts, priorities, base_counts):
            return np.atleast_2d(np.asarray(counts, dtype=float))[:, 1]

    ev, lat = make()
    res = privacyfrost2(ev, lat, priorities=[1, 1, 1], score=Zip())
    assert res.score_name == "zip_only"
    assert res.levels[1] == 0


def test_partial_domain_result_and_recheck():
    ev, lat = make()
    res = privacyfrost2(ev, lat, priorities=[1, 1, 1], partial_domain=True)
    part = res.partial
    assert (
        part is not None and part.score >= res.full_domain_score == 10.0 and res.score == part.score
    )
    table = verify_release(ev, part.base_levels)
    assert sorted(table.sizes) == sorted(part.class_sizes)
    assert part.class_sizes.sum() == len(ROWS)
    _assert_classes_are_the_released_labels(ev, part)


def _assert_classes_are_the_released_labels(ev, part, kept=None):
    """Base classes share a released class exactly when they share their released labels."""
    keys = list(zip(*released_labels(ev, part.base_levels)))
    kept = np.ones(len(keys), dtype=bool) if kept is None else kept
    pairs = {(int(c), k) for c, k, ok in zip(part.class_of_base, keys, kept) if ok}
    assert len(pairs) == part.n_classes == len({k for _, k in pairs})


def test_the_release_layer_refuses_an_unsafe_partial_domain_table():
    table = EncodedTable.from_rows(ROWS, [*QIS, "disease"])
    k2 = (build_model("k_anonymity", {"k": 2}),)
    problem = Problem(table, QIS, H, k2, build_metric("loss"))
    original = Levels(np.zeros((1, 3), dtype=np.int64), np.zeros(table.n_rows, dtype=np.int64))
    with pytest.raises(PrivacyCheckError, match="Re-check failed"):
        verify(problem, original)


def test_no_table_within_the_levels_names_the_binding_attribute():
    rows = [(a, z, s, d) for a, z, s, d in ROWS]
    rows[0] = ("58", "4360", "F", "flu")  # age 34 once: not 2-anonymous at level 0
    ev, lat = make(rows=rows, maxs=(0, 2, 1))
    with pytest.raises(InputError, match=r"'age' cannot be made 2-anonymous even on its own"):
        privacyfrost2(ev, lat, priorities=[1, 1, 1])


def test_no_table_within_the_levels_combination():
    ev, lat = make(models=(("k_anonymity", {"k": 4}),), maxs=(1, 0, 0))
    with pytest.raises(
        InputError,
        match=r"combination of the attributes; 'age', 'zip', 'sex' are held below the root",
    ):
        privacyfrost2(ev, lat, priorities=[1, 1, 1])


def test_no_table_even_at_the_roots():
    # a null stays apart below the top of its hierarchy: with age bounded below its root
    # (<50 and >=50), one record that no allowed level merges with another
    rows = list(ROWS)
    rows[0] = (None, "4350", "F", "flu")
    ev, lat = make(rows=rows, maxs=(2, H["zip"].height, H["sex"].height))
    with pytest.raises(InputError, match=r"no table that satisfies the privacy models"):
        privacyfrost2(ev, lat, priorities=[1, 1, 1])


def test_nulls_join_the_root_of_a_one_root_hierarchy():
    # zip and sex have one root: a rare null there is generalized like any value
    rows = list(ROWS)
    rows[0] = ("34", "4350", None, "flu")
    rows[1] = ("36", None, None, "hiv")
    rows[2] = ("34", None, "M", "flu")
    ev, lat = make(rows=rows)
    res = privacyfrost2(ev, lat, priorities=[1, 1, 1])
    assert res.levels is not None


def test_infeasible_model_is_reported_by_the_model():
    ev, lat = make(models=(("distinct_l_diversity", {"attribute": "disease", "l": 4}),))
    with pytest.raises(ParameterError, match=r"larger than the number of distinct values"):
        privacyfrost2(ev, lat, priorities=[1, 1, 1])


# ---------------------------------------------------------------------------- pre-sampling


def _isolated_rows(rows, thresholds, k_prime):
    keys = [
        tuple(H[q].generalize([r[j]], thresholds[j])[0] for j, q in enumerate(QIS)) for r in rows
    ]
    counts = Counter(keys)
    return [i for i, key in enumerate(keys) if counts[key] < k_prime]


@pytest.mark.parametrize(
    ("thresholds", "k_prime"), [((0, 0, 0), 2), ((1, 1, 0), 3), ((1, 0, 1), 4), ((2, 2, 1), 1)]
)
def test_presample_removes_rows_of_small_groups(thresholds, k_prime):
    ev, _ = make()
    pre = presample(ev, PreSampling(thresholds, k_prime))
    isolated = _isolated_rows(ROWS, thresholds, k_prime)
    assert ev.base.row_class is not None
    removed = np.flatnonzero(~pre.keep[ev.base.row_class])
    assert list(removed) == isolated
    assert pre.removed_rows == len(isolated) and pre.kept_rows == len(ROWS) - len(isolated)
    assert pre.thresholds_from_root == to_paper_levels(thresholds, [H[q].height for q in QIS])


def test_presample_accepts_a_mapping_and_validates_it():
    ev, _ = make()
    a = presample(ev, PreSampling({"age": 1, "zip": 1, "sex": 0}, 3))
    b = presample(ev, PreSampling((1, 1, 0), 3))
    assert (a.keep == b.keep).all()
    with pytest.raises(ParameterError, match=r"missing: 'sex'"):
        presample(ev, PreSampling({"age": 1, "zip": 1}, 3))
    with pytest.raises(
        ParameterError, match=r"level 3 for quasi-identifier 'sex', above its hierarchy's height 1"
    ):
        presample(ev, PreSampling((0, 0, 3), 2))
    with pytest.raises(
        ParameterError, match=r"'k_prime' parameter of PreSampling must be an int >= 1"
    ):
        PreSampling((0, 0, 0), 0)


def test_restrict_base_and_evaluator():
    ev, _ = make(
        models=(
            ("k_anonymity", {"k": 2}),
            ("distinct_l_diversity", {"attribute": "disease", "l": 2}),
        )
    )
    keep = np.zeros(ev.base.n_classes, dtype=bool)
    keep[::2] = True
    sub = ev.base.restricted(keep)
    assert sub.n_rows == int(ev.base.sizes[keep].sum())
    assert (sub.sensitive["disease"].counts.sum(axis=1) == sub.sizes).all()
    assert ev.base.row_class is not None and sub.row_class is not None
    assert ((sub.row_class >= 0) == keep[ev.base.row_class]).all()
    ev2 = restrict_evaluator(ev, keep)
    assert ev2.base.n_rows == sub.n_rows and ev2.max_suppressed == ev.max_suppressed
    with pytest.raises(InputError, match="removed every record"):
        restrict_evaluator(ev, np.zeros(ev.base.n_classes, dtype=bool))
    with pytest.raises(ParameterError, match="one entry per class"):
        ev.base.restricted(keep[:-1])


def test_search_with_presampling():
    ev, lat = make()
    ps = PreSampling((0, 0, 0), 2)  # drop the records whose exact values occur once
    res = privacyfrost2(ev, lat, priorities=[1, 1, 1], presampling=ps, partial_domain=True)
    assert res.presample is not None and res.kept is not None
    isolated = _isolated_rows(ROWS, (0, 0, 0), 2)
    assert res.presample.removed_rows == len(isolated) > 0
    # the step's own time (the paper's Table 1) is part of the whole search's
    assert 0.0 < res.presampling_s <= res.elapsed_s
    assert privacyfrost2(ev, lat, priorities=[1, 1, 1]).presampling_s == 0.0
    part = res.partial
    assert part is not None and part.base_levels.shape == (ev.base.n_classes, 3)
    assert ((part.base_levels[:, 0] == -1) == ~res.kept).all()
    assert ((part.class_of_base == -1) == ~res.kept).all()
    # the kept records satisfy the models at the chosen levels
    sub = restrict_evaluator(ev, res.kept)
    assert sub.evaluate(res.levels, with_loss=False).anonymous
    verify_release(sub, part.base_levels[res.kept])
    _assert_classes_are_the_released_labels(ev, part, res.kept)
    # labels per base class of the whole table: None where pre-sampling removed the records
    labels = released_labels(ev, part.base_levels)
    kept_labels = released_labels(sub, part.base_levels[res.kept])
    for j in range(3):
        assert all(x is None for x in labels[j][~res.kept])
        assert list(labels[j][res.kept]) == list(kept_labels[j])


def test_presampling_everything_away_is_an_input_error():
    ev, lat = make()
    with pytest.raises(InputError, match="removed every record"):
        privacyfrost2(ev, lat, priorities=[1, 1, 1], presampling=PreSampling((0, 0, 0), 100))


# ---------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (
            {"priorities": [0, 1, 1]},
            r"'priorities\[age\]' parameter of privacyfrost2 must be an int >= 1. Got 0",
        ),
        ({"priorities": [1, -2, 1]}, r"must be an int >= 1. Got -2"),
        ({"priorities": [1, 1.5, 1]}, r"must be an int >= 1. Got 1.5"),
        ({"priorities": [1, True, 1]}, r"must be an int >= 1. Got True"),
        ({"priorities": [1, 1]}, r"one value per quasi-identifier \(3"),
        ({"priorities": {"agee": 2}}, r"names 'agee', which is not a quasi-identifier"),
        ({"priorities": "age"}, r"must be a mapping from quasi-identifier to int"),
        ({"p": -1}, r"'p' parameter of privacyfrost2 must be an int >= 0. Got -1"),
        ({"p": 0.5}, r"'p' parameter of privacyfrost2 must be an int >= 0"),
        ({"score": "eta"}, r"needs the parameter 'd'"),
        (
            {"score": "logarithm"},
            r"Unknown PrivacyFrost2 score 'logarithm'.*Valid scores: basic, eta, log",
        ),
        ({"score": 3}, r"'score' parameter of privacyfrost2 must be a Score or a score name"),
        (
            {"partial_domain": "yes"},
            r"'partial_domain' parameter of privacyfrost2 must be true or false",
        ),
        (
            {"presampling": (0, 0, 0)},
            r"'presampling' parameter of privacyfrost2 must be a PreSampling",
        ),
        ({"presampling": PreSampling((0, 0, 5), 2)}, r"above its hierarchy's height 1"),
    ],
)
def test_bad_parameters_fail_before_any_work(kwargs, message):
    ev, lat = make()
    params = {"priorities": [1, 1, 1], **kwargs}
    with pytest.raises(ParameterError, match=message):
        privacyfrost2(ev, lat, **params)
    assert ev.evaluations == 0


@pytest.mark.parametrize(
    ("mins", "maxs", "message"),
    [
        ((0, 0, 0), (2, 2, 2), r"'sex' must satisfy 0 <= min_level <= max_level <= 1.*max_level=2"),
        ((2, 0, 0), (1, 2, 1), r"'age' must satisfy .*min_level=2, max_level=1"),
        ((-1, 0, 0), (2, 2, 1), r"'age' must satisfy"),
    ],
)
def test_bad_levels(mins, maxs, message):
    ev, _ = make()
    with pytest.raises(ParameterError, match=message):
        privacyfrost2(ev, Lattice(QIS, mins, maxs), priorities=[1, 1, 1])
    assert ev.evaluations == 0


def test_lattice_must_match_the_evaluator():
    ev, _ = make()
    with pytest.raises(ParameterError, match=r"differ from the evaluator's quasi-identifiers"):
        privacyfrost2(
            ev, Lattice(("zip", "age", "sex"), (0, 0, 0), (2, 2, 1)), priorities=[1, 1, 1]
        )


def test_partial_step_leaves_groups_whose_labels_would_merge():
    # "z" is its own parent in "a": a group at "*" split on "a" shows "z", the label of a
    # group already at level 0; such a split would merge two groups and is not made
    from tests.support.pf2_reference import PartialState, table_of

    h = {
        "a": taxonomy_hierarchy({"x": ["xy"], "y": ["xy"], "z": ["z"]}, attribute="a"),
        "c": taxonomy_hierarchy({"x": ["*"], "y": ["*"]}, attribute="c"),
    }
    rows = [("z", "x")] * 3 + [("z", "y")] * 3
    table = EncodedTable.from_rows(rows, ["a", "c"])
    base = get_engine("numpy", table, hierarchies=h).class_stats(["a", "c"])
    ctx = MetricContext(("a", "c"), h, base, table.n_rows, {})
    ev = LatticeEvaluator(
        base, h, [build_model("k_anonymity", {"k": 2})], 0, build_metric("loss"), ctx
    )
    args = (ev, (2, 1), (0, 0), [0, 1], BasicScore(), np.ones(2), np.array([1, 2]), None)
    state = PartialState(*args)
    labels = base.key_labels()
    cx = labels.index(("z", "x"))
    levels = np.array([[2, 1], [2, 1]], dtype=np.int64)
    levels[cx] = (0, 1)  # ("z", "*") at level 0 of "a"; the other group is ("*", "*")
    state.levels = levels
    state.table = table_of(state.index, levels)
    state.s = state._score(state.table)
    assert state.table.sizes.size == 2
    assert not state._batch(0)
    assert state.entangled == 1
    assert state.levels[1 - cx, 0] == 2  # left as it was


@pytest.mark.parametrize(
    ("n", "n_keys"),
    [(0, 10), (1, 10), (7, 50), (32, 1000), (33, 1000), (300, 1000), (500, 70_000), (900, 1 << 20)],
)
def test_batch_table_order_sort_equals_argsort(n, n_keys):
    """The sort of a batch's groups into table order (by insertion, by slots or by radix,
    as the keys are few, dense or sparse; compiled) gives the order of a stable argsort."""
    from anonlab.algorithms.privacyfrost2._kernels import kernels

    keys = np.random.default_rng(n).choice(n_keys, size=n, replace=False).astype(np.int64)
    order = kernels().order_of(keys, n_keys)
    assert np.array_equal(order, np.argsort(keys, kind="stable"))


def test_base_classes_without_a_models_sensitive_counts_are_refused_by_name():
    """The compiled judge reads the base classes' counts of every sensitive attribute a
    model reads: base classes counted without one get an error naming it, before any work."""
    ev, lattice = make(models=(("k_anonymity", {"k": 2}),))
    ev = LatticeEvaluator(
        ev.base, H, [build_model("distinct_l_diversity", {"attribute": "disease", "l": 2})], 0,
        build_metric("loss"), ev.context,
    )  # fmt: skip
    with pytest.raises(ParameterError, match="no counts of sensitive attribute 'disease'"):
        ev.sensitive_columns()
    with pytest.raises(InputError, match="no counts of sensitive attribute 'disease'"):
        privacyfrost2(ev, lattice, priorities=[1, 1, 1], partial_domain=True)  # (the model's)


@pytest.mark.parametrize("bad", [0, 1.5, True, "2"])
def test_a_problems_priority_is_checked_as_a_jobs(bad):
    """One constraint (``anonlab.io.job.PRIORITY``) and one wording for a job's ``priority``
    and a Problem's ``priorities``: 1.5 is refused, not truncated to 1."""
    from anonlab.algorithms import build_anonymizer

    table = EncodedTable.from_rows(ROWS, [*QIS, "disease"])
    k2 = (build_model("k_anonymity", {"k": 2}),)
    problem = Problem(table, QIS, H, k2, build_metric("loss"), priorities={"age": bad})
    with pytest.raises(
        ParameterError, match=r"The 'priority' of quasi-identifier 'age' must be an int >= 1"
    ):
        build_anonymizer("privacyfrost2").fit(problem)


def test_settle_compiled_elsewhere_has_the_types_a_search_calls_it_with():
    """A first run compiles settle in another process for the arguments
    ``_settle_arguments`` makes: the search must call it with the same types, or it would
    compile settle again instead of loading that machine code."""
    from anonlab.algorithms.privacyfrost2._kernels import _settle_arguments, kernels

    ev, lat = make()
    res = privacyfrost2(ev, lat, priorities=[1, 1, 1], partial_domain=True)
    assert res.partial is not None and res.partial.splits > 0  # settle ran
    settle = kernels().settle
    assert tuple(settle.typeof_pyval(a) for a in _settle_arguments("int8")) in settle.signatures
