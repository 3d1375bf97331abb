"""The model registry: build a privacy model from its job-file name and parameters."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from anonlab._registry import Registry
from anonlab._validation import did_you_mean
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats
from anonlab.exceptions import ParameterError
from anonlab.models.alpha_k import AlphaKAnonymity
from anonlab.models.base import PrivacyModel
from anonlab.models.k_anonymity import KAnonymity
from anonlab.models.l_diversity import (
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
)
from anonlab.models.likeness import BasicBetaLikeness, DeltaDisclosure, EnhancedBetaLikeness
from anonlab.models.personalized import PersonalizedLeakage
from anonlab.models.risk import (
    AverageRisk,
    DeltaPresence,
    KMap,
    PopulationUniquenessModel,
    SampleUniqueness,
)
from anonlab.models.t_closeness import (
    EqualTCloseness,
    HierarchicalTCloseness,
    OrderedTCloseness,
)

__all__ = ["MODELS", "build_model", "check_feasible", "model_parameters"]

#: Every privacy model by its job-file name (and those installed packages add through the
#: entry-point group ``anonlab.models``).
MODELS: Registry[type[PrivacyModel]] = Registry(
    "privacy model", plural="models", group="anonlab.models", sort=True
)
_BUILT_IN: tuple[type[PrivacyModel], ...] = (
    KAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
    EqualTCloseness,
    OrderedTCloseness,
    HierarchicalTCloseness,
    AlphaKAnonymity,
    BasicBetaLikeness,
    EnhancedBetaLikeness,
    DeltaDisclosure,
    PersonalizedLeakage,
    AverageRisk,
    SampleUniqueness,
    PopulationUniquenessModel,
    KMap,
    DeltaPresence,
)
for _cls in _BUILT_IN:
    MODELS.register(_cls.name, _cls)

HierarchyLoader = Callable[[str, str], Hierarchy]


def model_parameters(name: str) -> tuple[list[str], list[str]]:
    """Return the (required, optional) parameter names of the model ``name``.

    Raises
    ------
    ParameterError
        If ``name`` is not a known model; the message lists the valid names.

    Examples
    --------
    >>> model_parameters("distinct_l_diversity")
    (['attribute', 'l'], [])
    """
    cls = _model_class(name)
    required: list[str] = []
    optional: list[str] = []
    for p in list(inspect.signature(cls.__init__).parameters.values())[1:]:
        (required if p.default is inspect.Parameter.empty else optional).append(p.name)
    return required, optional


def _model_class(name: object) -> type[PrivacyModel]:
    return MODELS.lookup(name)


def build_model(
    name: str,
    params: Mapping[str, Any] | None = None,
    *,
    hierarchies: Mapping[str, Hierarchy] | None = None,
    load_hierarchy: HierarchyLoader | None = None,
    sensitive: Sequence[str] = (),
) -> PrivacyModel:
    """Build the privacy model ``name`` from job-file parameters.

    Parameters
    ----------
    name : str
        A key of :data:`MODELS` (``"k_anonymity"``, ``"recursive_cl_diversity"``, ...).
    params : Mapping[str, Any], optional
        The model's parameters as written in a job file.
    hierarchies : Mapping[str, Hierarchy], optional
        Hierarchies by attribute: ``hierarchical_t_closeness`` takes the hierarchy of its
        attribute from here when ``params`` has no ``hierarchy``.
    load_hierarchy : callable, optional
        ``load_hierarchy(path, attribute) -> Hierarchy``, used when ``params["hierarchy"]``
        is a path (models never read files themselves).
    sensitive : sequence of str
        The job's sensitive attributes: when exactly one is declared, a model without an
        ``attribute`` parameter uses it.

    Returns
    -------
    PrivacyModel

    Raises
    ------
    ParameterError
        For an unknown model (listing the valid names), an unknown or missing parameter
        (naming it and listing the valid ones) or an invalid value.

    Examples
    --------
    >>> build_model("k_anonymity", {"k": 2})
    KAnonymity(k=2)
    """
    cls = _model_class(name)
    required, optional = model_parameters(name)
    valid = required + optional
    kwargs = dict(params or {})
    for key in kwargs:
        if key not in valid:
            raise ParameterError(
                f"Unknown parameter {key!r} of model {name!r}.{did_you_mean(str(key), valid)} "
                f"Valid parameters: {', '.join(valid)}."
            )
    if "attribute" in valid and "attribute" not in kwargs and len(sensitive) == 1:
        kwargs["attribute"] = sensitive[0]
    if cls is HierarchicalTCloseness:
        kwargs["hierarchy"] = _resolve_hierarchy(kwargs, hierarchies, load_hierarchy)
    missing = [p for p in required if p not in kwargs]
    if missing:
        raise ParameterError(
            f"Model {name!r} needs parameter{'s' if len(missing) > 1 else ''} "
            f"{', '.join(map(repr, missing))} (parameters: {', '.join(valid)})."
        )
    return cls(**kwargs)


def _resolve_hierarchy(
    kwargs: Mapping[str, Any],
    hierarchies: Mapping[str, Hierarchy] | None,
    load_hierarchy: HierarchyLoader | None,
) -> Any:
    attribute = kwargs.get("attribute")
    given = kwargs.get("hierarchy")
    if given is None:
        if hierarchies and isinstance(attribute, str) and attribute in hierarchies:
            return hierarchies[attribute]
        raise ParameterError(
            f"Model 'hierarchical_t_closeness' needs parameter 'hierarchy' (a hierarchy of "
            f"sensitive attribute {attribute!r})."
        )
    if isinstance(given, Hierarchy):
        return given
    if isinstance(given, str) or hasattr(given, "__fspath__"):
        if load_hierarchy is None:
            raise ParameterError(
                f"The 'hierarchy' parameter of model 'hierarchical_t_closeness' is a path "
                f"({str(given)!r}); pass load_hierarchy= to build_model or a Hierarchy."
            )
        return load_hierarchy(str(given), str(attribute))
    return given  # the model's own check names the wrong type


def check_feasible(model: PrivacyModel, stats: ClassStats) -> None:
    """Raise :class:`ParameterError` if no release of the table can satisfy ``model``.

    For example ``l`` larger than the number of distinct sensitive values of the table,
    which neither generalization nor suppression can repair. ``stats`` may be the classes
    of any transformation of the table (only the whole table's distribution is used).
    See :meth:`PrivacyModel.check_feasible`.

    Examples
    --------
    >>> import anonlab
    >>> from anonlab.api import open_engine
    >>> t = anonlab.EncodedTable.from_rows([("a", "flu"), ("b", "flu")], ["zip", "disease"])
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
    >>> check_feasible(build_model("distinct_l_diversity", {"attribute": "disease", "l": 2}), stats)
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ParameterError: The 'l' parameter of DistinctLDiversity (l=2) is larger ...
    """
    model.check_feasible(stats)
