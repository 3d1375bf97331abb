"""Microaggregation: groups of at least k records, each released as its centroid.

MDAV (J. Domingo-Ferrer and J. M. Mateo-Sanz, IEEE TKDE 14(1), 2002; J. Domingo-Ferrer and
V. Torra, Data Mining and Knowledge Discovery 11(2), 2005, section 3.1): the registered
algorithm :class:`Microaggregation` (``algorithm: microaggregation``) groups the records on
their standardized numeric quasi-identifiers (:func:`mdav`) and returns a
:class:`~anonlab.release.centroids.Centroids` recoding; the release layer re-groups the
released values, checks every centroid and judges the models.
"""

from anonlab.algorithms.microaggregation.anonymizer import (
    Microaggregation,
    MicroaggregationStats,
)
from anonlab.algorithms.microaggregation.grouping import blocks, mdav

__all__ = ["Microaggregation", "MicroaggregationStats", "blocks", "mdav"]
