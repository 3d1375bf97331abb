"""Blanked cells: local suppression's release, counted with wildcard semantics.

Local suppression (sdcMicro's ``localSuppression``; Templ, Kowarik & Meindl 2015, section
5.2) releases every record, each quasi-identifier either at a full-domain hierarchy level or
*blank* (released as ``*``). A blank says nothing of the value, so when records are counted
it matches any value: the **wildcard semantics** of sdcMicro's ``freqCalc`` (a missing key
value matches every category) and of ARX's wildcard risk model. The frequency ``f(r)`` of a
released record ``r`` is the number of released records ``s`` compatible with it: on every
quasi-identifier, ``r`` and ``s`` hold the same label, or one of them is blank. The release is
k-anonymous when every ``f(r) >= k``. Blanks make this relation non-transitive, so the records
form no equivalence classes: :class:`Blanks` is a :class:`~anonlab.release.recoding.Recoding`
with ``forms_classes = False`` and its own verifier, ``"blanks"``.

Counting, vectorised by blank pattern (:func:`compatible_counts`): a record with pattern ``P``
(the set of its blank attributes) and a record with pattern ``Q`` are compatible iff they agree
on the attributes outside ``P | Q``. For each pair of patterns in use (at most ``2^m`` of each
for ``m`` quasi-identifiers, in practice a handful) the records of ``Q`` are grouped by their
labels outside ``P | Q`` and the records of ``P`` read their group's count: no loop over rows,
``O(patterns * rows)`` work on the distinct released tuples.

The ``"blanks"`` verifier in :data:`anonlab.release.verify.VERIFIERS` never trusts the
algorithm: it reads the blanks back from the released labels (a cell is blank iff its label is
``*``), recounts every frequency, and measures the loss cell by cell (a blank counts as its
value at the top of its hierarchy, the root ``*``: 1 in NCP/GCP, as ARX counts a suppressed
cell).

References
----------
.. [1] M. Templ, A. Kowarik and B. Meindl, "Statistical disclosure control for micro-data
   using the R package sdcMicro", Journal of Statistical Software 67(4), 2015, section 5.2
   (local suppression) and section 3 (frequency counts with missing values).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._typing import IntArray
from anonlab.data.grouping import group_rows
from anonlab.data.labels import natural_order
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedColumn, EncodedTable, LabelColumns
from anonlab.engines import get_engine
from anonlab.exceptions import ParameterError, PrivacyCheckError
from anonlab.metrics.base import CellCounts, MetricContext, ReleaseCells
from anonlab.release.measure import metric_context
from anonlab.release.problem import Problem
from anonlab.release.recoding import Recoding, generalize_column
from anonlab.release.verify import VERIFIERS, Release, Verification, model_keys

__all__ = [
    "BLANK",
    "BLANKS_K",
    "Blanks",
    "blank_problem",
    "blank_cells",
    "compatible_counts",
    "read_blanks",
    "recheck_blanks",
    "wildcard_frequencies",
]

#: The released label of a blank cell.
BLANK = "*"

#: What the k of a release with blanks is (:attr:`Verification.k_meaning`).
BLANKS_K = "the fewest released records compatible with a record (a blank * matches any value)"


def blank_problem(problem: Problem, owner: str) -> int:
    """The k a release with blanks must honour; refuse the models it cannot.

    Parameters
    ----------
    problem : Problem
    owner : str
        Who asks (named in the message).

    Returns
    -------
    int
        The largest ``min_class_size`` of the problem's models.

    Raises
    ------
    ParameterError
        A model other than k-anonymity: a blank matches several values, so a record belongs
        to no single class for l-diversity, t-closeness, a risk model, ... to judge.

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import build_model
    >>> t = EncodedTable.from_columns({"sex": ["F", "M", "F", "M"]})
    >>> p = Problem(t, ("sex",), {"sex": flat_hierarchy(["F", "M"])},
    ...             (build_model("k_anonymity", {"k": 2}),), build_metric("gcp"))
    >>> blank_problem(p, "local_suppression")
    2
    """
    other = [m.name for m in problem.models if m.name != "k_anonymity"]
    if other:
        raise ParameterError(
            f"{owner} blanks cells, which match any value when records are counted (wildcard "
            f"semantics); the records form no classes for model {other[0]!r} to judge. Use "
            "k_anonymity alone, or a class-forming algorithm (optimal, top_down, ...)."
        )
    return max([m.min_class_size for m in problem.models] + [1])


# --------------------------------------------------------------------------- counting
def _patterns(blank: npt.NDArray[np.bool_]) -> IntArray:
    """Each row's blank pattern as a bit mask (bit ``j``: attribute ``j`` is blank)."""
    m = blank.shape[1]
    if m > 62:
        raise ParameterError(
            f"Wildcard counting handles at most 62 quasi-identifiers; the problem has {m}."
        )
    bits = np.left_shift(np.int64(1), np.arange(m, dtype=np.int64))
    out: IntArray = blank.astype(np.int64) @ bits if m else np.zeros(blank.shape[0], np.int64)
    return out


