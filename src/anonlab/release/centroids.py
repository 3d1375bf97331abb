"""Centroids: a microaggregated release, each group of records released as its centroid.

Microaggregation (MDAV, Domingo-Ferrer & Mateo-Sanz 2002; Domingo-Ferrer & Torra 2005) puts
the records in groups of at least k and releases, in every quasi-identifier, one value per
group: the mean (or the median) of the group's values for a numeric attribute, the most
frequent value (the mode) for a categorical one. The released values are new values, not
labels of a hierarchy, so :class:`Centroids` is a :class:`~anonlab.release.recoding.Recoding`
but not a :class:`~anonlab.release.recoding.LevelRecoding`, verified by its own verifier
(``"centroids"`` in :data:`~anonlab.release.verify.VERIFIERS`).

A missing value stays missing: a group whose members all miss a value releases a null there,
a group that mixes missing and present values releases ``*`` (the whole domain), so that no
present value becomes missing and no missing one is given a value.

The verification never trusts the grouping of the algorithm: it groups the rows on their
RELEASED values (:func:`check_centroids`), checks that every released class's cell is the
centroid of its members' original values (the mean within 1e-9 of it relatively, or a median,
or a mode), and every model judges the released classes (failing classes suppressed within the
limit, as for every release that forms classes). Its loss is measured on the released classes
as anonlab's common loss, GCP (:func:`centroid_gcp`); the information loss as sdcMicro reports
it, SSE/SST and IL1s (:func:`sse_sst`, :func:`il1s`), is given beside it.

References
----------
.. [1] J. Domingo-Ferrer and J. M. Mateo-Sanz, "Practical data-oriented microaggregation for
   statistical disclosure control", IEEE TKDE 14(1) (2002), 189-201.
.. [2] J. Domingo-Ferrer and V. Torra, "Ordinal, continuous and heterogeneous k-anonymity
   through microaggregation", Data Mining and Knowledge Discovery 11(2) (2005), 195-212.
.. [3] M. Templ, A. Kowarik and B. Meindl, "Statistical disclosure control for micro-data
   using the R package sdcMicro", Journal of Statistical Software 67(4) (2015) (IL1s).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray, IntArray
from anonlab.data.labels import factorize
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.exceptions import PrivacyCheckError
from anonlab.metrics.base import MetricContext
from anonlab.models.per_record import RecordModel
from anonlab.release.problem import Problem
from anonlab.release.recoding import Recoding
from anonlab.release.verify import VERIFIERS, Release, Verification, judge_classes

__all__ = [
    "AGGREGATES",
    "Centroids",
    "centroid_gcp",
    "check_centroids",
    "class_ncp",
    "il1s",
    "numeric_values",
    "released_numbers",
    "sse_sst",
]

#: A cell whose group mixes missing and present values: the whole domain.
HIDDEN = "*"
#: How a numeric group's value is aggregated.
AGGREGATES = ("mean", "median")
#: Relative tolerance of a released mean (its text keeps 10 significant digits).
RTOL = 1e-9


def numeric_values(col: EncodedColumn) -> FloatArray | None:
    """The number of each category of ``col`` (NaN for a null), or None if a value is not a
    finite number.

    Examples
    --------
    >>> numeric_values(EncodedColumn.from_values("age", ["31", "4.5", None])).tolist()
    [4.5, 31.0, nan]
    >>> numeric_values(EncodedColumn.from_values("sex", ["F", "M"])) is None
    True
    """
    cats = col.categories
    out = np.full(cats.size, np.nan)
    present = np.array([v is not None for v in cats.tolist()], dtype=bool)
    try:
        out[present] = np.array([float(v) for v in cats[present].tolist()], dtype=np.float64)
    except (TypeError, ValueError):
        return None
    if not np.isfinite(out[present]).all():
        return None
    return out


def released_numbers(col: EncodedColumn) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Per category of a released column, its number (NaN if it is none: a null, ``*`` or a
    text) and whether it is ``*``."""
    cats = col.categories.tolist()
    out = np.full(len(cats), np.nan)
    hidden = np.zeros(len(cats), dtype=bool)
    for i, v in enumerate(cats):  # (a loop over the distinct released values)
        if v == HIDDEN:
            hidden[i] = True
        elif v is not None:
            try:
                out[i] = float(v)
            except ValueError:
                pass
    return out, hidden


