"""Prosecutor, journalist and marketer re-identification risk from class sizes.

The three attacker models of El Emam (*Guide to the De-Identification of Personal Health
Information*, 2013, chapter 13) as ARX 3.9.2 computes them (``RiskModelSampleSummary``):

- **prosecutor**: the attacker knows the target is in the released sample; a record in a
  sample class of size ``f`` is re-identified with probability ``1/f``;
- **journalist**: the attacker knows only that the target is in the population; a record
  whose class holds ``F`` population records is re-identified with probability ``1/F``.
  Without a population table ``F`` is the sample's class size (ARX does the same), and the
  journalist risk equals the prosecutor risk;
- **marketer**: the attacker re-identifies as many records as possible; the expected share
  re-identified is ``sum_k f_k / F_k / n``.

For each model: *records at risk* is the share of records whose probability exceeds
``1/threshold`` (their class has fewer than ``threshold`` records), *highest* the largest
probability, *average* the attacker's expected success rate (ARX's ``getSuccessRate``):
``u / n`` for the prosecutor (``u`` classes, ``n`` records), ``max(u / sum_k F_k,
sum_k f_k/F_k / n)`` for the journalist.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from anonlab.exceptions import ParameterError

__all__ = [
    "AttackerRisk",
    "prosecutor_risk",
    "journalist_risk",
    "marketer_risk",
    "sample_uniqueness",
]


@dataclass(frozen=True)
class AttackerRisk:
    """Re-identification risk under one attacker model.

    Attributes
    ----------
    records_at_risk : float
        Share of the records whose re-identification probability exceeds ``1/threshold``.
    highest : float
        The largest re-identification probability of a record.
    average : float
        The attacker's expected success rate.

    Examples
    --------
    >>> prosecutor_risk([1, 2, 5], threshold=5)
    AttackerRisk(records_at_risk=0.375, highest=1.0, average=0.375)
    """

    records_at_risk: float
    highest: float
    average: float

    def to_dict(self) -> dict[str, float]:
        """The JSON form: ``records_at_risk``, ``highest``, ``average``.

        Examples
        --------
        >>> AttackerRisk(0.5, 1.0, 0.25).to_dict()["average"]
        0.25
        """
        return {
            "records_at_risk": self.records_at_risk,
            "highest": self.highest,
            "average": self.average,
        }


def _sizes(sizes: npt.ArrayLike, name: str = "sizes") -> npt.NDArray[np.float64]:
    array = np.asarray(sizes, dtype=np.float64).ravel()
    if array.size and not float(array.min()) > 0.0:
        raise ParameterError(f"The class sizes {name} must be > 0; got {float(array.min()):g}.")
    return array


def _threshold(threshold: float) -> float:
    if not (
        isinstance(threshold, (int, float)) and not isinstance(threshold, bool) and threshold >= 1
    ):
        raise ParameterError(
            f"The 'threshold' (a class size) must be a number >= 1. Got {threshold!r} instead."
        )
    return float(threshold)


def prosecutor_risk(sizes: npt.ArrayLike, threshold: float = 5) -> AttackerRisk:
    """Prosecutor risk of a sample with the given class sizes.

    Parameters
    ----------
    sizes : array_like
        The sample's class sizes.
    threshold : float
        Records in classes smaller than this are at risk (default 5, ARX's 0.2).

    Returns
    -------
    AttackerRisk

    Examples
    --------
    >>> r = prosecutor_risk([1, 1, 3, 5])
    >>> r.records_at_risk, r.highest, r.average
    (0.5, 1.0, 0.4)
    """
    f = _sizes(sizes)
    t = _threshold(threshold)
    n = float(f.sum())
    if not n:
        return AttackerRisk(0.0, 0.0, 0.0)
    return AttackerRisk(
        records_at_risk=float(f[f < t].sum()) / n,
        highest=1.0 / float(f.min()),
        average=f.size / n,
    )


def journalist_risk(
    sizes: npt.ArrayLike, population_sizes: npt.ArrayLike | None = None, threshold: float = 5
) -> AttackerRisk:
    """Journalist risk: each record's class counted in the population.

    Parameters
    ----------
    sizes : array_like
        The sample's class sizes ``f_k``.
    population_sizes : array_like, optional
        The population's size ``F_k`` of each of the same classes (same order); each at least
        ``f_k``. Without it the sample stands for the population (ARX's default).
    threshold : float
        Records whose population class is smaller than this are at risk.

    Returns
    -------
    AttackerRisk

    Raises
    ------
    ParameterError
        If a population class is smaller than its sample class.

    Examples
    --------
    >>> journalist_risk([1, 2], [4, 10]).to_dict()
    {'records_at_risk': 0.3333333333333333, 'highest': 0.25, 'average': 0.15}
    >>> journalist_risk([1, 2]) == prosecutor_risk([1, 2])
    True
    """
    f = _sizes(sizes)
    if population_sizes is None:
        return prosecutor_risk(f, threshold)
    t = _threshold(threshold)
    big = _population(f, population_sizes)
    n = float(f.sum())
    if not n:
        return AttackerRisk(0.0, 0.0, 0.0)
    return AttackerRisk(
        records_at_risk=float(f[big < t].sum()) / n,
        highest=1.0 / float(big.min()),
        average=max(f.size / float(big.sum()), float((f / big).sum()) / n),
    )


def marketer_risk(sizes: npt.ArrayLike, population_sizes: npt.ArrayLike | None = None) -> float:
    """The marketer's expected share of re-identified records, ``sum_k f_k/F_k / n``.

    Parameters
    ----------
    sizes : array_like
        The sample's class sizes ``f_k``.
    population_sizes : array_like, optional
        The population's sizes ``F_k`` of the same classes; default the sample's.

    Returns
    -------
    float

    Examples
    --------
    >>> marketer_risk([1, 2, 2])
    0.6
    >>> marketer_risk([1, 2], [4, 10])
    0.15
    """
    f = _sizes(sizes)
    n = float(f.sum())
    if not n:
        return 0.0
    if population_sizes is None:
        return f.size / n
    return float((f / _population(f, population_sizes)).sum()) / n


def sample_uniqueness(sizes: npt.ArrayLike) -> float:
    """Share of the records alone in their class in the sample.

    Examples
    --------
    >>> sample_uniqueness([1, 1, 2, 4])
    0.25
    """
    f = _sizes(sizes)
    n = float(f.sum())
    return float(f[f == 1].sum()) / n if n else 0.0


def _population(
    f: npt.NDArray[np.float64], population_sizes: npt.ArrayLike
) -> npt.NDArray[np.float64]:
    big = np.asarray(population_sizes, dtype=np.float64).ravel()
    if big.shape != f.shape:
        raise ParameterError(f"population_sizes has {big.size} classes; the sample has {f.size}.")
    short = big < f
    if short.any():
        i = int(np.argmax(short))
        raise ParameterError(
            f"A population class is smaller than the sample's: {big[i]:g} < {f[i]:g} records."
        )
    return big