def compatible_counts(
    codes: npt.NDArray[np.integer],
    blank: npt.NDArray[np.bool_],
    weights: npt.NDArray[np.integer],
    query_codes: npt.NDArray[np.integer],
    query_blank: npt.NDArray[np.bool_],
) -> IntArray:
    """For each query record, the weight of the table's records compatible with it.

    Two records are compatible when, on every attribute, both hold the same code or either
    is blank. For each pair (query pattern ``P``, table pattern ``Q``) the table's records of
    ``Q`` are grouped on the attributes outside ``P | Q`` and each query of ``P`` reads its
    group's weight.

    Parameters
    ----------
    codes : ndarray of int, shape (rows, attributes)
        The table's codes (a blank cell's code is ignored).
    blank : ndarray of bool, shape (rows, attributes)
        Which of the table's cells are blank.
    weights : ndarray of int, shape (rows,)
        How many records each table row stands for.
    query_codes, query_blank : ndarray, shape (queries, attributes)
        The records to count for, coded like the table.

    Returns
    -------
    ndarray of int64, shape (queries,)

    Examples
    --------
    >>> codes = np.array([[0, 0], [0, 1], [1, 1]])
    >>> blank = np.array([[False, False], [False, True], [False, False]])
    >>> compatible_counts(codes, blank, np.ones(3, np.int64), codes, blank).tolist()
    [2, 2, 1]
    """
    codes = np.asarray(codes, dtype=np.int64)
    query_codes = np.asarray(query_codes, dtype=np.int64)
    m = codes.shape[1]
    nq = query_codes.shape[0]
    out = np.zeros(nq, dtype=np.int64)
    if nq == 0 or codes.shape[0] == 0:
        return out
    w = np.asarray(weights, dtype=np.int64)
    highest = np.maximum(codes.max(axis=0, initial=0), query_codes.max(axis=0, initial=0))
    cards = highest.astype(np.int64) + 1
    t_pat, q_pat = _patterns(blank), _patterns(query_blank)
    t_order = np.argsort(t_pat, kind="stable")
    t_keys, t_start = np.unique(t_pat[t_order], return_index=True)
    t_groups = np.split(t_order, t_start[1:])
    q_order = np.argsort(q_pat, kind="stable")
    q_keys, q_start = np.unique(q_pat[q_order], return_index=True)
    q_groups = np.split(q_order, q_start[1:])
    for p, q_rows in zip(q_keys.tolist(), q_groups):
        for t, t_rows in zip(t_keys.tolist(), t_groups):
            union = p | t
            cols = [j for j in range(m) if not (union >> j) & 1]
            if not cols:
                out[q_rows] += int(w[t_rows].sum())
                continue
            joint = [np.concatenate([codes[t_rows, j], query_codes[q_rows, j]]) for j in cols]
            ids, n_groups = group_rows(joint, [int(cards[j]) for j in cols])
            counts = np.bincount(ids[: t_rows.size], weights=w[t_rows], minlength=n_groups)
            out[q_rows] += counts[ids[t_rows.size :]].astype(np.int64)
    return out


