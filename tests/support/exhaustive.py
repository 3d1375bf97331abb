"""The exhaustive full-domain search: every lattice node evaluated (the optimal search's
reference in tests)."""

from __future__ import annotations

from anonlab.algorithms._lattice import Lattice, LatticeEvaluator, NodeResult, SearchResult
from anonlab.algorithms._lattice.lattice import better, timed


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
