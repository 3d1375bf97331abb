"""Full-domain generalization (global recoding) over the generalization lattice."""

from anonlab.algorithms.global_recoding.incognito import incognito_search
from anonlab.algorithms.global_recoding.lattice import (
    Lattice,
    LatticeEvaluator,
    NodeResult,
    SearchResult,
)
from anonlab.algorithms.global_recoding.optimal import optimal_search

__all__ = [
    "Lattice",
    "LatticeEvaluator",
    "NodeResult",
    "SearchResult",
    "incognito_search",
    "optimal_search",
]
