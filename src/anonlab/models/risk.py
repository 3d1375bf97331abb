"""Risk-based privacy models: average re-identification risk, sample and population
uniqueness, k-map (estimated or with a population table), delta-presence.

Definitions follow ARX 3.9 (``org.deidentifier.arx.criteria``):

* ``AverageReidentificationRisk`` and ``SampleUniqueness`` are *sample-based* criteria: they
  judge the table that is left once the classes failing the class-based criteria are
  suppressed, and ARX suppresses further classes, smallest first, until the rest satisfies
  them (``RiskBasedCriterion.enforce``, a binary search over how many of the smallest
  classes to suppress, ``HashGroupifyDistribution.suppressWhileNotFulfilledBinary``).
  :class:`SampleBasedModel` does the same search.
* ``KMap`` estimated with a population model is k-anonymity with a smaller ``k'`` derived
  from the sampling fraction and a significance level (``KMap.calculateKPoisson`` and
  ``calculateKZeroPoisson``).
* ``KMap`` with a ``DataSubset`` and ``DPresence`` judge each class of the released sample
  against the population table it is part of: its population records
  (:attr:`~anonlab.data.stats.ClassStats.population_sizes`) at least ``k``, and the share of
  them in the sample within ``[dmin, dmax]``.

References
----------
.. [1] F. Prasser, F. Kohlmayer, "Putting statistical disclosure control into practice: the
   ARX data anonymization tool", in Medical Data Privacy Handbook, Springer, 2015.
.. [2] K. El Emam, "Guide to the de-identification of personal health information", CRC
   Press, 2013 (average risk, k-map and its estimation with a Poisson model).
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._validation import Param, did_you_mean
from anonlab.data.population import Population
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedTable
from anonlab.exceptions import ParameterError
from anonlab.models.base import ClassRule, PrivacyModel
from anonlab.models.k_anonymity import k_anonymity_rule
from anonlab.risk.population import (
    DANKAR_PITMAN_FRACTION,
    ESTIMATORS,
    population_size,
    population_uniques,
)

__all__ = [
    "AverageRisk",
    "DeltaPresence",
    "KMap",
    "PopulationUniquenessModel",
    "SampleBasedModel",
    "SampleUniqueness",
    "estimated_k",
    "population_sizes",
    "size_threshold",
]

#: A risk threshold: a share of records or a probability, ``0 < x <= 1``.
_RISK = Param(float, low=0, high=1, low_open=True)
#: A share of records that may be at risk, ``0 <= x <= 1``.
_SHARE = Param(float, low=0, high=1)
#: ARX's relative precision of a risk threshold read as a class size
#: (``ParameterTranslation.RELATIVE_THRESHOLD_PRECISION``).
_PRECISION = 0.01


def size_threshold(risk: float) -> int:
    """The smallest class size whose re-identification risk ``1/size`` is at most ``risk``.

    ARX's ``ParameterTranslation.getSizeThreshold``: ``floor(1/risk)``, plus one when
    ``1/floor(1/risk)`` exceeds ``risk`` by 1 % of ``risk`` or more (so 0.2 gives 5 and
    0.3 gives 4, since 1/3 is 11 % above 0.3).

    Parameters
    ----------
    risk : float
        ``0 < risk <= 1``.

    Returns
    -------
    int

    Examples
    --------
    >>> size_threshold(0.2), size_threshold(0.3), size_threshold(1.0)
    (5, 4, 1)
    """
    size = 1.0 / risk
    floor = math.floor(size)
    if (1.0 / floor) - (1.0 / size) >= _PRECISION * risk:
        floor += 1
    return int(floor)


class SampleBasedModel(PrivacyModel):
    """A model judged on the whole table left after the class-based models' suppression.

    :meth:`fulfilled` says whether a table of classes of the given sizes satisfies the
    model; :meth:`enforce` suppresses the smallest classes (ties by class order) until the
    rest does, with ARX's binary search over how many to suppress
    (``HashGroupifyDistribution.suppressWhileNotFulfilledBinary``); for a model whose
    verdict can only improve as the smallest classes go (average risk, sample uniqueness),
    that is the fewest smallest classes that make it hold. An empty table satisfies it.
    :meth:`class_ok` is that verdict on the table alone (no class suppressed before): every
    class passes when the table satisfies the model.

    Examples
    --------
    >>> import numpy as np
    >>> class AtMostTwoClasses(SampleBasedModel):
    ...     name = "at_most_two_classes"
    ...     def fulfilled(self, sizes, n_rows):
    ...         return sizes.size <= 2
    >>> stats = ClassStats(("zip",), (0,), np.array([4, 1, 2]), 7)
    >>> AtMostTwoClasses().class_ok(stats).tolist(), AtMostTwoClasses().holds(stats)
    ([True, False, True], False)
    """

    sample_based = True
    union_unsafe = "it judges the whole table, which a block does not see"

    def fulfilled(self, sizes: npt.NDArray[np.int64], n_rows: int) -> bool:  # pragma: no cover
        """Whether the classes of ``sizes`` records left of a table of ``n_rows`` records
        satisfy the model."""
        raise NotImplementedError

    def enforce(self, stats: ClassStats, failing: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """``failing`` and the smallest classes left that must go for the rest to satisfy
        the model (ARX's binary search).

        Examples
        --------
        >>> import numpy as np
        >>> from anonlab import EncodedTable
        >>> from anonlab.api import open_engine
        >>> t = EncodedTable.from_columns({"zip": ["1", "1", "1", "2", "3"]})
        >>> stats = open_engine(t).class_stats(["zip"])
        >>> SampleUniqueness(0.3).enforce(stats, np.zeros(3, dtype=bool)).tolist()
        [False, True, False]
        """
        out = np.array(failing, dtype=bool)
        kept = np.flatnonzero(~out)
        order = kept[np.argsort(stats.sizes[kept], kind="stable")]
        sizes = np.asarray(stats.sizes[order], dtype=np.int64)
        out[order[: self._suppressed(sizes, int(stats.n_rows))]] = True
        return out

    def _suppressed(self, sizes: npt.NDArray[np.int64], n_rows: int) -> int:
        """How many of the classes of ``sizes`` (ascending) ARX's search suppresses."""
        if sizes.size == 0 or self.fulfilled(sizes, n_rows):
            return 0
        low, high = 0, int(sizes.size) - 1
        mid = (low + high) // 2
        ok = False
        while low <= high:  # ``mid + 1`` classes suppressed
            ok = self.fulfilled(sizes[mid + 1 :], n_rows)
            if ok:
                high = mid - 1
            else:
                low = mid + 1
            mid = int((low + high) / 2)  # Java's division: -1 / 2 == 0
        if not self.fulfilled(sizes[mid + 1 :], n_rows) and mid + 1 < sizes.size:
            return mid + 2
        return mid + 1

    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """Per class, whether it is kept when the model is enforced on the table alone."""
        return ~self.enforce(stats, np.zeros(stats.n_classes, dtype=bool))

    def holds(self, stats: ClassStats) -> bool:
        """Whether the table satisfies the model (no class needs suppressing)."""
        return self.fulfilled(np.asarray(stats.sizes, dtype=np.int64), int(stats.n_rows))


class AverageRisk(SampleBasedModel):
    """Average re-identification risk: the table's average prosecutor risk is at most a
    threshold (ARX ``AverageReidentificationRisk``).

    A table of ``n`` records in ``c`` classes has average risk ``c / n`` (each record's risk
    ``1/|E|`` averaged over the records; ARX: one over the average class size). With
    ``highest_risk`` and ``records_at_risk`` (both or neither), it also bounds the share of
    records in classes smaller than ``size_threshold(highest_risk)`` (those whose risk exceeds
    the highest risk) by ``records_at_risk``. Judged after the class-based models'
    suppression, suppressing the smallest classes first (:class:`SampleBasedModel`).

    Parameters
    ----------
    threshold : float
        The largest average risk, ``0 < threshold <= 1``.
    highest_risk : float, optional
        The risk above which a record is at risk, ``0 < highest_risk <= 1``.
    records_at_risk : float, optional
        The largest share of records at risk, ``0 <= records_at_risk <= 1``.

    Raises
    ------
    ParameterError
        If a parameter is out of range, or only one of ``highest_risk`` and
        ``records_at_risk`` is given.

    Notes
    -----
    *Monotonicity.* Under generalization: yes (merging classes lowers ``c`` and keeps
    ``n``; a merged class is at least as large as its parts, and records at risk only
    leave the small classes). Under suppression: yes for the average alone (suppressing
    the smallest class, no larger than the average, never raises it); **no** with
    ``records_at_risk``, although ARX declares it monotonic: in a table of classes of 4, 1
    and 1 records with threshold 0.5, highest risk 0.34 (classes below 3 records at risk)
    and 20 % at risk, one suppressed unique is enough, but merging the two uniques into a
    class of 2 leaves 2 records at risk that must all go (found by the property test of
    the optimal search against brute force). The optimal search then evaluates the nodes
    as for other non-monotonic models.

    *Value.* :meth:`value` is the average risk ``c / n`` of the table (0 when empty).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["1", "1", "1", "2", "3"]})
    >>> stats = open_engine(t).class_stats(["zip"])
    >>> AverageRisk(0.5).value(stats), AverageRisk(0.5).holds(stats)
    (0.6, False)
    >>> AverageRisk(0.5).class_ok(stats).tolist()  # one unique suppressed: 2 classes, 4 rows
    [True, False, True]
    """

    name = "average_risk"
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "threshold": _RISK,
        "highest_risk": _RISK,
        "records_at_risk": _SHARE,
    }
    monotonic_generalization = True
    monotonic_suppression = True

    def __init__(
        self,
        threshold: float,
        highest_risk: float | None = None,
        records_at_risk: float | None = None,
    ) -> None:
        self.threshold: float = self._checked("threshold", threshold)
        if (highest_risk is None) != (records_at_risk is None):
            raise ParameterError(
                "Model 'average_risk' takes 'highest_risk' and 'records_at_risk' together "
                f"(got highest_risk={highest_risk!r}, records_at_risk={records_at_risk!r})."
            )
        self.highest_risk: float | None = (
            None if highest_risk is None else self._checked("highest_risk", highest_risk)
        )
        self.records_at_risk: float | None = (
            None if records_at_risk is None else self._checked("records_at_risk", records_at_risk)
        )
        self.monotonic_suppression = self.highest_risk is None
        self.smallest_size: int = (
            1 if self.highest_risk is None else size_threshold(self.highest_risk)
        )

    def fulfilled(self, sizes: npt.NDArray[np.int64], n_rows: int) -> bool:
        """``1 / (n / c) <= threshold`` and, with a highest risk, the share of records in
        classes below :func:`size_threshold` at most ``records_at_risk`` (ARX's arithmetic)."""
        n = int(sizes.sum())
        if n == 0:
            return True
        if not 1.0 / (n / sizes.size) <= self.threshold:
            return False
        if self.records_at_risk is None:
            return True
        small = sizes[sizes < self.smallest_size]
        if small.size == 0:
            return True
        counts = np.bincount(small)
        s = np.arange(counts.size, dtype=np.float64)
        terms = counts.astype(np.float64) * s / float(n)
        return bool(np.cumsum(terms[1:])[-1] <= self.records_at_risk)

    def value(self, stats: ClassStats) -> float:
        """The average risk ``c / n`` (0.0 for an empty table)."""
        n = int(stats.sizes.sum())
        return stats.n_classes / n if n else 0.0

    def params(self) -> dict[str, Any]:
        """``{"threshold": x}``, with ``highest_risk`` and ``records_at_risk`` when given."""
        out: dict[str, Any] = {"threshold": self.threshold}
        if self.highest_risk is not None:
            out |= {"highest_risk": self.highest_risk, "records_at_risk": self.records_at_risk}
        return out