def wildcard_frequencies(
    codes: npt.NDArray[np.integer],
    blank: npt.NDArray[np.bool_],
    weights: npt.NDArray[np.integer] | None = None,
) -> IntArray:
    """Each record's frequency under wildcard semantics: the records compatible with it.

    The records are first reduced to their distinct (codes, blanks) tuples with their
    counts; :func:`compatible_counts` then counts among those.

    Parameters
    ----------
    codes : ndarray of int, shape (rows, attributes)
    blank : ndarray of bool, shape (rows, attributes)
    weights : ndarray of int, optional
        Records per row (default 1 each).

    Returns
    -------
    ndarray of int64, shape (rows,)
        A record counts itself.

    Examples
    --------
    >>> codes = np.array([[0, 0], [0, 1], [1, 1], [1, 0]])
    >>> blank = np.array([[False, True], [False, False], [True, False], [False, False]])
    >>> wildcard_frequencies(codes, blank).tolist()  # (0,*) (0,1) (*,1) (1,0)
    [3, 3, 3, 1]
    """
    codes = np.asarray(codes, dtype=np.int64)
    blank = np.asarray(blank, dtype=bool)
    n, m = codes.shape
    w = np.ones(n, np.int64) if weights is None else np.asarray(weights, dtype=np.int64)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    cards = codes.max(axis=0, initial=0) + 1
    # a blank becomes its column's extra code: equal tuples, equal ids
    keyed = [np.where(blank[:, j], cards[j], codes[:, j]) for j in range(m)]
    if m:
        ids, n_distinct = group_rows(keyed, [int(c) + 1 for c in cards])
    else:  # no attribute: one tuple
        ids, n_distinct = np.zeros(n, np.int64), 1
    first = np.full(n_distinct, n, dtype=np.int64)
    np.minimum.at(first, ids, np.arange(n, dtype=np.int64))
    tuple_weight = np.bincount(ids, weights=w, minlength=n_distinct).astype(np.int64)
    d_codes, d_blank = codes[first], blank[first]
    counts = compatible_counts(d_codes, d_blank, tuple_weight, d_codes, d_blank)
    out: IntArray = counts[ids]
    return out


def read_blanks(problem: Problem, released: EncodedTable) -> tuple[IntArray, npt.NDArray[np.bool_]]:
    """The released quasi-identifiers as codes and blanks, read from the labels alone.

    Parameters
    ----------
    problem : Problem
        Its quasi-identifiers name the columns.
    released : EncodedTable
        The released table.

    Returns
    -------
    codes : ndarray of int64, shape (rows, quasi-identifiers)
        Each cell's label code in its released column.
    blank : ndarray of bool, shape (rows, quasi-identifiers)
        Whether the cell's label is ``*``.

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import build_model
    >>> t = EncodedTable.from_columns({"sex": ["F", "M", "F", "M"]})
    >>> p = Problem(t, ("sex",), {"sex": flat_hierarchy(["F", "M"])},
    ...             (build_model("k_anonymity", {"k": 2}),), build_metric("gcp"))
    >>> released = EncodedTable.from_columns({"sex": ["F", "*", "F", "M"]})
    >>> read_blanks(p, released)[1].ravel().tolist()
    [False, True, False, False]
    """
    n, qis = released.n_rows, problem.quasi_identifiers
    codes = np.zeros((n, len(qis)), dtype=np.int64)
    blank = np.zeros((n, len(qis)), dtype=bool)
    for j, q in enumerate(qis):
        col = released[q]
        codes[:, j] = col.codes
        star = np.flatnonzero(np.asarray(col.categories == BLANK, dtype=bool).reshape(-1))
        if star.size:
            blank[:, j] = col.codes == int(star[0])
    return codes, blank


# --------------------------------------------------------------------------- recoding
def with_blanks(col: EncodedColumn, mask: npt.NDArray[np.bool_]) -> EncodedColumn:
    """The column with the cells of ``mask`` released as ``*``; labels in natural order,
    unused ones dropped.

    Examples
    --------
    >>> col = EncodedTable.from_columns({"sex": ["F", "M", "F"]})["sex"]
    >>> with_blanks(col, np.array([True, False, False])).labels().tolist()
    ['*', 'M', 'F']
    """
    if not mask.any():
        return col
    cats = col.categories
    found = np.flatnonzero(np.asarray(cats == BLANK, dtype=bool).reshape(-1))
    labels = cats if found.size else np.append(cats, np.array([BLANK], dtype=object))
    star = int(found[0]) if found.size else int(cats.size)
    codes = np.where(mask, star, col.codes)
    used = np.flatnonzero(np.bincount(codes, minlength=labels.size))
    at = used[natural_order(labels[used])]
    remap = np.zeros(labels.size, dtype=np.int32)
    remap[at] = np.arange(at.size, dtype=np.int32)
    return EncodedColumn(col.name, remap[codes], labels[at])


