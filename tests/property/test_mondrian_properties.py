"""Mondrian (LeFevre, DeWitt & Ramakrishnan 2006) as properties.

* Strict Mondrian, all open regions cut per round, finds the regions of the paper's
  recursion run one region at a time (tests/support/mondrian_reference.py).
* Whatever the table, k, partitioning, categories (labels or sets) and models: the release satisfies every model,
  counted afresh from the released labels; every released cell covers its record's value;
  strict regions do not overlap; the loss is the GCP read from the labels.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from anonlab import EncodedTable, Hierarchy, anonymize
from tests.support.mondrian_reference import mondrian_strict

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))

#: Two branches of unequal size over six leaves.
TREE = Hierarchy(
    [
        ["a", "P", "*"],
        ["b", "P", "*"],
        ["c", "P", "*"],
        ["d", "P", "*"],
        ["e", "Q", "*"],
        ["f", "Q", "*"],
    ]
)


@st.composite
def tables(draw):
    n = draw(st.integers(2, 60))
    age = draw(st.lists(st.integers(18, 30), min_size=n, max_size=n))
    height = draw(st.lists(st.sampled_from([150, 160, 170, 185]), min_size=n, max_size=n))
    job = draw(st.lists(st.sampled_from("abcdef"), min_size=n, max_size=n))
    disease = draw(st.lists(st.sampled_from(["flu", "hiv", "cold"]), min_size=n, max_size=n))
    return {
        "age": [str(a) for a in age],
        "height": [str(h) for h in height],
        "job": job,
        "disease": disease,
    }


def _job(k, partitioning="strict", extra=(), categorical="hierarchy"):
    return {
        "quasi_identifiers": {"age": {}, "height": {}, "job": {"hierarchy": TREE}},
        "sensitive": ["disease"],
        "models": [{"k_anonymity": {"k": k}}, *extra],
        "metric": "gcp",
        "algorithm": {"name": "mondrian", "partitioning": partitioning, "categorical": categorical},
    }


def _regions(labels):
    keys = np.stack([np.asarray(v, dtype=str) for v in labels.values()], axis=1)
    _, cls = np.unique(keys, axis=0, return_inverse=True)
    return cls.reshape(-1)


@SETTINGS
@given(tables(), st.integers(1, 6))
def test_rounds_find_the_regions_of_the_recursion(data, k):
    assume(k <= len(data["age"]))
    r = anonymize(EncodedTable.from_columns(data), _job(k))
    rows = list(zip(data["age"], data["height"], data["job"]))
    expected = mondrian_strict(rows, ["interval", "interval", "hierarchy"], [None, None, TREE], k)
    want = sorted(sorted(region) for region in expected)
    group = r.recoding.group
    got = sorted(sorted(np.flatnonzero(group == g).tolist()) for g in np.unique(group))
    assert got == want


def _covers(label, value, tree_labels):
    if label == value or label == "*":
        return True
    if label.startswith("["):
        lo, hi = (float(x) for x in label[1:-1].split(","))
        return lo <= float(value) <= hi
    if label.startswith("{"):
        return value in label[1:-1].split(";")
    return label in tree_labels.get(value, ())


@SETTINGS
@given(
    tables(),
    st.integers(1, 5),
    st.sampled_from(["strict", "relaxed"]),
    st.sampled_from(["hierarchy", "set"]),
    st.sampled_from(
        [
            (),
            ({"distinct_l_diversity": {"attribute": "disease", "l": 2}},),
            ({"equal_t_closeness": {"attribute": "disease", "t": 0.4}},),
        ]
    ),
)
def test_the_release_satisfies_its_models_and_covers_its_records(data, k, mode, kind, extra):
    n = len(data["age"])
    assume(k <= n)
    job = {**_job(k, mode, extra, kind), "suppression": 1.0, "output": {"suppressed": "mask"}}
    r = anonymize(EncodedTable.from_columns(data), job)
    released = {q: np.asarray(r.columns[q], dtype=object) for q in ("age", "height", "job")}
    suppressed = np.all([released[q] == "*" for q in released], axis=0) & (
        r.release.verification.suppressed_rows > 0
    )
    tree = {v: {"P" if v in "abcd" else "Q", "*"} for v in "abcdef"}
    for q in released:
        for lab, val in zip(released[q].tolist(), data[q]):
            assert _covers(str(lab), val, tree if q == "job" else {}), (q, lab, val)
    kept = ~suppressed
    cls = _regions({q: released[q][kept] for q in released})
    disease = np.asarray(data["disease"])[kept]
    if kept.any():
        sizes = np.bincount(cls)
        assert sizes.min() >= k
        if extra and "distinct_l_diversity" in extra[0]:
            for c in np.unique(cls):
                assert len(set(disease[cls == c])) >= 2
    # the loss is the GCP of the labels: interval (hi - lo) / span, labels by leaves
    spans = {q: max(map(int, data[q])) - min(map(int, data[q])) for q in ("age", "height")}
    total = 0.0
    for q in released:
        for lab, hidden in zip(released[q].tolist(), suppressed):
            lab = str(lab)
            if hidden or lab == "*":
                total += 1.0
            elif lab.startswith("["):
                lo, hi = (int(x) for x in lab[1:-1].split(","))
                total += (hi - lo) / spans[q]
            elif q == "job" and lab in ("P", "Q"):
                total += (4 - 1) / 5 if lab == "P" else (2 - 1) / 5
            elif lab.startswith("{"):
                total += (len(lab[1:-1].split(";")) - 1) / 5
    assert abs(r.loss - total / (3 * n)) < 1e-9


@SETTINGS
@given(tables(), st.integers(1, 5))
def test_strict_regions_do_not_overlap(data, k):
    assume(k <= len(data["age"]))
    r = anonymize(EncodedTable.from_columns(data), _job(k))
    group = r.recoding.group
    ages = np.asarray(data["age"], dtype=int)
    heights = np.asarray(data["height"], dtype=int)
    boxes = [
        (ages[group == g].min(), ages[group == g].max(), heights[group == g].min(),
         heights[group == g].max(), set(np.asarray(data["job"])[group == g]))
        for g in np.unique(group)
    ]  # fmt: skip
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            overlap = a[0] <= b[1] and b[0] <= a[1] and a[2] <= b[3] and b[2] <= a[3]
            assert not (overlap and a[4] & b[4]), (a, b)
