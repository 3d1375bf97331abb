"""Utility metrics: information loss of a transformation, computed from class statistics.

Every metric is a :class:`Metric` with ``loss(stats, suppressed, context)`` (lower is better)
and, where one exists, a class-free ``lower_bound(levels, context)`` for pruning. Build one
by its job-file name with :func:`build_metric`:

=================  =============================================  ==========================
name               metric                                          parameters
=================  =============================================  ==========================
``height``         sum of levels (ARX Height)                      aggregate, weights
``precision``      ARX Precision (monotonic or not)                monotonic, gamma,
                                                                   aggregate, weights
``discernibility`` ARX DM (``monotonic=False``) / DM*              monotonic
``aecs``           ARX average equivalence class size              gamma
``entropy``        ARX non-uniform entropy (monotonic or not)      monotonic, gamma,
                                                                   aggregate, weights
``loss``           ARX Loss (LM)                                   gamma, aggregate, weights
``ncp``            NCP(T) of Murakami & Uno                        weights
``gcp``            GCP(T) of Murakami & Uno                        weights
``distortion``     distortion ratio of Wong et al.                 weights
``info_left``      1 - information-left degree of Song et al.      weights, n_sensitive
=================  =============================================  ==========================

``aggregate`` is one of ``sum``, ``arithmetic``, ``geometric``, ``max``, ``rank``; ``gamma`` is
ARX's gs-factor in [0, 1] (default 0.5); ``weights`` maps attributes to numbers >= 0.

PrivacyFrost2's scoring functions (paper 000 section 6: higher is better, one value per table
from its distinct values per attribute) are in :mod:`anonlab.metrics.scores`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from typing import Any

from anonlab._registry import Registry
from anonlab._validation import Param, did_you_mean
from anonlab.exceptions import ParameterError
from anonlab.metrics.aggregate import Aggregate, RankedLoss, aggregate, parse_aggregate
from anonlab.metrics.arx import (
    AverageClassSize,
    Discernibility,
    Height,
    Loss,
    MonotonicDiscernibility,
    MonotonicNonUniformEntropy,
    MonotonicPrecision,
    NonUniformEntropy,
    Precision,
)
from anonlab.metrics.base import Metric, MetricContext
from anonlab.metrics.certainty import GlobalCertaintyPenalty, NormalizedCertaintyPenalty
from anonlab.metrics.distortion import DistortionRatio
from anonlab.metrics.info_left import InformationLeft, info_left_value, info_left_values

__all__ = [
    "METRICS",
    "Aggregate",
    "AverageClassSize",
    "Discernibility",
    "DistortionRatio",
    "GlobalCertaintyPenalty",
    "Height",
    "InformationLeft",
    "Loss",
    "Metric",
    "MetricContext",
    "MonotonicDiscernibility",
    "MonotonicNonUniformEntropy",
    "MonotonicPrecision",
    "NonUniformEntropy",
    "NormalizedCertaintyPenalty",
    "Precision",
    "RankedLoss",
    "aggregate",
    "build_metric",
    "info_left_value",
    "info_left_values",
    "parse_aggregate",
]


#: The constraint of a metric's ``monotonic`` parameter (the variant to build).
_MONOTONIC = Param(bool)


def _check_monotonic(value: object, name: str) -> bool:
    checked: bool = _MONOTONIC.check(value, "monotonic", owner=f"metric {name!r}")
    return checked


def _single(name: str, fixed: bool, monotonic: object) -> None:
    if monotonic is not None and _check_monotonic(monotonic, name) != fixed:
        raise ParameterError(
            f"Metric {name!r} has no {'non-' if fixed else ''}monotonic variant "
            f"(it is {'monotonic' if fixed else 'non-monotonic'}); drop 'monotonic'."
        )


def _height(
    *,
    aggregate: str | None = None,
    weights: Mapping[str, float] | None = None,
    monotonic: bool | None = None,
) -> Metric:
    """Height (ARX MetricMDHeight)."""
    _single("height", True, monotonic)
    return Height(aggregate=aggregate, weights=weights)


def _precision(
    *,
    monotonic: bool = False,
    gamma: float = 0.5,
    aggregate: str | None = None,
    weights: Mapping[str, float] | None = None,
) -> Metric:
    """Precision (ARX MetricMDNMPrecision, or MetricMDPrecision when monotonic)."""
    cls = MonotonicPrecision if _check_monotonic(monotonic, "precision") else Precision
    return cls(gamma=gamma, aggregate=aggregate, weights=weights)


def _discernibility(*, monotonic: bool = False) -> Metric:
    """Discernibility DM (ARX MetricSDNMDiscernability), or DM* when monotonic."""
    mono = _check_monotonic(monotonic, "discernibility")
    return MonotonicDiscernibility() if mono else Discernibility()


def _aecs(*, gamma: float = 0.5, monotonic: bool | None = None) -> Metric:
    """Average equivalence class size (ARX MetricSDAECS)."""
    _single("aecs", False, monotonic)
    return AverageClassSize(gamma=gamma)


def _entropy(
    *,
    monotonic: bool = False,
    gamma: float = 0.5,
    aggregate: str | None = None,
    weights: Mapping[str, float] | None = None,
) -> Metric:
    """Non-uniform entropy (ARX MetricMDNUNMEntropy, or MetricMDNUEntropy when monotonic)."""
    mono = _check_monotonic(monotonic, "entropy")
    cls = MonotonicNonUniformEntropy if mono else NonUniformEntropy
    return cls(gamma=gamma, aggregate=aggregate, weights=weights)


def _loss(
    *,
    gamma: float = 0.5,
    aggregate: str | None = None,
    weights: Mapping[str, float] | None = None,
    monotonic: bool | None = None,
) -> Metric:
    """Loss (ARX MetricMDNMLoss)."""
    _single("loss", False, monotonic)
    return Loss(gamma=gamma, aggregate=aggregate, weights=weights)


def _ncp(*, weights: Mapping[str, float] | None = None, monotonic: bool | None = None) -> Metric:
    """NCP(T) (Murakami & Uno, Eq. 2)."""
    _single("ncp", False, monotonic)
    return NormalizedCertaintyPenalty(weights=weights)


def _gcp(*, weights: Mapping[str, float] | None = None, monotonic: bool | None = None) -> Metric:
    """GCP(T) (Murakami & Uno, Eq. 3)."""
    _single("gcp", False, monotonic)
    return GlobalCertaintyPenalty(weights=weights)


def _distortion(
    *, weights: Mapping[str, float] | None = None, monotonic: bool | None = None
) -> Metric:
    """Distortion ratio (Wong et al., §2)."""
    _single("distortion", False, monotonic)
    return DistortionRatio(weights=weights)


def _info_left(
    *,
    weights: Mapping[str, float] | None = None,
    n_sensitive: int = 0,
    monotonic: bool | None = None,
) -> Metric:
    """1 - information-left degree of the table (Song et al., §5)."""
    _single("info_left", False, monotonic)
    return InformationLeft(weights=weights, n_sensitive=n_sensitive)


#: Job-file names of the metrics and their factories (keyword parameters only); installed
#: packages add factories through the entry-point group ``anonlab.metrics``.
METRICS: Registry[Callable[..., Metric]] = Registry("metric", group="anonlab.metrics")
for _name, _factory in (
    ("entropy", _entropy),
    ("loss", _loss),
    ("discernibility", _discernibility),
    ("aecs", _aecs),
    ("precision", _precision),
    ("height", _height),
    ("ncp", _ncp),
    ("gcp", _gcp),
    ("distortion", _distortion),
    ("info_left", _info_left),
):
    METRICS.register(_name, _factory)


def build_metric(name: str, **params: Any) -> Metric:
    """Build the metric called ``name`` in job files with keyword ``params``.

    Parameters
    ----------
    name : str
        One of the keys of :data:`METRICS`.
    **params
        The metric's parameters (see the module docstring).

    Returns
    -------
    Metric

    Raises
    ------
    ParameterError
        If the name is unknown (the message lists the valid names), a parameter does not
        belong to the metric (the message lists those that do) or has an invalid value.

    Examples
    --------
    >>> build_metric("loss").name
    'loss'
    """
    key = str(name).strip().lower() if isinstance(name, str) else name
    if not isinstance(key, str) or key not in METRICS:
        raise METRICS.unknown(name)
    factory = METRICS[key]
    allowed = list(inspect.signature(factory).parameters)
    unknown = [p for p in params if p not in allowed]
    if unknown:
        raise ParameterError(
            f"Unknown parameter {unknown[0]!r} of metric {key!r}."
            f"{did_you_mean(unknown[0], allowed)} Valid parameters: {', '.join(allowed)}."
        )
    return factory(**params)
