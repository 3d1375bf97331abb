"""Re-identification risk of a sample: pure numpy/scipy math on equivalence-class sizes.

:mod:`anonlab.risk.population` estimates the share of population uniques (Pitman, Zayatz, SNB,
Dankar's rule). The package reads only class sizes (and weighted class sizes); the engines,
models, metrics and the diagnosis compute those and call it.
"""

from __future__ import annotations

from anonlab.risk.population import (
    ESTIMATORS,
    PopulationUniqueness,
    population_size,
    population_uniqueness,
    population_uniques,
)

__all__ = [
    "ESTIMATORS",
    "PopulationUniqueness",
    "population_size",
    "population_uniqueness",
    "population_uniques",
]
