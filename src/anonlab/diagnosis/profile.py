"""Profiles: what a table holds, and what a release did to its classes and sensitive values.

A report (:mod:`anonlab.report`) renders results and never computes them; the figures it shows
that are not answers to the Diagnosis Centre's questions are computed here:

* :func:`profile_table`: rows, columns, roles, missing and distinct values per column;
* :func:`profile_release`: the class sizes of a release, each sensitive attribute's
  distribution per released class against the whole table, the levels' heights, and the
  information loss per quasi-identifier (the job's metric where it has a value per attribute,
  else ARX's Loss).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._html import html_card
from anonlab.data.table import EncodedTable
from anonlab.diagnosis.risk import class_size_histogram
from anonlab.engines import get_engine
from anonlab.exceptions import ParameterError
from anonlab.metrics import build_metric
from anonlab.metrics.base import Metric
from anonlab.release import (
    AnonymizationResult,
    CellCover,
    FullDomain,
    LevelRecoding,
    Problem,
    attribute_ncp,
    metric_context,
    release_cells,
)

__all__ = [
    "AttributeLoss",
    "ColumnProfile",
    "ReleaseProfile",
    "SensitiveDistribution",
    "TableProfile",
    "profile_release",
    "profile_table",
]

#: Classes whose sensitive distributions a release profile lists (the farthest first).
MAX_LISTED_CLASSES = 20
#: Sensitive values shown one by one; the rest are summed as "other".
MAX_LISTED_VALUES = 10


@dataclass
class ColumnProfile:
    """One column of a table profile.

    Attributes
    ----------
    name : str
    role : str
        ``quasi-identifier``, ``sensitive``, ``identifier`` or ``insensitive``.
    distinct : int
        Distinct values, a missing value not counted.
    missing : int
        Rows with a missing value.
    top_value : str or None
        The most frequent value (None for an empty or all-missing column).
    top_count : int
        Its rows.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> p = profile_table(EncodedTable.from_columns({"sex": ["F", "M", "F", None]}))
    >>> column = p.columns[0]
    >>> column.name, column.distinct, column.missing, column.top_value, column.top_count
    ('sex', 2, 1, 'F', 2)
    """

    name: str
    role: str
    distinct: int
    missing: int
    top_value: str | None
    top_count: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return dataclasses.asdict(self)


@dataclass
class TableProfile:
    """Rows, columns, roles, missing and distinct values of a table as it is.

    Attributes
    ----------
    n_rows : int
    columns : list of ColumnProfile
        The encoded columns, in table order.
    nested : list of str
        List or struct columns: carried through, never an attribute.
    source : str or None
        Where the table came from.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> p = profile_table(EncodedTable.from_columns({"age": ["31", "42"], "sex": ["F", None]}))
    >>> p.n_rows, p.n_columns, [c.name for c in p.columns]
    (2, 2, ['age', 'sex'])
    """

    n_rows: int
    columns: list[ColumnProfile]
    nested: list[str] = field(default_factory=list)
    source: str | None = None

    @property
    def n_columns(self) -> int:
        """Columns, nested ones included."""
        return len(self.columns) + len(self.nested)

    def _repr_html_(self) -> str:
        """The profile as a table, one row per column (Jupyter's rich display).

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> p = profile_table(EncodedTable.from_columns({"sex": ["F", "M", "F"]}))
        >>> "<td>sex</td>" in p._repr_html_()
        True
        """
        headline = f"{self.n_rows:,} rows, {self.n_columns} columns" + (
            f" (from {self.source})." if self.source else "."
        )
        return html_card("Table profile", self.to_dict(), headline=headline)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form.

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> profile_table(EncodedTable.from_columns({"sex": ["F", "M", "F"]})).to_dict()["n_rows"]
        3
        """
        return {
            "question": "profile",
            "n_rows": self.n_rows,
            "n_columns": self.n_columns,
            "columns": [c.to_dict() for c in self.columns],
            "nested": self.nested,
            "source": self.source,
        }


def profile_table(table: EncodedTable) -> TableProfile:
    """Profile ``table``: per column its role, distinct and missing values, commonest value.

    Parameters
    ----------
    table : EncodedTable

    Returns
    -------
    TableProfile

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> p = profile_table(EncodedTable.from_columns({"sex": ["F", "M", "F"]}))
    >>> p.n_rows, p.columns[0].top_value, p.columns[0].top_count
    (3, 'F', 2)
    """
    cols = []
    for col in table.columns:
        counts = np.bincount(col.codes, minlength=col.cardinality)
        null = col.null_code
        missing = int(counts[null]) if null is not None else 0
        if null is not None:
            counts = counts.copy()
            counts[null] = -1
        top = int(np.argmax(counts)) if counts.size else -1
        has_top = top >= 0 and counts[top] > 0
        cols.append(
            ColumnProfile(
                name=col.name,
                role=table.schema.role(col.name).value,
                distinct=col.cardinality - (1 if null is not None else 0),
                missing=missing,
                top_value=str(col.categories[top]) if has_top else None,
                top_count=int(counts[top]) if has_top else 0,
            )
        )
    return TableProfile(table.n_rows, cols, list(table.nested), table.source)


@dataclass
class SensitiveDistribution:
    """A sensitive attribute's distribution in the released classes against the whole table.

    Attributes
    ----------
    attribute : str
    values : list of str
        The values shown (the most frequent first; ``other`` sums the rest).
    table_counts : list of int
        Rows with each value in the whole table (every class of the release, suppressed ones
        included).
    classes : list of dict
        The released classes farthest from the whole table: ``key`` (the class's labels),
        ``size``, ``counts`` (per value, aligned with ``values``) and ``distance``.
    max_distance : float
        The largest total-variation distance of a released class to the whole table
        (0: every class has the table's distribution; 1: disjoint).
    mean_distance : float
        Its mean over released classes, weighted by class size.
    released_classes : int
        Classes released (not suppressed).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "disease": ["flu", "hiv"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}}, "sensitive": ["disease"],
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> result = anonlab.anonymize(t, job)
    >>> d = profile_release(result.problem, result, ["disease"]).sensitive[0]
    >>> d.attribute, d.values, d.table_counts, d.max_distance
    ('disease', ['flu', 'hiv'], [4, 4], 0.0)
    """

    attribute: str
    values: list[str]
    table_counts: list[int]
    classes: list[dict[str, Any]]
    max_distance: float
    mean_distance: float
    released_classes: int

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return dataclasses.asdict(self)


@dataclass
class AttributeLoss:
    """The information loss of a release per quasi-identifier.

    Attributes
    ----------
    metric : str
        The metric whose per-attribute values these are.
    values : dict of str to float
        Per quasi-identifier, before weighting and aggregation.
    note : str
        How the values relate to the job's metric.

    Examples
    --------
    >>> loss = AttributeLoss("ncp", {"zip": 0.5, "sex": 0.0})
    >>> loss.to_dict()
    {'metric': 'ncp', 'values': {'zip': 0.5, 'sex': 0.0}, 'note': ''}
    """

    metric: str
    values: dict[str, float]
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return dataclasses.asdict(self)


@dataclass
class ReleaseProfile:
    """What a release did to the classes and the sensitive values of a table.

    Attributes
    ----------
    class_size_histogram : list of dict
        Released classes and their records per class-size bucket (suppressed classes not
        counted), as :attr:`~anonlab.diagnosis.RiskSummary.class_size_histogram`.
    k : int
        The smallest released class (0 if nothing is released).
    released_classes, suppressed_classes : int
    released_rows, suppressed_rows : int
    heights : dict of str to int
        The height of each quasi-identifier's hierarchy.
    max_levels : dict of str to int
        The highest level the job allows per quasi-identifier.
    attribute_loss : AttributeLoss or None
        None when the metric measures only the whole release.
    sensitive : list of SensitiveDistribution

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> result = anonlab.anonymize(t, job)
    >>> release = profile_release(result.problem, result)
    >>> release.k, release.released_classes, release.heights
    (4, 2, {'zip': 4, 'sex': 1})
    """

    class_size_histogram: list[dict[str, Any]]
    k: int
    released_classes: int
    suppressed_classes: int
    released_rows: int
    suppressed_rows: int
    heights: dict[str, int]
    max_levels: dict[str, int]
    attribute_loss: AttributeLoss | None
    sensitive: list[SensitiveDistribution]

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out = dataclasses.asdict(self)
        out["attribute_loss"] = (
            None if self.attribute_loss is None else self.attribute_loss.to_dict()
        )
        return out


def profile_release(
    problem: Problem, result: AnonymizationResult, sensitive: Sequence[str] = ()
) -> ReleaseProfile:
    """Profile a verified release: class sizes, sensitive distributions, loss per attribute.

    Parameters
    ----------
    problem : Problem
        The problem the release answers (the job on the same table).
    result : AnonymizationResult
        The release.
    sensitive : sequence of str
        Sensitive attributes to profile besides those the models read (the job's
        ``sensitive``); their counts per released class are grouped from the release.

    Returns
    -------
    ReleaseProfile

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> result = anonlab.anonymize(t, job)
    >>> p = profile_release(result.problem, result)
    >>> p.k, p.released_rows, p.suppressed_rows
    (4, 8, 0)
    """
    if result.recoding is None:  # a block run: the rows are in the output file
        raise ParameterError("A per-partition release keeps its rows in the output file.")
    release = result.release
    stats = release.classes
    suppressed = np.asarray(release.suppressed, dtype=bool)
    kept = stats.sizes[~suppressed]
    keys = _class_keys(stats)
    names = list(dict.fromkeys([*problem.sensitive, *sensitive]))
    histograms = dict(stats.sensitive)
    missing = [a for a in names if a not in histograms]
    if missing or keys is None:  # group the release again: the keys, the other attributes
        released = result.recoding.apply(problem)
        more = get_engine("numpy", released).class_stats(
            list(problem.quasi_identifiers), sensitive=missing
        )
        more_keys = _class_keys(more)
        if np.array_equal(more.sizes, stats.sizes):  # (the same engine: the same classes)
            keys = more_keys if keys is None else keys
            if more_keys == keys:
                histograms.update(more.sensitive)
    distributions = [
        _sensitive(name, histograms[name], stats.sizes, suppressed, keys)
        for name in names
        if name in histograms
    ]
    return ReleaseProfile(
        class_size_histogram=class_size_histogram(kept),
        k=int(kept.min()) if kept.size else 0,
        released_classes=int(kept.size),
        suppressed_classes=int(np.count_nonzero(suppressed)),
        released_rows=int(kept.sum()),
        suppressed_rows=int(stats.sizes[suppressed].sum()),
        heights={q: int(problem.hierarchies[q].height) for q in problem.quasi_identifiers},
        max_levels={q: int(problem.level_bounds[q][1]) for q in problem.quasi_identifiers},
        attribute_loss=_attribute_loss(problem, result),
        sensitive=distributions,
    )


def _class_keys(stats: Any) -> list[list[str]] | None:
    try:
        return [["" if v is None else str(v) for v in key] for key in stats.key_labels()]
    except ValueError:  # statistics without keys
        return None


def _sensitive(
    name: str,
    hist: Any,
    sizes: npt.NDArray[np.int64],
    suppressed: npt.NDArray[np.bool_],
    keys: Sequence[Sequence[str]] | None,
) -> SensitiveDistribution:
    """The distribution of one sensitive attribute per class, from the sparse counts."""
    totals = hist.value_totals().astype(np.int64)
    n = float(totals.sum()) or 1.0
    table_share = totals / n
    rows, idx, data = hist.rows, hist.indices, hist.data
    class_n = np.maximum(sizes.astype(np.float64), 1.0)
    share = data / class_n[rows]
    # total variation: half the L1 distance; values absent from a class add their table share
    present = np.bincount(rows, weights=table_share[idx], minlength=hist.n_classes)
    diff = np.bincount(rows, weights=np.abs(share - table_share[idx]), minlength=hist.n_classes)
    distance = 0.5 * (diff + (1.0 - present))
    released = np.flatnonzero(~suppressed)
    order = np.argsort(-totals, kind="stable")
    shown = order[:MAX_LISTED_VALUES]
    other = order[MAX_LISTED_VALUES:]
    values = ["(missing)" if hist.values[v] is None else str(hist.values[v]) for v in shown]
    table_counts = [int(totals[v]) for v in shown]
    if other.size:
        values.append("other")
        table_counts.append(int(totals[other].sum()))
    far = released[np.argsort(-distance[released], kind="stable")][:MAX_LISTED_CLASSES]
    listed = []
    for c in far.tolist():
        lo, hi = int(hist.indptr[c]), int(hist.indptr[c + 1])
        counts = dict(zip(idx[lo:hi].tolist(), data[lo:hi].tolist()))
        row = [int(counts.get(int(v), 0)) for v in shown]
        if other.size:
            row.append(int(sum(counts.get(int(v), 0) for v in other.tolist())))
        listed.append(
            {
                "class": int(c),
                "key": list(keys[c]) if keys is not None else [],
                "size": int(sizes[c]),
                "counts": row,
                "distance": float(distance[c]),
            }
        )
    weights = sizes[released].astype(np.float64)
    mean = float(np.dot(distance[released], weights) / weights.sum()) if released.size else 0.0
    return SensitiveDistribution(
        attribute=name,
        values=values,
        table_counts=table_counts,
        classes=listed,
        max_distance=float(distance[released].max()) if released.size else 0.0,
        mean_distance=mean,
        released_classes=int(released.size),
    )


def _attribute_loss(problem: Problem, result: AnonymizationResult) -> AttributeLoss | None:
    """The loss per quasi-identifier, measured on the release as :func:`release.measure` does."""
    metric: Metric = problem.metric
    recoding = result.recoding
    assert recoding is not None  # (profile_release refuses a block run)
    if isinstance(recoding, CellCover):  # measured cell by cell on its labels (NCP or GCP)
        values = attribute_ncp(problem, recoding)
        note = (
            "NCP(q) = the sum over the records of each released cell's NCP (Murakami & Uno, "
            f"Eq. 1), before weighting; the job's metric {metric.name!r} combines them"
        )
        return AttributeLoss(metric.name, dict(zip(problem.quasi_identifiers, values)), note)
    if not isinstance(recoding, LevelRecoding):  # (a release kept in its blocks: no cells here)
        return None
    note = f"the job's metric {metric.name!r} per attribute, before weighting and aggregation"
    if not hasattr(metric, "per_attribute"):
        metric = build_metric("loss")
        note = (
            f"the job's metric {problem.metric.name!r} has no value per attribute; shown: "
            "ARX's Loss per attribute"
        )
    release = result.release
    original = recoding.kept(problem)
    context = metric_context(problem, original)
    try:
        if isinstance(recoding, FullDomain):
            at = dataclasses.replace(release.classes, levels=recoding.vector(problem))
            values = metric.per_attribute(at, release.suppressed, context)  # type: ignore[attr-defined]
        else:
            cells = release_cells(problem, recoding, release.classes, release.suppressed, context)
            values = metric.per_attribute_cells(cells, context)  # type: ignore[attr-defined]
    except NotImplementedError:
        return None
    return AttributeLoss(
        metric.name,
        {q: float(v) for q, v in zip(problem.quasi_identifiers, np.asarray(values).tolist())},
        note,
    )
