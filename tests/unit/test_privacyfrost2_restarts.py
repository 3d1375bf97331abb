"""PrivacyFrost2 restarts (an anonlab extension of Kiyomoto & Miyake 2014, 5.3-5.4, Fig. 3):
``restarts=0`` is the paper's procedure exactly, restarts never return a worse table, revisit
the runner-up de-generalizations, count every extra table, and bad values fail before any
work (function and job file)."""

from __future__ import annotations

import pytest

import anonlab
from anonlab import EncodedTable, anonymize, taxonomy_hierarchy
from anonlab.algorithms._lattice import Lattice, LatticeEvaluator
from anonlab.algorithms.privacyfrost2 import build_score, privacyfrost2
from anonlab.algorithms.privacyfrost2.search import DEFAULT_RESTARTS
from anonlab.engines import get_engine
from anonlab.exceptions import ParameterError
from anonlab.io import write_hierarchy
from anonlab.metrics import build_metric
from anonlab.metrics.base import MetricContext
from anonlab.models import build_model
from tests.reference import test_privacyfrost2_paper as fig2
from tests.support.identifying import ADULT_IDENTIFYING
from tests.unit.test_privacyfrost2 import ROWS, make

K2 = (("k_anonymity", {"k": 2}),)
K2_L2 = (("k_anonymity", {"k": 2}), ("distinct_l_diversity", {"attribute": "disease", "l": 2}))

# ---------------------------------------------------------------------------- restarts=0


@pytest.mark.parametrize(
    ("models", "priorities", "score", "expected"),
    [
        # (levels, score, tables checked, tables scored, skipped by the bound), as returned
        # by the search before restarts existed
        (K2, [1, 1, 1], "basic", ((0, 0, 1), 10.0, 4, 6, 3)),
        (K2_L2, [3, 1, 1], "basic", ((1, 1, 0), 13.0, 9, 9, 0)),
        ((("k_anonymity", {"k": 3}),), [1, 2, 3], "log", ((3, 2, 0), 3.0, 7, 8, 3)),
        (K2, [2, 1, 1], "eta2", ((1, 0, 1), 6.0, 4, 6, 3)),
    ],
)
def test_zero_restarts_is_the_papers_procedure(models, priorities, score, expected):
    ev, lat = make(models=models)
    score_fn = build_score("eta", d=2) if score == "eta2" else score
    res = privacyfrost2(ev, lat, priorities=priorities, score=score_fn, restarts=0)
    got = (res.levels, res.full_domain_score, res.tables_checked, res.tables_scored)
    assert (*got, res.skipped_by_bound) == expected
    assert ev.evaluations == res.tables_checked
    assert res.restarts == res.restarts_run == 0
    assert res.levels_before_restarts == res.levels
    assert res.score_before_restarts == res.full_domain_score
    # restarts run after the paper's procedure: its T^G is the same, and is kept unless a
    # restart finds a strictly better table
    ev2, _ = make(models=models)
    more = privacyfrost2(ev2, lat, priorities=priorities, score=score_fn, restarts=8)
    assert more.levels_before_restarts == res.levels
    assert more.score_before_restarts == res.full_domain_score
    assert more.full_domain_score >= res.full_domain_score
    if more.full_domain_score == res.full_domain_score:
        assert more.levels == res.levels
    assert more.tables_checked >= res.tables_checked
    assert more.tables_scored >= res.tables_scored
    assert 0 < more.restarts_run <= 8


