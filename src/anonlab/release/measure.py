"""The information loss of a release, measured on the released table."""

from __future__ import annotations

import dataclasses

import numpy as np
import numpy.typing as npt

from anonlab.data.grouping import ordered_groups
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedTable
from anonlab.engines import get_engine
from anonlab.metrics.base import CellCounts, MetricContext, ReleaseCells
from anonlab.release.problem import Problem
from anonlab.release.recoding import FullDomain, Recoding

__all__ = ["metric_context", "measure", "release_cells"]


def metric_context(problem: Problem, table: EncodedTable | None = None) -> MetricContext:
    """What the problem's metric needs of the (kept rows of the) original table.

    Parameters
    ----------
    problem : Problem
    table : EncodedTable, optional
        The rows in scope (default: the problem's table).
    """
    t = problem.table if table is None else table
    engine = get_engine("numpy", t, hierarchies=dict(problem.hierarchies))
    base = engine.class_stats(list(problem.quasi_identifiers))
    return MetricContext(
        problem.quasi_identifiers, problem.hierarchies, base, t.n_records, dict(problem.weights)
    )


def release_cells(
    problem: Problem,
    original: EncodedTable,
    released: EncodedTable,
    row_levels: npt.NDArray[np.integer],
    classes: ClassStats,
    suppressed: npt.NDArray[np.bool_],
    context: MetricContext,
) -> ReleaseCells:
    """Count the released cells per quasi-identifier (original value, level, label).

    Parameters
    ----------
    problem : Problem
    original, released : EncodedTable
        The kept rows before and after the recoding (row-aligned).
    row_levels : ndarray of int, shape (rows, quasi-identifiers)
    classes : ClassStats
        The released classes, with ``row_class``.
    suppressed : ndarray of bool
        Per released class, whether it is suppressed.
    context : MetricContext
        Its base classes' domains code the original values.
    """
    assert classes.row_class is not None
    row_supp = suppressed[classes.row_class]
    base = context.base
    assert base.domains is not None
    cells = []
    for j, q in enumerate(problem.quasi_identifiers):
        col = original[q]
        domain = base.domains[base.columns.index(q)]
        if np.array_equal(domain, col.categories):
            value = col.codes.astype(np.int64)
        else:  # the context's base domain orders the labels otherwise: map by text
            where = {v: i for i, v in enumerate(domain.tolist())}
            remap = np.array([where[v] for v in col.categories.tolist()], dtype=np.int64)
            value = remap[col.codes]
        level = np.asarray(row_levels[:, j], dtype=np.int64)
        n_val = int(value.max()) + 1 if value.size else 1
        n_lv = int(level.max()) + 1 if level.size else 1
        # a cell's label follows from its (level, value): group by those, then read the label
        inv, counts, uniq = ordered_groups(level * n_val + value, n_lv * n_val)
        lab = np.zeros(uniq.size, dtype=np.int64)
        lab[inv] = released[q].codes
        supp = np.bincount(inv[row_supp], minlength=uniq.size)
        lv, v = np.divmod(uniq, n_val)
        order = np.lexsort((v, lv, lab))  # by (label, level, value)
        cells.append(
            CellCounts(
                value=v[order],
                level=lv[order],
                label=lab[order],
                kept=(counts - supp)[order],
                suppressed=supp[order],
            )
        )
    return ReleaseCells(
        problem.quasi_identifiers,
        tuple(cells),
        np.asarray(classes.sizes, dtype=np.int64),
        np.asarray(suppressed, dtype=bool),
    )


def measure(
    problem: Problem,
    recoding: Recoding,
    released: EncodedTable,
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
    recoding : Recoding
    released : EncodedTable
        The released rows (before suppression), quasi-identifiers generalized.
    classes : ClassStats
        The released classes (with keys and ``row_class``).
    suppressed : ndarray of bool
        Per class, whether it is suppressed.
    context : MetricContext, optional
        The metric context of the kept rows, if the algorithm has it.
    """
    original = recoding.kept(problem)
    ctx = metric_context(problem, original) if context is None else context
    if isinstance(recoding, FullDomain):
        at = dataclasses.replace(classes, levels=recoding.vector(problem))
        return float(problem.metric.loss(at, suppressed, ctx))
    cells = release_cells(
        problem, original, released, recoding.row_levels(problem), classes, suppressed, ctx
    )
    return float(problem.metric.release_loss(cells, ctx))