class SampleUniqueness(SampleBasedModel):
    """Sample uniqueness: the share of records unique in the table is at most a threshold
    (ARX ``SampleUniqueness``).

    Judged after the class-based models' suppression, suppressing uniques (the smallest
    classes) first (:class:`SampleBasedModel`).

    Parameters
    ----------
    threshold : float
        The largest share of sample uniques, ``0 < threshold <= 1``.

    Raises
    ------
    ParameterError
        If ``threshold`` is not in (0, 1].

    Notes
    -----
    *Monotonicity.* Under generalization: yes (a unique of a coarser table was a unique
    before, and the records stay). Under suppression: yes (ARX: suppressing a unique lowers
    the share).

    *Value.* :meth:`value` is the share of records in classes of one record.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["1", "1", "1", "2", "3"]})
    >>> stats = open_engine(t).class_stats(["zip"])
    >>> SampleUniqueness(0.4).value(stats), SampleUniqueness(0.4).holds(stats)
    (0.4, True)
    """

    name = "sample_uniqueness"
    _parameter_constraints: ClassVar[dict[str, Param]] = {"threshold": _RISK}
    monotonic_generalization = True
    monotonic_suppression = True

    def __init__(self, threshold: float) -> None:
        self.threshold: float = self._checked("threshold", threshold)

    def fulfilled(self, sizes: npt.NDArray[np.int64], n_rows: int) -> bool:
        """``uniques / n <= threshold`` (an empty table passes)."""
        n = int(sizes.sum())
        return n == 0 or float(np.count_nonzero(sizes == 1)) / n <= self.threshold

    def value(self, stats: ClassStats) -> float:
        """The share of sample uniques (0.0 for an empty table)."""
        n = int(stats.sizes.sum())
        return float(np.count_nonzero(stats.sizes == 1)) / n if n else 0.0

    def params(self) -> dict[str, Any]:
        """``{"threshold": x}``."""
        return {"threshold": self.threshold}


