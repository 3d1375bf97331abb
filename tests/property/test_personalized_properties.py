"""Personalized privacy (paper 004, Song et al. 2015) as properties.

* Pleak computed in one pass equals Definition 8 read literally (a loop over records).
* Theorem 1: ``Pleak(t*) >= 1 / (b * Nleaf(t*[A_S]))``, the paper's ``1/b`` while the
  record's own value is a leaf.
* Theorem 2: raising the sensitive value of a record of ``LC(t*)`` never raises ``Pleak(t*)``
  (and lowers it when the parent has more leaves).
* The lockstep clustering equals the clustering done tuple by tuple; batched
  SA_Generalization equals raising one record at a time.
* Every output meets every record's limit; limits of 1 leave the table k-anonymous only.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from anonlab import EncodedTable, Hierarchy
from anonlab.algorithms.personalized import (
    QuasiIdentifierIndex,
    adaptive_clustering,
    clustering,
    group_needs,
    sa_generalization,
)
from anonlab.algorithms.personalized.sensitive import tree_arrays
from anonlab.engines import get_engine
from anonlab.jobs import anonymize, build_problem, load_job
from anonlab.models import PersonalizedLeakage
from anonlab.models.personalized import (
    SensitiveTree,
    correlate_degree,
    leakage_collection,
    leakage_fractions,
    leakage_lower_bound,
    privacy_leakage,
)
from tests.support.personalized_reference import (
    clustering_by_definition,
    pleak_by_definition,
    sa_one_at_a_time,
)

SETTINGS = settings(suppress_health_check=list(HealthCheck))

#: A sensitive tree with branches of different sizes and a unary chain (f -> F -> *).
TREE = Hierarchy(
    [
        ["a", "A", "*"],
        ["b", "A", "*"],
        ["c", "C", "*"],
        ["d", "C", "*"],
        ["e", "C", "*"],
        ["f", "F", "*"],
        ["g", "G", "*"],
    ],
    attribute="s",
)
VALUES = ["a", "b", "c", "d", "e", "f"]  # g: a leaf no record holds
N_LEAVES = 7
QI_TREES = {
    "x": Hierarchy(
        [
            [str(v), f"[{v // 2 * 2}-{v // 2 * 2 + 1}]", f"[{v // 4 * 4}-{v // 4 * 4 + 3}]", "*"]
            for v in range(8)
        ],
        attribute="x",
    ),  # fmt: skip
    "y": Hierarchy([["p", "pq", "*"], ["q", "pq", "*"], ["r", "r", "*"]], attribute="y"),
}


def sensitive_column(values):
    return EncodedTable.from_columns({"s": values})["s"]


def release_of(rows):
    """(group, released level) per record: the groups, the column, the levels, the tree."""
    col = sensitive_column([r[1] for r in rows])
    group = np.array([r[0] for r in rows])
    return group, col, np.array([r[2] for r in rows]), SensitiveTree.of(TREE, col)


groups_st = st.lists(
    st.tuples(st.integers(0, 4), st.sampled_from(VALUES), st.integers(0, 2)),
    min_size=1,
    max_size=30,
)


@pytest.mark.slow
@SETTINGS
@given(rows=groups_st)
def test_pleak_equals_definition_8(rows):
    group, col, levels, tree = release_of(rows)
    got = privacy_leakage(tree, group, col.codes, levels)
    labels = [TREE.generalize([v], lv)[0] for v, lv in zip(col.labels(), levels)]
    leaves_of = {
        lab: int(sum(1 for leaf in TREE.leaves if TREE.generalize([leaf], lv)[0] == lab))
        for lab, lv in zip(labels, levels)
    }

    def covers(value, node):
        return any(TREE.generalize([value], lv)[0] == node for lv in range(TREE.height + 1))

    want = pleak_by_definition(list(col.labels()), group, labels, leaves_of.__getitem__, covers)
    np.testing.assert_array_equal(got, [float(w) for w in want])  # correctly rounded
    exact = leakage_fractions(tree, group, col.codes, levels)
    num, den = exact.exact()
    assert [Fraction(int(a), int(b)) for a, b in zip(num, den)] == want
    # Definitions 6 and 7 agree with it: Pleak is the sum of DCorrelate over LC, over b
    for row in range(len(rows)):
        lc = leakage_collection(tree, group, col.codes, levels, row)
        own = np.full(lc.size, col.codes[row])
        degree = correlate_degree(tree, own, col.codes[lc], levels[lc])
        assert (degree > 0).all() and row in lc
        assert degree.sum() / np.sum(group == group[row]) == pytest.approx(got[row])


@SETTINGS
@given(rows=groups_st)
def test_theorem_1_with_the_records_own_value(rows):
    group, col, levels, tree = release_of(rows)
    pleak = privacy_leakage(tree, group, col.codes, levels)
    bound = leakage_lower_bound(tree, group, col.codes, levels)
    assert (pleak >= bound - 1e-12).all()
    b = np.bincount(group)[group]
    leaf = levels == 0
    assert (pleak[leaf] >= 1.0 / b[leaf] - 1e-12).all()  # the paper's 1/|group|


@SETTINGS
@given(rows=groups_st, data=st.data())
def test_theorem_2_raising_a_value_in_lc_never_raises_pleak(rows, data):
    group, col, levels, tree = release_of(rows)
    t = data.draw(st.integers(0, len(rows) - 1))
    lc = leakage_collection(tree, group, col.codes, levels, t)
    raisable = lc[levels[lc] < tree.height]
    assume(raisable.size > 0)
    i = int(data.draw(st.sampled_from(raisable.tolist())))
    before = privacy_leakage(tree, group, col.codes, levels)[t]
    up = levels.copy()
    up[i] += 1
    after = privacy_leakage(tree, group, col.codes, up)[t]
    assert after <= before + 1e-12
    grew = (
        tree.node_leaves([col.codes[i]], [up[i]])[0]
        > tree.node_leaves([col.codes[i]], [levels[i]])[0]
    )
    if grew:
        assert after < before - 1e-12


qi_rows_st = st.lists(
    st.tuples(
        st.integers(0, 7),
        st.sampled_from(["p", "q", "r"]),
        st.sampled_from(VALUES),
        st.sampled_from([1 / 7, 0.2, 0.25, 0.5, 1.0]),
    ),
    min_size=2,
    max_size=60,
)


def qi_job(limits, *, k=2, personalized=True):
    job = {
        "quasi_identifiers": {"x": {"hierarchy": QI_TREES["x"]}, "y": {"hierarchy": QI_TREES["y"]}},
        "sensitive": ["s"],
        "models": [{"k_anonymity": {"k": k}}],
        "algorithm": "personalized",
        "metric": "info_left",
    }
    if personalized:
        job["models"].append({"personalized_leakage": {"attribute": "s", "hierarchy": TREE}})
        job["personalized"] = {"limit_column": "limit"}
    return job


def qi_table(rows):
    return EncodedTable.from_rows(
        [(str(x), y, s, repr(lim)) for x, y, s, lim in rows], ["x", "y", "s", "limit"]
    )


@SETTINGS
@given(rows=qi_rows_st, segment=st.integers(1, 4), window=st.integers(1, 3), sync=st.integers(0, 2))
def test_lockstep_clustering_equals_the_tuple_by_tuple_scan(rows, segment, window, sync):
    table = qi_table(rows)
    problem = build_problem(table, load_job(qi_job(None)))
    index = QuasiIdentifierIndex.of(problem)
    limits = problem.record_parameters["leakage_limit"]
    need = group_needs(limits, 2, table.n_rows)
    block_need = np.maximum.reduceat(need[index.order], index.offsets[:-1])
    saved = (clustering._SEGMENT, clustering._WINDOW, clustering._SYNC_STEPS)
    try:
        clustering._SEGMENT, clustering._WINDOW, clustering._SYNC_STEPS = segment, window, sync
        got, _ = adaptive_clustering(index, block_need)
    finally:
        clustering._SEGMENT, clustering._WINDOW, clustering._SYNC_STEPS = saved
    np.testing.assert_array_equal(got, clustering_by_definition(index, block_need))


@SETTINGS
@given(
    rows=st.lists(
        st.tuples(
            st.integers(0, 3), st.sampled_from(VALUES), st.sampled_from([0.1, 1 / 7, 0.3, 0.5, 1.0])
        ),
        min_size=1,
        max_size=40,
    )
)
def test_batched_sa_generalization_equals_one_record_at_a_time(rows):
    klass = np.array([r[0] for r in rows], dtype=np.int64)
    col = sensitive_column([r[1] for r in rows])
    limits = np.array([r[2] for r in rows])
    rank = np.arange(len(rows), dtype=np.int64)[::-1].copy()
    ancestors, leaves = tree_arrays(TREE, col.categories)
    codes = col.codes.astype(np.int64)
    out = sa_generalization(klass, codes, limits, rank, ancestors, leaves)
    want, stuck = sa_one_at_a_time(klass, codes, limits, rank, ancestors, leaves)
    np.testing.assert_array_equal(out.levels, want)
    classes = np.unique(klass)
    assert dict(zip(classes.tolist(), out.stuck.tolist())) == stuck


def released_pleak(result, table):
    """Pleak of every released record, judged afresh from the released labels."""
    released = EncodedTable.from_columns({c: list(result.columns[c]) for c in ("x", "y", "s")})
    stats = get_engine("numpy", released).class_stats(["x", "y"], with_rows=True)
    model = PersonalizedLeakage("s", TREE)
    return model.record_values(stats.row_class, table["s"], released["s"]), stats


@SETTINGS
@given(rows=qi_rows_st)
def test_every_output_meets_every_records_limit(rows):
    table = qi_table(rows)
    assume(table.n_rows >= 2)
    res = anonymize(table, qi_job(None))
    pleak, stats = released_pleak(res, table)
    limits = np.array([r[3] for r in rows])
    released = EncodedTable.from_columns({"s": list(res.columns["s"])})["s"]
    verdict = PersonalizedLeakage("s", TREE).judge_records(
        stats.row_class, table["s"], released, limits
    )
    assert verdict.ok.all()  # exactly: Pleak a fraction, the limits as written
    assert (stats.sizes >= 2).all()
    assert res.search.records_over_limit == 0
    assert res.search.highest_pleak == pytest.approx(pleak.max())
    assert "limit" not in res.columns  # the limit column is never released unless asked


@pytest.mark.slow
@SETTINGS
@given(rows=qi_rows_st, k=st.integers(2, 4))
def test_limits_of_one_leave_the_table_k_anonymous_only(rows, k):
    rows = [(x, y, s, 1.0) for x, y, s, _ in rows]
    assume(len(rows) >= k)
    table = qi_table(rows)
    res = anonymize(table, qi_job(None, k=k))
    assert list(res.columns["s"]) == list(table["s"].labels())  # no sensitive value raised
    assert res.search.generalized_sensitive == 0
    released = EncodedTable.from_columns({c: list(res.columns[c]) for c in ("x", "y")})
    assert (get_engine("numpy", released).class_stats(["x", "y"]).sizes >= k).all()
    # the same release as without any personal limit
    plain = anonymize(table, qi_job(None, k=k, personalized=False))
    for c in ("x", "y", "s"):
        assert list(res.columns[c]) == list(plain.columns[c])


def test_limits_of_one_over_n_are_always_met():
    """Every limit of at least 1/N is met, whatever the data (all one value here)."""
    rows = [(i % 8, "p", "a", 1 / N_LEAVES) for i in range(30)]
    table = qi_table(rows)
    res = anonymize(table, qi_job(None))
    pleak, _ = released_pleak(res, table)
    assert (pleak <= 1 / N_LEAVES).all()  # 1/7 exactly (correctly rounded)


@SETTINGS
@given(
    data=st.data(),
    terms=st.integers(1, 4),
    big=st.booleans(),
)
def test_record_fractions_are_exact(data, terms, big):
    """Values correctly rounded and compared with bounds read as written, exactly: with
    small leaves (whole numbers below 2^53) and with leaves whose common multiple is not
    (Python ints)."""
    from anonlab.models.per_record import RecordFractions, decimal_fraction

    top = 10**7 if big else 9
    branches = data.draw(
        st.lists(st.lists(st.integers(1, top), min_size=terms, max_size=terms), min_size=1,
                 max_size=4)
    )  # fmt: skip
    n = data.draw(st.integers(1, 12))
    branch = np.array(data.draw(st.lists(st.integers(0, len(branches) - 1), min_size=n,
                                         max_size=n)))  # fmt: skip
    sizes = np.array(data.draw(st.lists(st.integers(1, 40), min_size=n, max_size=n)))
    counts = np.array(
        [data.draw(st.lists(st.integers(0, int(s)), min_size=terms, max_size=terms)) for s in sizes]
    )
    fr = RecordFractions(counts, np.array(branches), branch, sizes)
    want = [
        sum(Fraction(int(c), int(b)) for c, b in zip(counts[i], branches[branch[i]]))
        / int(sizes[i])
        for i in range(n)
    ]
    assert fr.values().tolist() == [float(w) for w in want]
    bounds = np.array(
        [data.draw(st.sampled_from([float(w), 0.333333333, 0.25, 0.1, 1 / 3, 1.0])) for w in want]
    )
    assert fr.within(bounds).tolist() == [w <= decimal_fraction(b) for w, b in zip(want, bounds)]
