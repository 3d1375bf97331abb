"""The risk of a sample: its population, the attacker models and the population estimates.

:func:`sample_risk` reads what the engines count (class sizes, weight sums per class, the
population table's classes) and hands the numbers to :mod:`anonlab.risk`. The population a
sample was drawn from is told in one of four ways: a sampling fraction, a population size, a
column of sampling weights (the population is their sum) or a population table (its records
are counted per class of the same quasi-identifiers). Bad input is refused with one line
naming the value.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._validation import check_fraction, check_int
from anonlab.data.stats import count_population
from anonlab.engines.base import AttributeLevels, Engine
from anonlab.exceptions import ColumnNotFoundError, InputError, ParameterError
from anonlab.risk import (
    AttackerRisk,
    PopulationUniqueness,
    WeightedRisk,
    journalist_risk,
    marketer_risk,
    population_uniqueness,
    prosecutor_risk,
    sample_uniqueness,
    weighted_risk,
)
from anonlab.risk import population_size as population_of

__all__ = ["SampleRisk", "sample_risk", "check_population_options"]

#: Individual (Benedetti-Franconi) risk above which a record counts, by default: ARX's 0.2.
WEIGHTED_THRESHOLD = 0.2


@dataclass(frozen=True)
class SampleRisk:
    """The attacker models and, where the population is told, the population estimates.

    Attributes
    ----------
    prosecutor, journalist : AttackerRisk
        Records at risk, highest and average risk under each attacker model.
    marketer : float
        The marketer's expected share of re-identified records.
    sample_uniqueness : float
        Share of the records unique in the sample.
    population_size : int or None
        The population's records, when told (``round(n / f)`` from a sampling fraction).
    sampling_fraction : float or None
        ``n / N`` for that population.
    population_uniqueness : PopulationUniqueness or None
        Pitman, Zayatz, SNB and Dankar's estimate of the share of population uniques.
    weighted : WeightedRisk or None
        The Benedetti-Franconi risk, with a weight column.
    weight : str or None
        The weight column.
    population_table : str or None
        The population table the journalist model counted in.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.engines import get_engine
    >>> t = EncodedTable.from_columns({"zip": ["1", "1", "2", "3"]})
    >>> r = sample_risk(get_engine("numpy", t), ["zip"], sampling_fraction=0.5)
    >>> r.population_size, r.sample_uniqueness, r.population_uniqueness.dankar_choice
    (8, 0.5, 'zayatz')
    """

    prosecutor: AttackerRisk
    journalist: AttackerRisk
    marketer: float
    sample_uniqueness: float
    population_size: int | None = None
    sampling_fraction: float | None = None
    population_uniqueness: PopulationUniqueness | None = None
    weighted: WeightedRisk | None = None
    weight: str | None = None
    population_table: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON keys of the risk answer (``prosecutor``, ``journalist``, ...).

        Examples
        --------
        >>> from anonlab.risk import AttackerRisk
        >>> r = SampleRisk(AttackerRisk(0.5, 1.0, 0.4), AttackerRisk(0.5, 1.0, 0.4), 0.4, 0.2)
        >>> sorted(r.to_dict())
        ['journalist', 'marketer', 'prosecutor', 'sample_uniqueness']
        """
        out: dict[str, Any] = {
            "prosecutor": self.prosecutor.to_dict(),
            "journalist": self.journalist.to_dict(),
            "marketer": {"average": self.marketer},
            "sample_uniqueness": self.sample_uniqueness,
        }
        if self.population_size is not None:
            out["sampling_fraction"] = self.sampling_fraction
            out["population_size"] = self.population_size
        if self.population_table is not None:
            out["population_table"] = self.population_table
        if self.population_uniqueness is not None:
            p = self.population_uniqueness
            out["population_uniqueness"] = {
                "pitman": p.pitman,
                "zayatz": p.zayatz,
                "snb": p.snb,
                "dankar": p.dankar,
                "dankar_choice": p.dankar_choice,
            }
        if self.weighted is not None:
            out["weight"] = self.weight
            out["weighted_risk"] = self.weighted.to_dict()
        return out


def check_population_options(
    *,
    sampling_fraction: float | None,
    population_size: int | None,
    weight: str | None,
    population: Engine | None,
) -> None:
    """At most one way of telling the population, each value in range.

    Examples
    --------
    >>> check_population_options(sampling_fraction=0.1, population_size=None, weight=None,
    ...                          population=None)
    >>> check_population_options(sampling_fraction=0.1, population_size=1000, weight=None,
    ...                          population=None)
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ParameterError: Give the population one way: sampling_fraction, population_size were both given.
    """
    given = {
        "sampling_fraction": sampling_fraction,
        "population_size": population_size,
        "weight": weight,
        "population": population,
    }
    named = [name for name, value in given.items() if value is not None]
    if len(named) > 1:
        raise ParameterError(
            f"Give the population one way: {', '.join(named)} were both given."
            if len(named) == 2
            else f"Give the population one way: {', '.join(named)} were all given."
        )
    if sampling_fraction is not None:
        check_fraction(sampling_fraction, "sampling_fraction", low_open=True)
    if population_size is not None:
        check_int(population_size, "population_size", low=1)


