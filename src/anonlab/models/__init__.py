"""Privacy models: judge every equivalence class of a ClassStats at once, vectorised.

Each model is a validated value object with a job-file ``name``; :data:`MODELS` maps names to
classes and :func:`build_model` builds one from job-file parameters. Definitions follow ARX
where ARX has the model (docs/concepts/metrics-reference.md, section 2) and paper 002 for
(alpha,k)-anonymity.
"""

from anonlab.models.alpha_k import AlphaKAnonymity, further_removal_bound
from anonlab.models.base import PrivacyModel, failing_classes
from anonlab.models.k_anonymity import KAnonymity
from anonlab.models.l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
)
from anonlab.models.likeness import BasicBetaLikeness, DeltaDisclosure, EnhancedBetaLikeness
from anonlab.models.per_record import RecordModel, RecordVerdict
from anonlab.models.personalized import PersonalizedLeakage
from anonlab.models.registry import MODELS, build_model, check_feasible, model_parameters
from anonlab.models.risk import (
    AverageRisk,
    DeltaPresence,
    KMap,
    PopulationUniquenessModel,
    SampleBasedModel,
    SampleUniqueness,
)
from anonlab.models.t_closeness import (
    EqualTCloseness,
    HierarchicalTCloseness,
    OrderedTCloseness,
)

__all__ = [
    "MODELS",
    "AlphaKAnonymity",
    "AverageRisk",
    "BasicBetaLikeness",
    "DeltaDisclosure",
    "DistinctLDiversity",
    "EnhancedBetaLikeness",
    "EntropyLDiversity",
    "EqualTCloseness",
    "HierarchicalTCloseness",
    "DeltaPresence",
    "KMap",
    "KAnonymity",
    "OrderedTCloseness",
    "PersonalizedLeakage",
    "PopulationUniquenessModel",
    "PrivacyModel",
    "RecordModel",
    "RecordVerdict",
    "RecursiveCLDiversity",
    "SampleBasedModel",
    "SampleUniqueness",
    "build_model",
    "check_feasible",
    "failing_classes",
    "further_removal_bound",
    "model_parameters",
]
