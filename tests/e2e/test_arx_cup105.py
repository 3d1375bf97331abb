"""A small version of ARX's TestAnonymizationCombinations #105 on the real cup data.

#105: cup, hierarchical 0.2-closeness of RAMNTALL (its hierarchy), 5 % suppression, least
non-uniform entropy, exact search. Here on ``cup_subset.csv`` (6,344 rows) with five of the
seven quasi-identifiers (a 600-node lattice), for the monotonic and the non-monotonic entropy:
the optimal search must find the loss of brute force (every node evaluated), and its node must
satisfy the model (every class that is not suppressed within t, suppression within the limit).
The whole job is ``benchmarks/jobs/arx_cup105.yaml`` (``benchmarks/bench_arx_cup105.py``).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from anonlab import anonymize
from anonlab.algorithms._lattice import build_evaluator, lattice_of
from anonlab.algorithms.full_domain import optimal_search
from anonlab.jobs import build_problem, load_job
from tests.support.exhaustive import exhaustive_search

pytestmark = pytest.mark.shared

QIS = ("ZIP", "AGE", "GENDER", "STATE", "MINRAMNT")
T = 0.2


def _job(shared, monotonic: bool) -> dict:
    arx = shared / "datasets" / "arx"
    return {
        "separator": ";",
        "quasi_identifiers": {q: {"hierarchy": str(arx / f"cup_hierarchy_{q}.csv")} for q in QIS},
        "sensitive": ["RAMNTALL"],
        "models": [
            {
                "hierarchical_t_closeness": {
                    "attribute": "RAMNTALL",
                    "t": T,
                    "hierarchy": str(arx / "cup_hierarchy_RAMNTALL.csv"),
                }
            }
        ],
        "suppression": 0.05,
        "metric": {"name": "entropy", "monotonic": monotonic},
        "algorithm": "optimal",
    }


@pytest.mark.slow
@pytest.mark.parametrize("monotonic", [True, False], ids=["monotonic", "non-monotonic"])
def test_cup105_subset_optimum_equals_brute_force(shared, monotonic):
    data = shared / "datasets" / "arx" / "cup_subset.csv"
    p = build_problem(data, load_job(_job(shared, monotonic)))
    lattice = lattice_of(p)
    assert lattice.size == 600
    found = optimal_search(build_evaluator(p), lattice, monotonic_models=False)
    brute = exhaustive_search(build_evaluator(p), lattice)
    assert brute.evaluated_nodes == 600
    assert found.best is not None and brute.best is not None
    assert found.best.loss == brute.best.loss
    assert found.best.levels == brute.best.levels
    # the node satisfies the model: suppression within the limit, the rest within t
    best = found.best
    model = p.models[0]
    distance = model.class_distance(best.stats)
    kept = ~best.violating
    assert best.suppressed_rows <= p.max_suppressed == math.floor(0.05 * 6344)
    assert np.all(distance[kept] <= T) and np.all(distance[~kept] > T)
    # and anonymize() releases it, re-checked on the released table
    res = anonymize(data, _job(shared, monotonic))
    assert res.transformation == dict(zip(QIS, best.levels))
    assert res.loss == best.loss and res.checks and all(res.checks.values())
    assert res.suppressed_rows == best.suppressed_rows
