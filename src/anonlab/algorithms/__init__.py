"""Anonymization algorithms, one folder per family, registered by name.

Families never import one another; the level-based ones share :mod:`anonlab.algorithms._lattice`.
Importing this package registers every family in :data:`ALGORITHMS`.
"""

from anonlab.algorithms import (  # noqa: F401  (registers them)
    full_domain,
    local_recoding,
    local_suppression,
    microaggregation,
    mondrian,
    nonhomogeneous,
    personalized,
    privacyfrost2,
)
from anonlab.algorithms.base import ALGORITHMS, Anonymizer, Param, build_anonymizer, register

__all__ = ["ALGORITHMS", "Anonymizer", "Param", "build_anonymizer", "register"]
