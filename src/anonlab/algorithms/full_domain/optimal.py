"""Optimal full-domain generalization: the anonymous node with the least information loss.

A Flash-class search (Kohlmayer, Prasser, Eckert, Kemper & Kuhn, *Flash: efficient, stable and
optimal k-anonymity*, 2012, the search of ARX) over the generalization lattice, in two phases:

1. **Anonymity by predictive tagging.** When anonymity is monotonic (every model monotonic
   under generalization, and under suppression if a suppression limit is set; Wong et al. 2009,
   Lemma 2), nodes are classified with few checks: from each untagged node, in order of total
   height, a path is walked upwards through untagged nodes and binary-searched; an anonymous
   node tags all its generalizations anonymous, a non-anonymous one all its specializations
   non-anonymous. Checks only need class sizes (and sensitive histograms), never keys.
   For non-monotonic models only the minimal-class-size part (k, ceil(l), ...) is monotonic;
   it is used the same way to rule nodes out, and the remaining nodes are checked in phase 2.
   Before any check, each attribute on its own rules out the nodes with it at the levels
   where its classes smaller than the minimal class size hold more records than the
   suppression limit (a node's classes split its attributes'), a box of the lattice at a
   time (Incognito's a-priori property, one attribute at a time).
2. **Least loss.** Candidates are visited in ascending order of the metric's lower bound
   (computed per attribute and level, without classes) and the search stops when the bound
   reaches the best loss found. A monotonic metric needs only the minimal anonymous nodes.
   Without a bound every candidate is evaluated: the search is exact whenever pruning would
   be unsafe.

Every node is evaluated from class counts rolled up through the hierarchies, never by
regrouping rows.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterator, Sequence

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress
from anonlab.algorithms._lattice.lattice import (
    Lattice,
    LatticeEvaluator,
    NodeResult,
    SearchResult,
    better,
    grid_heights,
    grid_nodes,
    height_order,
    timed,
)
from anonlab.metrics.base import Metric

__all__ = ["optimal_search", "Tagger"]

UNKNOWN, ANON, NOT_ANON = 0, 1, -1


class Tagger:
    """Predictive tagging of a monotonic predicate over the lattice (Flash).

    :meth:`resolve` classifies a node by walking a path upwards from it through untagged
    nodes and binary-searching the path: a node that satisfies the predicate tags all its
    generalizations, one that does not tags all its specializations.

    The tagger numbers the nodes in row-major order of the lattice's grid (:attr:`nodes`),
    so that the generalizations of a node, and its specializations, are a box of the grid:
    a tag is one assignment to a view (:meth:`above`, :meth:`below`).

    Parameters
    ----------
    nodes : ndarray, shape (N, m)
        All nodes of the lattice, in any order (:meth:`classify_all` follows it).
    maxs : ndarray, shape (m,)
        Maximum level per attribute.
    check : callable
        The predicate on a node, monotonic under generalization.
    progress : callable, optional
        Called once per check.
    grid_order : bool
        Whether ``nodes`` are in row-major order of the grid already (then kept).
    step_by_bound : bool
        Whether a path with bounds (:meth:`resolve`) steps to the successor with the
        smallest bound (ties: the least room above first) instead of the one with the most
        room above.
    """

    def __init__(
        self,
        nodes: npt.NDArray[np.int64],
        maxs: npt.NDArray[np.int64],
        check: Callable[[tuple[int, ...]], bool],
        progress: Progress | None = None,
        *,
        grid_order: bool = False,
        step_by_bound: bool = False,
    ) -> None:
        n, m = nodes.shape
        self.maxs = maxs
        self.check = check
        self.progress = progress
        self.step_by_bound = step_by_bound
        if n:  # (the first node of the grid is its bottom)
            self.mins = nodes[0].copy() if grid_order else nodes.min(axis=0)
        else:
            self.mins = np.zeros(m, dtype=np.int64)
        self.shape = tuple(int(x) for x in maxs - self.mins + 1) if m else ()
        self.strides = np.ones(m, dtype=np.int64)
        for j in range(m - 2, -1, -1):
            self.strides[j] = self.strides[j + 1] * self.shape[j + 1]
        self._mins: list[int] = self.mins.tolist()
        self._maxs: list[int] = maxs.tolist()
        self._strides: list[int] = self.strides.tolist()
        #: All nodes in row-major order of the grid (a node's index is its grid position).
        self.nodes = nodes if grid_order else grid_nodes(self._mins, self._maxs)
        self._given: npt.NDArray[np.int64] | None = None if grid_order else nodes
        self.status = np.zeros(self.nodes.shape[0], dtype=np.int8)
        self._grid = self.status.reshape(self.shape)
        self._steps: dict[int, list[int]] = {}

    def index(self, v: Sequence[int]) -> int:
        """Position of node ``v`` (a sequence of ints) in :attr:`nodes`."""
        return sum([(x - a) * s for x, a, s in zip(v, self._mins, self._strides)])

    def positions(self, nodes: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """Positions of the rows of ``nodes`` in :attr:`nodes`."""
        out: npt.NDArray[np.int64] = ((nodes - self.mins) * self.strides).sum(axis=1)
        return out

    def above(self, v: Sequence[int]) -> tuple[slice, ...]:
        """The box of the nodes at least as general as ``v`` (a sequence of ints) in every
        attribute (an index into an array of the nodes reshaped to :attr:`shape`)."""
        return tuple([slice(x - a, None) for x, a in zip(v, self._mins)])

    def below(self, v: Sequence[int]) -> tuple[slice, ...]:
        """The box of the nodes at most as general as ``v`` in every attribute."""
        return tuple([slice(0, x - a + 1) for x, a in zip(v, self._mins)])

    def rule_out(self, attribute: int, level: int) -> None:
        """Tag every node whose ``attribute`` is at most ``level`` as not satisfying the
        predicate (a box of the grid; the nodes are not checked).

        Parameters
        ----------
        attribute : int
            The index of the attribute (a column of :attr:`nodes`).
        level : int
            Its highest level ruled out.

        Examples
        --------
        >>> import numpy as np
        >>> from anonlab.algorithms._lattice import grid_nodes
        >>> nodes = grid_nodes((0, 0), (2, 1))
        >>> tagger = Tagger(nodes, np.array([2, 1]), lambda v: True, grid_order=True)
        >>> tagger.rule_out(0, 1)
        >>> [(tuple(v), int(s)) for v, s in zip(nodes.tolist(), tagger.status) if s == NOT_ANON]
        [((0, 0), -1), ((0, 1), -1), ((1, 0), -1), ((1, 1), -1)]
        """
        box = [slice(None)] * len(self.shape)
        box[attribute] = slice(0, level - self._mins[attribute] + 1)
        self._grid[tuple(box)] = NOT_ANON

    def _tag(self, i: int, ok: bool) -> None:
        v = self.nodes[i].tolist()
        if ok:
            self._grid[self.above(v)] = ANON
        else:
            self._grid[self.below(v)] = NOT_ANON

    def _successors(self, i: int) -> list[int]:
        """The successors of node ``i``, most room above first (the path's step order)."""
        hit = self._steps.get(i)
        if hit is None:
            room = [b - x for x, b in zip(self.nodes[i].tolist(), self._maxs)]
            order = sorted(range(len(room)), key=room.__getitem__, reverse=True)
            hit = [i + self._strides[j] for j in order if room[j] > 0]
            self._steps[i] = hit
        return hit

    def resolve(
        self,
        start: int,
        bounds: npt.NDArray[np.float64] | None = None,
        cut: float = np.inf,
    ) -> int:
        """Classify node ``start`` (and, on the way, many others); return its status.

        Without ``bounds`` the path runs up to the top through untagged nodes and is
        binary-searched (Flash). With ``bounds`` and a ``cut`` (the best loss so far), the
        path stays among nodes whose bound is below the cut (the only nodes whose status
        matters: a down-set, as bounds grow with the levels) and its highest node is checked
        first: in that region most nodes are not anonymous, and one check of a high node
        tags all its specializations. With :attr:`step_by_bound` each step goes to the
        successor with the smallest bound.
        """
        if self.status[start] != UNKNOWN:
            return int(self.status[start])
        path = [start]
        status = self.status
        i = start
        while True:
            steps = self._successors(i)
            if bounds is not None and self.step_by_bound:
                steps = sorted(steps[::-1], key=bounds.__getitem__)  # ties: least room first
            for s in steps:
                if status[s] == UNKNOWN and (bounds is None or bounds[s] < cut):
                    path.append(s)
                    i = s
                    break
            else:
                break
        lo, hi = 0, len(path) - 1
        if bounds is not None and hi > 0:
            top = path[hi]
            self._tag(top, self.check(tuple(self.nodes[top].tolist())))
            if self.progress is not None:
                self.progress(1, None)
            if self.status[top] != ANON:
                return int(self.status[start])
            hi -= 1
        while lo <= hi:
            mid = (lo + hi) // 2
            i = path[mid]
            if self.status[i] == UNKNOWN:
                self._tag(i, self.check(tuple(self.nodes[i].tolist())))
                if self.progress is not None:
                    self.progress(1, None)
            if self.status[i] == ANON:
                hi = mid - 1
            else:
                lo = mid + 1
        return int(self.status[start])

    def status_of(self, i: int) -> int:
        """The status of node ``i``, checking it (and tagging) if it is unknown."""
        if self.status[i] == UNKNOWN:
            self._tag(i, self.check(tuple(self.nodes[i].tolist())))
            if self.progress is not None:
                self.progress(1, None)
        return int(self.status[i])

    def classify_all(self, order: npt.NDArray[np.int64] | None = None) -> npt.NDArray[np.int8]:
        """Resolve every node, in ``order`` (positions in :attr:`nodes`; by default the
        order of the nodes given), and return the statuses of the nodes given, in their
        order."""
        given = None if self._given is None else self.positions(self._given)
        if order is None:
            order = np.arange(self.nodes.shape[0]) if given is None else given
        for i in order.tolist():
            self.resolve(i)
        return self.status.copy() if given is None else self.status[given]


def optimal_search(
    evaluator: LatticeEvaluator,
    lattice: Lattice,
    *,
    monotonic_models: bool,
    progress: Progress | None = None,
) -> SearchResult:
    """Return the anonymous node of ``lattice`` with the least loss (exact).

    Parameters
    ----------
    evaluator : LatticeEvaluator
        Evaluates nodes (models, suppression limit, metric).
    lattice : Lattice
        The nodes between minimum and maximum levels.
    monotonic_models : bool
        Whether anonymity is monotonic under generalization for this configuration
        (all models monotonic, also under suppression when the limit is positive).
    progress : callable, optional
        ``progress(advance, total)`` as nodes are evaluated: ``advance`` new nodes whose
        classes were computed (as counted in ``evaluated_nodes``), ``total`` the lattice
        size.

    Returns
    -------
    SearchResult
        ``best`` is None when no node is anonymous.
    """
    return timed(lambda: _search(evaluator, lattice, monotonic_models, progress))


def _node_progress(ev: LatticeEvaluator, total: int, progress: Progress | None) -> Progress | None:
    """``progress`` told of every node the evaluator evaluates, out of ``total``."""
    if progress is None:
        return None
    done = ev.evaluations

    def tick(_advance: int = 1, _total: int | None = None) -> None:
        nonlocal done
        if ev.evaluations > done:
            progress(ev.evaluations - done, total)
            done = ev.evaluations

    return tick


def _search(
    ev: LatticeEvaluator, lattice: Lattice, monotonic: bool, progress: Progress | None
) -> SearchResult:
    maxs = np.asarray(lattice.max_levels, dtype=np.int64)
    nodes = grid_nodes(lattice.min_levels, lattice.max_levels)
    n_nodes = nodes.shape[0]
    progress = _node_progress(ev, n_nodes, progress)
    start_evals = ev.evaluations
    checked: dict[tuple[int, ...], bool] = {}

    def full_check(v: tuple[int, ...]) -> bool:
        res = ev.evaluate(v, with_loss=False)
        checked[v] = res.anonymous
        return res.anonymous

    # in grid order the generalizations of a node are a box
    check = full_check if monotonic else ev.mcs_ok
    coarse = _raises_bounds(ev.metric)
    tagger = Tagger(nodes, maxs, check, progress, grid_order=True, step_by_bound=coarse)
    _rule_out_by_attribute(ev, tagger, lattice)
    heights = grid_heights(lattice.min_levels, lattice.max_levels)
    by_height = height_order(heights)  # as Lattice.nodes orders them
    bounds = ev.metric.lower_bounds(nodes, ev.context)
    has_bound = bounds is not None
    if bounds is not None:
        lb = bounds
        order = np.arange(0)  # the bounds order the nodes (see _by_bound)
        lb = lb.copy()  # raised as classes become known

        lb_grid = lb.reshape(tagger.shape)

        def raise_bounds(levels: tuple[int, ...], sizes: npt.NDArray[np.int64]) -> None:
            b = ev.metric.successor_bound(sizes, ev.context)
            # bounds only grow with the levels: if the node's own bound is at least b, so
            # is every generalization's
            if b is not None and b > lb[tagger.index(levels)]:
                box = lb_grid[tagger.above(levels)]
                np.maximum(box, b, out=box)

        ev.on_classes = raise_bounds
    else:
        lb = np.zeros(n_nodes)
        order = by_height
        if monotonic and ev.metric.monotonic:
            # a monotonic metric without a bound: only the minimal anonymous nodes compete
            anon = tagger.classify_all(by_height) == ANON
            minimal = anon.copy()
            for j in range(nodes.shape[1]):
                idx = np.flatnonzero(nodes[:, j] > lattice.min_levels[j])
                minimal[idx[anon[idx - tagger.strides[j]]]] = False  # one level lower in j
            order = by_height[minimal[by_height]]
    best: NodeResult | None = None
    if has_bound and ev.max_suppressed > 0:
        # with suppression most nodes below the optimum's bound are not anonymous and the
        # bound only cuts once a solution is known: find a good one first
        best = _incumbent(ev, tagger, lb, lattice, checked)
        if progress is not None:
            progress(1, None)
    candidates = (
        _by_bound(lb, heights, by_height, tagger.status)
        if has_bound
        else ((0.0, int(i)) for i in order)
    )
    for key, node in candidates:
        if has_bound and best is not None and best.loss is not None and key >= best.loss:
            break  # every other node's bound is at least this one
        if has_bound:
            cut = np.inf if best is None or best.loss is None else float(best.loss)
            node_status = tagger.resolve(node, lb, cut)
        else:
            node_status = tagger.resolve(node)
        if node_status != ANON:
            continue
        levels = tuple(nodes[node].tolist())
        res = ev.evaluate(levels, with_loss=True)
        checked[levels] = res.anonymous
        if progress is not None:
            progress(1, None)
        if res.anonymous and better(res, best):
            best = res
    ev.on_classes = None
    return SearchResult(
        best=best,
        evaluated_nodes=ev.evaluations - start_evals,
        lattice_size=n_nodes,
        elapsed_s=0.0,
        algorithm="optimal",
        checked=checked,
    )


def _rule_out_by_attribute(ev: LatticeEvaluator, tagger: Tagger, lattice: Lattice) -> None:
    """Tag the nodes that an attribute on its own rules out: when the records in classes
    smaller than the minimal class size of one attribute at some level exceed the suppression
    limit, so do those of every node with that attribute at or below that level (its
    classes split the attribute's), and none of them is anonymous. The class sizes of one
    attribute come from its base domain's records, without grouping the base classes
    (:meth:`~anonlab.algorithms._lattice.LatticeEvaluator.attribute_sizes`)."""
    for j, (low, high) in enumerate(zip(lattice.min_levels, lattice.max_levels)):
        ruled_out = -1
        for level in range(low, high + 1):  # small classes only merge as the level rises
            sizes = ev.attribute_sizes(j, level)
            if int(np.dot(sizes, sizes < ev.mcs)) <= ev.max_suppressed:
                break
            ruled_out = level
        if ruled_out >= low:
            tagger.rule_out(j, ruled_out)


def _by_bound(
    lb: npt.NDArray[np.float64],
    heights: npt.NDArray[np.int64],
    by_height: npt.NDArray[np.int64],
    status: npt.NDArray[np.int8],
    *,
    chunk: int = 2048,
) -> Iterator[tuple[float, int]]:
    """The nodes in ascending order of their bounds, which rise while the search runs (the
    classes of a node raise its generalizations' bounds): a node whose bound rose since it
    was ordered goes back in line. Ties: the lower node first. Nodes already known not to be
    anonymous are passed over a chunk at a time (they are neither candidates nor checked).

    The first order is one sort of the bounds; only the nodes whose bound rose go through a
    heap, so the many nodes that are ruled out cost no step of Python each.
    """
    first = lb.copy()
    order = by_height[np.argsort(first[by_height], kind="stable")]  # bound, height, position
    later: list[tuple[float, int, int]] = []
    pos = 0
    todo: list[int] = []
    while True:
        if not todo and pos < order.size:
            block = order[pos : pos + chunk]
            pos += chunk
            todo = block[status[block] != NOT_ANON][::-1].tolist()  # popped from the end
            continue
        if not todo and not later:
            return
        if todo and (not later or (first[todo[-1]], heights[todo[-1]]) <= later[0][:2]):
            i = todo.pop()
            if status[i] == NOT_ANON:  # tagged since its chunk was read
                continue
            if lb[i] > first[i]:
                heapq.heappush(later, (float(lb[i]), int(heights[i]), i))
                continue
            yield float(first[i]), i
        else:
            key, _, i = heapq.heappop(later)
            if status[i] == NOT_ANON:
                continue
            if lb[i] > key:
                heapq.heappush(later, (float(lb[i]), int(heights[i]), i))
                continue
            yield key, i


def _raises_bounds(metric: Metric) -> bool:
    """Whether the metric's node bounds are coarse and raised from the classes the search
    computes (:meth:`~anonlab.metrics.base.Metric.successor_bound`: discernibility, AECS).
    For these the search follows the raised bounds: its paths step to the successor with the
    smallest bound (rather than the most room first: benchmarks/README.md, "Measurements
    behind choices in the code") and its first solution is the best met on a walk down from
    the top (:func:`_incumbent`)."""
    return type(metric).successor_bound is not Metric.successor_bound


def _incumbent(
    ev: LatticeEvaluator,
    tagger: Tagger,
    lb: npt.NDArray[np.float64],
    lattice: Lattice,
    checked: dict[tuple[int, ...], bool],
) -> NodeResult | None:
    """A good first solution, so that the bound cuts from the start: walk down from the top
    to a minimal anonymous node, each step to an anonymous child.

    The child is the one with the smallest bound; for metrics whose node bounds are coarse
    (they raise their generalizations' bounds from classes instead, see
    :meth:`~anonlab.metrics.base.Metric.successor_bound`: discernibility, AECS) the one with
    the least loss, and the best node met on the way is the solution (with suppression the
    loss need not fall along the path).
    """
    by_loss = _raises_bounds(ev.metric)
    i = tagger.index(lattice.max_levels)
    if tagger.status_of(i) != ANON:
        return None
    mins = np.asarray(lattice.min_levels, dtype=np.int64)

    def evaluate(node: int) -> NodeResult:
        levels = tuple(tagger.nodes[node].tolist())
        res = ev.evaluate(levels, with_loss=True)
        checked[levels] = res.anonymous
        return res

    best = evaluate(i) if by_loss else None
    if best is not None and not best.anonymous:
        best = None
    while True:
        v = tagger.nodes[i]
        children = [i - int(tagger.strides[j]) for j in range(v.size) if v[j] > mins[j]]
        children.sort(key=lambda c: (lb[c], int(tagger.nodes[c].sum())))
        if not by_loss:
            nxt = next((c for c in children if tagger.status_of(c) == ANON), None)
            if nxt is None:
                break
            i = nxt
            continue
        anonymous = [c for c in children if tagger.status_of(c) == ANON]
        if not anonymous:
            break
        res, i = min(
            ((evaluate(c), c) for c in anonymous),
            key=lambda rc: (
                rc[0].loss is None,  # tagged by the monotonic part only: not anonymous
                rc[0].loss or 0.0,
                lb[rc[1]],
                int(tagger.nodes[rc[1]].sum()),
            ),
        )
        if res.anonymous and better(res, best):
            best = res
    if best is None:
        best = evaluate(i)
    return best if best.anonymous else None
