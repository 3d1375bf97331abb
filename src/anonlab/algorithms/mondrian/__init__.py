"""Mondrian multidimensional partitioning (LeFevre, DeWitt & Ramakrishnan, ICDE 2006).

The registered algorithm :class:`Mondrian` (``algorithm: mondrian``) cuts the table into
regions of at least k rows (:func:`partition`, strict or relaxed) and releases each row as
its region's interval or lowest common hierarchy label, a
:class:`~anonlab.release.regions.Regions` recoding that the release layer re-checks from the
released labels (the ``regions`` verifier) before anything is returned or written.
"""

from anonlab.algorithms.mondrian.anonymizer import Mondrian, MondrianStats
from anonlab.algorithms.mondrian.partition import Dimension, Partitioning, dimensions, partition

__all__ = ["Dimension", "Mondrian", "MondrianStats", "Partitioning", "dimensions", "partition"]
