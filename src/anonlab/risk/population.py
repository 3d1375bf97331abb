"""Population uniqueness of a sample: the Pitman, Zayatz and SNB estimators and Dankar's rule.

A record unique in a sample need not be unique in the population the sample was drawn from.
The three estimators below read only the sample's equivalence-class sizes and the sampling
fraction ``f = n / N`` (``n`` sample records, ``N`` population records) and estimate how many
population records are alone in their class. Each value this module returns is that number
divided by ``N``: the share of the population that is unique, which is also the share of the
sample's records expected to be population uniques (ARX's
``RiskModelPopulationUniqueness.getFractionOfUniqueTuples``).

- **Pitman** (Hoshino 2001, "Applying Pitman's sampling formula to microdata disclosure risk
  assessment", J. Official Statistics 17(4), section 3): the class sizes follow Pitman's
  two-parameter sampling formula; ``theta`` and ``alpha`` are its maximum-likelihood estimates
  and the population uniques are ``Gamma(theta + 1) / Gamma(theta + alpha) * N**alpha``.
- **Zayatz** (Zayatz 1991, "Estimation of the percent of unique population elements on a
  microdata file using the sample", Census SRD report 91/08): the share of sample uniques that
  are population uniques is estimated from hypergeometric draws of size ``n`` out of ``N``.
- **SNB**, the slide negative binomial model (Chen & Keller-McNulty 1998, "Estimation of
  identification disclosure risk in microdata", J. Official Statistics 14(1), section 2): the
  population class sizes are ``1 + NB(alpha, beta)``; the number ``K`` of non-empty population
  classes is estimated with Haas and Stokes' Shlosser estimator (Haas & Stokes 1998, J. Amer.
  Statist. Assoc. 93, equation 4.6), ``alpha`` and ``beta`` by matching the expected and
  observed numbers of sample classes of size 1 and 2, and the uniques are ``K * beta**alpha``.
- **Dankar** (Dankar, El Emam, Neisa & Roffey 2012, "Estimating the re-identification risk of
  clinical data sets", BMC Med. Inform. Decis. Mak. 12:66, section "Decision rule"), as ARX 3.9.2
  applies it: for ``f <= 0.1`` Pitman, or Zayatz where Pitman has no solution; above, the
  smaller of Zayatz and SNB, or Zayatz where SNB has no solution.

The equations are solved with :func:`scipy.optimize.root`; the gamma-function sums use
:mod:`scipy.special`. Where an estimator's equations have no admissible solution its value is
``None``. A sample without uniques gives 0 for every estimator (there is nothing to estimate).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from anonlab._validation import check_fraction, did_you_mean
from anonlab.exceptions import ParameterError

__all__ = [
    "ESTIMATORS",
    "PopulationUniqueness",
    "population_uniqueness",
    "population_uniques",
    "population_size",
]

#: The population-uniqueness estimators, in the order ARX lists them.
ESTIMATORS: tuple[str, ...] = ("pitman", "zayatz", "snb")
#: Dankar's decision rule uses Pitman up to this sampling fraction, else Zayatz and SNB.
DANKAR_PITMAN_FRACTION = 0.1
#: A root of the estimating equations is accepted when each residual is below this share of
#: the quantity the equation matches.
_TOLERANCE = 1e-8
_Equations = Callable[[npt.NDArray[np.float64]], npt.NDArray[np.float64]]


@dataclass(frozen=True)
class PopulationUniqueness:
    """The estimated share of population uniques by each estimator and by Dankar's rule.

    Attributes
    ----------
    pitman, zayatz, snb : float or None
        The estimated number of population uniques divided by the population size, which is
        also the share of the sample's records expected to be population uniques; ``None``
        where the estimator's equations have no admissible solution.
    dankar : float or None
        The estimate Dankar's decision rule picks; ``None`` where the estimate it picks has none.
    dankar_choice : str or None
        The estimator the rule picked (``"pitman"``, ``"zayatz"`` or ``"snb"``); ``None`` for a
        sample without uniques, where every estimate is 0.

    Examples
    --------
    >>> result = population_uniqueness([1, 1, 1, 2, 2, 3, 5, 8], sampling_fraction=0.1)
    >>> result.dankar_choice
    'pitman'
    >>> result.dankar == result.pitman
    True
    """

    pitman: float | None
    zayatz: float | None
    snb: float | None
    dankar: float | None
    dankar_choice: str | None

    def get(self, estimator: str) -> float | None:
        """The value of one estimator by name (``"pitman"``, ``"zayatz"``, ``"snb"``, ``"dankar"``).

        Examples
        --------
        >>> PopulationUniqueness(0.1, 0.2, None, 0.1, "pitman").get("snb") is None
        True
        """
        name = _estimator_name(estimator)
        value: float | None = getattr(self, name)
        return value


def population_size(sample_size: int, sampling_fraction: float) -> int:
    """The population size ARX derives from a sample size and a sampling fraction.

    ``round(n / f)`` (ARX's ``ARXPopulationModel.create(n, f)``); the estimators then use the
    fraction ``n / N`` this size gives.

    Examples
    --------
    >>> population_size(32561, 0.01)
    3256100
    """
    f = check_fraction(sampling_fraction, "sampling_fraction", low_open=True)
    return int(round(sample_size / f))


def population_uniqueness(sizes: npt.ArrayLike, sampling_fraction: float) -> PopulationUniqueness:
    """Estimate the share of population uniques from a sample's class sizes.

    Parameters
    ----------
    sizes : array_like of int
        The sample's equivalence-class sizes (one entry per class, each >= 1).
    sampling_fraction : float
        The share of the population the sample holds, in (0, 1].

    Returns
    -------
    PopulationUniqueness
        Pitman's, Zayatz's and the SNB estimate, and the one Dankar's rule picks.

    Raises
    ------
    ParameterError
        If the fraction is outside (0, 1] or a size is below 1.

    Examples
    --------
    >>> result = population_uniqueness([1, 1, 1, 2, 2, 3, 5, 8], sampling_fraction=0.5)
    >>> round(result.zayatz, 4)
    0.0636
    >>> result.dankar_choice in ("zayatz", "snb")
    True
    >>> population_uniqueness([2, 3], 0.1).pitman
    0.0
    """
    sample = _Sample.of(sizes, sampling_fraction)
    if sample.c1 == 0:
        return PopulationUniqueness(0.0, 0.0, 0.0, 0.0, None)
    pitman, zayatz, snb = _pitman(sample), _zayatz(sample), _snb(sample)
    choice = _dankar_choice(sample.f, pitman, zayatz, snb)
    values = {"pitman": pitman, "zayatz": zayatz, "snb": snb}
    return PopulationUniqueness(pitman, zayatz, snb, values[choice], choice)


def population_uniques(
    sizes: npt.ArrayLike, sampling_fraction: float, estimator: str
) -> float | None:
    """One estimate of the share of population uniques (see :func:`population_uniqueness`).

    Parameters
    ----------
    sizes : array_like of int
        The sample's equivalence-class sizes.
    sampling_fraction : float
        The share of the population the sample holds, in (0, 1].
    estimator : str
        ``"pitman"``, ``"zayatz"``, ``"snb"`` or ``"dankar"``.

    Returns
    -------
    float or None
        The estimated share; ``None`` where the estimator has no solution.

    Raises
    ------
    ParameterError
        For an unknown estimator name, a fraction outside (0, 1] or a size below 1.

    Examples
    --------
    >>> round(population_uniques([1, 1, 1, 2, 2, 3, 5, 8], 0.5, "zayatz"), 4)
    0.0636
    >>> population_uniques([1, 2], 0.5, "pitmann")
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ParameterError: Unknown estimator 'pitmann'. Did you mean 'pitman'? Choose one of 'pitman', 'zayatz', 'snb', 'dankar'.
    """
    name = _estimator_name(estimator)
    sample = _Sample.of(sizes, sampling_fraction)
    if sample.c1 == 0:
        return 0.0
    if name == "pitman":
        return _pitman(sample)
    if name == "zayatz":
        return _zayatz(sample)
    if name == "snb":
        return _snb(sample)
    if sample.f <= DANKAR_PITMAN_FRACTION:
        pitman = _pitman(sample)
        return pitman if pitman is not None else _zayatz(sample)
    zayatz, snb = _zayatz(sample), _snb(sample)
    return zayatz if snb is None or (zayatz is not None and zayatz < snb) else snb


def _estimator_name(estimator: object) -> str:
    names = (*ESTIMATORS, "dankar")
    if isinstance(estimator, str) and estimator in names:
        return estimator
    choices = ", ".join(repr(n) for n in names)
    raise ParameterError(
        f"Unknown estimator {estimator!r}.{did_you_mean(str(estimator), names)} Choose one of {choices}."
    )


def _dankar_choice(f: float, pitman: float | None, zayatz: float | None, snb: float | None) -> str:
    """ARX's ``getNumUniqueTuplesDankar``: the estimator Dankar's rule picks."""
    if f <= DANKAR_PITMAN_FRACTION:
        return "pitman" if pitman is not None else "zayatz"
    if snb is None or (zayatz is not None and zayatz < snb):
        return "zayatz"
    return "snb"


@dataclass(frozen=True)
class _Sample:
    """A sample as the estimators see it: the histogram of class sizes and the population."""

    size_values: npt.NDArray[np.float64]  # distinct class sizes, ascending
    size_counts: npt.NDArray[np.float64]  # number of classes of each size
    n: float  # records in the sample
    u: float  # classes in the sample
    population: float  # N
    f: float  # n / N
    c1: float  # classes of size 1
    c2: float  # classes of size 2

    @classmethod
    def of(cls, sizes: npt.ArrayLike, sampling_fraction: float) -> _Sample:
        fraction = check_fraction(sampling_fraction, "sampling_fraction", low_open=True)
        array = np.asarray(sizes, dtype=np.int64).ravel()
        if array.size and int(array.min()) < 1:
            raise ParameterError(
                f"Class sizes must be >= 1; got {int(array.min())} among the sizes."
            )
        values, counts = np.unique(array, return_counts=True)
        n = float(array.sum())
        population = float(population_size(int(n), fraction)) if n else 0.0
        return cls(
            size_values=values.astype(np.float64),
            size_counts=counts.astype(np.float64),
            n=n,
            u=float(array.size),
            population=population,
            f=n / population if population else fraction,
            c1=float(counts[values == 1].sum()),
            c2=float(counts[values == 2].sum()),
        )


def _accepted(equations: _Equations, root: npt.NDArray[np.float64], scale: Sequence[float]) -> bool:
    residual = np.abs(equations(root))
    return bool(
        np.all(np.isfinite(residual)) and np.all(residual <= _TOLERANCE * np.maximum(scale, 1.0))
    )


def _solve(
    equations: _Equations,
    starts: Sequence[Sequence[float]],
    scale: Sequence[float],
    estimate: Callable[[npt.NDArray[np.float64]], float | None],
) -> float | None:
    """The estimate at the first root of ``equations`` (tried from each starting point in
    turn) that solves them and gives an admissible estimate; None where there is none."""
    from scipy import optimize  # (here: importing scipy takes a second)

    def guarded(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        try:  # a step outside the equations' domain (a division by 0, an overflow)
            return equations(x)
        except (ZeroDivisionError, OverflowError, ValueError):
            return np.array([np.nan, np.nan])

    for start in starts:
        with np.errstate(all="ignore"):
            found = optimize.root(guarded, np.asarray(start, dtype=np.float64), method="hybr")
            if _accepted(guarded, found.x, scale):
                value = estimate(np.asarray(found.x, dtype=np.float64))
                if value is not None:
                    return value
    return None


def _pitman(sample: _Sample) -> float | None:
    """Hoshino (2001), section 3: the maximum-likelihood ``theta``, ``alpha`` of Pitman's formula.

    The log-likelihood of a sample with ``u`` classes, ``n`` records and ``c_j`` classes of
    size ``j`` is ``sum_{i<u} log(theta + i alpha) - sum_{i<n} log(theta + i) +
    sum_j c_j sum_{i<j} log(i - alpha)``; its two derivatives are set to zero, the sums
    written with the digamma function. Admissible, as in ARX's ``ModelPitman``: ``theta >= 0``,
    ``alpha < 1`` and not 0 (a negative ``alpha`` is Pitman's model with finitely many classes),
    and an estimate of uniques above 0 and at most ``N``.
    """
    from scipy import special  # (here: importing scipy takes a second)

    u, n, c1 = sample.u, sample.n, sample.c1
    if u < 2:
        return None
    values, counts = sample.size_values, sample.size_counts

    def equations(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        theta, alpha = float(x[0]), float(x[1])
        ratio = theta / alpha
        upper, lower = special.digamma(u + ratio), special.digamma(ratio + 1.0)
        d_theta = (upper - lower) / alpha - (
            special.digamma(n + theta) - special.digamma(theta + 1.0)
        )
        by_class = counts * (special.digamma(values - alpha) - special.digamma(1.0 - alpha))
        d_alpha = (alpha * (u - 1.0) - theta * upper + theta * lower) / alpha**2 - float(
            by_class.sum()
        )
        return np.array([d_theta, d_alpha])

    # ARX's ModelPitman starting point (moment-style guess from c1, c2, u and n).
    c2 = sample.c2 if sample.c2 else 1.0
    c = c1 * (c1 - 1.0) / c2
    denominator = 2.0 * c1 * u + c1 * c - n * c
    theta0 = (n * u * c - c1 * (n - 1.0) * (2.0 * u + c)) / denominator if denominator else 1.0
    alpha0 = (theta0 * (c1 - n) + (n - 1.0) * c1) / (n * u)
    starts = [(theta0, alpha0), (1.0, 0.5), (u, 0.5), (u, 0.9), (10.0 * u, 0.1)]
    population = sample.population

    def estimate(root: npt.NDArray[np.float64]) -> float | None:
        theta, alpha = float(root[0]), float(root[1])
        if not (theta >= 0.0 and alpha < 1.0 and alpha != 0.0):
            return None
        log_uniques = (
            special.gammaln(theta + 1.0)
            - special.gammaln(theta + alpha)
            + alpha * np.log(population)
        )
        uniques = float(np.exp(log_uniques))
        return (
            uniques / population if np.isfinite(uniques) and 0.0 < uniques <= population else None
        )

    # each equation sums about u terms: its residual is judged against u
    return _solve(equations, [s for s in starts if np.isfinite(s).all()], (u, u), estimate)


def _zayatz(sample: _Sample) -> float | None:
    """Zayatz (1991): the share of sample uniques that are population uniques.

    ``P(unique in population | unique in sample) = (c1/u) h(1; N, 1, n) /
    sum_j (c_j/u) h(1; N, j, n)`` with ``h(1; N, j, n)`` the hypergeometric probability of
    drawing one of ``j`` marked records in ``n`` draws out of ``N``; the population uniques are
    ``c1 * P / f``.
    """
    from scipy import stats  # (here: importing scipy takes a second)

    population, n = int(sample.population), int(sample.n)
    draws = stats.hypergeom.pmf(1, population, sample.size_values, n)
    total = float((sample.size_counts * draws).sum())
    if not total > 0.0:
        return None
    conditional = sample.c1 * float(stats.hypergeom.pmf(1, population, 1, n)) / total
    uniques = sample.c1 * conditional / sample.f
    share = uniques / sample.population
    return share if np.isfinite(share) and share > 0.0 else None


def _shlosser_classes(sample: _Sample) -> float:
    """Haas & Stokes (1998), equation 4.6: the Shlosser estimate of the non-empty classes.

    ``K = u + c1 * [sum_j j f^2 (1-f^2)^(j-1) c_j / sum_j ((1-f)^j ((1+f)^j - 1)) c_j] *
    [sum_j (1-f)^j c_j / sum_j j f (1-f)^(j-1) c_j]^2``.
    """
    f, j, c = sample.f, sample.size_values, sample.size_counts
    q = 1.0 - f
    numerator = float((j * f * f * (1.0 - f * f) ** (j - 1.0) * c).sum())
    denominator = float((q**j * ((1.0 + f) ** j - 1.0) * c).sum())
    outer = float((q**j * c).sum()) / float((j * f * q ** (j - 1.0) * c).sum())
    if denominator <= 0.0:
        return sample.u
    return sample.u + sample.c1 * numerator / denominator * outer**2


def _snb(sample: _Sample) -> float | None:
    """Chen & Keller-McNulty (1998), section 2: the slide negative binomial model.

    With population class sizes ``1 + X``, ``X ~ NB(alpha, beta)`` and each record sampled
    with probability ``f``, ``d = (1-f)(1-beta)``:
    ``E[c1] = K f (beta/(1-d))^alpha (1 + alpha d/(1-d))`` and
    ``E[c2] = K f^2 alpha (1-beta) beta^alpha (2 - (1-alpha) d) / (2 (1-d)^(alpha+2))``.
    ``alpha`` and ``beta`` solve ``E[c1] = c1, E[c2] = c2``; the population uniques are
    ``K beta^alpha``. Solved for ``log alpha`` and ``logit beta`` so that every root is
    admissible (``alpha > 0``, ``0 < beta < 1``).
    """
    from scipy import special  # (here: importing scipy takes a second)

    if sample.f >= 1.0:
        return sample.c1 / sample.population
    k, f, c1, c2 = _shlosser_classes(sample), sample.f, sample.c1, sample.c2

    def equations(x: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        alpha, beta = float(np.exp(x[0])), float(special.expit(x[1]))
        d = (1.0 - f) * (1.0 - beta)
        one = k * f * (beta / (1.0 - d)) ** alpha * (1.0 + alpha * d / (1.0 - d)) - c1
        two = (
            k
            * f
            * f
            * alpha
            * (1.0 - beta)
            * beta**alpha
            * (2.0 - (1.0 - alpha) * d)
            / (2.0 * (1.0 - d) ** (alpha + 2.0))
            - c2
        )
        return np.array([one, two])

    starts = [
        (np.log(a), special.logit(b))
        for a in (1.0, 0.1, 10.0, 0.01)
        for b in (0.5, 0.1, 0.9, 0.01, 0.99)
    ]
    population = sample.population

    def estimate(root: npt.NDArray[np.float64]) -> float | None:
        uniques = k * float(special.expit(root[1])) ** float(np.exp(root[0]))
        return (
            uniques / population if np.isfinite(uniques) and 0.0 < uniques <= population else None
        )

    return _solve(equations, starts, (c1, c2), estimate)
