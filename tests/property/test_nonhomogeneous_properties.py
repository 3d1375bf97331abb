"""Properties of the anonymity graph and of the non-homogeneous algorithms (Murakami & Uno).

* Theorem 1: the max-flow says k-anonymous iff a brute-force search finds k edge-disjoint
  perfect matchings (small random bipartite graphs).
* Contracting identical records changes no answer.
* Every output of ``wong_nh`` and ``murakami_uno`` is k-anonymous under Definition 1, phase 2
  never raises the loss of the first phase, and the lower bound is never above the GCP.
* The compiled multi-sorting finds the candidate edges one sort per set of sites finds.
"""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import assume, given
from hypothesis import strategies as st

from anonlab.data.table import EncodedTable
from anonlab.jobs import anonymize, build_problem, load_job
from anonlab.release import AnonymityGraph, check_release
from anonlab.release.anonymity_graph import ReleaseCells
from tests.support.profiles import costly

# costly: each example runs a search and its brute-force oracle
SETTINGS = costly(60)


def _disjoint_perfect_matchings(adj: np.ndarray, k: int) -> bool:
    """Brute force: k pairwise edge-disjoint perfect matchings of the bipartite graph."""
    n = adj.shape[0]
    matchings = [p for p in itertools.permutations(range(n)) if all(adj[i, p[i]] for i in range(n))]

    def search(start: int, used: set[tuple[int, int]], left: int) -> bool:
        if left == 0:
            return True
        for idx in range(start, len(matchings)):
            edges = {(i, matchings[idx][i]) for i in range(n)}
            if edges & used:
                continue
            if search(idx + 1, used | edges, left - 1):
                return True
        return False

    return search(0, set(), k)


@st.composite
def bipartite(draw):
    n = draw(st.integers(2, 5))
    bits = draw(st.lists(st.booleans(), min_size=n * n, max_size=n * n))
    adj = np.array(bits, dtype=bool).reshape(n, n)
    return adj


@SETTINGS
@given(adj=bipartite(), k=st.integers(1, 4))
def test_theorem_1_max_flow_equals_k_disjoint_perfect_matchings(adj, k):
    n = adj.shape[0]
    assume(k <= n)
    src, dst = np.nonzero(adj)
    graph = AnonymityGraph(n, np.ones(n, np.int64), np.ones(n, np.int64), src, dst)
    expected = _disjoint_perfect_matchings(adj, k)
    assert (graph.max_flow(k) == k * n) == expected
    if expected:
        assert graph.condition_1() >= k  # Condition 1 is necessary


@st.composite
def release_pair(draw):
    """A small original table and a concealing release of it (rows generalize their own)."""
    n = draw(st.integers(2, 9))
    values = st.sampled_from(["a", "b", "c"])
    rows = [tuple(draw(values) for _ in range(3)) for _ in range(n)]
    hidden = [tuple(draw(st.booleans()) for _ in range(3)) for _ in range(n)]
    released = [tuple("*" if h else v for v, h in zip(r, hs)) for r, hs in zip(rows, hidden)]
    return rows, released


@SETTINGS
@given(pair=release_pair())
def test_contracting_identical_records_changes_no_answer(pair):
    rows, released = pair
    n = len(rows)
    job = load_job(
        {
            "quasi_identifiers": ["x", "y", "z"],
            "models": [{"k_anonymity": {"k": 1}}],
            "metric": "gcp",
        }
    )
    problem = build_problem(EncodedTable.from_rows(rows, ["x", "y", "z"]), job)
    cells = ReleaseCells.read(problem, EncodedTable.from_rows(released, ["x", "y", "z"]))
    contracted = AnonymityGraph.build(cells)
    # the same graph with every record a vertex of its own
    i, j = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    edges = cells.covers(j.reshape(-1), i.reshape(-1)).reshape(n, n)
    src, dst = np.nonzero(edges)
    plain = AnonymityGraph(n, np.ones(n, np.int64), np.ones(n, np.int64), src, dst)
    for k in range(1, n + 1):
        assert contracted.holds(k) == plain.holds(k)
    assert contracted.condition_1() == plain.condition_1()


