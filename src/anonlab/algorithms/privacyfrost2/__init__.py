"""PrivacyFrost2: score-driven full- and partial-domain generalization.

S. Kiyomoto and Y. Miyake, "PrivacyFrost2: A Efficient Data Anonymization Tool Based on
Scoring Functions", CD-ARES 2014. The user gives a priority per quasi-identifier and the
most general level allowed for each; the search returns the table that satisfies the
privacy models with the best score (section 6) among those it visits.

Entry point: :func:`privacyfrost2`. Pre-sampling (section 5.1): :class:`PreSampling`,
:func:`presample`, :func:`restrict_evaluator`. Scores: :func:`build_score`.
"""

from anonlab.algorithms.privacyfrost2._common import from_paper_levels, to_paper_levels
from anonlab.algorithms.privacyfrost2.anonymizer import PrivacyFrost2, PrivacyFrost2Stats
from anonlab.algorithms.privacyfrost2.partial import (
    PartialDomainResult,
    partial_domain_degeneralization,
)
from anonlab.algorithms.privacyfrost2.presampling import (
    PreSample,
    PreSampling,
    presample,
    restrict_evaluator,
)
from anonlab.algorithms.privacyfrost2.search import (
    DEFAULT_RESTARTS,
    PrivacyFrost2Result,
    privacyfrost2,
)
from anonlab.metrics.scores import SCORES, BasicScore, EtaScore, LogScore, Score, build_score

__all__ = [
    "DEFAULT_RESTARTS",
    "SCORES",
    "BasicScore",
    "EtaScore",
    "LogScore",
    "PartialDomainResult",
    "PreSample",
    "PreSampling",
    "PrivacyFrost2",
    "PrivacyFrost2Result",
    "PrivacyFrost2Stats",
    "Score",
    "build_score",
    "from_paper_levels",
    "partial_domain_degeneralization",
    "presample",
    "privacyfrost2",
    "restrict_evaluator",
    "to_paper_levels",
]
