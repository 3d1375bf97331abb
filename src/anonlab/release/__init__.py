"""The release layer: one way from a recoding to a released, re-checked, measured table.

Every anonymization family reads a :class:`Problem` and returns a :class:`Recoding`;
:func:`verify` applies it, re-checks the released table independently of the algorithm and
measures its loss on the release; :class:`AnonymizationResult` carries all of it. See
``docs/concepts/release-layer.md``.
"""

from anonlab.release.anonymity_graph import (
    AnonymityGraph,
    ReleaseCheck,
    attribute_ncp,
    check_release,
)
from anonlab.release.audit import ReleaseAudit, audit_release
from anonlab.release.blanks import Blanks
from anonlab.release.cellcover import CellCover
from anonlab.release.centroids import Centroids
from anonlab.release.clusters import Clusters
from anonlab.release.measure import measure, metric_context, release_cells
from anonlab.release.problem import Problem
from anonlab.release.recoding import (
    FullDomain,
    LevelRecoding,
    Levels,
    Recoding,
    generalize_cells,
    generalize_column,
)
from anonlab.release.regions import Regions, region_loss
from anonlab.release.result import AnonymizationResult, SearchStats, stat
from anonlab.release.verify import (
    VERIFIERS,
    Release,
    Verification,
    model_keys,
    recheck_written,
    verify,
)

__all__ = [
    "AnonymityGraph",
    "AnonymizationResult",
    "Blanks",
    "CellCover",
    "Centroids",
    "attribute_ncp",
    "Clusters",
    "ReleaseAudit",
    "ReleaseCheck",
    "audit_release",
    "check_release",
    "FullDomain",
    "LevelRecoding",
    "Levels",
    "Problem",
    "Recoding",
    "Regions",
    "Release",
    "SearchStats",
    "VERIFIERS",
    "Verification",
    "generalize_cells",
    "generalize_column",
    "measure",
    "metric_context",
    "model_keys",
    "recheck_written",
    "region_loss",
    "release_cells",
    "stat",
    "verify",
]
