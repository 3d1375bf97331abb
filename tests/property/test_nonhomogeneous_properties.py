"""Properties of the anonymity graph and of the non-homogeneous algorithms (Murakami & Uno).

* Theorem 1: the max-flow says k-anonymous iff a brute-force search finds k edge-disjoint
  perfect matchings (small random bipartite graphs).
* Contracting identical records changes no answer; the graph's edges are those a brute force
  over all record pairs finds.
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
from anonlab.release.anonymity_graph import ReleaseCells, label_covers
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


_VALUES = ["a", "b", "c", None]  # None: a missing value
_LABELS = ["a", "b", "c", None, "*", "{a;b}", "{b;c}", "{a;c}", "{c}"]


@st.composite
def labelled_releases(draw):
    """An original table and a release of it with any labels (values, ``*``, sets, missing
    values; not necessarily covering their own record), both as rows."""
    m = draw(st.integers(1, 4))
    n = draw(st.integers(0, 14))
    nulls = draw(st.booleans())  # the original has missing values (or a null label covers none)
    values = st.sampled_from(_VALUES if nulls else _VALUES[:-1])
    rows = [[draw(values) for _ in range(m)] for _ in range(n)]
    rows += [[v] * m for v in ("a", "b", "c")]  # every value in every column (sets name them)
    narrow = draw(st.booleans())  # labels mostly values: long runs of exact columns
    labels = st.sampled_from(_LABELS[:3] * 4 + _LABELS if narrow else _LABELS)
    released = [[draw(labels) for _ in range(m)] for _ in rows]
    return rows, released


def _read_cells(rows, released):
    names = [f"q{j}" for j in range(len(rows[0]))]
    job = load_job({"quasi_identifiers": names, "models": [{"k_anonymity": {"k": 1}}]})
    problem = build_problem(EncodedTable.from_rows(rows, names), job)
    return ReleaseCells.parse(problem, EncodedTable.from_rows(released, names))[0]


def _edges_reference(cells: ReleaseCells) -> tuple[set[tuple[int, int]], list[int], list[int]]:
    """Brute force: every (released row, original row) pair checked column by column with
    :func:`label_covers`, then contracted to the distinct tuples (numbered as
    ``np.unique(axis=0)`` numbers them); with the tuples' multiplicities."""
    ok = np.ones((cells.released.shape[0], cells.original.shape[0]), dtype=bool)
    for j, p in enumerate(cells.parsed):
        ok &= label_covers(p, cells.released[:, j][:, None], cells.original[:, j][None, :])
    _, u_of, u_count = np.unique(cells.original, axis=0, return_inverse=True, return_counts=True)
    _, v_of, v_count = np.unique(cells.released, axis=0, return_inverse=True, return_counts=True)
    r, o = np.nonzero(ok)
    edges = {(int(u), int(v)) for u, v in zip(u_of.reshape(-1)[o], v_of.reshape(-1)[r])}
    return edges, u_count.tolist(), v_count.tolist()


@SETTINGS
@given(case=labelled_releases())
def test_the_graph_has_the_edges_of_every_pair_checked_by_brute_force(case):
    """The tries' join (:meth:`AnonymityGraph.build`) finds exactly the pairs of distinct
    tuples a brute force over all record pairs finds, each once; the edge budget stops it
    one edge short."""
    from anonlab.release._kernels import kernels
    from anonlab.release.anonymity_graph import _Covers, _Tries

    cells = _read_cells(*case)
    graph = AnonymityGraph.build(cells)
    edges, u_count, v_count = _edges_reference(cells)
    pairs = list(zip(graph.source.tolist(), graph.target.tolist()))
    assert len(pairs) == len(set(pairs))
    assert set(pairs) == edges
    assert graph.original_count.tolist() == u_count
    assert graph.released_count.tolist() == v_count
    covers = _Covers.of(cells.parsed)
    tries = _Tries.of(
        np.unique(cells.original, axis=0), np.unique(cells.released, axis=0), cells.parsed, covers
    )
    assert kernels().join(tries, covers, len(edges))[2] == len(edges)
    if edges:
        assert kernels().join(tries, covers, len(edges) - 1)[2] == -1


@SETTINGS
@given(case=labelled_releases(), data=st.data())
def test_covers_checks_every_column_of_a_pair_as_label_covers_does(case, data):
    """:meth:`ReleaseCells.covers` (compiled) on random pairs of rows: the columns' labels
    checked one by one with :func:`label_covers`."""
    cells = _read_cells(*case)
    n = cells.original.shape[0]
    pairs = data.draw(
        st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30)
    )
    released = np.array([r for r, _ in pairs], dtype=np.int64)
    original = np.array([o for _, o in pairs], dtype=np.int64)
    expected = np.ones(released.size, dtype=bool)
    for j, p in enumerate(cells.parsed):
        expected &= label_covers(p, cells.released[released, j], cells.original[original, j])
    assert cells.covers(released, original).tolist() == expected.tolist()


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


def _contribution_reference(site, anchor, value):
    """The state a released record with value codes ``anchor`` needs to cover ``value`` in
    one site, restated in numpy (the definition in ``CoverCosts.contributions``)."""
    a, x = np.asarray(anchor, dtype=np.int64), np.asarray(value, dtype=np.int64)
    if site.kind == "concealing":
        return (a != x).astype(np.int32)[:, None]
    if site.kind == "hierarchy":
        return sum((row[a] != row[x]).astype(np.int32) for row in site.levels)[:, None]
    ra, rx = site.rank[a], site.rank[x]
    if site.kind == "interval":
        return np.stack([np.maximum(rx - ra, 0), np.maximum(ra - rx, 0)], axis=1)
    flags = np.zeros((a.size, site.width), dtype=np.int32)
    flags[np.arange(a.size), rx] = rx != ra
    return flags