#: The estimators of population uniqueness (``anonlab.risk.population``) and Dankar's rule.
UNIQUENESS_ESTIMATORS = (*ESTIMATORS, "dankar")


class PopulationUniquenessModel(SampleBasedModel):
    """Population uniqueness: the estimated share of population uniques is at most a
    threshold (ARX ``PopulationUniqueness``).

    The share is estimated from the class sizes of the table that is left (after the
    class-based models' suppression and its own) by the named estimator of
    :func:`anonlab.risk.population.population_uniques` (ARX's
    ``RiskModelPopulationUniqueness.getFractionOfUniqueTuples``): Pitman, Zayatz, SNB, or
    Dankar's rule (ARX's criterion applies the rule without its Zayatz fallback: below a
    sampling fraction of 0.1 a Pitman estimate without a solution fails the table). The
    population size ``N`` is fixed by the whole table (``round(n / sampling_fraction)``, as
    ARX's ``ARXPopulationModel.create(n, f)``) or given; a table left with ``n'`` records is
    a sample of fraction ``n' / N``. (Judging a written release afresh, ``anonlab check
    --release`` takes the release as the table: give ``population_size`` to judge it against
    the same population as the search.) As in ARX, the table passes when the estimate is
    positive and at most ``threshold``, or zero with no sample unique; an estimator
    without a solution fails it.

    Parameters
    ----------
    threshold : float
        The largest estimated share of population uniques, ``0 < threshold <= 1``.
    sampling_fraction : float, optional
        The table's records over the population's, ``0 < f <= 1``.
    population_size : int, optional
        The population's records instead (at least the table's rows); exactly one of the
        two.
    estimator : str
        ``"dankar"`` (default), ``"pitman"``, ``"zayatz"`` or ``"snb"``.

    Raises
    ------
    ParameterError
        If a parameter is out of range, the estimator unknown (with a did-you-mean), both
        or neither of ``sampling_fraction`` and ``population_size`` are given, or (when
        judging) the population is smaller than the table.

    Notes
    -----
    *Monotonicity:* none. ARX declares it monotonic under generalization with Zayatz's
    estimator, but it is not: with a sampling fraction of 0.2, classes of 1, 2 and 3
    records have a Zayatz estimate of 0.0355, and after merging the classes of 2 and 3 (1
    and 5 records) 0.0515 (found by the property test of the optimal search against brute
    force). Under suppression it is not either (ARX agrees). The optimal search therefore
    evaluates the nodes as it does for other non-monotonic models.

    *Value.* :meth:`value` is the estimate on the whole table (None: no solution).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": list("aaabbbbccd")})
    >>> stats = open_engine(t).class_stats(["zip"])
    >>> m = PopulationUniquenessModel(0.02, sampling_fraction=0.5, estimator="zayatz")
    >>> round(m.value(stats), 4), m.holds(stats)
    (0.03, False)
    >>> m.class_ok(stats).tolist()  # the unique 'd' suppressed: no sample unique is left
    [True, True, True, False]
    """

    name = "population_uniqueness"
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "threshold": _RISK,
        "sampling_fraction": _RISK,
        "population_size": Param(int, low=1),
        "estimator": Param(str, choices=UNIQUENESS_ESTIMATORS),
    }

    def __init__(
        self,
        threshold: float,
        sampling_fraction: float | None = None,
        population_size: int | None = None,
        estimator: str = "dankar",
    ) -> None:
        self.threshold: float = self._checked("threshold", threshold)
        if (sampling_fraction is None) == (population_size is None):
            raise ParameterError(
                "Model 'population_uniqueness' takes exactly one of 'sampling_fraction' and "
                f"'population_size' (got sampling_fraction={sampling_fraction!r}, "
                f"population_size={population_size!r})."
            )
        self.sampling_fraction: float | None = (
            None
            if sampling_fraction is None
            else self._checked("sampling_fraction", sampling_fraction)
        )
        self.population_size: int | None = (
            None if population_size is None else self._checked("population_size", population_size)
        )
        self.estimator: str = _checked_choice(self, "estimator", estimator)

    def population(self, n_rows: int) -> int:
        """The population size for a table of ``n_rows`` records.

        Raises
        ------
        ParameterError
            If ``population_size`` is below ``n_rows``.
        """
        if self.population_size is None:
            assert self.sampling_fraction is not None
            return population_size(n_rows, self.sampling_fraction)
        if self.population_size < n_rows:
            raise ParameterError(
                f"The 'population_size' parameter of model 'population_uniqueness' "
                f"({self.population_size:,}) is below the table's {n_rows:,} rows."
            )
        return self.population_size

    def estimate(self, sizes: npt.NDArray[np.int64], n_rows: int) -> float | None:
        """The estimated share of population uniques of the classes ``sizes`` left of a table
        of ``n_rows`` records (None: the estimator has no solution)."""
        n = int(sizes.sum())
        if n == 0:
            return 0.0
        fraction = n / self.population(n_rows)
        estimator = self.estimator
        if estimator == "dankar" and fraction <= DANKAR_PITMAN_FRACTION:
            estimator = "pitman"  # ARX's criterion: Dankar's rule without the Zayatz fallback
        try:
            return population_uniques(sizes, fraction, estimator)
        except ArithmeticError:  # a solver that breaks down has no solution: the table fails
            return None

    def fulfilled(self, sizes: npt.NDArray[np.int64], n_rows: int) -> bool:
        """ARX's ``PopulationUniqueness.isFulfilled``: a positive estimate at most the
        threshold, or zero without a sample unique; an empty table passes."""
        if int(sizes.sum()) == 0:
            return True
        value = self.estimate(sizes, n_rows)
        if value is None:
            return False
        if value > 0.0:
            return value <= self.threshold
        return value == 0.0 and not bool(np.any(sizes == 1))

    def value(self, stats: ClassStats) -> float | None:  # type: ignore[override]
        """The estimate on the whole table (None where the estimator has no solution)."""
        return self.estimate(np.asarray(stats.sizes, dtype=np.int64), int(stats.n_rows))

    def params(self) -> dict[str, Any]:
        """The threshold, the sampling fraction or population size, the estimator."""
        out: dict[str, Any] = {"threshold": self.threshold}
        if self.sampling_fraction is not None:
            out["sampling_fraction"] = self.sampling_fraction
        else:
            out["population_size"] = self.population_size
        return out | {"estimator": self.estimator}


