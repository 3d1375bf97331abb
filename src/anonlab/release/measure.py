"""The information loss of a release, measured on the released table."""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from anonlab.data.grouping import sort_order
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedTable
from anonlab.engines import get_engine
from anonlab.metrics.base import CellCounts, MetricContext, ReleaseCells
from anonlab.release.problem import Problem
from anonlab.release.recoding import FullDomain, LevelRecoding

__all__ = ["metric_context", "measure", "release_cells"]


def metric_context(problem: Problem, table: EncodedTable | None = None) -> MetricContext:
    """What the problem's metric needs of the (kept rows of the) original table.

    Parameters
    ----------
    problem : Problem
    table : EncodedTable, optional
        The rows in scope (default: the problem's table).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> context = metric_context(anonlab.anonymize(t, job).problem)
    >>> context.n_rows, context.base.n_classes, sorted(context.hierarchies)
    (8, 4, ['zip'])
    """
    t = problem.table if table is None else table
    engine = get_engine("numpy", t, hierarchies=dict(problem.hierarchies))
    base = engine.class_stats(list(problem.quasi_identifiers))
    return MetricContext(
        problem.quasi_identifiers, problem.hierarchies, base, t.n_records, dict(problem.weights)
    )


def release_cells(
    problem: Problem,
    recoding: LevelRecoding,
    classes: ClassStats,
    suppressed: npt.NDArray[np.bool_],
    context: MetricContext,
) -> ReleaseCells:
    """Count the released cells per quasi-identifier (original value, level, label).

    Parameters
    ----------
    problem : Problem
    recoding : LevelRecoding
        The release's recoding (its :meth:`~anonlab.release.recoding.LevelRecoding.cells`).
    classes : ClassStats
        The released classes, with ``row_class``.
    suppressed : ndarray of bool
        Per released class, whether it is suppressed.
    context : MetricContext
        Its base classes' domains code the original values.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> r = anonlab.anonymize(t, job)
    >>> cells = release_cells(r.problem, r.recoding, r.release.classes, r.release.suppressed,
    ...                       metric_context(r.problem))
    >>> type(cells).__name__
    'ReleaseCells'
    """
    assert classes.row_class is not None
    original = recoding.kept(problem)
    supp_rows = np.flatnonzero(suppressed[classes.row_class])
    supp_levels = recoding.row_levels(problem, supp_rows) if supp_rows.size else None
    base = context.base
    assert base.domains is not None
    counted = []
    for j, (q, groups) in enumerate(zip(problem.quasi_identifiers, recoding.cells(problem))):
        col = original[q]
        supp = (
            np.zeros(groups.key.size, dtype=np.int64)
            if supp_levels is None
            else groups.count_cells(supp_levels[:, j], col.codes[supp_rows])
        )
        value = groups.value
        level = groups.level
        label = groups.label.astype(np.int64)
        domain = base.domains[base.columns.index(q)]
        if domain is col.categories or np.array_equal(domain, col.categories):
            # the cells come by (level, value): by (label, level, value) in a stable sort by
            # label
            order = sort_order(label, int(label.max()) + 1 if label.size else 1)
        else:  # the context's base domain orders the labels otherwise: map by text
            where = {v: i for i, v in enumerate(domain.tolist())}
            value = np.array([where[v] for v in col.categories.tolist()], dtype=np.int64)[value]
            order = np.lexsort((value, level, label))
        counted.append(
            CellCounts(
                value=value[order],
                level=level[order],
                label=label[order],
                kept=(groups.count - supp)[order],
                suppressed=supp[order],
            )
        )
    return ReleaseCells(
        problem.quasi_identifiers,
        tuple(counted),
        np.asarray(classes.sizes, dtype=np.int64),
        np.asarray(suppressed, dtype=bool),
    )


def measure(
    problem: Problem,
    recoding: LevelRecoding,
    classes: ClassStats,
    suppressed: npt.NDArray[np.bool_],
    context: MetricContext | None = None,
) -> float:
    """The problem's metric on the released table.

    A full-domain release is measured from its classes at the recoding's levels (the
    metrics' ARX definitions); a release with cells on different levels from its cells (each
    metric's :meth:`~anonlab.metrics.base.Metric.release_loss`).

    Parameters
    ----------
    problem : Problem
    recoding : LevelRecoding
    classes : ClassStats
        The released classes (with keys and ``row_class``).
    suppressed : ndarray of bool
        Per class, whether it is suppressed.
    context : MetricContext, optional
        The metric context of the kept rows, if the algorithm has it.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "height"}
    >>> r = anonlab.anonymize(t, job)
    >>> measure(r.problem, r.recoding, r.release.classes, r.release.suppressed), r.loss
    (1.0, 1.0)
    """
    ctx = metric_context(problem, recoding.kept(problem)) if context is None else context
    if isinstance(recoding, FullDomain):
        at = dataclasses.replace(classes, levels=recoding.vector(problem))
        return float(problem.metric.loss(at, suppressed, ctx))
    cells = release_cells(problem, recoding, classes, suppressed, ctx)
    return float(problem.metric.release_loss(cells, ctx))
