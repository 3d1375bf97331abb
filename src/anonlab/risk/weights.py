"""Individual and global risk of a weighted sample (Benedetti & Franconi, as sdcMicro computes it).

In a survey sample each record carries a sampling weight: the number of population records it
stands for. For the records of a key (a combination of quasi-identifier values) let ``f_k`` be
their number in the sample and ``F_k`` the sum of their weights (the estimated number in the
population), and ``p_k = f_k / F_k``. Benedetti & Franconi (1998, "Statistical and
technological solutions for controlled data dissemination", Pre-proceedings of New
Techniques and Technologies for Statistics, vol. 1, pp. 225-232) estimate the probability that
a record of key ``k`` is re-identified as the expectation of ``1/F`` under a negative binomial
posterior of the population frequency; sdcMicro's ``measure_risk`` (``indivRisk``, method
``"approx"``) computes it as

- ``f_k = 1``: ``p/(1-p) * log(1/p)``;
- ``f_k = 2``: ``p/(1-p) - (p/(1-p))**2 * log(1/p)``;
- ``f_k > 2``: ``p / (f_k - (1 - p))``;
- ``F_k = f_k`` (the key's records are all the population's): ``1/f_k``.

A key whose weights sum to less than its records (``F_k < f_k``; weights below 1) is given
``1/f_k`` as well, where sdcMicro's formulas leave the range of a probability.

The *global risk* is the expected number of re-identifications, ``sum_k f_k r_k``, and its share
of the records (sdcMicro's ``global_risk_ER`` and ``global_risk``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from anonlab.exceptions import ParameterError

__all__ = ["WeightedRisk", "individual_risk", "weighted_risk"]


def individual_risk(sizes: npt.ArrayLike, weights: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Benedetti-Franconi risk of a record of each key (sdcMicro ``indivRisk``, ``"approx"``).

    Parameters
    ----------
    sizes : array_like of int
        ``f_k``: the sample records of each key.
    weights : array_like of float
        ``F_k``: the sum of the weights of those records.

    Returns
    -------
    ndarray of float64
        The re-identification probability of a record of each key.

    Examples
    --------
    >>> individual_risk([1, 2, 3, 4], [10.0, 20.0, 30.0, 4.0]).round(4).tolist()
    [0.2558, 0.0827, 0.0476, 0.25]
    """
    f = np.asarray(sizes, dtype=np.float64).ravel()
    big = np.asarray(weights, dtype=np.float64).ravel()
    if f.shape != big.shape:
        raise ParameterError(f"weights has {big.size} keys; sizes has {f.size}.")
    if f.size and not float(f.min()) > 0.0:
        raise ParameterError(f"The key sizes must be > 0; got {float(f.min()):g}.")
    whole = big <= f
    p = np.where(whole, 0.5, f / np.where(whole, 1.0, big))  # p in (0, 1) where used
    ratio = p / (1.0 - p)
    log_inverse = np.log(1.0 / p)
    risk = np.where(
        f == 1.0,
        ratio * log_inverse,
        np.where(f == 2.0, ratio - ratio**2 * log_inverse, p / (f - (1.0 - p))),
    )
    return np.where(whole, 1.0 / f, risk)


@dataclass(frozen=True)
class WeightedRisk:
    """The risk of a weighted sample under the Benedetti-Franconi model.

    Attributes
    ----------
    expected_reidentifications : float
        ``sum_k f_k r_k``: the number of records expected to be re-identified.
    global_risk : float
        That number's share of the records.
    highest : float
        The largest individual risk of a record.
    threshold : float
        The individual risk above which a record counts as at risk.
    records_above_threshold : int
        Records whose individual risk exceeds ``threshold``.
    population_size : float
        The sum of the weights: the population the sample stands for.

    Examples
    --------
    >>> r = weighted_risk([1, 3], [50.0, 30.0], threshold=0.05)
    >>> round(r.expected_reidentifications, 4), r.records_above_threshold
    (0.2227, 1)
    """

    expected_reidentifications: float
    global_risk: float
    highest: float
    threshold: float
    records_above_threshold: int
    population_size: float

    def to_dict(self) -> dict[str, float | int]:
        """The JSON form.

        Examples
        --------
        >>> weighted_risk([2], [2.0]).to_dict()["global_risk"]
        0.5
        """
        return {
            "expected_reidentifications": self.expected_reidentifications,
            "global_risk": self.global_risk,
            "highest": self.highest,
            "threshold": self.threshold,
            "records_above_threshold": self.records_above_threshold,
            "population_size": self.population_size,
        }


def weighted_risk(
    sizes: npt.ArrayLike, weights: npt.ArrayLike, threshold: float = 0.2
) -> WeightedRisk:
    """Global Benedetti-Franconi risk of a sample from its keys' sizes and weight sums.

    Parameters
    ----------
    sizes : array_like of int
        ``f_k`` of each key.
    weights : array_like of float
        ``F_k`` of each key (sum of its records' weights).
    threshold : float
        Records whose individual risk exceeds this are counted (default 0.2, ARX's default
        threshold; sdcMicro's ``localSupp`` uses 0.1 in its examples).

    Returns
    -------
    WeightedRisk

    Examples
    --------
    >>> r = weighted_risk([1, 1, 2], [1.0, 100.0, 4.0])
    >>> r.records_above_threshold, round(r.global_risk, 4)
    (3, 0.4151)
    """
    if not (isinstance(threshold, (int, float)) and 0.0 <= threshold <= 1.0):
        raise ParameterError(f"The risk 'threshold' must be in [0, 1]. Got {threshold!r} instead.")
    f = np.asarray(sizes, dtype=np.float64).ravel()
    risk = individual_risk(f, weights)
    n = float(f.sum())
    expected = float((f * risk).sum())
    return WeightedRisk(
        expected_reidentifications=expected,
        global_risk=expected / n if n else 0.0,
        highest=float(risk.max()) if risk.size else 0.0,
        threshold=float(threshold),
        records_above_threshold=int(f[risk > threshold].sum()),
        population_size=float(np.asarray(weights, dtype=np.float64).sum()),
    )
