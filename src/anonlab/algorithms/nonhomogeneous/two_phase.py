"""Murakami & Uno's two-phase algorithm on one block of sorted records (section 3.2).

Phase 1 (section 3.2.1, the greedy algorithm): the identical perfect matching first, then
``k - 1`` minimum-weight perfect matchings over the candidate edges, each edge weighing what its
released record would newly hide (the "dynamic weight"); the edges of each matching join the
solution ``F`` and leave the graph. Phase 2 (section 3.2.2): negative-cycle canceling. An arc
``r_i -> r_h`` through released record ``r'_j`` adds edge ``(r_i, r'_j)`` to ``F`` and removes
``(r_h, r'_j)``; its weight is the change of ``r'_j``'s cost. A directed cycle of such arcs keeps
``F`` k-regular, and a negative one lowers the loss.

The labeling algorithm of the paper selects one vertex at a time; here every vertex's label is
corrected at once per round (Bellman-Ford rounds from a virtual root at label 0, a compiled
kernel: :mod:`anonlab.algorithms.nonhomogeneous._kernels`), and, as in the paper, cycles are
found by walking the parent pointers of the shortest-path graph (a cycle in it is a negative
cycle). The paper's arc weights assume each
released record appears once in a cycle; a cycle's true change is computed on the released
records it touches and only cycles that truly lower the loss are reversed, several disjoint
ones per round, until none is left or ``max_rounds`` passes.

References
----------
.. [1] K. Murakami and T. Uno, "Optimization algorithm for k-anonymization of datasets with
   low information loss", Int. J. Inf. Secur. 17 (2018), sections 3.1-3.2 (the greedy
   algorithm, Steps 0-5; the negative cycle detection algorithm, Steps 0-6).
.. [2] A. V. Goldberg and R. E. Tarjan, "Finding minimum-cost circulations by canceling
   negative cycles", J. ACM 36 (1989).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray, IntArray
from anonlab.algorithms.nonhomogeneous._kernels import kernel
from anonlab.algorithms.nonhomogeneous.candidates import candidate_edges, distinct
from anonlab.algorithms.nonhomogeneous.cover_model import CoverCosts

__all__ = ["BlockResult", "cancel_cycles", "greedy_matchings", "ring_covers", "solve_chunk"]

_EPS = 1e-9


@dataclass
class BlockResult:
    """The cover of one block and what each phase did.

    Attributes
    ----------
    covers : ndarray of int64, shape (rows, k)
        Block-local rows each released record covers.
    state : ndarray of int32, shape (rows, width)
        Each released record's state in the final cover (:meth:`CoverCosts.states`).
    phase1_cost, phase2_cost : float
        The weighted NCP after each phase.
    cycles : int
        Negative cycles reversed in phase 2.
    candidates : int
        Candidate edges.
    fallback : bool
        Whether a round found no perfect matching and the block took the ring of its order.
    """

    covers: IntArray
    state: npt.NDArray[np.int32]
    phase1_cost: float
    phase2_cost: float
    cycles: int
    candidates: int
    fallback: bool = False


#: Steps of a matching's weights: each weight is rounded to a multiple of ``max / STEPS``.
WEIGHT_STEPS = 1 << 20


def integer_weights(weight: FloatArray) -> FloatArray:
    """The weights as whole numbers from 1 to ``WEIGHT_STEPS + 1`` (as floats).

    scipy's LAPJVsp compares sums and differences of weights; on fractional weights its
    rounding errors can keep it from ever finishing (a chunk of 1,000 records of cup did not
    finish in minutes), while on whole numbers every sum it forms is exact (well below
    2^53). Each weight moves by at most half a step: a matching's total by at most
    ``rows * max / (2 * WEIGHT_STEPS)``.

    Examples
    --------
    >>> import numpy as np
    >>> integer_weights(np.array([0.0, 0.5, 1.0])).tolist() == [1.0, 2**19 + 1.0, 2**20 + 1.0]
    True
    """
    shifted = weight - min(float(weight.min(initial=0.0)), 0.0)  # (a rounding below 0)
    top = float(shifted.max(initial=0.0))
    scale = WEIGHT_STEPS / top if top > 0 else 0.0
    out: FloatArray = np.rint(shifted * scale) + 1.0
    return out


def _matching(n: int, orig: IntArray, rel: IntArray, weight: FloatArray) -> IntArray | None:
    """A minimum-weight perfect matching (edge ids), or None when there is none.

    ``orig`` is sorted (the CSR rows); scipy's LAPJVsp solves it on the weights made whole
    (:func:`integer_weights`).
    """
    from scipy.sparse import csr_array
    from scipy.sparse.csgraph import min_weight_full_bipartite_matching

    indptr = np.searchsorted(orig, np.arange(n + 1))
    # whole numbers from 1: no explicit zeros, and LAPJVsp's sums stay exact
    graph = csr_array((integer_weights(weight), rel, indptr), shape=(n, n))
    try:
        _, col = min_weight_full_bipartite_matching(graph)
    except ValueError:
        return None
    key = orig * n + rel
    pos: IntArray = np.searchsorted(key, np.arange(n, dtype=np.int64) * n + col).astype(np.int64)
    return pos


def greedy_matchings(
    costs: CoverCosts, orig: IntArray, rel: IntArray, contrib: npt.NDArray[np.int32], k: int
) -> IntArray | None:
    """Phase 1: the identical perfect matching, then ``k - 1`` minimum-weight ones.

    Parameters
    ----------
    costs : CoverCosts
        The block's sites.
    orig, rel : ndarray of int64
        Candidate edges, sorted by ``orig`` then ``rel``.
    contrib : ndarray of int32, shape (edges, width)
        What released record ``rel[e]`` needs to cover ``orig[e]``.
    k : int

    Returns
    -------
    ndarray of int64, shape (rows, k), or None
        ``covers[j]``: the rows released record ``j`` covers; None when a round has no
        perfect matching on the candidates.
    """
    n = costs.codes.shape[0]
    rows = np.arange(n, dtype=np.int64)
    covers = np.empty((n, k), dtype=np.int64)
    covers[:, 0] = rows
    used = orig == rel
    state = np.zeros((n, contrib.shape[1]), dtype=np.int32)
    base = np.zeros(n, dtype=np.float64)
    for r in range(1, k):
        free = np.flatnonzero(~used)
        j = rel[free]
        weight = costs.cost_of_max(state, j, contrib, free, j) - base[j]
        chosen = _matching(n, orig[free], j, weight)
        if chosen is None:
            return None
        edges = free[chosen]
        used[edges] = True
        target = rel[edges]
        state[target] = np.maximum(state[target], contrib[edges])
        covers[target, r] = orig[edges]
        base = costs.cost(state, rows)
    return covers


def _edge_index(orig: IntArray, rel: IntArray, n: int, a: IntArray, b: IntArray) -> IntArray:
    """Positions of edges ``(a, b)`` among the sorted candidates (each must be there)."""
    key = orig * n + rel
    out: IntArray = np.searchsorted(key, a * n + b).astype(np.int64)
    return out


def _states_without(member: npt.NDArray[np.int32]) -> npt.NDArray[np.int32]:
    """Per released record and slot, the state of its other covered records (prefix and
    suffix maxima over the slots)."""
    n, k, width = member.shape
    zero = np.zeros((n, 1, width), dtype=np.int32)
    prefix = np.maximum.accumulate(np.concatenate([zero, member[:, :-1]], axis=1), axis=1)
    suffix = np.maximum.accumulate(np.concatenate([zero, member[:, :0:-1]], axis=1), axis=1)[
        :, ::-1
    ]
    out: npt.NDArray[np.int32] = np.maximum(prefix, suffix)
    return out


@dataclass
class _Arcs:
    """The arcs of the exchange graph, by released record: arc ``e`` runs from original
    ``tail[e]`` to ``head[e]`` through released record ``record[e]``, adding candidate edge
    ``edge[e]`` in ``slot[e]``, at ``weight[e]``."""

    edge: IntArray
    record: IntArray
    slot: IntArray
    tail: IntArray
    head: IntArray
    weight: FloatArray

    def take(self, at: IntArray | npt.NDArray[np.bool_]) -> _Arcs:
        """The arcs at ``at``."""
        return _Arcs(*(a[at] for a in vars(self).values()))

    @staticmethod
    def join(kept: _Arcs, fresh: _Arcs, n: int) -> _Arcs:
        """Both sets of arcs (of different records), by record (each record's in order)."""
        both = _Arcs(
            *(np.concatenate([a, b]) for a, b in zip(vars(kept).values(), vars(fresh).values()))
        )
        small = both.record.astype(np.uint16 if n <= 1 << 16 else np.int64)
        return both.take(np.argsort(small, kind="stable"))


def cancel_cycles(
    costs: CoverCosts,
    orig: IntArray,
    rel: IntArray,
    contrib: npt.NDArray[np.int32],
    covers: IntArray,
    *,
    additions: int,
    max_rounds: int,
    label_rounds: int = 64,
) -> tuple[IntArray, int]:
    """Phase 2: reverse negative cycles of the exchange graph until none is found.

    A round changes the covers of the released records its cycles pass; the next round
    rebuilds the arcs through those records only (every other record's arcs are the same).

    Parameters
    ----------
    costs, orig, rel, contrib
        As for :func:`greedy_matchings`.
    covers : ndarray of int64, shape (rows, k)
        Phase 1's solution (changed in place).
    additions : int
        Per released record, the candidate edges (outside ``F``) that may enter it, the
        cheapest to add first.
    max_rounds : int
        The paper's ``p``: rounds of label correcting and canceling.
    label_rounds : int
        Label-correcting rounds per search for cycles.

    Returns
    -------
    covers : ndarray of int64
    cycles : int
        Cycles reversed.
    """
    n, k = covers.shape
    canceled = 0
    banned = np.zeros(0, dtype=np.int64)
    exchange = _Exchange(costs, orig, rel, contrib, covers, additions)
    arcs: _Arcs | None = None
    changed = np.arange(n, dtype=np.int64)
    for _ in range(max_rounds):
        fresh = exchange.arcs_through(changed)
        if arcs is None:
            arcs = fresh
        else:
            is_changed = np.zeros(n, dtype=bool)
            is_changed[changed] = True
            arcs = _Arcs.join(arcs.take(~is_changed[arcs.record]), fresh, n)
        weight = arcs.weight
        if banned.size:  # (sorted: np.union1d)
            key = arcs.edge * n + arcs.head
            at = np.minimum(np.searchsorted(banned, key), banned.size - 1)
            weight = np.where(banned[at] == key, np.inf, weight)
        found = _find_cycles(n, arcs.tail, arcs.head, weight, label_rounds)
        if found is None:
            break
        nodes, cycle_id, arc = found
        # the arcs of the cycles: into each cycle node through its parent arc
        a_edge, a_j, a_slot = arcs.edge[arc], arcs.record[arc], arcs.slot[arc]
        accepted, rejected = _true_gains(
            costs, contrib, covers, exchange.member, exchange.cost, cycle_id, a_edge, a_j, a_slot
        )
        if accepted.size == 0 and rejected.size == 0:
            break
        # a cycle whose estimate was wrong is not searched again
        bad = np.isin(cycle_id, rejected)
        banned = np.union1d(banned, a_edge[bad] * n + arcs.head[arc[bad]])
        take = np.isin(cycle_id, accepted)
        covers[a_j[take], a_slot[take]] = orig[a_edge[take]]
        changed = distinct(a_j[take])
        canceled += int(accepted.size)
    return covers, canceled


class _Exchange:
    """Phase 2's figures per released record, kept from round to round: the states of its
    covered rows (``member``) and of all but each slot (``without``), its cost, and which
    candidate edges are in ``F``; ``covers`` is the solution being improved (shared)."""

    def __init__(
        self,
        costs: CoverCosts,
        orig: IntArray,
        rel: IntArray,
        contrib: npt.NDArray[np.int32],
        covers: IntArray,
        additions: int,
    ) -> None:
        n, k = covers.shape
        width = contrib.shape[1]
        self.costs, self.orig, self.rel, self.contrib = costs, orig, rel, contrib
        self.covers, self.additions = covers, additions
        self.by_rel = np.argsort(rel, kind="stable")  # each released record's candidate edges
        self.rel_start = np.searchsorted(rel[self.by_rel], np.arange(n + 1))
        self.member = np.zeros((n, k, width), dtype=contrib.dtype)
        self.without = np.zeros((n, k, width), dtype=contrib.dtype)
        self.cost = np.zeros(n, dtype=np.float64)
        self.in_f = np.zeros(orig.size, dtype=bool)

    def arcs_through(self, records: IntArray) -> _Arcs:
        """The arcs through released records ``records`` (sorted), their figures brought up
        to date from ``covers`` first."""
        costs, orig, rel, contrib, covers = (
            self.costs,
            self.orig,
            self.rel,
            self.contrib,
            self.covers,
        )
        n, k = covers.shape
        width = contrib.shape[1]
        slot_edge = _edge_index(orig, rel, n, covers[records].reshape(-1), np.repeat(records, k))
        member = contrib[slot_edge].reshape(records.size, k, width)
        self.member[records] = member
        state = member.max(axis=1)
        self.cost[records] = costs.cost(state, records)
        self.without[records] = _states_without(member)
        # the records' candidate edges (ascending), those outside F free
        size = self.rel_start[records + 1] - self.rel_start[records]
        offset = np.repeat(self.rel_start[records] - (np.cumsum(size) - size), size)
        edges = self.by_rel[np.arange(int(size.sum())) + offset]
        self.in_f[edges] = False
        self.in_f[slot_edge] = True
        free = edges[~self.in_f[edges]]
        j = rel[free]
        place = np.searchsorted(records, j)  # each free edge's record among ``records``
        add = costs.cost_of_max(state, place, contrib, free, j) - self.cost[j]
        cheapest = kernel("cheapest")(j, add, self.additions)  # (``free`` is by record)
        free, j = free[cheapest], j[cheapest]
        # arcs: tail orig[free] -> head covers[j, t] through j, for every slot t
        edge = np.repeat(free, k)
        rj = np.repeat(j, k)
        slot = np.tile(np.arange(k, dtype=np.int64), free.size)
        # (the arcs of one edge are consecutive: its k slots in order); an arc's record
        # holds the edge's row beside the rows of its other slots
        without = self.without.reshape(n * k, width)
        weight = costs.cost_of_max(without, rj * k + slot, contrib, edge, rj) - self.cost[rj]
        return _Arcs(edge, rj, slot, orig[edge], covers[j].reshape(-1), weight)


def _find_cycles(
    n: int, tail: IntArray, head: IntArray, weight: FloatArray, rounds: int
) -> tuple[IntArray, IntArray, IntArray] | None:
    """Label-correcting rounds collecting the cycles of the shortest-path graph.

    Every vertex starts at label 0 (a virtual root). After each round the parent pointers are
    walked for cycles (each is negative); the vertices of a cycle found are set aside (their
    arcs leave the graph) and the rounds go on, so one pass collects vertex-disjoint cycles
    from all over the block. Stops when no label improves or after ``rounds`` rounds (the
    compiled :func:`~anonlab.algorithms.nonhomogeneous._kernels._label_rounds`).

    Returns the cycle vertices, their cycle ids and the arc into each (its parent arc), or
    None when no cycle was found.
    """
    if tail.size == 0:
        return None
    order = np.argsort(head.astype(np.uint16 if n <= 1 << 16 else np.int64), kind="stable")
    sorted_head = head[order]
    starts = np.flatnonzero(np.diff(sorted_head, prepend=-1))
    heads = sorted_head[starts]
    found = np.empty((n, 3), dtype=np.int64)
    count = kernel("cycles")(
        n,
        np.ascontiguousarray(tail[order]),
        heads.astype(np.int64),
        starts.astype(np.int64),
        weight[order].astype(np.float64),
        rounds,
        _EPS,
        found,
    )
    if count == 0:
        return None
    return found[:count, 0], found[:count, 1], order[found[:count, 2]]


def _true_gains(
    costs: CoverCosts,
    contrib: npt.NDArray[np.int32],
    covers: IntArray,
    member: npt.NDArray[np.int32],
    cost: FloatArray,
    cycle_id: IntArray,
    a_edge: IntArray,
    a_j: IntArray,
    a_slot: IntArray,
) -> tuple[IntArray, IntArray]:
    """The cycles that truly lower the loss, no two touching one released record, and the
    cycles that do not (their estimate counted a released record twice).

    A cycle replaces, in each released record it passes, the covered rows of some slots; its
    change is the sum over those records of their new cost minus their old.
    """
    n, k = covers.shape
    pairs, pair_of = np.unique(cycle_id * n + a_j, return_inverse=True)
    pair_of = pair_of.reshape(-1)
    p_cycle, p_j = np.divmod(pairs, n)
    new_member = member[p_j].copy()
    new_member[pair_of, a_slot] = contrib[a_edge]
    new_cost = costs.cost(new_member.max(axis=1), p_j)
    delta = new_cost - cost[p_j]
    cycles, cyc_of = np.unique(p_cycle, return_inverse=True)
    gain = np.bincount(cyc_of.reshape(-1), weights=delta, minlength=cycles.size)
    pending = gain < -_EPS
    # released records shared by two good cycles: the cycle with the larger gain goes first
    position = np.empty(cycles.size, dtype=np.int64)
    position[np.lexsort((cycles, gain))] = np.arange(cycles.size)
    chosen = np.zeros(cycles.size, dtype=bool)
    blocked = np.zeros(n, dtype=bool)
    while True:
        touched = np.zeros(cycles.size, dtype=bool)
        touched[cyc_of[blocked[p_j]]] = True
        pending &= ~touched
        if not pending.any():
            break
        live = pending[cyc_of]
        best = np.full(n, cycles.size, dtype=np.int64)
        np.minimum.at(best, p_j[live], position[cyc_of[live]])
        lose = np.zeros(cycles.size, dtype=bool)
        lose[cyc_of[live & (best[p_j] != position[cyc_of])]] = True
        new = pending & ~lose  # the best pending cycle always wins every record it touches
        chosen |= new
        blocked[p_j[new[cyc_of]]] = True
        pending &= ~new
    return cycles[chosen], cycles[gain >= -_EPS]


def ring_covers(n: int, k: int) -> IntArray:
    """The ring of the chunk's order: record ``j`` covers ``j, j+1, ..., j+k-1``."""
    return (np.arange(n, dtype=np.int64)[:, None] + np.arange(k)) % n


def solve_chunk(
    costs: CoverCosts,
    k: int,
    covers: IntArray | None,
    *,
    max_distance: int,
    window: int,
    per_record: int,
    additions: int,
    max_rounds: int,
) -> BlockResult:
    """Phase 1 (when ``covers`` is None) and phase 2 on one chunk of sorted records.

    Parameters
    ----------
    costs : CoverCosts
        The chunk's sites (rows in sorted order).
    k : int
    covers : ndarray of int64, shape (rows, k), optional
        A start whose covers stay inside the chunk (chunk-local rows); None runs phase 1.
    max_distance, window, per_record
        The candidate edges (:func:`~anonlab.algorithms.nonhomogeneous.candidates.candidate_edges`).
    additions, max_rounds
        Phase 2 (:func:`cancel_cycles`); ``max_rounds = 0`` skips it.
    """
    n = costs.codes.shape[0]
    rows = np.arange(n, dtype=np.int64)
    if covers is not None and (max_rounds == 0 or k < 2):
        state = costs.states(covers)
        cost = float(costs.cost(state, rows).sum())
        return BlockResult(covers, state, cost, cost, 0, 0)
    orig, rel = candidate_edges(
        costs.codes, k, max_distance=max_distance, window=window, per_record=per_record
    )
    fallback = False
    if covers is None:
        contrib = costs.contributions(rel, orig)
        found = greedy_matchings(costs, orig, rel, contrib, k)
        fallback = found is None
        covers = ring_covers(n, k) if found is None else found
    else:
        covers = covers.copy()
        pairs = distinct(
            np.concatenate([orig * n + rel, covers.reshape(-1) * n + np.repeat(rows, k)])
        )
        orig, rel = np.divmod(pairs, n)
        contrib = costs.contributions(rel, orig)
    state = costs.states(covers)
    first = float(costs.cost(state, rows).sum())
    cycles = 0
    if max_rounds > 0 and k > 1 and first > 0:
        covers, cycles = cancel_cycles(
            costs, orig, rel, contrib, covers, additions=additions, max_rounds=max_rounds
        )
    second = first
    if cycles:  # (else the covers and their states are phase 1's)
        state = costs.states(covers)
        second = float(costs.cost(state, rows).sum())
    return BlockResult(covers, state, first, second, cycles, int(orig.size), fallback)
