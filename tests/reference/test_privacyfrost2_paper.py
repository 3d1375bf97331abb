"""PrivacyFrost2, Kiyomoto & Miyake (CD-ARES 2014): the two tables of Fig. 2.

Fig. 2 shows six records anonymized with "Nationality" as the most valuable attribute. The
logarithm-based score keeps Nationality at its finest level (UK, Italy, USA) and generalizes
the others (198*, *, 012**), except for the USA group, which the partial-domain step
de-generalizes back to 1984, Male, 0123*. The eta-based score generalizes evenly (1984/1985,
Male/Female, 0124*/0123*, Europe), the USA group again being de-generalized by the
partial-domain step. The original records are not printed in the paper; the six below are
the ones both published tables generalize.
"""

from __future__ import annotations

import pytest

from anonlab import EncodedTable, taxonomy_hierarchy
from anonlab.algorithms._lattice import Lattice, LatticeEvaluator
from anonlab.algorithms.privacyfrost2 import BasicScore, build_score, privacyfrost2
from anonlab.engines import get_engine
from anonlab.metrics import build_metric
from anonlab.metrics.base import MetricContext
from anonlab.models import build_model
from tests.support.pf2_reference import released_labels

QIS = ("birth", "gender", "zip", "nationality")
ZIPS = ["01241", "01242", "01234", "01235", "01236", "01237"]
H = {
    "birth": taxonomy_hierarchy({"1984": ["198*", "*"], "1985": ["198*", "*"]}, attribute="birth"),
    "gender": taxonomy_hierarchy({"Male": ["*"], "Female": ["*"]}, attribute="gender"),
    "zip": taxonomy_hierarchy({z: [z[:4] + "*", z[:3] + "**", "*"] for z in ZIPS}, attribute="zip"),
    "nationality": taxonomy_hierarchy(
        {"UK": ["Europe", "*"], "Italy": ["Europe", "*"], "USA": ["America", "*"]},
        attribute="nationality",
    ),
}
ROWS = [
    ("1984", "Male", "01241", "UK"),
    ("1984", "Male", "01242", "Italy"),
    ("1985", "Female", "01234", "UK"),
    ("1985", "Female", "01235", "Italy"),
    ("1984", "Male", "01236", "USA"),
    ("1984", "Male", "01237", "USA"),
]
# Nationality is the most valuable attribute
PRIORITIES = {"birth": 1, "gender": 1, "zip": 1, "nationality": 10}

LOG_TABLE = [
    ("198*", "*", "012**", "UK"),
    ("198*", "*", "012**", "Italy"),
    ("198*", "*", "012**", "UK"),
    ("198*", "*", "012**", "Italy"),
    ("1984", "Male", "0123*", "USA"),
    ("1984", "Male", "0123*", "USA"),
]
ETA_TABLE = [
    ("1984", "Male", "0124*", "Europe"),
    ("1984", "Male", "0124*", "Europe"),
    ("1985", "Female", "0123*", "Europe"),
    ("1985", "Female", "0123*", "Europe"),
    ("1984", "Male", "0123*", "USA"),
    ("1984", "Male", "0123*", "USA"),
]


@pytest.fixture
def setup():
    table = EncodedTable.from_rows(ROWS, list(QIS))
    base = get_engine("numpy", table, hierarchies=H).class_stats(list(QIS), with_rows=True)
    ctx = MetricContext(QIS, H, base, table.n_rows, {})
    ev = LatticeEvaluator(
        base, H, [build_model("k_anonymity", {"k": 2})], 0, build_metric("loss"), ctx
    )
    lattice = Lattice(QIS, (0, 0, 0, 0), tuple(H[q].height for q in QIS))
    return ev, lattice


def rows_of(ev, base_levels):
    labels = released_labels(ev, base_levels)
    rc = ev.base.row_class
    return [tuple(labels[j][rc[i]] for j in range(len(QIS))) for i in range(len(ROWS))]


def test_log_score_keeps_the_top_priority_attribute_finest(setup):
    ev, lattice = setup
    res = privacyfrost2(ev, lattice, priorities=PRIORITIES, score="log", partial_domain=True)
    # full domain: Nationality at its original values, the others generalized
    assert res.transformation == {"birth": 1, "gender": 1, "zip": 2, "nationality": 0}
    assert res.levels_from_root == (1, 0, 1, 2)
    assert res.full_domain_score == pytest.approx(10.0)  # v = 10 times log 3 / log 3
    assert res.partial is not None
    assert rows_of(ev, res.partial.base_levels) == LOG_TABLE
    assert res.score == pytest.approx(10.0)  # the partial step does not lower it


def test_eta_score_generalizes_evenly(setup):
    ev, lattice = setup
    # d = 3: eta is 1 for 2 or 3 values and 2 above 3, so a third nationality earns nothing
    res = privacyfrost2(
        ev, lattice, priorities=PRIORITIES, score=build_score("eta", d=3), partial_domain=True
    )
    assert res.transformation == {"birth": 0, "gender": 0, "zip": 1, "nationality": 1}
    assert res.value_counts == (2, 2, 2, 2)  # every attribute shows two values
    assert res.full_domain_score == 1 + 1 + 1 + 10
    assert res.partial is not None
    assert rows_of(ev, res.partial.base_levels) == ETA_TABLE


def test_the_full_domain_tables_before_the_partial_step(setup):
    ev, lattice = setup
    log = privacyfrost2(ev, lattice, priorities=PRIORITIES, score="log")
    eta = privacyfrost2(ev, lattice, priorities=PRIORITIES, score=build_score("eta", d=3))
    assert log.partial is None and eta.partial is None
    assert log.levels[3] == 0 and all(lv > 0 for lv in log.levels[:3])
    assert eta.levels[3] == 1 and eta.levels[:3] == (0, 0, 1)


def test_precomputation_of_figure_3(setup):
    ev, lattice = setup
    res = privacyfrost2(ev, lattice, priorities=PRIORITIES, score="log")
    # step 1: zip needs one level to be 2-anonymous alone (0124*: 2, 0123*: 4)
    assert res.single_attribute_levels == (0, 0, 1, 0)
    # step 2: one level for every attribute, and the table is 2-anonymous
    assert res.initial_levels == (1, 1, 2, 1)
    assert res.order == ("zip", "gender", "birth", "nationality")  # Sort: a^1 .. a^n


def test_top_down_bound_of_section_5_3(setup):
    # delta_s = (b_{w+1} - e) v: from T^I, de-generalizing zip (e = 1, v = 1) to 0124*/0123*
    # (b = 2 nodes on that level) can add at most 1 to the basic score
    ev, lattice = setup
    base_counts = [2, 2, 6, 3]
    e = [1, 1, 1, 2]
    s = BasicScore().score(e, [1, 1, 1, 10], base_counts)
    assert s == 23.0
    assert BasicScore().upper_bound(e, [1, 1, 1, 10], base_counts, 2, 2) == s + 1
