"""Re-identification risk of a sample: pure numpy/scipy math on equivalence-class sizes.

:mod:`anonlab.risk.population` estimates the share of population uniques (Pitman, Zayatz, SNB,
Dankar's rule); :mod:`anonlab.risk.attackers` gives the prosecutor, journalist and marketer
risk; :mod:`anonlab.risk.weights` the Benedetti-Franconi risk of a weighted sample. The package reads only class sizes (and weighted class sizes); the engines,
models, metrics and the diagnosis compute those and call it.
"""

from __future__ import annotations

from anonlab.risk.attackers import (
    AttackerRisk,
    journalist_risk,
    marketer_risk,
    prosecutor_risk,
    sample_uniqueness,
)
from anonlab.risk.population import (
    ESTIMATORS,
    PopulationUniqueness,
    population_size,
    population_uniqueness,
    population_uniques,
)
from anonlab.risk.weights import WeightedRisk, individual_risk, weighted_risk

__all__ = [
    "AttackerRisk",
    "prosecutor_risk",
    "journalist_risk",
    "marketer_risk",
    "sample_uniqueness",
    "WeightedRisk",
    "individual_risk",
    "weighted_risk",
    "ESTIMATORS",
    "PopulationUniqueness",
    "population_size",
    "population_uniqueness",
    "population_uniques",
]