@pytest.mark.parametrize("restarts", [0, DEFAULT_RESTARTS])
def test_figure_2_tables_with_and_without_restarts(restarts):
    table = EncodedTable.from_rows(fig2.ROWS, list(fig2.QIS))
    base = get_engine("numpy", table, hierarchies=fig2.H).class_stats(
        list(fig2.QIS), with_rows=True
    )
    ctx = MetricContext(fig2.QIS, fig2.H, base, table.n_rows, {})
    ev = LatticeEvaluator(
        base, fig2.H, [build_model("k_anonymity", {"k": 2})], 0, build_metric("loss"), ctx
    )
    lattice = Lattice(fig2.QIS, (0, 0, 0, 0), tuple(fig2.H[q].height for q in fig2.QIS))
    log = privacyfrost2(
        ev, lattice, priorities=fig2.PRIORITIES, score="log", partial_domain=True,
        restarts=restarts,
    )  # fmt: skip
    assert log.transformation == {"birth": 1, "gender": 1, "zip": 2, "nationality": 0}
    assert log.partial is not None
    assert fig2.rows_of(ev, log.partial.base_levels) == fig2.LOG_TABLE
    eta = privacyfrost2(
        ev, lattice, priorities=fig2.PRIORITIES, score=build_score("eta", d=3),
        partial_domain=True, restarts=restarts,
    )  # fmt: skip
    assert eta.transformation == {"birth": 0, "gender": 0, "zip": 1, "nationality": 1}
    assert eta.partial is not None
    assert fig2.rows_of(ev, eta.partial.base_levels) == fig2.ETA_TABLE


# ---------------------------------------------------------------------------- restarts>0

# Four records where the paper's procedure stops short: from T^I = (1, 1, 1) (score 8) no
# de-generalization passes and raises the score; the 2nd top-down takes c (score 14), whose
# bottom-up finds nothing above 8. The runner-up b (score 11) also fails, but its bottom-up
# generalizes a to the root: (2, 0, 1) passes with score 1 + 3*2 + 3*1 = 10.
Q3 = ("a", "b", "c")
H3 = {
    "a": taxonomy_hierarchy({"x": ["xy"], "y": ["xy"], "z": ["z"]}, attribute="a"),
    "b": taxonomy_hierarchy(
        {"x": ["xy", "xyz"], "y": ["xy", "xyz"], "z": ["z", "xyz"]}, attribute="b"
    ),
    "c": taxonomy_hierarchy({"x": ["*"], "y": ["*"], "z": ["*"]}, attribute="c", add_top=False),
}
ROWS3 = [("z", "y", "x"), ("x", "y", "z"), ("z", "x", "x"), ("x", "x", "y")]


def make3():
    table = EncodedTable.from_rows(ROWS3, list(Q3))
    base = get_engine("numpy", table, hierarchies=H3).class_stats(list(Q3), with_rows=True)
    ctx = MetricContext(Q3, H3, base, table.n_rows, {})
    ev = LatticeEvaluator(
        base, H3, [build_model("k_anonymity", {"k": 2})], 0, build_metric("loss"), ctx
    )
    return ev, Lattice(Q3, (0, 0, 0), tuple(H3[q].height for q in Q3))


def test_a_runner_up_restart_finds_a_better_table():
    ev, lat = make3()
    paper = privacyfrost2(ev, lat, priorities=[1, 3, 3], restarts=0)
    assert paper.levels == (1, 1, 1) and paper.full_domain_score == 8
    calls = []
    ev, lat = make3()
    res = privacyfrost2(
        ev, lat, priorities=[1, 3, 3], restarts=1, progress=lambda a, t: calls.append(a)
    )
    assert res.levels == (2, 0, 1) and res.full_domain_score == res.score == 10
    assert res.value_counts == (1, 2, 1)
    assert res.levels_before_restarts == (1, 1, 1) and res.score_before_restarts == 8
    assert res.restarts == res.restarts_run == 1
    assert ev.evaluate(res.levels, with_loss=False).anonymous
    # every table the restart checked is counted (and reported to progress)
    assert res.tables_checked == len(calls) == ev.evaluations > paper.tables_checked
    assert res.tables_scored > paper.tables_scored
    # the partial-domain step starts from the better table
    ev, lat = make3()
    part = privacyfrost2(ev, lat, priorities=[1, 3, 3], restarts=1, partial_domain=True)
    assert part.levels == (2, 0, 1) and part.score >= 10


