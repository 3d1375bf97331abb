"""The extended Incognito of Wong, Li, Fu & Wang, *(alpha,k)-anonymous data publishing*, section 3.

A-priori over attribute subsets: for each subset of the quasi-identifiers (size 1, 2, ...),
only the generalization domains whose projections onto every smaller subset were anonymous are
candidates (Lemma 3, subset closure); within a subset, a domain more general than an anonymous
one is anonymous without a test (Lemma 2, the generalization property). The anonymous domains
of the full quasi-identifier set are then ranked by the metric.

Both lemmas need anonymity to be monotonic, which holds for k-anonymity and (alpha,k)-anonymity
without suppression and for k-anonymity with suppression. For configurations where it does not
hold, the subset pruning is unsafe and every full-set node is tested (still exact).
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from anonlab.algorithms._lattice.lattice import (
    Lattice,
    LatticeEvaluator,
    NodeResult,
    SearchResult,
    timed,
)

__all__ = ["incognito_search"]


def incognito_search(
    evaluator: LatticeEvaluator, lattice: Lattice, *, monotonic_models: bool
) -> SearchResult:
    """Return the anonymous node with the least loss, found by the extended Incognito.

    Parameters
    ----------
    evaluator : LatticeEvaluator
        Evaluates nodes.
    lattice : Lattice
        Minimum and maximum levels per attribute.
    monotonic_models : bool
        Whether the generalization and subset properties hold (pruning is safe).

    Returns
    -------
    SearchResult
    """
    return timed(lambda: _incognito(evaluator, lattice, monotonic_models))


def _domain(lattice: Lattice, attrs: tuple[int, ...]) -> np.ndarray:
    sub = Lattice(
        tuple(lattice.attributes[j] for j in attrs),
        tuple(lattice.min_levels[j] for j in attrs),
        tuple(lattice.max_levels[j] for j in attrs),
    )
    return sub.nodes()


def _incognito(ev: LatticeEvaluator, lattice: Lattice, monotonic: bool) -> SearchResult:
    m = len(lattice.attributes)
    start = ev.evaluations
    anonymous: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    full = tuple(range(m))
    sizes = range(1, m + 1) if monotonic else [m]
    for r in sizes:
        for attrs in combinations(range(m), r):
            nodes = _domain(lattice, attrs)
            keep = np.ones(nodes.shape[0], dtype=bool)
            if monotonic and r > 1:
                for drop in range(r):
                    sub = attrs[:drop] + attrs[drop + 1 :]
                    ok = anonymous.get(sub, set())
                    proj = [tuple(int(x) for x in np.delete(v, drop)) for v in nodes]
                    keep &= np.array([p in ok for p in proj], dtype=bool)
            status = np.zeros(nodes.shape[0], dtype=np.int8)
            found: set[tuple[int, ...]] = set()
            for idx in np.flatnonzero(keep):  # nodes come by total height
                v = nodes[idx]
                if status[idx] == 0:
                    res = ev.evaluate(
                        tuple(int(x) for x in v),
                        with_loss=False,
                        attributes=None if attrs == full else attrs,
                    )
                    if monotonic:
                        mask = (
                            np.all(nodes >= v, axis=1)
                            if res.anonymous
                            else np.all(nodes <= v, axis=1)
                        )
                        status[mask & (status == 0)] = 1 if res.anonymous else -1
                    status[idx] = 1 if res.anonymous else -1
                if status[idx] == 1:
                    found.add(tuple(int(x) for x in v))
            anonymous[attrs] = found
    best: NodeResult | None = None
    candidates = sorted(anonymous.get(full, set()), key=lambda v: (sum(v), v))
    checked = {}
    for v in candidates:
        res = ev.evaluate(v, with_loss=True)
        checked[v] = res.anonymous
        if res.anonymous and res.loss is not None:
            if (
                best is None
                or best.loss is None
                or res.loss < best.loss
                or (res.loss == best.loss and sum(res.levels) < sum(best.levels))
            ):
                best = res
    return SearchResult(best, ev.evaluations - start, lattice.size, 0.0, "incognito", checked)
