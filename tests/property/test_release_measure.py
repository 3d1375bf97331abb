"""The loss of a release is measured on the released table, whatever its recoding.

* On a full-domain release, each metric's mixed-level formula (``release_loss``, cell by
  cell) equals its full-domain formula (``loss`` on the classes at the levels): the ARX
  numbers stay exactly what they are.
* On a release with cells of one column at different levels, the figures are checked by hand.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from anonlab import EncodedTable, Hierarchy, taxonomy_hierarchy
from anonlab.data.stats import ClassStats
from anonlab.metrics import build_metric
from anonlab.models import build_model
from anonlab.release import FullDomain, Levels, Problem, metric_context, release_cells, verify
from tests.property.test_metrics_properties import METRICS
from tests.support.profiles import costly

QIS = ("a", "b", "c")
H = {
    "a": Hierarchy(
        [["x", "xy", "*"], ["y", "xy", "*"], ["z", "zw", "*"], ["w", "zw", "*"]], attribute="a"
    ),
    "b": taxonomy_hierarchy({"x": ["*"], "y": ["*"], "z": ["*"]}, attribute="b"),
    "c": taxonomy_hierarchy({"x": ["xy"], "y": ["xy"], "z": ["z"]}, attribute="c"),
}
vals = st.sampled_from(["x", "y", "z"])
rows_st = st.lists(st.tuples(vals, vals, vals, vals), min_size=2, max_size=40)
levels_st = st.tuples(*(st.integers(0, H[q].height) for q in QIS))


def problem(rows, metric, *, k=2, suppression=0):
    table = EncodedTable.from_rows(rows, [*QIS, "s"])
    name, params = metric
    return Problem(
        table,
        QIS,
        H,
        (build_model("k_anonymity", {"k": k}),),
        build_metric(name, **params),
        max_suppressed=suppression,
    )


@pytest.mark.slow
@given(rows=rows_st, levels=levels_st, metric=st.sampled_from(METRICS), k=st.integers(1, 3))
def test_mixed_formula_equals_full_domain_formula_on_full_domain_releases(rows, levels, metric, k):
    assume(k <= len(rows))
    p = problem(rows, metric, k=k, suppression=len(rows))
    recoding = FullDomain(dict(zip(QIS, levels)))
    release = verify(p, recoding)  # suppresses the classes smaller than k
    context = metric_context(p)
    cells = release_cells(p, recoding, release.classes, release.suppressed, context)
    mixed = p.metric.release_loss(cells, context)
    full = release.loss
    if isinstance(full, float) and math.isinf(full):
        assert math.isinf(mixed)
    else:
        assert mixed == pytest.approx(full, rel=1e-9, abs=2e-10)


def test_a_mixed_release_by_hand():
    # one column a (height 2: x,y -> xy; z,w -> zw; -> *); rows at levels 0, 1, 1, 2
    rows = [("x", "x", "x", "p"), ("y", "x", "x", "p"), ("x", "x", "x", "q"), ("z", "x", "x", "q")]
    levels = np.array([[0, 0, 0], [1, 0, 0], [1, 0, 0], [2, 0, 0]])
    group = np.arange(4)

    def loss(name, **params):
        p = problem(rows, (name, params), k=1)
        return verify(p, Levels(levels, group)).loss

    # released a: x, xy, xy, *  (4 leaves: x, y, z, w)
    assert loss("height") == pytest.approx(1.0)  # (0+1+1+2)/4 for a; b and c at 0 (a sum)
    heights = sum(H[q].height for q in QIS)  # 2 + 1 + 2
    assert loss("distortion") == pytest.approx(4 / (4 * heights))
    # NCP(a) = (0 + 1 + 1 + 3) / 3; b and c lose nothing
    assert loss("ncp") == pytest.approx(5 / 3)
    assert loss("gcp") == pytest.approx(5 / 3 / (4 * 3))
    assert loss("info_left") == pytest.approx(5 / 4 / (4 * 3))
    # entropy of a given its released label: xy holds y and x once each (1 bit each)
    assert loss("entropy") == pytest.approx(2.0)
    # classes: {x}, {xy, xy}, {*}: DM = 1 + 4 + 1
    assert loss("discernibility") == 6.0


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32])
def test_levels_of_any_integer_type_release_and_measure_the_same(dtype):
    # PrivacyFrost2 hands its levels over in its own small integer type
    rows = [("x", "x", "x", "p"), ("y", "y", "x", "p"), ("x", "z", "y", "q"), ("z", "x", "z", "q")]
    levels = np.array([[0, 1, 0], [1, 0, 2], [1, 1, 1], [2, 0, 0]])
    group = np.array([0, 1, 2, 3, 0, 1, 2, 3])
    p = problem(rows + rows, ("ncp", {}), k=2)
    wide = verify(p, Levels(levels, group))
    small = verify(p, Levels(levels.astype(dtype), group))
    assert small.loss == wide.loss
    assert list(small.columns) == list(wide.columns)
    for name in wide.columns:
        assert list(small.columns[name]) == list(wide.columns[name])
    assert Levels(levels.astype(dtype), group).summary(p) == Levels(levels, group).summary(p)


_SIX = ["age", "education", "marital-status", "race", "sex", "native-country"]


def _adult_job(qis, algorithm, **more):
    """UCI Adult (bundled) and a PrivacyFrost2 job on ``qis`` with its own hierarchies:
    5-anonymity, the loss metric, ``more`` added to the job."""
    import anonlab
    from tests.support.identifying import ADULT_IDENTIFYING

    table = anonlab.load_adult()
    h = anonlab.adult_hierarchies(table)
    job = {
        "quasi_identifiers": {q: {"hierarchy": h[q]} for q in qis},
        "identifiers": [*ADULT_IDENTIFYING, "hours-per-week"],  # (with few quasi-identifiers)
        "models": [{"k_anonymity": {"k": 5}}],
        "metric": "loss",
        "algorithm": {"name": "privacyfrost2", **algorithm},
        **more,
    }
    return table, job


@pytest.mark.slow
def test_partial_domain_release_is_measured_on_the_release():
    import anonlab

    table, job = _adult_job(_SIX, {"partial_domain": True}, suppression=0.01)
    res = anonlab.anonymize(table, job)
    assert type(res.recoding).__name__ == "Levels"
    # the partial-domain table keeps more than T^G: its measured loss is lower
    assert res.loss < res.search.full_domain_loss


@pytest.mark.parametrize("metric", ["loss", "height", "discernibility", "entropy"])
def test_full_domain_loss_after_presampling_is_the_loss_of_the_records_kept(metric):
    """PrivacyFrost2's ``full_domain_loss`` is that of ``T^G`` on the records pre-sampling
    kept: a full-domain release of them measures the same (it was NaN)."""
    import anonlab

    presampling = {"presampling": {"levels": 1, "k": 5}}
    table, job = _adult_job(_SIX, presampling, metric=metric)
    res = anonlab.anonymize(table, job)
    assert res.search.presampled_rows > 0
    assert type(res.recoding).__name__ == "FullDomain"
    assert res.loss == pytest.approx(res.search.full_domain_loss, rel=1e-12)


def _reference_cells(p, recoding, row_class, suppressed):
    """Per quasi-identifier: {(value text, level, label text): (kept, suppressed)}, row by row."""
    table = recoding.kept(p)
    levels = recoding.row_levels(p)
    released = recoding.apply(p)
    out = []
    for j, q in enumerate(QIS):
        counts: dict[tuple[str, int, str], list[int]] = {}
        for r in range(table.n_rows):
            value = table[q].categories[table[q].codes[r]]
            label = released[q].categories[released[q].codes[r]]
            cell = counts.setdefault((value, int(levels[r, j]), label), [0, 0])
            cell[1 if suppressed[row_class[r]] else 0] += 1
        out.append({key: tuple(v) for key, v in counts.items()})
    return out


@given(
    rows=rows_st,
    data=st.data(),
    n_groups=st.integers(1, 5),
    keep_every_row=st.booleans(),
)
def test_cells_summary_and_counts_of_a_levels_release_equal_a_row_by_row_count(
    rows, data, n_groups, keep_every_row
):
    # the release, its summary and its cell counts are made from the (level, value) groups
    # of each column; here they are counted row by row
    p = problem(rows, ("loss", {}), k=1)
    levels = np.array(
        [data.draw(levels_st) for _ in range(n_groups)],
        dtype=data.draw(st.sampled_from(["i1", "i8"])),
    )
    group = np.array(
        data.draw(st.lists(st.integers(0, n_groups - 1), min_size=len(rows), max_size=len(rows)))
    )
    kept = None
    if not keep_every_row:
        kept = np.array(sorted(data.draw(st.sets(st.integers(0, len(rows) - 1), min_size=1))))
    recoding = Levels(levels, group, kept)
    released = recoding.apply(p)
    n = released.n_rows
    row_levels = recoding.row_levels(p)
    # the released column is each row's label at its level
    for j, q in enumerate(QIS):
        col = recoding.kept(p)[q]
        for r in range(n):
            mapping, labels = H[q].generalization(col.categories, int(row_levels[r, j]))
            assert released[q].categories[released[q].codes[r]] == labels[mapping[col.codes[r]]]
    # the summary
    summary = recoding.summary(p)
    assert summary["level_vectors"] == len({tuple(v) for v in row_levels.tolist()})
    for j, q in enumerate(QIS):
        values, counts = np.unique(row_levels[:, j], return_counts=True)
        assert summary["rows_per_level"][q] == dict(zip(values.tolist(), counts.tolist()))
    # the cells, with any classes suppressed
    row_class = np.array(data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n)))
    sizes = np.bincount(row_class, minlength=3)
    suppressed = np.array(data.draw(st.lists(st.booleans(), min_size=3, max_size=3)))
    classes = ClassStats(QIS, (0, 0, 0), sizes, n, row_class=row_class)
    counted = release_cells(p, recoding, classes, suppressed, metric_context(p, recoding.kept(p)))
    reference = _reference_cells(p, recoding, row_class, suppressed)
    context = metric_context(p, recoding.kept(p))
    for j, q in enumerate(QIS):
        c = counted.cells[j]
        domain = context.base.domains[context.base.columns.index(q)]
        got = {
            (domain[v], int(lv), released[q].categories[lab]): (int(k), int(s))
            for v, lv, lab, k, s in zip(c.value, c.level, c.label, c.kept, c.suppressed)
        }
        assert got == reference[j]


@pytest.mark.parametrize("kind", ["levels", "full_domain"])
def test_a_recoding_applied_to_another_problem_is_made_again_for_it(kind):
    # a recoding keeps its kept rows and cells for the problem they were made for only
    first = [("x", "x", "x", "p"), ("y", "y", "x", "p"), ("x", "z", "y", "q")]
    second = [("z", "y", "z", "q"), ("z", "x", "x", "p"), ("y", "y", "y", "q")]

    def recoding():
        if kind == "levels":
            return Levels(np.array([[1, 0, 0], [0, 1, 1]]), np.array([0, 1, 0]), np.array([0, 2]))
        return FullDomain({"a": 1, "b": 0, "c": 1}, np.array([0, 2]))

    p1 = problem(first, ("ncp", {}), k=1)
    p2 = problem(second, ("ncp", {}), k=1)
    reused = recoding()
    verify(p1, reused)
    again, fresh = verify(p2, reused), verify(p2, recoding())
    assert again.loss == fresh.loss
    for name in fresh.columns:
        assert list(again.columns[name]) == list(fresh.columns[name])
    assert reused.kept(p2)["a"].labels().tolist() == ["z", "y"]


def test_a_recoding_of_another_family_needs_no_cache_of_its_own():
    # a family's own LevelRecoding subclass, keeping some rows, is released and measured
    from dataclasses import dataclass

    from anonlab.release import LevelRecoding, generalize_cells

    @dataclass
    class Top(LevelRecoding):
        rows: np.ndarray | None

        def row_levels(self, problem, rows=None):
            n = self.kept(problem).n_rows if rows is None else len(rows)
            return np.tile(np.asarray(problem.max_levels), (n, 1))

        def apply(self, problem):
            table = self.kept(problem)
            lv = self.row_levels(problem)
            return table.with_columns(
                {q: generalize_cells(table[q], H[q], lv[:, j]) for j, q in enumerate(QIS)}
            )

        def summary(self, problem):
            return {}

    rows = [("x", "x", "x", "p"), ("y", "y", "x", "p"), ("x", "z", "y", "q"), ("z", "x", "z", "q")]
    p = problem(rows, ("ncp", {}), k=3)
    release = verify(p, Top(np.array([0, 1, 3])))
    assert release.verification.removed_rows == 1
    assert set(release.columns["a"]) == {"*"}
    # every cell at the top: NCP(q) = 3 records x 1 on each of the three attributes
    assert release.loss == pytest.approx(9.0)


# costly: each example measures every group's rows one by one
@pytest.mark.slow
@costly(80)
@given(rows_st, st.data())
def test_cells_of_groups_equal_the_cells_of_their_rows(rows, data):
    """Releasing cells from their groups' levels (``group``) gives the column, cells and
    counts of releasing each row at its own level, in either layout of the levels."""
    from anonlab.release.recoding import group_cells

    table = EncodedTable.from_rows(rows, [*QIS, "s"])
    n_groups = data.draw(st.integers(1, len(rows)))
    group = np.array([data.draw(st.integers(0, n_groups - 1)) for _ in rows], dtype=np.int64)
    levels = np.array(
        [[data.draw(st.integers(0, H[q].height)) for q in QIS] for _ in range(n_groups)],
        dtype=np.int8,
    )
    for j, q in enumerate(QIS):
        want = group_cells(table[q], H[q], levels[group, j])
        for lv in (levels[:, j], np.asfortranarray(levels)[:, j]):
            got = group_cells(table[q], H[q], lv, group)
            assert got.column.labels().tolist() == want.column.labels().tolist()
            assert got.key.tolist() == want.key.tolist()
            assert got.count.tolist() == want.count.tolist()
            assert got.label.tolist() == want.label.tolist()


@pytest.mark.parametrize("level", [-1, 3])
def test_a_level_or_group_outside_its_array_is_refused_naming_the_column(level):
    from anonlab.exceptions import ParameterError
    from anonlab.release.recoding import group_cells

    table = EncodedTable.from_rows([("x", "x", "x", "p"), ("y", "y", "z", "q")], [*QIS, "s"])
    with pytest.raises(
        ParameterError, match=r"A level of 'a' is outside its hierarchy's levels 0\.\.2"
    ):
        group_cells(table["a"], H["a"], np.array([0, level]))
    with pytest.raises(ParameterError, match=r"or a row's group outside the 2 level"):
        group_cells(table["a"], H["a"], np.array([0, 1]), np.array([0, level]))


def test_a_partial_step_that_splits_nothing_releases_its_full_domain_table():
    import anonlab

    models = [
        {"k_anonymity": {"k": 5}},
        {"equal_t_closeness": {"attribute": "occupation", "t": 0.1}},
    ]
    table, job = _adult_job(
        ["age", "sex", "race"], {"partial_domain": True}, sensitive=["occupation"], models=models
    )
    res = anonlab.anonymize(table, job)
    assert res.search.partial_splits == 0
    assert type(res.recoding).__name__ == "FullDomain"
    assert res.recoding.levels == res.search.full_domain_levels
    assert res.loss == res.search.full_domain_loss
    assert res.search.score == res.search.full_domain_score
    # the same release as that table's, found without the partial step
    full = anonlab.anonymize(table, {**job, "algorithm": {"name": "privacyfrost2"}})
    assert full.transformation == res.recoding.levels
    for name in full.columns:
        assert list(res.columns[name]) == list(full.columns[name])