@st.composite
def tables(draw):
    n = draw(st.integers(6, 40))
    k = draw(st.integers(2, min(5, n // 2)))
    cards = draw(st.lists(st.integers(1, 4), min_size=2, max_size=4))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    data = {f"q{j}": rng.integers(0, c, size=n).astype(str) for j, c in enumerate(cards)}
    return EncodedTable.from_columns(data), k


def _job(table: EncodedTable, k: int, algorithm: dict) -> dict:
    return {
        "quasi_identifiers": list(table.names),
        "models": [{"k_anonymity": {"k": k}}],
        "metric": "gcp",
        "algorithm": algorithm,
    }


@SETTINGS
@given(case=tables(), initial=st.sampled_from(["pattern_rings", "matchings"]))
def test_murakami_uno_outputs_are_k_anonymous_and_phase_2_never_worse(case, initial):
    table, k = case
    algorithm = {"name": "murakami_uno", "initial": initial, "n_jobs": 1, "phase2_rounds": 6}
    job = _job(table, k, algorithm)
    result = anonymize(table, job)
    stats = result.search
    assert stats.gcp <= stats.phase1_gcp + 1e-12  # phase 2 never raises the loss
    assert stats.lower_bound is not None and stats.lower_bound <= stats.gcp + 1e-12
    assert result.loss == np.float64(stats.gcp) or abs(result.loss - stats.gcp) < 1e-12
    released = EncodedTable.from_columns({c: result.columns[c] for c in table.names})
    problem = build_problem(table, load_job(job))
    assert check_release(problem, released).largest_k >= k  # Definition 1


@SETTINGS
@given(case=tables(), seed=st.integers(0, 100))
def test_wong_outputs_are_k_anonymous(case, seed):
    table, k = case
    job = _job(table, k, {"name": "wong_nh", "seed": seed})
    result = anonymize(table, job)
    released = EncodedTable.from_columns({c: result.columns[c] for c in table.names})
    assert check_release(build_problem(table, load_job(job)), released).largest_k >= k


@st.composite
def exchange_graphs(draw):
    """A small exchange graph of phase 2: arcs with integer weights, some infinite."""
    n = draw(st.integers(1, 9))
    arcs = draw(st.integers(0, 30))
    tail = draw(st.lists(st.integers(0, n - 1), min_size=arcs, max_size=arcs))
    head = draw(st.lists(st.integers(0, n - 1), min_size=arcs, max_size=arcs))
    weight = draw(
        st.lists(
            st.one_of(st.integers(-4, 4).map(float), st.just(np.inf)),
            min_size=arcs,
            max_size=arcs,
        )
    )
    return n, tail, head, weight, draw(st.integers(1, 12))


@SETTINGS
@given(graph=exchange_graphs())
def test_the_compiled_search_for_negative_cycles_follows_the_rounds(graph):
    """Phase 2's compiled label-correcting kernel finds the cycles, ids and parent arcs of
    the rounds restated on Python lists (tests/support/cycles_reference.py)."""
    from anonlab.algorithms.nonhomogeneous.two_phase import _EPS, _find_cycles
    from tests.support.cycles_reference import find_cycles

    n, tail, head, weight, rounds = graph
    expected = find_cycles(n, tail, head, weight, rounds, _EPS)
    got = _find_cycles(
        n,
        np.array(tail, dtype=np.int64),
        np.array(head, dtype=np.int64),
        np.array(weight, dtype=np.float64),
        rounds,
    )
    if not expected:
        assert got is None
    else:
        assert got is not None
        nodes, ids, arcs = got
        assert list(zip(nodes.tolist(), ids.tolist(), arcs.tolist())) == expected
    for v, _, a in expected:  # each parent arc enters its vertex
        assert head[a] == v


def _lower_bound_reference(codes: np.ndarray, k: int) -> list[int]:
    """Equations (7)-(9) by brute force: per row, the fewest hidden sites leaving ``k`` rows
    (itself included) that agree with it on the rest."""
    n, m = codes.shape
    out = []
    for r in range(n):
        for h in range(m + 1):
            if any(
                int(np.all(codes[:, visible] == codes[r, visible], axis=1).sum()) >= k
                for hidden in itertools.combinations(range(m), h)
                for visible in [[s for s in range(m) if s not in hidden]]
            ):
                out.append(h)
                break
        else:
            out.append(-1)  # fewer than k rows in all
    return out


@st.composite
def code_matrices(draw):
    n = draw(st.integers(1, 25))
    m = draw(st.integers(1, 5))
    big = draw(st.booleans())  # codes whose mixed radix overflows int64
    values = st.sampled_from([0, 1, 2**40]) if big else st.integers(0, 3)
    data = draw(st.lists(values, min_size=n * m, max_size=n * m))
    return np.array(data, dtype=np.int64).reshape(n, m), draw(st.integers(1, 4))


@SETTINGS
@given(case=code_matrices(), keep=st.booleans())
def test_lower_bound_equals_brute_force(case, keep):
    """The grouped lower bound (hash-merged groups, the records still without a bound
    followed) equals the brute-force bound, with the groups of one size kept for the next
    or (``_KEPT`` 0) every set grouped from the distinct records."""
    from anonlab.algorithms.nonhomogeneous import candidates

    codes, k = case
    saved = candidates._KEPT
    candidates._KEPT = saved if keep else 0
    try:
        got = candidates.lower_bound(codes, k).tolist()
    finally:
        candidates._KEPT = saved
    assert got == _lower_bound_reference(codes, k)


@SETTINGS
@given(case=code_matrices(), data=st.data())
def test_pattern_keys_are_equal_iff_the_visible_columns_are(case, data):
    """The anonymity graph's keys on a pattern's visible columns, in the one mixed radix
    (full keys less the hidden digits) and when it overflows, match the columns exactly."""
    from anonlab.release.anonymity_graph import _PatternKeys

    u, _ = case
    n, m = u.shape
    pattern = np.array(data.draw(st.lists(st.booleans(), min_size=m, max_size=m)))
    exact = u[data.draw(st.permutations(range(n)))].copy()
    exact[:, pattern] = -1
    radix = np.maximum(u.max(axis=0), exact.max(axis=0)) + 1
    ukey, vkey = _PatternKeys(u, exact, radix).of(np.arange(n), pattern)
    visible = ~pattern
    for a in range(n):
        for b in range(n):
            same = bool(np.array_equal(u[a, visible], exact[b, visible]))
            assert (ukey[a] == vkey[b]) == same


def _candidate_edges_reference(codes, k, max_distance, window, per_record):
    """The candidate edges restated with one lexicographic sort per set ``D`` of sites
    (outside ``D``, then ``D``, then row), each run's rows joined to their ``window``
    followers that differ on all of ``D``; per released record its ``per_record`` nearest
    (distance, then row) and the ring of the order."""
    n, m = codes.shape
    card = codes.max(axis=0) + 1
    sites = [int(s) for s in np.argsort(card, kind="stable")]
    near = set()
    for d in range(min(max_distance, m) + 1):
        for diff in itertools.combinations(sites, d):
            outside = [s for s in sites if s not in diff]
            keys = [codes[:, s] for s in reversed(outside + list(diff))]
            order = np.lexsort(keys) if keys else np.arange(n)
            for p in range(n):
                for q in range(p + 1, min(p + window + 1, n)):
                    a, b = int(order[q]), int(order[p])
                    if any(codes[a, s] != codes[b, s] for s in outside):
                        break
                    if all(codes[a, s] != codes[b, s] for s in diff):
                        near.add((b, d, a))
                        near.add((a, d, b))
    pairs = {(j, j) for j in range(n)} | {((j + s) % n, j) for j in range(n) for s in range(k)}
    for j in range(n):
        mine = sorted((d, o) for r, d, o in near if r == j)
        pairs |= {(o, j) for _, o in mine[:per_record]}
    return sorted(pairs)


@st.composite
def candidate_cases(draw):
    n = draw(st.integers(1, 30))
    m = draw(st.integers(1, 5))
    values = st.sampled_from([0, 1, 7, 2**40]) if draw(st.booleans()) else st.integers(0, 3)
    data = draw(st.lists(values, min_size=n * m, max_size=n * m))
    codes = np.array(data, dtype=np.int64).reshape(n, m)
    return codes, draw(st.integers(1, 3)), draw(st.integers(1, 4)), draw(st.integers(1, 5))


@SETTINGS
@given(case=candidate_cases(), per_record=st.integers(1, 8))
def test_compiled_candidate_edges_equal_one_sort_per_set(case, per_record):
    """:func:`candidate_edges` (one radix partition per site and hidden prefix, shared by
    the sets of sites) finds exactly the edges of one lexicographic sort per set."""
    from anonlab.algorithms.nonhomogeneous.candidates import candidate_edges

    codes, k, max_distance, window = case
    k = min(k, codes.shape[0])
    orig, rel = candidate_edges(
        codes, k, max_distance=max_distance, window=window, per_record=per_record
    )
    got = list(zip(orig.tolist(), rel.tolist()))
    assert got == _candidate_edges_reference(codes, k, max_distance, window, per_record)
