"""Diagnosis: questions about a table as it is.

The Diagnosis Centre of Zare Mirakabad, Jantan & Bressan, *k-anonymity Diagnosis Centre*.
"""

from anonlab.diagnosis.profile import (
    AttributeLoss,
    ColumnProfile,
    ReleaseProfile,
    SensitiveDistribution,
    TableProfile,
    profile_release,
    profile_table,
)
from anonlab.diagnosis.questions import (
    SearchAnswer,
    SubsetAnswer,
    TableAnswer,
    TableRow,
    ask,
    question_for,
)
from anonlab.diagnosis.risk import (
    QuasiIdentifierReport,
    RiskSummary,
    class_size_histogram,
    discover_quasi_identifiers,
    risk_summary,
)
from anonlab.diagnosis.subsets import SubsetEvaluator, largest_subsets, minimal_failing
from anonlab.diagnosis.suda import SudaResult, suda2
from anonlab.diagnosis.suppression import (
    compute_k,
    delta_curve,
    delta_for_k,
    k_with_suppression,
)

__all__ = [
    "AttributeLoss",
    "ColumnProfile",
    "QuasiIdentifierReport",
    "ReleaseProfile",
    "SensitiveDistribution",
    "TableProfile",
    "class_size_histogram",
    "profile_release",
    "profile_table",
    "RiskSummary",
    "SearchAnswer",
    "SubsetAnswer",
    "SubsetEvaluator",
    "SudaResult",
    "TableAnswer",
    "TableRow",
    "ask",
    "compute_k",
    "delta_curve",
    "delta_for_k",
    "discover_quasi_identifiers",
    "k_with_suppression",
    "largest_subsets",
    "minimal_failing",
    "question_for",
    "risk_summary",
    "suda2",
]
