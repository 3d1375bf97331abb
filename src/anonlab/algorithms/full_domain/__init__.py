"""Full-domain generalization (global recoding): one hierarchy level per quasi-identifier,
the anonymous transformation with the least loss, by the optimal (Flash-style) search or the
extended Incognito of Wong et al."""

from anonlab.algorithms.full_domain.anonymizers import (
    IncognitoSearch,
    LatticeSearchStats,
    OptimalSearch,
)
from anonlab.algorithms.full_domain.incognito import incognito_search
from anonlab.algorithms.full_domain.optimal import Tagger, optimal_search

__all__ = [
    "IncognitoSearch",
    "LatticeSearchStats",
    "OptimalSearch",
    "Tagger",
    "incognito_search",
    "optimal_search",
]