#: The cell-size distributions k-map can be estimated with (ARX ``KMap.CellSizeEstimator``).
KMAP_ESTIMATORS = ("poisson", "zero_truncated_poisson")


def estimated_k(k: int, sampling_fraction: float, significance: float, estimator: str) -> int:
    """The k' of k-anonymity that gives k-map in the population (ARX's ``KMap``).

    A class of ``k'`` sample records is taken to stand for at least ``k`` population records
    when its population size, modelled by a Poisson distribution of mean
    ``lambda = sampling_fraction * k`` (or a zero-truncated one), reaches the confidence
    ``1 - significance``: ARX's ``calculateKPoisson`` and ``calculateKZeroPoisson``
    (with their counting, kept as is), capped at ``k``.

    Parameters
    ----------
    k : int
        The k of k-map, ``k >= 1``.
    sampling_fraction : float
        Sample records over population records, ``0 < f <= 1``.
    significance : float
        The accepted probability of a type-I error, ``0 <= significance <= 1``.
    estimator : str
        ``"poisson"`` or ``"zero_truncated_poisson"``.

    Returns
    -------
    int

    Examples
    --------
    >>> estimated_k(10, 0.01, 0.01, "poisson"), estimated_k(100, 0.1, 0.01, "poisson")
    (3, 20)
    >>> estimated_k(100, 0.1, 0.01, "zero_truncated_poisson")
    19
    """
    from scipy.stats import poisson

    lam = sampling_fraction * k
    threshold = 1.0 - significance
    dist = poisson(lam)
    if estimator == "poisson":
        counter, value = 0, 0.0
        while value < threshold:
            value = float(dist.cdf(counter))
            counter += 1
            if counter >= k:
                break
        derived = counter + 1
    else:
        v2 = 1.0 - float(dist.pmf(0))
        counter, value = 1, 0.0
        while value < threshold:
            value += float(dist.pmf(counter)) / v2
            counter += 1
            if counter >= k:
                break
        derived = counter
    return min(k, derived)