def sample_risk(
    engine: Engine,
    quasi_identifiers: Sequence[str],
    *,
    threshold: int = 5,
    levels: AttributeLevels | None = None,
    sampling_fraction: float | None = None,
    population_size: int | None = None,
    weight: str | None = None,
    population: Engine | None = None,
    weighted_threshold: float = WEIGHTED_THRESHOLD,
) -> SampleRisk:
    """The attacker models of a sample and, told its population, the population estimates.

    Parameters
    ----------
    engine : Engine
        The sample.
    quasi_identifiers : sequence of str
        The attribute set S.
    threshold : int
        Records in classes smaller than this are at risk (prosecutor, journalist).
    levels : Mapping[str, int], optional
        Hierarchy level per attribute.
    sampling_fraction : float, optional
        The share of the population in the sample, in (0, 1].
    population_size : int, optional
        The population's records (at least the sample's).
    weight : str, optional
        A column of sampling weights (each > 0, summing to at least the records).
    population : Engine, optional
        The population table (it holds the quasi-identifiers).
    weighted_threshold : float
        The individual risk above which a weighted record counts (default 0.2).

    Returns
    -------
    SampleRisk

    Raises
    ------
    ParameterError, ColumnNotFoundError, InputError
        For a value out of range or a bad weight column or population table, naming it.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.engines import get_engine
    >>> t = EncodedTable.from_columns({"zip": ["1", "1", "2"], "w": ["10", "10", "5"]})
    >>> r = sample_risk(get_engine("numpy", t), ["zip"], weight="w")
    >>> r.population_size, round(r.weighted.expected_reidentifications, 4)
    (25, 0.5677)
    """
    check_population_options(
        sampling_fraction=sampling_fraction,
        population_size=population_size,
        weight=weight,
        population=population,
    )
    qi = list(quasi_identifiers)
    n = engine.n_rows
    weighted: WeightedRisk | None = None
    population_sizes: npt.NDArray[np.float64] | None = None
    table_name: str | None = None
    if weight is not None:
        sizes, weighted, big_n = _weighted(engine, qi, levels, weight, weighted_threshold)
        population_size = int(round(big_n))
    elif population is not None:
        sizes, population_sizes = _against_population(engine, population, qi, levels)
        population_size = population.n_rows
        table_name = population.source_name or "the population table"
    else:
        sizes = engine.class_sizes(qi, levels)
        if sampling_fraction is not None:
            population_size = population_of(n, sampling_fraction)
    if population_size is not None and population_size < n:
        raise ParameterError(
            f"The population size {population_size:,} is below the {n:,} records of the "
            "sample; a sample is part of its population."
        )
    fraction = n / population_size if population_size else None
    estimates = population_uniqueness(sizes, fraction) if fraction else None
    return SampleRisk(
        prosecutor=prosecutor_risk(sizes, threshold),
        journalist=journalist_risk(sizes, population_sizes, threshold),
        marketer=marketer_risk(sizes, population_sizes),
        sample_uniqueness=sample_uniqueness(sizes),
        population_size=population_size,
        sampling_fraction=fraction,
        population_uniqueness=estimates,
        weighted=weighted,
        weight=weight,
        population_table=table_name,
    )


def _weighted(
    engine: Engine,
    qi: list[str],
    levels: AttributeLevels | None,
    weight: str,
    threshold: float,
) -> tuple[npt.NDArray[np.int64], WeightedRisk, float]:
    """Class sizes, the Benedetti-Franconi risk and the population (sum of the weights)."""
    if weight in qi:
        raise ParameterError(
            f"The weight column {weight!r} is among the quasi-identifiers; a sampling weight "
            "is never one. Drop it from the quasi-identifiers."
        )
    got = engine.weighted_class_sizes(qi, levels, weight)
    n = engine.n_rows
    if got.not_numeric is not None:
        raise InputError(
            f"The weight column {weight!r} holds {got.not_numeric!r}, which is not a number."
        )
    if got.missing:
        raise InputError(
            f"The weight column {weight!r} has {got.missing:,} record(s) without a weight."
        )
    if not got.lowest > 0 or not math.isfinite(got.total):
        raise InputError(
            f"The weight column {weight!r} holds {got.lowest:g}; a sampling weight is the "
            "number of population records a record stands for, > 0."
        )
    if got.total < n:
        raise InputError(
            f"The weights of column {weight!r} sum to {got.total:,.6g}, fewer than the {n:,} "
            "records; a sampling weight is the number of population records a record stands "
            "for (their sum is the population)."
        )
    return got.sizes, weighted_risk(got.sizes, got.weights, threshold), got.total


def _against_population(
    engine: Engine, population: Engine, qi: list[str], levels: AttributeLevels | None
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """The sample's class sizes and the population's size of each of the same classes."""
    name = population.source_name or "the population table"
    missing = [q for q in qi if q not in population.columns]
    if missing:
        raise ColumnNotFoundError(
            f"The population table {name} has no column {missing[0]!r} (a quasi-identifier); "
            f"it has {', '.join(map(repr, population.columns[:20]))}."
        )
    sample = count_population(
        engine.class_stats(qi, levels), population.class_stats(qi, levels), name=name
    )
    assert sample.population_sizes is not None
    return sample.sizes, sample.population_sizes.astype(np.float64)
