"""Regions: multidimensional recoding, each row released as the box of its region.

Mondrian (LeFevre, DeWitt & Ramakrishnan, ICDE 2006) cuts the quasi-identifier space into
regions of at least k rows and releases every row of a region as the region's summary: on an
attribute with an order (numbers) the interval ``[lo,hi]`` of the region's values (the value
itself when they are equal), on an attribute with a hierarchy the lowest hierarchy label
above all of the region's values (``*`` when only the root's parent would be), or, if the
job asks for sets, the set ``{a;b}`` of the region's values (a missing value as the empty
member: ``{a;b;}``). Rows of
regions whose summaries read the same are one released class.

The ``regions`` verifier in :data:`anonlab.release.verify.VERIFIERS` re-checks such a release
without trusting the algorithm: it reads every released label back (an original value,
``*``, a hierarchy label or an interval) and checks that it covers its own row's value, then
groups the released labels afresh and lets every model judge the classes
(:func:`~anonlab.release.verify.judge_classes`), suppressing failing classes within the limit.
Its loss is measured on the released labels alone (:func:`region_loss`): per cell,

==================  ===========================================================
released cell       NCP of the cell
==================  ===========================================================
the value           0
``[lo,hi]``         ``(hi - lo) / (max - min)`` of the column's numbers
``{a;b}``           ``(values in it - 1) / (leaves of the hierarchy - 1)``
a hierarchy label   ``(leaves under it - 1) / (leaves of the hierarchy - 1)``
``*``, suppressed   1
==================  ===========================================================

averaged over the cells (GCP, weighted by the attribute weights) or summed (NCP).

References
----------
.. [1] K. LeFevre, D. J. DeWitt and R. Ramakrishnan, "Mondrian multidimensional
   k-anonymity", ICDE 2006, sections 3-4.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray, IntArray
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.exceptions import ParameterError, PrivacyCheckError
from anonlab.metrics.base import MetricContext
from anonlab.release.problem import Problem
from anonlab.release.recoding import Recoding
from anonlab.release.verify import VERIFIERS, Release, Verification, judge_classes

__all__ = ["Regions", "region_loss", "ReadLabels", "read_labels"]

#: A cell that covers the whole domain.
HIDDEN = "*"
_INTERVAL = re.compile(r"^\[\s*([^,\]]+?)\s*,\s*([^,\]]+?)\s*\]$")


def _number(text: object) -> float:
    """``float(text)`` if it is a finite number, else NaN."""
    try:
        x = float(str(text))
    except ValueError:
        return float("nan")
    return x if np.isfinite(x) else float("nan")


@dataclass
class Regions(Recoding):
    """A multidimensional recoding: rows in regions, each cell its region's summary.

    Parameters
    ----------
    group : ndarray of int64, shape (table rows,)
        The region of each row.
    released : Mapping[str, EncodedColumn]
        The released column of each quasi-identifier (one row per table row).
    kinds : Mapping[str, str]
        How each quasi-identifier is summarized: ``interval``, ``hierarchy`` or ``set``.
    partitioning : str
        ``strict`` or ``relaxed`` (for the summary).
    rows : ndarray of int64, optional
        The rows kept (None: every row).

    Examples
    --------
    >>> import numpy as np
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.data.table import EncodedColumn, EncodedTable
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import KAnonymity
    >>> t = EncodedTable.from_columns({"age": ["30", "32", "40", "41"]})
    >>> p = Problem(t, ("age",), {"age": flat_hierarchy(t["age"].categories)},
    ...             (KAnonymity(2),), build_metric("gcp"))
    >>> released = {"age": EncodedColumn.from_values("age", ["[30,32]"] * 2 + ["[40,41]"] * 2)}
    >>> r = Regions(np.array([0, 0, 1, 1]), released, {"age": "interval"})
    >>> r.verifier, r.apply(p)["age"].labels().tolist()
    ('regions', ['[30,32]', '[30,32]', '[40,41]', '[40,41]'])
    >>> r.summary(p)["regions"]
    2
    """

    forms_classes: ClassVar[bool] = True
    verifier: ClassVar[str] = "regions"

    group: IntArray
    released: Mapping[str, EncodedColumn]
    kinds: Mapping[str, str]
    partitioning: str = "strict"
    rows: IntArray | None = None

    def __post_init__(self) -> None:
        self.group = np.asarray(self.group, dtype=np.int64)

    def apply(self, problem: Problem) -> EncodedTable:
        """Every row, each quasi-identifier as its region's summary.

        Raises
        ------
        ParameterError
            A released column of another length than the table, or a quasi-identifier
            without one.
        """
        missing = [q for q in problem.quasi_identifiers if q not in self.released]
        if missing:
            raise ParameterError(f"The regions release no cell of {missing[0]!r}.")
        bad = [
            q for q in problem.quasi_identifiers if self.released[q].codes.size != problem.n_rows
        ]
        if bad:
            raise ParameterError(
                f"The regions release {self.released[bad[0]].codes.size} cells of {bad[0]!r}; "
                f"the table has {problem.n_rows} rows."
            )
        return problem.table.with_columns({q: self.released[q] for q in problem.quasi_identifiers})

    def summary(self, problem: Problem) -> dict[str, Any]:
        """The regions, the partitioning, how each attribute is summarized and its distinct
        released values."""
        return {
            "regions": int(np.unique(self.group).size),
            "partitioning": self.partitioning,
            "summarized_as": {q: self.kinds.get(q, "hierarchy") for q in problem.quasi_identifiers},
            "distinct_released_values": {
                q: int(self.released[q].cardinality) for q in problem.quasi_identifiers
            },
        }


# --------------------------------------------------------------------------- labels
@dataclass(frozen=True)
class ReadLabels:
    """The released labels of one quasi-identifier, read back against its original column.

    Attributes
    ----------
    ncp : ndarray of float64
        Per released label, the NCP of a cell holding it (see the module docstring).
    own : ndarray of bool
        Per row, whether its released label covers its own original value.
    """

    ncp: FloatArray
    own: npt.NDArray[np.bool_]


def read_labels(
    original: EncodedColumn, released: EncodedColumn, hierarchy: Hierarchy
) -> ReadLabels:
    """Read a released column back: what each label covers and costs, from its text alone.

    A label is, in this order: a null (covers a null); one of the column's values (itself);
    ``*`` (everything); ``{a;b}`` (those values; an empty member, as in ``{a;b;}``, is a
    null); ``[lo,hi]`` (the numbers between, ends
    included); a label of the hierarchy (the values under it). Any other label covers
    nothing (the row is reported as not covered).

    Parameters
    ----------
    original, released : EncodedColumn
        The column before and after, row for row.
    hierarchy : Hierarchy
        The attribute's hierarchy.

    Returns
    -------
    ReadLabels

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.data.table import EncodedColumn
    >>> o = EncodedColumn.from_values("age", ["30", "32", "40", "50"])
    >>> r = EncodedColumn.from_values("age", ["[30,32]", "[30,32]", "40", "*"])
    >>> read = read_labels(o, r, flat_hierarchy(o.categories))
    >>> r.categories.tolist(), [round(x, 3) for x in read.ncp.tolist()], read.own.tolist()
    (['*', '40', '[30,32]'], [1.0, 0.0, 0.1], [True, True, True, True])
    """
    values = original.categories
    labels = released.categories
    n_lab = labels.size
    text_of = {str(v): i for i, v in enumerate(values.tolist()) if v is not None}
    nums = np.array([_number(v) if v is not None else np.nan for v in values.tolist()])
    finite = nums[np.isfinite(nums)]
    span = float(finite.max() - finite.min()) if finite.size else 0.0
    leaves = hierarchy.leaves
    domain = int(leaves.size)
    mappings, level_labels = hierarchy.generalizations(values)
    ncp = np.ones(n_lab, dtype=np.float64)
    # per label: the value it is (-1: none), or an interval, or a hierarchy label
    exact = np.full(n_lab, -1, dtype=np.int64)
    lo = np.full(n_lab, np.nan)
    hi = np.full(n_lab, np.nan)
    star = np.zeros(n_lab, dtype=bool)
    node: dict[str, int] = {}
    sets: dict[int, list[int]] = {}
    for i, lab in enumerate(labels.tolist()):
        if lab is None:
            exact[i] = -2 if original.null_code is None else original.null_code
            ncp[i] = 0.0
            continue
        text = str(lab)
        if text in text_of:
            exact[i] = text_of[text]
            ncp[i] = 0.0
        elif text == HIDDEN:
            star[i] = True
        elif len(text) > 2 and text[0] == "{" and text[-1] == "}":
            null = -1 if original.null_code is None else original.null_code
            members = [text_of.get(v, -1) if v else null for v in text[1:-1].split(";")]
            sets[i] = [m for m in members if m >= 0]
            ncp[i] = min((len(set(members)) - 1.0) / (domain - 1), 1.0) if domain > 1 else 0.0
        else:
            m = _INTERVAL.match(text)
            a, b = (_number(m.group(1)), _number(m.group(2))) if m else (np.nan, np.nan)
            if m is not None and np.isfinite(a) and np.isfinite(b) and a <= b:
                lo[i], hi[i] = a, b
                ncp[i] = min((b - a) / span, 1.0) if span > 0 else 0.0
            else:
                node[text] = i
    # hierarchy labels: the rows whose value's label at some level reads the same
    code = released.codes.astype(np.int64)
    value = original.codes.astype(np.int64)
    own = star[code] | (exact[code] == value)
    if node:
        under = np.zeros(n_lab, dtype=np.int64)
        for level in range(1, hierarchy.height + 1):
            ids = np.array(
                [
                    node.get(str(v), -1) if v is not None else -1
                    for v in level_labels[level].tolist()
                ],
                dtype=np.int64,
            )
            own |= ids[mappings[level]][value] == code
            leaf_codes, leaf_labels = hierarchy.leaf_generalization(level)
            counts = np.bincount(leaf_codes, minlength=leaf_labels.size)
            leaf_ids = np.array(
                [node.get(str(v), -1) if v is not None else -1 for v in leaf_labels.tolist()]
            )
            hit = leaf_ids >= 0
            np.maximum.at(under, leaf_ids[hit], counts[hit])
        named = np.array(list(node.values()), dtype=np.int64)
        ncp[named] = (under[named] - 1.0) / (domain - 1) if domain > 1 else 0.0
        ncp[named[under[named] == 0]] = 1.0  # (not a label of the hierarchy: covers nothing)
    if sets:
        pairs = np.array([lab * (values.size + 1) + m for lab, ms in sets.items() for m in ms])
        key = code * (values.size + 1) + value
        own |= np.isin(key, pairs)
    wide = np.isfinite(lo)
    if wide.any():
        x = nums[value]
        own |= wide[code] & (x >= lo[code]) & (x <= hi[code])
    return ReadLabels(ncp, own)


def region_loss(
    problem: Problem,
    released: EncodedTable,
    kept: npt.NDArray[np.bool_],
    *,
    records: IntArray | None = None,
) -> float:
    """The problem's ``gcp`` or ``ncp`` of a release, read from its labels alone.

    Parameters
    ----------
    problem : Problem
    released : EncodedTable
        The released table, row for row with the problem's table (or with ``records``).
    kept : ndarray of bool
        Per released row, whether it is released (a suppressed row counts 1 in every cell).
    records : ndarray of int, optional
        The record of each released row, when rows were removed from the release: a record
        without a row counts 1 in every cell.

    Returns
    -------
    float
        ``sum_q w_q sum_r NCP(q, r)`` (``ncp``), or that divided by ``rows * sum_q w_q``
        (``gcp``), with weights normalised by the largest.

    Examples
    --------
    >>> import numpy as np
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import KAnonymity
    >>> t = EncodedTable.from_columns({"age": ["30", "32", "40", "50"]})
    >>> p = Problem(t, ("age",), {"age": flat_hierarchy(t["age"].categories)},
    ...             (KAnonymity(2),), build_metric("gcp"))
    >>> out = EncodedTable.from_columns({"age": ["[30,32]", "[30,32]", "[40,50]", "[40,50]"]})
    >>> region_loss(p, out, np.ones(4, dtype=bool))  # (2 * 0.1 + 2 * 0.5) / 4
    0.3
    """
    top = max(problem.weights.values(), default=1.0) if problem.weights else 1.0
    n = problem.n_rows
    missing = n - released.n_rows
    total = 0.0
    sites = 0.0
    for q in problem.quasi_identifiers:
        w = float(problem.weights.get(q, 1.0)) / top if top > 0 else 1.0
        col = problem.table[q]
        if records is not None:  # (the whole column's values: its range, its domain)
            col = EncodedColumn(col.name, col.codes[records], col.categories)
        read = read_labels(col, released[q], problem.hierarchies[q])
        per_row = np.where(kept, read.ncp[released[q].codes], 1.0)
        total += w * (float(per_row.sum()) + missing)
        sites += w
    if problem.metric.name == "ncp":
        return total
    return round(total / (n * sites), 12) if n and sites else 0.0


# --------------------------------------------------------------------------- verify
def _verify_regions(
    problem: Problem,
    recoding: Recoding,
    *,
    mask_suppressed: bool,
    context: MetricContext | None,
) -> Release:
    """Read every released label back (it must cover its row's value), judge the classes
    of the released labels by every model, suppress within the limit, measure on labels."""
    del context  # measured on the labels
    if problem.metric.name not in ("gcp", "ncp"):
        raise PrivacyCheckError(
            f"A regions release is measured with 'gcp' or 'ncp', not {problem.metric.name!r}. "
            "Nothing was released."
        )
    released = recoding.apply(problem)
    for q in problem.quasi_identifiers:
        read = read_labels(problem.table[q], released[q], problem.hierarchies[q])
        if not bool(read.own.all()):
            row = int(np.flatnonzero(~read.own)[0])
            out, col = released[q], problem.table[q]
            raise PrivacyCheckError(
                f"Re-check failed: row {row + 1}, column {q!r}: the released value "
                f"{out.categories[out.codes[row]]!r} does not cover the original value "
                f"{col.categories[col.codes[row]]!r}. Nothing was released."
            )
    judged = judge_classes(problem, recoding, released, mask_suppressed=mask_suppressed)
    assert judged.stats.row_class is not None
    kept = judged.ok[judged.stats.row_class]
    loss = region_loss(problem, released, kept)
    verification = Verification(
        judged.checks,
        judged.suppressed_rows,
        0,
        int(np.count_nonzero(judged.ok)),
        "every released label read back covers its record's value; the models judged the "
        "classes of the released labels",
        k_after=judged.k_after,
    )
    return Release(
        judged.columns, verification, loss, problem.metric.name, judged.stats, ~judged.ok
    )


VERIFIERS.register("regions", _verify_regions)