def _checked_choice(model: PrivacyModel, name: str, value: object) -> str:
    """``model._checked(name, value)``, with a did-you-mean for a misspelt choice."""
    try:
        return str(model._checked(name, value))
    except ParameterError as exc:
        choices = model._parameter_constraints[name].choices or ()
        hint = did_you_mean(value, [str(c) for c in choices]) if isinstance(value, str) else ""
        raise ParameterError(f"{exc}{hint}") from None


def _population_of(model: str, population: object) -> Population:
    """``population`` as a :class:`~anonlab.data.population.Population` (an
    :class:`~anonlab.data.table.EncodedTable` is wrapped), or a one-line error."""
    if isinstance(population, Population):
        return population
    if isinstance(population, EncodedTable):
        return Population(population)
    raise ParameterError(
        f"The 'population' parameter of model {model!r} must be a population table (a "
        f"Population or an EncodedTable; a job names it with 'population: FILE'). Got "
        f"{type(population).__name__}."
    )


def population_sizes(model: PrivacyModel, stats: ClassStats) -> npt.NDArray[np.int64]:
    """The population records of each class of ``stats``, which a model with a population
    table reads.

    Raises
    ------
    ParameterError
        If the statistics were computed without the population.
    """
    if stats.population_sizes is None:
        raise ParameterError(
            f"Model {model.name!r} judges classes against a population table, but these class "
            "statistics hold no population records (ClassStats.population_sizes: count them "
            "with anonlab.data.stats.count_population)."
        )
    return np.asarray(stats.population_sizes, dtype=np.int64)


