"""Local suppression: blank the fewest key values so that every record is k-anonymous.

M. Templ, A. Kowarik and B. Meindl, "Statistical disclosure control for micro-data using the
R package sdcMicro", Journal of Statistical Software 67(4), 2015, section 5.2. The registered
algorithm :class:`LocalSuppression` (``algorithm: local_suppression``) blanks cells with an
importance order and per-attribute limits, optionally after a full-domain level
(``generalize``); its release, :class:`~anonlab.release.blanks.Blanks`, is counted with
wildcard semantics (a blank matches any value) and verified by the ``"blanks"`` verifier.
"""

from anonlab.algorithms.local_suppression.anonymizer import (
    LocalSuppression,
    LocalSuppressionStats,
)
from anonlab.algorithms.local_suppression.search import SuppressionOutcome, suppress

__all__ = ["LocalSuppression", "LocalSuppressionStats", "SuppressionOutcome", "suppress"]
