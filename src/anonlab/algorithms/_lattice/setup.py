"""The lattice and the node evaluator of a :class:`~anonlab.release.problem.Problem`."""

from __future__ import annotations

from anonlab._resources import format_bytes, memory_budget
from anonlab.algorithms._lattice.lattice import Lattice, LatticeEvaluator
from anonlab.data.stats import ClassStats, count_population
from anonlab.engines import get_engine
from anonlab.exceptions import HierarchyError, ParameterError
from anonlab.metrics.base import MetricContext
from anonlab.models.base import population_of
from anonlab.release.problem import Problem

__all__ = ["build_evaluator", "check_lattice", "lattice_of", "population_classes"]


def lattice_of(problem: Problem) -> Lattice:
    """The full-domain lattice between the problem's level bounds."""
    return Lattice(problem.quasi_identifiers, problem.min_levels, problem.max_levels)


def check_lattice(problem: Problem, algorithm: str) -> Lattice:
    """The problem's lattice, or an error before any work when this machine cannot hold a
    search over every node of it (the numbers and the ways out).

    Raises
    ------
    ParameterError
        If the lattice's memory estimate is above :func:`anonlab._resources.memory_budget`.
    """
    lattice = lattice_of(problem)
    need = lattice.memory_estimate(problem.heights)
    budget = memory_budget()
    if need > budget:
        m = len(lattice.attributes)
        raise ParameterError(
            f"The '{algorithm}' search over {m} quasi-identifiers has a lattice of "
            f"{lattice.size:,} transformations: about {format_bytes(need)} of memory, more "
            f"than this machine can spare ({format_bytes(budget)}). Use 'algorithm: "
            "privacyfrost2' (made for many quasi-identifiers), fewer quasi-identifiers, or "
            "fewer levels ('min_level'/'max_level' per quasi-identifier)."
        )
    return lattice


def build_evaluator(problem: Problem, *, with_rows: bool = False) -> LatticeEvaluator:
    """The node evaluator of a problem: the base classes of its quasi-identifiers (with the
    sensitive histograms its models need), models, suppression limit and metric.

    Parameters
    ----------
    problem : Problem
    with_rows : bool
        Keep the class of every row (PrivacyFrost2 releases per base class).
    """
    engine = get_engine(problem.engine, problem.table, hierarchies=dict(problem.hierarchies))
    base = engine.class_stats(
        list(problem.quasi_identifiers), sensitive=list(problem.sensitive), with_rows=with_rows
    )
    context = MetricContext(
        problem.quasi_identifiers,
        problem.hierarchies,
        base,
        problem.n_records,
        dict(problem.weights),
        min_class_size=max([m.min_class_size for m in problem.models] + [1]),
    )
    return LatticeEvaluator(
        base,
        dict(problem.hierarchies),
        problem.models,
        problem.max_suppressed,
        problem.metric,
        context,
        population_classes(problem, base),
    )


def population_classes(problem: Problem, base: ClassStats) -> ClassStats | None:
    """The classes of the models' population table at level 0 (with keys), or None when no
    model reads one.

    Raises
    ------
    ColumnNotFoundError
        If the population table lacks a quasi-identifier.
    HierarchyError
        If it holds a value a hierarchy lacks (naming the value, its row and the table).
    ParameterError
        If the models read different population tables.
    InputError
        If a class of the table (the sample) has more records than the population holds of
        it: a sample record absent from the population (:func:`count_population`).
    """
    population = population_of(problem.models)
    if population is None:
        return None
    qis = list(problem.quasi_identifiers)
    population.require(qis)
    for q in qis:
        col = population.table.column(q)
        try:
            problem.hierarchies[q].check_covers(col.categories, col.codes)
        except HierarchyError as exc:
            raise HierarchyError(f"The population table {population.name}: {exc}") from None
    engine = get_engine("numpy", population.table, hierarchies=dict(problem.hierarchies))
    classes = engine.class_stats(qis)
    count_population(base, classes, name=population.name)  # the sample is part of it
    return classes