@dataclass
class Blanks(Recoding):
    """Local suppression's release: a full-domain level per attribute, and blank cells.

    Every record is released; quasi-identifier ``q`` of row ``r`` is its label at
    ``levels[q]``, or ``*`` where ``blank[r, j]``. Verified by the ``"blanks"`` verifier
    (wildcard frequencies recounted from the released labels, see the module docstring).

    Parameters
    ----------
    levels : Mapping[str, int]
        The full-domain level of each quasi-identifier (applied before blanking).
    blank : ndarray of bool, shape (rows, quasi-identifiers)
        The blank cells, quasi-identifiers in the problem's order.
    rows : None
        Every row is kept.

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import build_model
    >>> t = EncodedTable.from_columns({"sex": ["F", "M", "F", "F"]})
    >>> p = Problem(t, ("sex",), {"sex": flat_hierarchy(["F", "M"])},
    ...             (build_model("k_anonymity", {"k": 2}),), build_metric("gcp"))
    >>> r = Blanks({"sex": 0}, np.array([[False], [True], [False], [False]]))
    >>> r.apply(p)["sex"].labels().tolist(), r.verifier, r.forms_classes
    (['F', '*', 'F', 'F'], 'blanks', False)
    >>> r.summary(p)["blanked_cells"]
    {'sex': 1}
    """

    forms_classes: ClassVar[bool] = False
    verifier: ClassVar[str] = "blanks"

    levels: Mapping[str, int]
    blank: npt.NDArray[np.bool_]
    rows: IntArray | None = None

    def __post_init__(self) -> None:
        self.levels = {str(q): int(v) for q, v in self.levels.items()}
        self.blank = np.asarray(self.blank, dtype=bool)

    def _check(self, problem: Problem) -> None:
        missing = [q for q in problem.quasi_identifiers if q not in self.levels]
        if missing:
            raise ParameterError(f"The recoding has no level for {missing[0]!r}.")
        shape = (problem.n_rows, len(problem.quasi_identifiers))
        if self.blank.shape != shape:
            raise ParameterError(
                f"The blanks are a {self.blank.shape} array; the problem needs {shape} (rows, "
                "quasi-identifiers)."
            )

    def apply(self, problem: Problem) -> EncodedTable:
        """Every row: each quasi-identifier at its level, blank cells as ``*``."""
        self._check(problem)
        table = problem.table
        out = {}
        for j, q in enumerate(problem.quasi_identifiers):
            lv = self.levels[q]
            col = generalize_column(table[q], problem.hierarchies[q], lv) if lv else table[q]
            out[q] = with_blanks(col, self.blank[:, j])
        return table.with_columns(out)

    @property
    def blanked_cells(self) -> int:
        """The cells released blank."""
        return int(np.count_nonzero(self.blank))

    def summary(self, problem: Problem) -> dict[str, Any]:
        """The levels, the blank cells per attribute and the records with a blank."""
        per = np.count_nonzero(self.blank, axis=0)
        return {
            "levels": {q: self.levels[q] for q in problem.quasi_identifiers},
            "blanked_cells": {q: int(c) for q, c in zip(problem.quasi_identifiers, per)},
            "records_with_blanks": int(np.count_nonzero(self.blank.any(axis=1))),
        }


