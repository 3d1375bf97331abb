"""Shared lattice code of the level-based families: the generalization lattice, the node
evaluator (classes rolled up from the base classes, or grouped and judged by compiled kernels:
``_kernels``, ``judge``), and their construction from a
:class:`~anonlab.release.problem.Problem`."""

from anonlab.algorithms._lattice.lattice import (
    Lattice,
    LatticeEvaluator,
    NodeResult,
    SearchResult,
    better,
    grid_heights,
    grid_nodes,
    group_rows,
    height_order,
    roll_up,
    timed,
)
from anonlab.algorithms._lattice.setup import build_evaluator, check_lattice, lattice_of

__all__ = [
    "Lattice",
    "LatticeEvaluator",
    "NodeResult",
    "SearchResult",
    "better",
    "build_evaluator",
    "check_lattice",
    "grid_heights",
    "grid_nodes",
    "group_rows",
    "height_order",
    "lattice_of",
    "roll_up",
    "timed",
]