class KMap(PrivacyModel):
    """k-map: every class stands for at least ``k`` records of the population (ARX ``KMap``),
    counted in a population table or estimated with a population model.

    *With a population table* (``population``; ARX's ``KMap(k, DataSubset)``): the released
    table is a sample of the population table, and a class passes when the population holds
    at least ``k`` records with its generalized key (ARX: ``pcount >= k``), counted on the
    same generalization (:attr:`ClassStats.population_sizes`).

    *Estimated* (``sampling_fraction``; ARX's ``KMap`` with a ``CellSizeEstimator``): without
    the population table, the population size of a class is modelled from the sampling
    fraction (Poisson or zero-truncated Poisson, :func:`estimated_k`): a class of at least
    ``k'`` sample records reaches ``k`` population records with confidence
    ``1 - significance``. The model is k-anonymity with that ``k'`` (ARX replaces it so).

    Parameters
    ----------
    k : int
        The k of k-map, ``k >= 1``.
    sampling_fraction : float, optional
        The table's records over the population's, ``0 < f <= 1`` (estimated k-map).
    significance : float
        The accepted probability that a class is smaller than ``k`` in the population,
        ``0 <= significance <= 1`` (default 0.01; estimated k-map).
    estimator : str
        ``"poisson"`` (default) or ``"zero_truncated_poisson"`` (estimated k-map).
    population : Population or EncodedTable, optional
        The population table instead of ``sampling_fraction`` (exactly one of the two).

    Raises
    ------
    ParameterError
        If a parameter is out of range or the estimator unknown (naming the valid ones), or
        both or neither of ``sampling_fraction`` and ``population`` are given.

    Notes
    -----
    *Monotonicity.* Estimated: as k-anonymity with ``k'``, under generalization and
    suppression. ARX also caps ``k'`` at the number of records; anonlab does not (a table
    smaller than ``k'`` satisfies it only when fully suppressed). With a population table:
    under generalization (a coarser class holds every population record of its parts) and
    under suppression (a class's verdict is its own), as ARX declares it.

    *Value.* :meth:`value` is the smallest class size (estimated; compare with
    :attr:`derived_k`) or the smallest population count of a class (with a population
    table; compare with ``k``).

    Examples
    --------
    >>> m = KMap(10, sampling_fraction=0.1)
    >>> m.derived_k, m.min_class_size
    (6, 6)
    >>> KMap(10, sampling_fraction=0.1, estimator="poison")
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ParameterError: The 'estimator' parameter of KMap must be one of 'poisson', 'zero_truncated_poisson'. Got 'poison' instead. Did you mean 'poisson'?

    With a population table, the population's records of each class count:

    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> from anonlab.data.stats import count_population
    >>> pop = EncodedTable.from_columns({"zip": ["1"] * 4 + ["2"] * 2})
    >>> sample = EncodedTable.from_columns({"zip": ["1", "2"]})
    >>> stats = count_population(open_engine(sample).class_stats(["zip"]),
    ...                          open_engine(pop).class_stats(["zip"]), name="pop")
    >>> m = KMap(3, population=pop)
    >>> m.class_ok(stats).tolist(), m.value(stats), m.min_class_size
    ([True, False], 2, 1)
    """

    name = "k_map"
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "k": Param(int, low=1),
        "sampling_fraction": _RISK,
        "significance": _SHARE,
        "estimator": Param(str, choices=KMAP_ESTIMATORS),
    }
    monotonic_generalization = True
    monotonic_suppression = True
    union_safe: str | None = "class sizes add up"

    def __init__(
        self,
        k: int,
        sampling_fraction: float | None = None,
        significance: float = 0.01,
        estimator: str = "poisson",
        population: Population | EncodedTable | None = None,
    ) -> None:
        self.k: int = self._checked("k", k)
        if sampling_fraction is None and population is None:
            raise ParameterError(
                "Model 'k_map' needs parameter 'sampling_fraction' (k-map estimated with a "
                "population model) or a population table (the job's 'population: FILE')."
            )
        if sampling_fraction is not None and population is not None:
            raise ParameterError(
                "Model 'k_map' takes 'sampling_fraction' (k-map estimated with a population "
                "model) or a population table, not both."
            )
        self.significance: float = self._checked("significance", significance)
        self.estimator: str = _checked_choice(self, "estimator", estimator)
        self.sampling_fraction: float | None = None
        if population is not None:
            self.population_table = _population_of(self.name, population)
            self.derived_k: int = 1
            # a class's population count depends on the population rows of every block
            self.union_safe = None
            self.union_unsafe = "a class's population records are counted in the whole table"
        else:
            self.sampling_fraction = self._checked("sampling_fraction", sampling_fraction)
            self.derived_k = estimated_k(
                self.k, self.sampling_fraction, self.significance, self.estimator
            )

    @classmethod
    def wants_population(cls, params: dict[str, Any]) -> bool:
        """Without ``sampling_fraction``, k-map counts the population table."""
        return "sampling_fraction" not in params

    @property
    def min_class_size(self) -> int:
        """The derived ``k'`` (1 with a population table: ARX sets none)."""
        return self.derived_k

    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """Return ``sizes >= k'`` per class, or with a population table, the population's
        records of the class ``>= k``."""
        if self.population_table is not None:
            return np.asarray(population_sizes(self, stats) >= self.k, dtype=bool)
        return np.asarray(stats.sizes >= self.derived_k, dtype=bool)

    def class_rule(self) -> ClassRule | None:
        """k-anonymity's rule with ``(k',)`` (None for a subclass or with a population
        table)."""
        if type(self) is not KMap or self.population_table is not None:
            return None
        return ClassRule(k_anonymity_rule, (float(self.derived_k),))

    def value(self, stats: ClassStats) -> int:
        """The smallest class size (compare with :attr:`derived_k`), or with a population
        table the smallest population count of a class (compare with ``k``); 0 if empty."""
        if self.population_table is not None:
            sizes = population_sizes(self, stats)
            return int(sizes.min()) if sizes.size else 0
        return stats.min_size

    def params(self) -> dict[str, Any]:
        """The four parameters of estimated k-map; ``k`` and the population table's name."""
        if self.population_table is not None:
            return {"k": self.k, "population": self.population_table.name}
        return {
            "k": self.k,
            "sampling_fraction": self.sampling_fraction,
            "significance": self.significance,
            "estimator": self.estimator,
        }


