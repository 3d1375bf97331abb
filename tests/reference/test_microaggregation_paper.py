"""MDAV microaggregation (Domingo-Ferrer & Mateo-Sanz 2002; Domingo-Ferrer & Torra 2005,
section 3.1) on worked examples computed by hand.

Example 1: nine records in two dimensions, k = 3. Both attributes hold the same multiset of
values (1, 2, 2, 5, 5, 6, 9, 10, 10), so their means (50/9) and standard deviations are equal
and distances between z-scores are the raw distances scaled by one factor: MDAV chooses as it
would on the raw values.

* The centroid of the nine records is (50/9, 50/9). Squared distances to it: F (10,10) 39.5,
  A (1,2) and B (2,1) 33.4, D (9,10) and E (10,9) 31.6, C (2,2) 25.3, G, H, I below 1.
  r = F.
* The record farthest from F: A and B both at 81 + 64 = 145; the tie goes to the lower row,
  s = A.
* Group around F: F and its two nearest, D and E (each at squared distance 1): {D, E, F}.
  Group around A: A, C (1) and B (2): {A, B, C}.
* Three records are left (fewer than 2k): they are the last group, {G, H, I}.

Centroids (means): {A,B,C} (5/3, 5/3), {D,E,F} (29/3, 29/3), {G,H,I} (16/3, 16/3); medians
(2, 2), (10, 10), (5, 5).

Information loss, by hand. SSE (raw; both attributes share one scale, so SSE/SST is the same
on z-scores): each group loses 6/9 per attribute, SSE = 3 * 2 * 6/9 = 4; SST = 2 * 884/9
(sum of squares about the mean: 376 - 2500/9 = 884/9 per attribute), so SSE/SST = 36/1768 =
9/442. IL1s: every attribute's absolute changes add up to 4 (4/3 per group), 8 over 18 cells;
S = sqrt(884/72) (n - 1), so IL1s = (8/18) / (sqrt(2) * S) = 8 / (3 * sqrt(884)). GCP: every
group spans 1 of the range 9 in each attribute: 1/9.

Example 2: eight values in one dimension, k = 3 (fewer than 3k records: one seed). The mean
is 6, the farthest value 20; it takes its two nearest, 7 and 6: {6, 7, 20}; the five left,
{1, 2, 3, 4, 5}, are the last group (at most 2k - 1 = 5). Means 11 and 3.
"""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

from anonlab import EncodedTable, anonymize, check
from anonlab.algorithms.microaggregation import mdav
from anonlab.cli import app

NAMES = "ABCDEFGHI"
X = ["1", "2", "2", "9", "10", "10", "5", "6", "5"]
Y = ["2", "1", "2", "10", "9", "10", "6", "5", "5"]
GROUPS = {"A": "ABC", "B": "ABC", "C": "ABC", "D": "DEF", "E": "DEF", "F": "DEF"}
GROUPS.update({"G": "GHI", "H": "GHI", "I": "GHI"})
MEANS = {"ABC": "1.666666667", "DEF": "9.666666667", "GHI": "5.333333333"}
MEDIANS = {"ABC": "2", "DEF": "10", "GHI": "5"}


def _job(**algorithm):
    return {
        "quasi_identifiers": {"x": {}, "y": {}},
        "models": [{"k_anonymity": {"k": 3}}],
        "algorithm": {"name": "microaggregation", **algorithm},
    }


def _table():
    return EncodedTable.from_columns({"name": list(NAMES), "x": X, "y": Y})


def test_mdav_forms_the_groups_computed_by_hand():
    points = [[float(a), float(b)] for a, b in zip(X, Y)]
    group = mdav(points, 3).tolist()
    # F's group first (r), then A's (s), then the rest
    assert group == [1, 1, 1, 0, 0, 0, 2, 2, 2]


def test_the_release_holds_the_means_computed_by_hand():
    result = anonymize(_table(), {**_job(), "identifiers": ["name"]})
    for j, who in enumerate(NAMES):
        assert result.columns["x"][j] == MEANS[GROUPS[who]], who
        assert result.columns["y"][j] == MEANS[GROUPS[who]], who
    assert result.checks == {"k_anonymity": True}
    assert result.release.verification.k_after == 3
    assert result.release.verification.classes == 3
    assert result.metric == "gcp"
    assert result.loss == pytest.approx(1 / 9)
    assert result.search.sse_sst == pytest.approx(9 / 442)
    assert result.search.il1s == pytest.approx(8 / (3 * math.sqrt(884)))
    assert result.summary["sse_sst"] == pytest.approx(9 / 442)


def test_the_median_release_computed_by_hand():
    result = anonymize(_table(), {**_job(aggregate="median"), "identifiers": ["name"]})
    for j, who in enumerate(NAMES):
        assert result.columns["x"][j] == MEDIANS[GROUPS[who]], who
        assert result.columns["y"][j] == MEDIANS[GROUPS[who]], who
    # SSE of the medians: {1,2,2} -> 2 loses 1, {9,10,10} -> 10 loses 1, {5,6,5} -> 5 loses 1,
    # per attribute: 6 / (2 * 884/9)
    assert result.search.sse_sst == pytest.approx(6 / (2 * 884 / 9))


def test_fewer_than_3k_records_one_seed_then_the_rest():
    values = ["1", "2", "3", "4", "5", "6", "7", "20"]
    assert mdav([[float(v)] for v in values], 3).tolist() == [1, 1, 1, 1, 1, 0, 0, 0]
    t = EncodedTable.from_columns({"v": values})
    job = {
        "quasi_identifiers": {"v": {}},
        "models": [{"k_anonymity": {"k": 3}}],
        "algorithm": "microaggregation",
    }
    assert anonymize(t, job).columns["v"].tolist() == ["3"] * 5 + ["11"] * 3


def test_the_worked_example_from_a_job_file_and_the_command_line(tmp_path):
    data = tmp_path / "points.csv"
    data.write_text("name,x,y\n" + "".join(f"{n},{a},{b}\n" for n, a, b in zip(NAMES, X, Y)))
    job = tmp_path / "job.yaml"
    job.write_text(
        "identifiers: [name]\n"
        "quasi_identifiers: {x: {}, y: {}}\n"
        "models: [{k_anonymity: {k: 3}}]\n"
        "algorithm: {name: microaggregation}\n"
    )
    out = tmp_path / "release.csv"
    run = CliRunner().invoke(app, ["anonymize", str(data), "--job", str(job), "-o", str(out)])
    assert run.exit_code == 0, run.output
    rows = out.read_text().splitlines()
    assert rows[0] == "x,y"
    assert rows[1:] == [f"{MEANS[GROUPS[w]]},{MEANS[GROUPS[w]]}" for w in NAMES]
    report = check(str(data), str(job), release=str(out))
    assert report.holds and report.release is not None and report.release["k_after"] == 3
    # a released mean changed by hand: the re-check names the column and fails
    bad = tmp_path / "bad.csv"
    bad.write_text(out.read_text().replace("9.666666667,9.666666667", "9.5,9.666666667", 1))
    report = check(str(data), str(job), release=str(bad))
    assert not report.holds
    assert any("column 'x'" in f for f in report.release["failures"])
