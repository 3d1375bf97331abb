"""The exhaustive full-domain search: every lattice node evaluated (the optimal search's
reference in tests)."""

from __future__ import annotations

import pytest

from anonlab.algorithms._lattice import Lattice, LatticeEvaluator, NodeResult, SearchResult
from anonlab.algorithms._lattice.lattice import better, timed
from anonlab.algorithms.full_domain import incognito_search, optimal_search


def exhaustive_search(evaluator: LatticeEvaluator, lattice: Lattice) -> SearchResult:
    """Evaluate every node; the best anonymous one (least loss, then least height)."""

    def run() -> SearchResult:
        best: NodeResult | None = None
        start = evaluator.evaluations
        checked = {}
        for v in lattice.nodes():
            res = evaluator.evaluate(tuple(int(x) for x in v))
            checked[res.levels] = res.anonymous
            if res.anonymous and better(res, best):
                best = res
        return SearchResult(
            best, evaluator.evaluations - start, lattice.size, 0.0, "exhaustive", checked
        )

    return timed(run)


def searches_equal_exhaustive(
    evaluator: LatticeEvaluator, lattice: Lattice, monotonic: bool
) -> NodeResult | None:
    """Assert that the optimal search and Incognito find the loss of brute force (or, with
    brute force, no anonymous node); return the optimal search's node."""
    ref = exhaustive_search(evaluator, lattice)
    opt = optimal_search(evaluator, lattice, monotonic_models=monotonic)
    inc = incognito_search(evaluator, lattice, monotonic_models=monotonic)
    if ref.best is None:
        assert opt.best is None and inc.best is None
        return None
    assert opt.best is not None and inc.best is not None
    assert opt.best.loss == pytest.approx(ref.best.loss, rel=1e-12, abs=1e-12)
    assert inc.best.loss == pytest.approx(ref.best.loss, rel=1e-12, abs=1e-12)
    assert opt.best.anonymous and inc.best.anonymous
    assert opt.evaluated_nodes <= lattice.size
    return opt.best