# --------------------------------------------------------------------------- verification
def blank_cells(
    problem: Problem, recoding: Blanks, blank: npt.NDArray[np.bool_]
) -> list[tuple[IntArray, IntArray, npt.NDArray[np.str_], IntArray]]:
    """The release's cells counted per quasi-identifier and original value: at the
    attribute's level where released as a label, at the top of its hierarchy where blank.

    Parameters
    ----------
    problem : Problem
    recoding : Blanks
    blank : ndarray of bool, shape (rows, quasi-identifiers)
        The blank cells (read back from the released labels).

    Returns
    -------
    list of tuple
        Per quasi-identifier ``(value, level, label, count)``: the original value's code in
        the column, the level, the released label's text and the cells counted.

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import build_model
    >>> t = EncodedTable.from_columns({"sex": ["F", "M", "F", "F"]})
    >>> p = Problem(t, ("sex",), {"sex": flat_hierarchy(["F", "M"])},
    ...             (build_model("k_anonymity", {"k": 2}),), build_metric("gcp"))
    >>> blank = np.array([[False], [True], [False], [False]])
    >>> value, level, label, count = blank_cells(p, Blanks({"sex": 0}, blank), blank)[0]
    >>> value.tolist(), level.tolist(), label.tolist(), count.tolist()
    ([0, 1], [0, 1], ['F', '*'], [3, 1])
    """
    out = []
    for j, q in enumerate(problem.quasi_identifiers):
        col = problem.table[q]
        hierarchy = problem.hierarchies[q]
        level, top = recoding.levels[q], hierarchy.height
        parts = []  # (category, level, label text, count)
        shown = np.bincount(col.codes[~blank[:, j]], minlength=col.cardinality)
        hidden = np.bincount(col.codes[blank[:, j]], minlength=col.cardinality)
        if level == top:
            shown, hidden = shown + hidden, np.zeros_like(hidden)
        for lv, count in ((level, shown), (top, hidden)):
            mapping, labels = hierarchy.generalization(col.categories, lv)
            cats = np.flatnonzero(count)
            text = np.asarray(labels, dtype=object)[np.asarray(mapping)[cats]]
            parts.append((cats, np.full(cats.size, lv, dtype=np.int64), text, count[cats]))
        out.append(
            (
                np.concatenate([p[0] for p in parts]).astype(np.int64),
                np.concatenate([p[1] for p in parts]),
                np.concatenate([p[2] for p in parts]).astype(str),
                np.concatenate([p[3] for p in parts]).astype(np.int64),
            )
        )
    return out


def _cells(
    problem: Problem,
    recoding: Blanks,
    blank: npt.NDArray[np.bool_],
    classes: npt.NDArray[np.int64],
    context: MetricContext,
) -> ReleaseCells:
    """The release's cells as the metrics count them (:func:`blank_cells`; a blank says as
    little as the root ``*``: 1 in NCP/GCP, as ARX counts a suppressed cell)."""
    base = context.base
    assert base.domains is not None
    counted = []
    for q, (cats, lvs, texts, counts) in zip(
        problem.quasi_identifiers, blank_cells(problem, recoding, blank)
    ):
        col = problem.table[q]
        domain = base.domains[base.columns.index(q)]
        if domain is col.categories or np.array_equal(domain, col.categories):
            recode = np.arange(col.cardinality, dtype=np.int64)
        else:  # the context's base domain orders the values otherwise: map by text
            where = {v: i for i, v in enumerate(domain.tolist())}
            recode = np.array([where[v] for v in col.categories.tolist()], dtype=np.int64)
        label = np.unique(texts, return_inverse=True)[1].reshape(-1).astype(np.int64)
        value = recode[cats]
        order = np.lexsort((value, lvs, label))
        counted.append(
            CellCounts(
                value=value[order],
                level=lvs[order],
                label=label[order],
                kept=counts[order],
                suppressed=np.zeros(order.size, dtype=np.int64),
            )
        )
    return ReleaseCells(
        problem.quasi_identifiers,
        tuple(counted),
        classes,
        np.zeros(classes.size, dtype=bool),
    )