def _number_labels(values: FloatArray) -> npt.NDArray[np.object_]:
    """The text of each value with 10 significant digits (``32``, ``32.33333333``)."""
    texts = np.char.mod("%.10g", np.asarray(values, dtype=np.float64))
    return np.asarray(texts, dtype=object)


def _group_rows(group: IntArray, n_groups: int) -> tuple[IntArray, IntArray]:
    """The rows sorted by group (stable) and where each group starts (and the end last)."""
    order = np.argsort(group, kind="stable")
    starts = np.searchsorted(group[order], np.arange(n_groups + 1))
    return order, starts


def group_medians(x: FloatArray, group: IntArray, n_groups: int) -> FloatArray:
    """The median of each group's values (the mean of the two middle values of an even
    group); every group holds a value.

    Examples
    --------
    >>> import numpy as np
    >>> group_medians(np.array([1.0, 5.0, 2.0, 9.0]), np.array([0, 0, 0, 1]), 2).tolist()
    [2.0, 9.0]
    """
    order = np.lexsort((x, group))
    sizes = np.bincount(group, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    xs = x[order]
    lo = xs[starts + (sizes - 1) // 2]
    hi = xs[starts + sizes // 2]
    out: FloatArray = (lo + hi) / 2
    return out


def group_modes(codes: IntArray, group: IntArray, n_groups: int) -> IntArray:
    """The most frequent code of each group (the lowest of those tied).

    Examples
    --------
    >>> import numpy as np
    >>> group_modes(np.array([2, 1, 1, 0, 0]), np.array([0, 0, 0, 1, 1]), 2).tolist()
    [1, 0]
    """
    width = int(codes.max()) + 1 if codes.size else 1
    pair = group.astype(np.int64) * width + codes
    keys, counts = np.unique(pair, return_counts=True)
    g, c = keys // width, keys % width
    best = np.lexsort((c, -counts, g))  # per group: the highest count, then the lowest code
    first = np.ones(best.size, dtype=bool)
    first[1:] = g[best][1:] != g[best][:-1]
    out = np.zeros(n_groups, dtype=np.int64)
    out[g[best][first]] = c[best][first]
    return out


def _release_column(
    col: EncodedColumn, group: IntArray, n_groups: int, aggregate: str
) -> EncodedColumn:
    """The released column: each group's centroid (numbers) or mode (text); a null where
    the whole group misses the value, ``*`` where it mixes missing and present values."""
    numbers = numeric_values(col)
    x = None if numbers is None else numbers[col.codes]
    null = (
        np.isnan(x)
        if x is not None
        else col.codes == (-1 if col.null_code is None else col.null_code)
    )
    sizes = np.bincount(group, minlength=n_groups)
    nulls = np.bincount(group, weights=null, minlength=n_groups)
    all_null, mixed = nulls == sizes, (nulls > 0) & (nulls < sizes)
    labels = np.empty(n_groups, dtype=object)
    full = ~all_null & ~mixed
    rows = ~null & full[group]
    if x is not None:
        present = np.bincount(group[rows], minlength=n_groups)
        if aggregate == "median":
            value = np.zeros(n_groups)
            value[present > 0] = group_medians(x[rows], group[rows], n_groups)[present > 0]
        else:
            total = np.bincount(group[rows], weights=x[rows], minlength=n_groups)
            value = total / np.maximum(present, 1)
        labels[full] = _number_labels(value[full])
    else:
        modes = group_modes(col.codes[rows].astype(np.int64), group[rows], n_groups)
        labels[full] = col.categories[modes[full]]
    labels[all_null] = None
    labels[mixed] = HIDDEN
    codes, categories = factorize(labels)
    return EncodedColumn(col.name, codes[group], categories)


@dataclass
class Centroids(Recoding):
    """Rows in groups, every quasi-identifier released as its group's centroid.

    Parameters
    ----------
    group : ndarray of int64, shape (table rows,)
        The group of each row (0 .. groups - 1).
    aggregate : {"mean", "median"}
        A numeric attribute's centroid.
    categorical : tuple of str
        The quasi-identifiers released as their group's mode (not numeric).

    Examples
    --------
    >>> import numpy as np
    >>> from anonlab import EncodedTable
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.metrics.certainty import NormalizedCertaintyPenalty
    >>> from anonlab.models import KAnonymity
    >>> t = EncodedTable.from_columns({"age": ["30", "31", "35", "60", "62", "64"]})
    >>> p = Problem(t, ("age",), {"age": flat_hierarchy(t["age"].categories)},
    ...             (KAnonymity(3),), NormalizedCertaintyPenalty())
    >>> r = Centroids(group=np.array([0, 0, 0, 1, 1, 1]))
    >>> r.apply(p)["age"].labels().tolist()
    ['32', '32', '32', '62', '62', '62']
    >>> r.verifier, r.summary(p)["groups"]
    ('centroids', 2)
    """

    forms_classes: ClassVar[bool] = True
    verifier: ClassVar[str] = "centroids"

    group: IntArray
    aggregate: str = "mean"
    categorical: tuple[str, ...] = ()
    rows: IntArray | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.group = np.ascontiguousarray(np.asarray(self.group, dtype=np.int64))
        self.categorical = tuple(self.categorical)

    @property
    def n_groups(self) -> int:
        """Groups of records."""
        return int(self.group.max()) + 1 if self.group.size else 0

    def apply(self, problem: Problem) -> EncodedTable:
        """Every row, each quasi-identifier as its group's centroid (or mode)."""

        def make() -> EncodedTable:
            if self.group.size != problem.n_rows:
                raise PrivacyCheckError(
                    f"The microaggregation groups {self.group.size} rows; the table has "
                    f"{problem.n_rows}. Nothing was released."
                )
            replaced = {
                q: _release_column(problem.table[q], self.group, self.n_groups, self.aggregate)
                for q in problem.quasi_identifiers
            }
            return problem.table.with_columns(replaced)

        return self._memo("released", problem, make)

    def summary(self, problem: Problem) -> dict[str, Any]:
        """The groups, their smallest and largest size, the centroid, the categorical
        attributes, and sdcMicro's information loss (SSE/SST, IL1s) of the numeric ones."""
        sizes = np.bincount(self.group)
        released = self.apply(problem)
        numeric = [q for q in problem.quasi_identifiers if q not in self.categorical]
        return {
            "groups": self.n_groups,
            "smallest_group": int(sizes.min()) if sizes.size else 0,
            "largest_group": int(sizes.max()) if sizes.size else 0,
            "aggregate": self.aggregate,
            "categorical_mode": list(self.categorical),
            "sse_sst": sse_sst(problem.table, released, numeric),
            "il1s": il1s(problem.table, released, numeric),
        }


# --------------------------------------------------------------------------- measures
def _pairs(
    original: EncodedTable, released: EncodedTable, columns: list[str]
) -> tuple[FloatArray, FloatArray]:
    """The original and released numbers, (rows, columns); NaN where either is not one."""
    xs, ys = [], []
    for q in columns:
        numbers = numeric_values(original[q])
        if numbers is None:
            continue
        xs.append(numbers[original[q].codes])
        values, _ = released_numbers(released[q])
        ys.append(values[released[q].codes])
    if not xs:
        return np.zeros((original.n_rows, 0)), np.zeros((original.n_rows, 0))
    x, y = np.stack(xs, axis=1), np.stack(ys, axis=1)
    bad = np.isnan(x) | np.isnan(y)
    return np.where(bad, np.nan, x), np.where(bad, np.nan, y)


def sse_sst(original: EncodedTable, released: EncodedTable, columns: list[str]) -> float:
    """SSE/SST of a microaggregated release: the squared distances of the released records
    to the original ones over the squared distances of the original records to their mean,
    on the standardized numeric attributes (cells that are not numbers on both sides left
    out). 0 for a release equal to its original, 1 for one that releases every record as the
    mean of the table.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> t = EncodedTable.from_columns({"x": ["1", "2", "3", "7", "8", "9"]})
    >>> r = EncodedTable.from_columns({"x": ["2", "2", "2", "8", "8", "8"]})
    >>> round(sse_sst(t, r, ["x"]), 6)  # (1 + 0 + 1 + 1 + 0 + 1) / (16 + 9 + 4 + 4 + 9 + 16)
    0.068966
    """
    x, y = _pairs(original, released, columns)
    if not x.size:
        return 0.0
    scale = np.nanstd(x, axis=0)
    scale[~(scale > 0)] = 1.0
    sse = float(np.nansum(((x - y) / scale) ** 2))
    sst = float(np.nansum(((x - np.nanmean(x, axis=0)) / scale) ** 2))
    return sse / sst if sst > 0 else 0.0


def il1s(original: EncodedTable, released: EncodedTable, columns: list[str]) -> float:
    """IL1s as sdcMicro's ``dUtility`` reports it: the mean over the numeric cells of
    ``|x - x'| / (sqrt(2) * S)``, ``S`` the standard deviation (n - 1) of the original
    attribute (cells that are not numbers on both sides left out).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> t = EncodedTable.from_columns({"x": ["1", "3"]})
    >>> r = EncodedTable.from_columns({"x": ["2", "2"]})
    >>> round(il1s(t, r, ["x"]), 6)  # 1 / (sqrt(2) * sqrt(2))
    0.5
    """
    x, y = _pairs(original, released, columns)
    counted = ~np.isnan(x)
    if not counted.any():
        return 0.0
    n = counted.sum(axis=0)
    sd = np.sqrt(np.nansum((x - np.nanmean(x, axis=0)) ** 2, axis=0) / np.maximum(n - 1, 1))
    sd[~(sd > 0)] = 1.0
    return float(np.nansum(np.abs(x - y) / (np.sqrt(2) * sd)) / counted.sum())


def centroid_gcp(
    original: EncodedTable,
    columns: list[str],
    row_class: IntArray,
    suppressed: npt.NDArray[np.bool_],
    hidden: dict[str, npt.NDArray[np.bool_]],
) -> float:
    """anonlab's common loss (GCP) of a release that forms classes of new values.

    Per cell: a number released for its class counts the range of the class's original
    values over the attribute's range (``(max - min) / (MAX - MIN)``, as an interval
    ``[min,max]`` would); a categorical value the distinct values of its class less one over
    the attribute's distinct values less one (as the label covering them would); a ``*``
    cell, and every cell of a suppressed class, 1; a null 0. GCP is their mean over the rows
    and quasi-identifiers.

    Parameters
    ----------
    original : EncodedTable
    columns : list of str
        The quasi-identifiers.
    row_class : ndarray of int64
        The released class of each row.
    suppressed : ndarray of bool
        Per class, whether it is suppressed.
    hidden : dict of str to ndarray of bool
        Per quasi-identifier, whether each class's released cell is ``*``.

    Examples
    --------
    >>> import numpy as np
    >>> from anonlab import EncodedTable
    >>> t = EncodedTable.from_columns({"x": ["0", "2", "8", "10"]})
    >>> centroid_gcp(t, ["x"], np.array([0, 0, 1, 1]), np.zeros(2, bool), {"x": np.zeros(2, bool)})
    0.2
    """
    n = row_class.size
    if not n or not columns:
        return 0.0
    per_class = class_ncp(original, columns, row_class, suppressed, hidden)
    return float(per_class[row_class].sum()) / (n * len(columns))


def class_ncp(
    original: EncodedTable,
    columns: list[str],
    row_class: IntArray,
    suppressed: npt.NDArray[np.bool_],
    hidden: dict[str, npt.NDArray[np.bool_]],
    *,
    whole_domain: bool = False,
) -> FloatArray:
    """Per released class, the NCP of one of its rows summed over the quasi-identifiers
    (:func:`centroid_gcp` counts it once per row).

    Parameters
    ----------
    original : EncodedTable
    columns : list of str
    row_class : ndarray of int64
    suppressed : ndarray of bool
    hidden : dict of str to ndarray of bool
        As for :func:`centroid_gcp`.
    whole_domain : bool
        Take a numeric attribute's range from its categories (the whole table's, when the
        rows are a block encoded with the whole table's labels) instead of from the rows.

    Returns
    -------
    ndarray of float64, shape (classes,)

    Examples
    --------
    >>> import numpy as np
    >>> from anonlab import EncodedTable
    >>> t = EncodedTable.from_columns({"x": ["0", "2", "8", "10"]})
    >>> half = EncodedTable((EncodedColumn("x", t["x"].codes[:2], t["x"].categories),))
    >>> no = {"x": np.zeros(1, bool)}
    >>> class_ncp(half, ["x"], np.array([0, 0]), np.zeros(1, bool), no).tolist()
    [1.0]
    >>> class_ncp(half, ["x"], np.array([0, 0]), np.zeros(1, bool), no, whole_domain=True).tolist()
    [0.2]
    """
    n_classes = int(row_class.max()) + 1 if row_class.size else 0
    total = np.zeros(n_classes, dtype=np.float64)
    for q in columns:
        col = original[q]
        numbers = numeric_values(col)
        if numbers is not None:
            x = numbers[col.codes]
            ok = ~np.isnan(x)
            lo = np.full(n_classes, np.inf)
            hi = np.full(n_classes, -np.inf)
            np.minimum.at(lo, row_class[ok], x[ok])
            np.maximum.at(hi, row_class[ok], x[ok])
            known = numbers if whole_domain else x
            span = np.nanmax(known) - np.nanmin(known) if (~np.isnan(known)).any() else 0.0
            ncp = np.where(np.isfinite(lo), (hi - lo) / span if span > 0 else 0.0, 0.0)
        else:
            values = col.codes.astype(np.int64)
            present = col.codes != (-1 if col.null_code is None else col.null_code)
            pairs = np.unique(row_class[present] * col.cardinality + values[present])
            distinct = np.bincount(pairs // col.cardinality, minlength=n_classes)
            domain = col.cardinality - (0 if col.null_code is None else 1)
            ncp = (
                (np.maximum(distinct, 1) - 1) / (domain - 1) if domain > 1 else np.zeros(n_classes)
            )
        total += np.where(hidden[q] | suppressed, 1.0, ncp)
    return total


# --------------------------------------------------------------------------- verification
def check_centroids(
    original: EncodedTable,
    released: EncodedTable,
    columns: list[str],
    row_class: IntArray,
    aggregate: str,
) -> tuple[list[str], dict[str, npt.NDArray[np.bool_]]]:
    """Check that every released class's cells are the centroids of its members' values.

    The classes are those of the released values (``row_class``), never the algorithm's
    groups. In every quasi-identifier a class's cell must be: a null if every member misses
    the value; ``*`` (allowed anywhere: the whole domain); else, for a numeric attribute,
    the mean of its members' values (within a relative 1e-9) or a median of them (at most
    half of them below it and at most half above, a value within a relative 1e-9 of it
    counting as it), for a categorical one a most frequent
    value of its members (no missing member).

    Parameters
    ----------
    original, released : EncodedTable
        The table and its release, row for row.
    columns : list of str
        The quasi-identifiers.
    row_class : ndarray of int64
        The class of each row, from the released values.
    aggregate : {"mean", "median"}

    Returns
    -------
    problems : list of str
        One line per attribute whose cells are not centroids (naming the first row).
    hidden : dict of str to ndarray of bool
        Per attribute, whether each class's cell is ``*``.

    Examples
    --------
    >>> import numpy as np
    >>> from anonlab import EncodedTable
    >>> t = EncodedTable.from_columns({"x": ["1", "3", "8", "10"]})
    >>> r = EncodedTable.from_columns({"x": ["2", "2", "9", "9"]})
    >>> check_centroids(t, r, ["x"], np.array([0, 0, 1, 1]), "mean")[0]
    []
    >>> r = EncodedTable.from_columns({"x": ["2", "2", "8", "8"]})
    >>> check_centroids(t, r, ["x"], np.array([0, 0, 1, 1]), "mean")[0]
    ["column 'x', row 3 of the release holds '8', not the mean 9 of its class's 2 rows."]
    """
    n_classes = int(row_class.max()) + 1 if row_class.size else 0
    sizes = np.bincount(row_class, minlength=n_classes)
    first = np.full(n_classes, -1, dtype=np.int64)
    first[row_class[::-1]] = np.arange(row_class.size - 1, -1, -1)
    problems: list[str] = []
    hidden: dict[str, npt.NDArray[np.bool_]] = {}
    for q in columns:
        col, rel = original[q], released[q]
        cell = rel.codes[first]  # each class's released cell (one per class: classes are
        # groups of equal released values)
        values, star = released_numbers(rel)
        is_hidden = star[cell]
        is_null = rel.categories[cell] == None  # noqa: E711 - elementwise
        hidden[q] = is_hidden
        numbers = numeric_values(col)
        null_rows = (
            np.isnan(numbers[col.codes])
            if numbers is not None
            else col.codes == (-1 if col.null_code is None else col.null_code)
        )
        nulls = np.bincount(row_class, weights=null_rows, minlength=n_classes)
        bad = is_null & (nulls < sizes)  # a null released for a present value
        what = np.array(["a null where a member has a value"] * n_classes, dtype=object)
        judged = ~is_hidden & ~is_null
        bad |= judged & (nulls > 0)
        if numbers is not None:
            x = np.where(null_rows, 0.0, numbers[col.codes])
            v = values[cell]
            if aggregate == "median":
                # (a value within the text's rounding of the median counts as the median)
                tol = (RTOL * np.abs(v))[row_class]
                below = np.bincount(row_class, weights=x < v[row_class] - tol, minlength=n_classes)
                above = np.bincount(row_class, weights=x > v[row_class] + tol, minlength=n_classes)
                wrong = ~((2 * below <= sizes) & (2 * above <= sizes))
                expected = group_medians(x, row_class, n_classes)
            else:
                expected = np.bincount(row_class, weights=x, minlength=n_classes) / sizes
                wrong = ~(np.abs(v - expected) <= RTOL * np.maximum(np.abs(expected), 1e-300))
            wrong |= np.isnan(v)
            bad |= judged & (nulls == 0) & wrong
            what[wrong] = [f"the {aggregate} {e:.10g}" for e in expected[wrong].tolist()]
        else:
            texts = np.array([None if c is None else str(c) for c in rel.categories.tolist()])
            own = {str(c): i for i, c in enumerate(col.categories.tolist()) if c is not None}
            code = np.array([own.get(t, -1) if t is not None else -1 for t in texts.tolist()])
            as_code = code[cell]
            width = col.cardinality
            keys, cnt = np.unique(row_class * width + col.codes, return_counts=True)
            top = np.zeros(n_classes, dtype=np.int64)
            np.maximum.at(top, keys // width, cnt)
            want = np.arange(n_classes, dtype=np.int64) * width + np.maximum(as_code, 0)
            where = np.minimum(np.searchsorted(keys, want), keys.size - 1)
            mine = np.where((as_code >= 0) & (keys[where] == want), cnt[where], 0)
            wrong = (as_code < 0) | (mine < top)
            bad |= judged & (nulls == 0) & wrong
            what[wrong] = "a most frequent value of its class"
        at = np.flatnonzero(bad)
        if at.size:
            c = int(at[0])
            row = int(first[c])
            shown = rel.categories[cell[c]]
            problems.append(
                f"column {q!r}, row {row + 1} of the release holds "
                f"{'a null' if shown is None else repr(str(shown))}, not {what[c]} of its "
                f"class's {int(sizes[c])} rows."
            )
    return problems, hidden


def _verify_centroids(
    problem: Problem,
    recoding: Recoding,
    *,
    mask_suppressed: bool,
    context: MetricContext | None,
) -> Release:
    """Group the released values, check every class's cells are its centroids, judge every
    class by every model, suppress within the limit; measure GCP on the released classes."""
    del context  # the loss is measured on the released classes
    if not isinstance(recoding, Centroids):  # pragma: no cover - declared by the recoding
        raise PrivacyCheckError(
            f"A {type(recoding).__name__} release is not made of centroids. Nothing was released."
        )
    for m in problem.models:
        if isinstance(m, RecordModel) or m.sample_based:
            raise PrivacyCheckError(
                f"Model {m.name!r} is not judged on a microaggregated release's classes. "
                "Nothing was released."
            )
    start = time.perf_counter()
    released = recoding.apply(problem)
    qis = list(problem.quasi_identifiers)
    judged = judge_classes(problem, recoding, released, mask_suppressed=mask_suppressed)
    stats, ok = judged.stats, judged.ok
    assert stats.row_class is not None
    row_class = np.asarray(stats.row_class, dtype=np.int64)
    problems, hidden = check_centroids(problem.table, released, qis, row_class, recoding.aggregate)
    if problems:
        raise PrivacyCheckError("Re-check failed: " + " ".join(problems) + " Nothing was released.")
    loss = centroid_gcp(problem.table, qis, row_class, ~ok, hidden)
    elapsed = time.perf_counter() - start
    verification = Verification(
        judged.checks,
        judged.suppressed_rows,
        0,
        int(np.count_nonzero(ok)),
        "the rows grouped on their released values; every class's cells checked to be the "
        f"{recoding.aggregate} (numbers) or a mode (categories) of its members' values; the "
        f"models judged the classes ({elapsed:.3f} s)",
        k_after=judged.k_after,
    )
    return Release(judged.columns, verification, loss, "gcp", stats, ~ok)


VERIFIERS.register("centroids", _verify_centroids)