class DeltaPresence(PrivacyModel):
    """delta-presence: the probability that a population record is in the released sample,
    given the release, lies within ``[dmin, dmax]`` (Nergiz, Atzori & Clifton 2007; ARX
    ``DPresence``).

    The released table is a sample of a population table; a population record of class ``E``
    is in the sample with probability ``delta = (sample records of E) / (population records
    of E)`` (ARX: ``count / pcount``), counted on the same generalization
    (:attr:`ClassStats.population_sizes`). A class passes when ``dmin <= delta <= dmax``.
    With ``dmin > 0``, population records in a class that holds no sample record (delta 0)
    fail too, and no suppression of sample records can repair them: every class then fails
    (ARX fails such a transformation; it ignores those classes when another model sets a
    minimal class size, anonlab does not).

    Parameters
    ----------
    dmin, dmax : float
        The bounds, ``0 <= dmin <= dmax <= 1``.
    population : Population or EncodedTable
        The population table (a job names it with ``population: FILE``).

    Raises
    ------
    ParameterError
        If a bound is outside [0, 1], ``dmin > dmax``, or the population table is missing.

    Notes
    -----
    *Monotonicity.* Under generalization, without suppression: yes. A merged class's delta
    is the mediant of its parts' (sample records over population records, summed), so it
    lies between their deltas; and a node without a population-only class has no coarser
    one either (Nergiz et al. rely on it for their full-domain search; ARX declares
    ``DPresence(dmin, dmax, subset)`` monotonic with generalization). Under suppression: no
    (ARX agrees): a class suppressed for a delta above ``dmax`` merges with a passing class
    into a failing one, so a coarser node may suppress more records than the limit. With a
    suppression limit the optimal and Incognito searches therefore evaluate the nodes as for
    other non-monotonic models; without one they prune as for k-anonymity.

    *Value.* :meth:`value` is the largest delta of a class (0 for an empty table).

    References
    ----------
    .. [1] M. E. Nergiz, M. Atzori, C. Clifton, "Hiding the presence of individuals from
       shared databases", SIGMOD 2007, section 3 (definition 3.2).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> from anonlab.data.stats import count_population
    >>> pop = EncodedTable.from_columns({"zip": ["1"] * 4 + ["2"] * 2})
    >>> sample = EncodedTable.from_columns({"zip": ["1", "2", "2"]})
    >>> stats = count_population(open_engine(sample).class_stats(["zip"]),
    ...                          open_engine(pop).class_stats(["zip"]), name="pop")
    >>> m = DeltaPresence(0.2, 0.5, population=pop)
    >>> m.class_ok(stats).tolist(), m.value(stats)
    ([True, False], 1.0)
    >>> DeltaPresence(0.6, 0.5, population=pop)
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ParameterError: Model 'delta_presence' needs dmin <= dmax. Got dmin=0.6, dmax=0.5.
    """

    name = "delta_presence"
    _parameter_constraints: ClassVar[dict[str, Param]] = {"dmin": _SHARE, "dmax": _SHARE}
    monotonic_generalization = True
    monotonic_suppression = False
    union_unsafe = "a class's population records are counted in the whole table"

    def __init__(
        self, dmin: float, dmax: float, population: Population | EncodedTable | None = None
    ) -> None:
        self.dmin: float = self._checked("dmin", dmin)
        self.dmax: float = self._checked("dmax", dmax)
        if self.dmin > self.dmax:
            raise ParameterError(
                f"Model 'delta_presence' needs dmin <= dmax. Got dmin={dmin!r}, dmax={dmax!r}."
            )
        if population is None:
            raise ParameterError(
                "Model 'delta_presence' needs a population table (the table released is a "
                "sample of it): give the job's 'population: FILE'."
            )
        self.population_table = _population_of(self.name, population)

    @classmethod
    def wants_population(cls, params: dict[str, Any]) -> bool:
        """Always: delta-presence is judged against the population table."""
        return True

    def deltas(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """Each class's delta, its sample records over its population records (ARX's
        arithmetic; 0 for a class without population records)."""
        pop = population_sizes(self, stats).astype(np.float64)
        sizes = np.asarray(stats.sizes, dtype=np.float64)
        out = np.zeros(sizes.size, dtype=np.float64)
        np.divide(sizes, pop, out=out, where=(sizes > 0) & (pop > 0))
        return out

    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """``dmin <= delta <= dmax`` per class; every class fails when ``dmin > 0`` and some
        population records are in no class of the sample."""
        delta = self.deltas(stats)
        ok = (delta >= self.dmin) & (delta <= self.dmax)
        if self.dmin > 0 and stats.population_rows is not None:
            assert stats.population_sizes is not None
            if int(stats.population_sizes.sum()) < int(stats.population_rows):
                ok[:] = False
        return np.asarray(ok, dtype=bool)

    def value(self, stats: ClassStats) -> float:
        """The largest delta of a class (0.0 for an empty table)."""
        delta = self.deltas(stats)
        return float(delta.max()) if delta.size else 0.0

    def params(self) -> dict[str, Any]:
        """``dmin``, ``dmax`` and the population table's name."""
        assert self.population_table is not None
        return {"dmin": self.dmin, "dmax": self.dmax, "population": self.population_table.name}
