"""Properties of local suppression and of its wildcard counting.

* The vectorised count by blank pattern agrees with a brute-force pairwise comparison
  (:mod:`tests.support.wildcard_reference`), for frequencies and for counts of queries.
* Every release of ``local_suppression`` is k-anonymous under wildcard counting, recounted
  pair by pair from the released labels; only records below k at the full-domain level
  lose cells; the per-attribute limits hold (or the job is refused); with
  ``generalize: optimal`` it blanks at most the rows ``optimal`` suppresses times the
  attributes.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, reject
from hypothesis import strategies as st

from anonlab.data.table import EncodedTable
from anonlab.exceptions import ParameterError
from anonlab.jobs import anonymize, build_problem, load_job
from anonlab.release.blanks import compatible_counts, wildcard_frequencies
from tests.support.profiles import costly
from tests.support.wildcard_reference import compatible, pairwise_frequencies

SETTINGS = costly(60)


@st.composite
def blanked_tables(draw):
    """Rows of small codes with some blanks (as labels: ``*`` for a blank)."""
    n = draw(st.integers(1, 25))
    m = draw(st.integers(1, 4))
    codes = np.array(
        draw(st.lists(st.integers(0, 2), min_size=n * m, max_size=n * m)), dtype=np.int64
    ).reshape(n, m)
    blank = np.array(
        draw(st.lists(st.booleans(), min_size=n * m, max_size=n * m)), dtype=bool
    ).reshape(n, m)
    return codes, blank


def _labels(codes: np.ndarray, blank: np.ndarray) -> list[tuple[str, ...]]:
    return [
        tuple("*" if b else str(c) for c, b in zip(row_c, row_b))
        for row_c, row_b in zip(codes.tolist(), blank.tolist())
    ]


@SETTINGS
@given(data=blanked_tables())
def test_vectorised_frequencies_equal_the_pairwise_reference(data):
    codes, blank = data
    assert wildcard_frequencies(codes, blank).tolist() == pairwise_frequencies(
        _labels(codes, blank)
    )


@SETTINGS
@given(table=blanked_tables(), queries=blanked_tables(), seed=st.integers(0, 9))
def test_counts_of_queries_equal_the_pairwise_reference(table, queries, seed):
    codes, blank = table
    q_codes, q_blank = queries
    if q_codes.shape[1] != codes.shape[1]:  # same attributes: cut or pad the queries
        m = codes.shape[1]
        q_codes = np.resize(q_codes, (q_codes.shape[0], m))
        q_blank = np.resize(q_blank, (q_blank.shape[0], m))
    weights = np.random.default_rng(seed).integers(1, 4, size=codes.shape[0])
    rows, asked = _labels(codes, blank), _labels(q_codes, q_blank)
    expected = [sum(int(w) for r, w in zip(rows, weights) if compatible(q, r)) for q in asked]
    assert compatible_counts(codes, blank, weights, q_codes, q_blank).tolist() == expected


@st.composite
def jobs(draw):
    """A small table on three quasi-identifiers and a local-suppression job for it."""
    n = draw(st.integers(4, 40))
    rng = np.random.default_rng(draw(st.integers(0, 10_000)))
    columns = {
        "age": rng.integers(20, 30, size=n).astype(str).astype(object),
        "zip": rng.choice(["4350", "4351", "4360"], size=n).astype(object),
        "sex": rng.choice(["F", "M"], size=n).astype(object),
    }
    k = draw(st.integers(2, min(n, 6)))
    params: dict = {"name": "local_suppression"}
    if draw(st.booleans()):
        params["importance"] = draw(st.permutations(["age", "zip", "sex"]))[
            : draw(st.integers(1, 3))
        ]
    if draw(st.booleans()):
        params["limits"] = {"age": draw(st.integers(0, n)), "zip": draw(st.integers(0, n))}
    generalize = draw(st.sampled_from(["none", "levels", "optimal"]))
    suppression = 0.0
    if generalize == "none":
        params["generalize"] = "none"
    elif generalize == "levels":
        params["generalize"] = {"age": draw(st.integers(0, 2)), "zip": draw(st.integers(0, 4))}
    elif generalize == "optimal":
        params["generalize"] = "optimal"
        suppression = draw(st.sampled_from([0.0, 0.1, 0.3]))
    job = {
        "quasi_identifiers": {
            "age": {"intervals": {"widths": [5, 10]}},
            "zip": {"mask": {"width": 4}},
            "sex": {},
        },
        "models": [{"k_anonymity": {"k": k}}],
        "suppression": suppression,
        "metric": "gcp",
        "algorithm": params,
    }
    return EncodedTable.from_columns(columns), job, k


@SETTINGS
@given(case=jobs())
def test_every_release_is_k_anonymous_under_wildcard_counting(case):
    table, job, k = case
    try:
        result = anonymize(table, job)
    except ParameterError as exc:  # the limits left some records nothing to blank
        assert "cannot make" in str(exc) and "limits" in job["algorithm"], str(exc)
        reject()
    qis = list(job["quasi_identifiers"])
    released = list(zip(*(list(result.columns[q]) for q in qis)))
    assert len(released) == table.n_rows  # every record is released
    freq = pairwise_frequencies(released)
    assert min(freq) >= k
    assert result.release.verification.k_after == min(freq)
    # the limits hold, counted from the labels
    for q, limit in (job["algorithm"].get("limits") or {}).items():
        assert sum(1 for r in released if r[qis.index(q)] == "*") <= limit
    # only records below k at the full-domain level lose cells; at most every cell of each
    base = _at_levels(table, job, result.search.levels)
    counts = {row: base.count(row) for row in base}
    unsafe = [counts[row] < k for row in base]
    touched = [r != b for r, b in zip(released, base)]
    assert all(u or not t for u, t in zip(unsafe, touched))
    assert all(x in (y, "*") for r, b in zip(released, base) for x, y in zip(r, b))
    assert result.search.blanked_cells <= sum(unsafe) * len(qis)


def _at_levels(table: EncodedTable, job: dict, levels: dict) -> list[tuple[str, ...]]:
    """The table's quasi-identifiers at the given levels of the job's hierarchies."""
    problem = build_problem(table, load_job({**job, "algorithm": "optimal", "suppression": 0}))
    qis = list(problem.quasi_identifiers)
    columns = [
        [str(v) for v in problem.hierarchies[q].generalize(table[q].labels(), levels[q])]
        for q in qis
    ]
    return list(zip(*columns))


@SETTINGS
@given(case=jobs(), suppression=st.sampled_from([0.0, 0.1, 0.3]))
def test_after_optimal_it_blanks_at_most_what_optimal_suppresses(case, suppression):
    table, job, _ = case
    job = {
        **job,
        "suppression": suppression,
        "algorithm": {"name": "local_suppression", "generalize": "optimal"},
    }
    optimal = anonymize(table, {**job, "algorithm": "optimal"})
    local = anonymize(table, job)
    assert local.search.levels == optimal.transformation
    assert local.search.blanked_cells <= optimal.suppressed_rows * 3
    assert local.loss <= optimal.loss + 1e-12