def recheck_blanks(problem: Problem, written: ClassStats) -> int:
    """Recount the wildcard frequencies of a written release from its distinct tuples.

    The second, independent check of a release with blanks written out of core: the
    written file grouped again on its quasi-identifiers (its distinct released tuples with
    their counts, :meth:`~anonlab.engines.base.Engine.release_stats`), a cell blank iff
    its label is ``*``, every tuple's compatible records counted
    (:func:`compatible_counts`).

    Parameters
    ----------
    problem : Problem
        Its quasi-identifiers, models (k-anonymity) and records.
    written : ClassStats
        The classes of the written file, with their keys, columns in the problem's order of
        quasi-identifiers.

    Returns
    -------
    int
        The fewest compatible records of a written record (the release's k).

    Raises
    ------
    PrivacyCheckError
        A written record compatible with fewer than k records, or a file that does not
        hold every record: the caller must not release it.

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import build_model
    >>> t = EncodedTable.from_columns({"sex": ["F", "M", "F", "M"], "zip": ["1", "2", "1", "3"]})
    >>> flat = {q: flat_hierarchy(t[q].categories) for q in ("sex", "zip")}
    >>> p = Problem(t, ("sex", "zip"), flat, (build_model("k_anonymity", {"k": 2}),),
    ...             build_metric("gcp"))
    >>> out = EncodedTable.from_columns({"sex": ["F", "M", "F", "M"], "zip": ["1", "*", "1", "*"]})
    >>> recheck_blanks(p, get_engine("numpy", out).class_stats(["sex", "zip"], with_keys=True))
    2
    """
    k = blank_problem(problem, "The re-check of a release with blanks")
    rows = int(np.asarray(written.sizes).sum())
    if rows != problem.n_records:
        raise PrivacyCheckError(
            f"Re-check of the written release failed: it holds {rows} rows, not the "
            f"{problem.n_records} released. Nothing was released."
        )
    if written.keys is None or written.domains is None:  # pragma: no cover - engines' contract
        raise PrivacyCheckError("The written release was grouped without its labels.")
    codes = np.asarray(written.keys, dtype=np.int64)
    blank = np.zeros(codes.shape, dtype=bool)
    for j, domain in enumerate(written.domains):
        star = np.asarray(np.asarray(domain, dtype=object) == BLANK, dtype=bool).reshape(-1)
        blank[:, j] = star[codes[:, j]] if star.size else False
    sizes = np.asarray(written.sizes, dtype=np.int64)
    freq = compatible_counts(codes, blank, sizes, codes, blank)
    short = freq < k
    if short.any():
        raise PrivacyCheckError(
            f"Re-check of the written release failed: {int(sizes[short].sum()):,} records "
            f"are compatible with fewer than {k} released records (a blank matching any "
            "value). Nothing was released."
        )
    return int(freq.min()) if freq.size else 0


def _verify_blanks(
    problem: Problem,
    recoding: Recoding,
    *,
    mask_suppressed: bool,
    context: MetricContext | None,
) -> Release:
    """Recount every record's wildcard frequency from the released labels; measure the
    loss cell by cell (a blank: its value at the top of its hierarchy)."""
    del mask_suppressed  # every record is released
    k = blank_problem(problem, "The blanks verification")
    if not isinstance(recoding, Blanks):  # pragma: no cover - declared by the recoding
        raise PrivacyCheckError(
            f"A {type(recoding).__name__} release holds no blanks. Nothing was released."
        )
    released = recoding.apply(problem)
    start = time.perf_counter()
    codes, blank = read_blanks(problem, released)
    freq = wildcard_frequencies(codes, blank)
    elapsed = time.perf_counter() - start
    k_after = int(freq.min()) if freq.size else 0
    short = int(np.count_nonzero(freq < k))
    if short:
        raise PrivacyCheckError(
            f"Re-check failed: {short:,} records of the release of {type(recoding).__name__} "
            f"are compatible with fewer than {k} released records (a blank matching any "
            "value). Nothing was released."
        )
    qis = list(problem.quasi_identifiers)
    stats = get_engine("numpy", released).class_stats(qis)
    ctx = metric_context(problem) if context is None else context
    cells = _cells(problem, recoding, blank, np.asarray(stats.sizes, dtype=np.int64), ctx)
    loss = float(problem.metric.release_loss(cells, ctx))
    hidden = set(problem.identifiers)
    columns = LabelColumns(
        [col for col in released.columns if col.name not in hidden],
        None,
        typed={n: a for n, a in released.typed.items() if n not in hidden},
        order=[n for n in released.order if n not in hidden],
    )
    patterns = int(np.unique(_patterns(blank)).size) if blank.size else 0
    verification = Verification(
        {key: True for key in model_keys(problem.models)},
        0,
        0,
        stats.n_classes,
        f"wildcard frequencies recounted from the released labels ({int(blank.sum()):,} "
        f"blank cells in {patterns} blank pattern(s); a blank * matches any value) in "
        f"{elapsed:.3f} s",
        k_after=k_after,
        k_meaning=BLANKS_K,
    )
    return Release(
        columns,
        verification,
        loss,
        problem.metric.name,
        stats,
        np.zeros(stats.n_classes, dtype=bool),
    )


VERIFIERS.register("blanks", _verify_blanks)