def test_restarts_stop_when_no_runner_up_is_left():
    ev, lat = make3()
    res = privacyfrost2(ev, lat, priorities=[1, 3, 3], restarts=10_000)
    assert res.full_domain_score == 10
    assert res.restarts == 10_000 and 1 <= res.restarts_run < 10_000


def test_default_restarts_close_the_gap_on_adult(tmp_path):
    """Bundled Adult (8 QIs, anonlab's hierarchies), k = 10, basic score: the paper's greedy
    de-generalizes age first and ends at 15; the runner-ups reach 24, through the job file."""
    table = anonlab.load_adult()
    hierarchies = anonlab.adult_hierarchies(table)
    qis = ["sex", "age", "race", "marital-status", "education", "native-country",
           "workclass", "occupation"]  # fmt: skip
    for q in qis:
        write_hierarchy(hierarchies[q], tmp_path / f"{q}.csv")
    spec = {
        "quasi_identifiers": {q: {"hierarchy": str(tmp_path / f"{q}.csv")} for q in qis},
        "identifiers": ADULT_IDENTIFYING,
        "models": [{"k_anonymity": {"k": 10}}],
        "suppression": 0.0,
        "algorithm": "privacyfrost2",
    }
    paper = anonymize(table, {**spec, "privacyfrost2": {"restarts": 0}})
    default = anonymize(table, spec)
    assert paper.search.full_domain_score == 15
    assert default.search.full_domain_score == 24
    assert default.transformation["education"] == 0 and default.transformation["age"] == 4
    assert all(default.checks.values())
    assert default.search.evaluated > paper.search.evaluated


# ---------------------------------------------------------------------------- bad values


def test_default_restarts_depend_on_the_partial_domain_step():
    ev, lat = make()
    full = privacyfrost2(ev, lat, priorities=[1, 1, 1])
    assert full.restarts == DEFAULT_RESTARTS
    part = privacyfrost2(ev, lat, priorities=[1, 1, 1], partial_domain=True)
    assert part.restarts == 0 and part.restarts_run == 0
    asked = privacyfrost2(ev, lat, priorities=[1, 1, 1], partial_domain=True, restarts=3)
    assert asked.restarts == 3


@pytest.mark.parametrize("bad", [-1, 1.5, True, "3"])
def test_bad_restarts_fail_before_any_work(bad):
    ev, lat = make()
    with pytest.raises(ParameterError, match=r"The 'restarts' parameter of privacyfrost2 must"):
        privacyfrost2(ev, lat, priorities=[1, 1, 1], restarts=bad)
    assert ev.evaluations == 0


def _job(tmp_path, pf2):
    """The ROWS table as a CSV file and a PrivacyFrost2 job on it with ``pf2`` options."""
    path = tmp_path / "t.csv"
    path.write_text("age,zip,sex\n" + "\n".join(",".join(r[:3]) for r in ROWS))
    spec = {
        "quasi_identifiers": {"age": {"intervals": {"widths": [5, 10]}}, "zip": {}, "sex": {}},
        "models": [{"k_anonymity": {"k": 2}}],
        "algorithm": "privacyfrost2",
        "privacyfrost2": pf2,
    }
    return path, spec


@pytest.mark.parametrize("bad", [-1, 2.5, True, "many"])
def test_bad_restarts_in_a_job_fail_before_any_work(tmp_path, bad):
    path, spec = _job(tmp_path, {"restarts": bad})
    out = tmp_path / "out.csv"
    with pytest.raises(ParameterError, match=r"The 'restarts' parameter of privacyfrost2 must"):
        anonymize(path, spec, output=out)
    assert not out.exists()


def test_job_lists_restarts_among_the_valid_keys(tmp_path):
    path, spec = _job(tmp_path, {"restart": 2})
    with pytest.raises(
        ParameterError, match=r"Did you mean 'restarts'.*Valid parameters: .*restarts"
    ):
        anonymize(path, spec)
    spec["privacyfrost2"] = {"restarts": 0}
    assert all(anonymize(path, spec).checks.values())
