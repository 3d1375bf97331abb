"""Personalized privacy: each record's probability of privacy leakage within its own limit.

J. Song, L. Huang, G. Wang, Y. Kang and H. Liu, "The k-anonymization method satisfying
personalized privacy preservation", Chemical Engineering Transactions 46 (2015). The
registered algorithm :class:`Personalized` (``algorithm: personalized``) is the paper's
Anonymity_Generalization (section 6): the utility-driven adaptive clustering
(:func:`adaptive_clustering`), the generalization of each group's quasi-identifiers, and
SA_Generalization (:func:`sa_generalization`), with groups sized and merged so that every
limit that can be met is. The measures (Definitions 6-8) live in the model
``personalized_leakage``; the information-left degree (Definitions 9-11) in
:mod:`anonlab.metrics.info_left`.
"""

from anonlab.algorithms.personalized.anonymizer import Personalized, PersonalizedStats
from anonlab.algorithms.personalized.clustering import (
    QuasiIdentifierIndex,
    RangeMax,
    adaptive_clustering,
    group_needs,
)
from anonlab.algorithms.personalized.sensitive import SensitiveOutcome, sa_generalization

__all__ = [
    "Personalized",
    "PersonalizedStats",
    "QuasiIdentifierIndex",
    "RangeMax",
    "SensitiveOutcome",
    "adaptive_clustering",
    "group_needs",
    "sa_generalization",
]