@st.composite
def contribution_cases(draw):
    from anonlab.algorithms.nonhomogeneous.cover_model import Site

    n = draw(st.integers(1, 10))
    sites, columns = [], []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["concealing", "hierarchy", "interval", "set"]))
        card = draw(st.integers(1, 5))
        columns.append(draw(st.lists(st.integers(0, card - 1), min_size=n, max_size=n)))
        if kind == "hierarchy":  # nodes per level, coarser up the hierarchy
            depth = draw(st.integers(1, 3))
            levels = [np.arange(card)]
            for _ in range(depth - 1):
                levels.append(levels[-1] // 2)
            site = Site(kind, 1, 1.0, 0.5, levels=np.array(levels, dtype=np.int32))
        elif kind == "concealing":
            site = Site(kind, 1, 1.0, 0.5)
        else:
            rank = np.array(draw(st.permutations(range(card))), dtype=np.int64)
            site = Site(kind, 2 if kind == "interval" else card, 1.0, 0.5, rank=rank)
        sites.append(site)
    codes = np.array(columns, dtype=np.int32).T.copy()
    k = draw(st.integers(1, 4))
    covers = np.array(
        draw(st.lists(st.integers(0, n - 1), min_size=n * k, max_size=n * k)), dtype=np.int64
    ).reshape(n, k)
    return tuple(sites), codes, covers


@SETTINGS
@given(case=contribution_cases())
def test_compiled_contributions_and_states_equal_the_sites_definition(case):
    """``CoverCosts.contributions`` (a compiled loop) equals each site's contribution restated
    in numpy, side by side in site order, and ``CoverCosts.states`` equals their elementwise
    maximum over each released record's covered rows."""
    from anonlab.algorithms.nonhomogeneous.cover_model import CoverCosts

    sites, codes, covers = case
    costs = CoverCosts(sites, codes)
    n, k = covers.shape
    anchors, values = np.repeat(np.arange(n), k), covers.reshape(-1)

    def reference(a, x):
        return np.concatenate(
            [
                _contribution_reference(site, codes[a, s], codes[x, s])
                for s, site in enumerate(sites)
            ],
            axis=1,
        )

    expected = reference(anchors, values)
    assert costs.contributions(anchors, values).tolist() == expected.tolist()
    states = expected.reshape(n, k, -1).max(axis=1)
    assert costs.states(covers).tolist() == states.tolist()


def _site_cost_reference(site, state, anchor):
    """A site's weighted NCP restated in numpy (the definition in ``CoverCosts.cost``)."""
    if site.kind == "concealing":
        out = state[:, 0].astype(np.float64)
    elif site.kind == "hierarchy":
        out = site.ncp[state[:, 0], anchor]
    else:
        out = state.sum(axis=1, dtype=np.int64).astype(np.float64) * site.scale
    return out * site.weight


@st.composite
def cost_cases(draw):
    from anonlab.algorithms.nonhomogeneous.cover_model import Site

    n = draw(st.integers(1, 12))
    sites, columns = [], []
    for _ in range(draw(st.integers(1, 4))):
        kind = draw(st.sampled_from(["concealing", "hierarchy", "interval", "set"]))
        weight = draw(st.floats(0.1, 1.0))
        card = draw(st.integers(1, 4))
        columns.append(draw(st.lists(st.integers(0, card - 1), min_size=n, max_size=n)))
        if kind == "hierarchy":
            levels = draw(st.integers(1, 3))
            ncp = np.array(
                draw(
                    st.lists(
                        st.floats(0, 1), min_size=(levels + 1) * card, max_size=(levels + 1) * card
                    )
                )
            ).reshape(levels + 1, card)
            sites.append((Site(kind, 1, weight, 0.5, ncp=ncp), levels))
        else:
            width = {"concealing": 1, "interval": 2, "set": card}[kind]
            sites.append(
                (
                    Site(kind, width, weight, draw(st.floats(0.0, 1.0))),
                    1 if kind != "interval" else card,
                )
            )
    codes = np.array(columns, dtype=np.int32).T.copy()
    rows = draw(st.integers(1, 20))

    def states():
        parts = [
            np.array(
                draw(
                    st.lists(st.integers(0, top), min_size=rows * s.width, max_size=rows * s.width)
                ),
                dtype=np.int32,
            ).reshape(rows, s.width)
            for s, top in sites
        ]
        return np.concatenate(parts, axis=1)

    anchors = np.array(draw(st.lists(st.integers(0, n - 1), min_size=rows, max_size=rows)))
    return tuple(s for s, _ in sites), codes, states(), states(), anchors


@SETTINGS
@given(case=cost_cases())
def test_compiled_costs_equal_the_sites_definition(case):
    """``CoverCosts.cost`` (a compiled loop) equals each site's NCP restated in numpy, summed
    in site order, and ``cost_of_max`` equals ``cost`` of the states made by ``np.maximum``."""
    from anonlab.algorithms.nonhomogeneous.cover_model import CoverCosts

    sites, codes, state, contrib, anchors = case
    costs = CoverCosts(sites, codes)
    expected = np.zeros(anchors.size)
    pos = 0
    for s, site in enumerate(sites):
        expected += _site_cost_reference(site, state[:, pos : pos + site.width], codes[anchors, s])
        pos += site.width
    assert costs.cost(state, anchors).tolist() == expected.tolist()
    rows = np.arange(anchors.size)[::-1].copy()
    edges = np.arange(anchors.size)
    got = costs.cost_of_max(state, rows, contrib, edges, anchors)
    assert got.tolist() == costs.cost(np.maximum(state[rows], contrib[edges]), anchors).tolist()
