"""Non-homogeneous generalization: each released record covers k records, no classes.

``wong_nh`` is Wong et al.'s randomized baseline; ``murakami_uno`` is Murakami & Uno's
two-phase optimization (IJIS 2017). Both weigh covers with the cost model of :mod:`.cover_model`
and return a :class:`~anonlab.release.CellCover` carrying its released labels, which the
release layer verifies on its anonymity graph (Definition 1, Theorem 1's max-flow) before
anything is returned or written.
"""

from anonlab.algorithms.nonhomogeneous.anonymizers import (
    MurakamiUno,
    MurakamiUnoStats,
    WongNH,
    WongStats,
)
from anonlab.algorithms.nonhomogeneous.candidates import candidate_edges, lower_bound
from anonlab.algorithms.nonhomogeneous.cover_model import (
    CoverModel,
    cell_cover,
    cover_cost,
)
from anonlab.algorithms.nonhomogeneous.rings import pattern_rings, wong_rings

__all__ = [
    "CoverModel",
    "MurakamiUno",
    "MurakamiUnoStats",
    "WongNH",
    "WongStats",
    "candidate_edges",
    "cell_cover",
    "cover_cost",
    "lower_bound",
    "pattern_rings",
    "wong_rings",
]
