"""A written release read back beside its original and its job (``anonlab check --release``).

:func:`audit_release` verifies a released table on its own, without the run that made it:

1. **columns**: the data's columns but the identifiers (and a limit column that is not
   released), in the data's order (:func:`check_columns`; otherwise
   :class:`~anonlab.exceptions.InputError` naming the column);
2. **rows**: the data's records in their order: one row per record, or, where the job
   removes suppressed rows, the records less at most the suppression limit (and less the rows
   the algorithm removes before anonymizing, PrivacyFrost2's pre-sampling). Each released
   row stands for the first record after the previous one whose cells it can stand for;
3. **cells**: every cell of a column the job releases as it is equals its record's (a
   missing value and an empty text are one: a CSV writes both as an empty field);
4. **quasi-identifiers**: in a release that forms classes, every cell is its record's value
   or a label above it in the attribute's hierarchy, or ``*`` (a suppressed row masked);
   the sensitive value of a per-record model that has a tree (personalized privacy) may be
   raised on that tree. In a cell cover (non-homogeneous generalization) every cell covers
   its record's value as that family writes its labels (a value, ``*``, a hierarchy label,
   ``[lo,hi]``, ``{a;b}``, a masked value);
5. **identifying columns**: none kept undeclared (found by the caller, which passes them);
6. **privacy**: a release that forms classes is grouped on its released labels and every
   model judges every class (a per-record model each record, against the limit of the record
   it stands for); a cell cover is judged on its anonymity graph (the largest k by max-flow,
   Murakami & Uno, Theorem 1).

Rows are named as they are counted in the files: from 1, the header not counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._typing import IntArray
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.engines import get_engine
from anonlab.exceptions import InputError
from anonlab.models.per_record import RecordModel
from anonlab.release.anonymity_graph import (
    GRAPH_K,
    ReleaseCells,
    ReleaseCheck,
    graph_check,
    label_covers,
)
from anonlab.release.blanks import BLANKS_K, read_blanks, wildcard_frequencies
from anonlab.release.cellcover import parse_cells
from anonlab.release.centroids import check_centroids
from anonlab.release.problem import Problem
from anonlab.release.regions import region_loss
from anonlab.release.verify import CLASSES_K, model_keys

__all__ = [
    "Finding",
    "ReleaseAudit",
    "audit_release",
    "check_columns",
    "released_columns",
]

#: A quasi-identifier cell hidden in full (a suppressed row masked, a concealed cell).
HIDDEN = "*"
#: Released rows that match no record: after this many, the rest are paired by position
#: without searching further (the cells checks then name what differs).
MAX_UNMATCHED = 1000
#: Released rows that match no record after which the columns that differ in each of them
#: are left out of the alignment.
FIRST_UNMATCHED = 16


@dataclass(frozen=True)
class Finding:
    """One thing :func:`audit_release` verified.

    Attributes
    ----------
    check : str
        What was verified (``columns``, ``rows``, ``cells``, ``quasi-identifiers``,
        ``identifying columns``, ``privacy``).
    ok : bool
        Whether it holds.
    detail : str
        What holds, or one line naming what does not (column, row, value).
    """

    check: str
    ok: bool
    detail: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {"check": self.check, "ok": self.ok, "detail": self.detail}


@dataclass
class ReleaseAudit:
    """What :func:`audit_release` found.

    Attributes
    ----------
    graph : bool
        Whether the release is a cell cover judged on its anonymity graph (else it forms
        classes).
    rows, original_rows : int
        Rows of the release and of the data.
    removed_rows : int
        Records the algorithm removes before anonymizing (pre-sampling).
    suppressed_rows, suppression_limit : int
        Records suppressed (removed from the release, or masked with ``*`` in every
        quasi-identifier), and the most the job allows.
    classes : int
        Released classes (a cell cover: distinct released rows).
    k_after : int
        The release's k (:attr:`k_meaning`).
    k_meaning : str
    models : list of dict
        Per model: ``model``, ``params``, ``holds``, ``violating_classes``,
        ``violating_rows`` (a per-record model: the records over their limit) and, where it
        does not hold, ``violation``: what violates it, in words.
    findings : list of Finding
        What was verified, in order.
    cells : ReleaseCheck, optional
        A cell cover's anonymity graph figures.
    wildcard : bool
        Whether the release holds blank cells counted with wildcard semantics (local
        suppression, :mod:`anonlab.release.blanks`).
    loss : float, optional
        The job's ``gcp`` or ``ncp`` read from a Mondrian release's labels
        (:func:`anonlab.release.regions.region_loss`, a record without a row counting 1 in
        every cell); None for the other releases.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> r = anonlab.anonymize(t, job)
    >>> released = anonlab.EncodedTable.from_columns(dict(r.columns))
    >>> audit = audit_release(r.problem, released, graph=False, mask_suppressed=False)
    >>> audit.holds, audit.k_after, audit.classes, audit.failures
    (True, 4, 2, [])
    """

    graph: bool
    rows: int
    original_rows: int
    removed_rows: int
    suppressed_rows: int
    suppression_limit: int
    classes: int
    k_after: int
    k_meaning: str
    models: list[dict[str, Any]]
    findings: list[Finding]
    cells: ReleaseCheck | None = field(default=None, repr=False)
    wildcard: bool = False
    loss: float | None = None

    @property
    def holds(self) -> bool:
        """Whether every finding holds and every model holds."""
        return all(f.ok for f in self.findings) and all(m["holds"] for m in self.models)

    @property
    def failures(self) -> list[str]:
        """One line per thing that fails, naming it."""
        lines = [f"{f.check}: {f.detail}" for f in self.findings if not f.ok]
        lines += [f"{m['model']}: {m['violation']}" for m in self.models if not m["holds"]]
        return lines

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (``check --release --json``: the ``release`` member).

        Examples
        --------
        >>> import anonlab
        >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
        >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
        ...        "models": [{"k_anonymity": {"k": 4}}]}
        >>> r = anonlab.anonymize(t, job)
        >>> released = anonlab.EncodedTable.from_columns(dict(r.columns))
        >>> d = audit_release(r.problem, released, graph=False, mask_suppressed=False).to_dict()
        >>> d["holds"], d["k_after"]
        (True, 4)
        """
        out: dict[str, Any] = {
            "holds": self.holds,
            "kind": "anonymity graph"
            if self.graph
            else ("blanks (wildcard)" if self.wildcard else "classes"),
            "rows": self.rows,
            "original_rows": self.original_rows,
            "removed_rows": self.removed_rows,
            "suppressed_rows": self.suppressed_rows,
            "suppression_limit": self.suppression_limit,
            "classes": self.classes,
            "k_after": self.k_after,
            "k_meaning": self.k_meaning,
            "verified": [f.to_dict() for f in self.findings],
            "failures": self.failures,
        }
        if self.cells is not None:
            out.update(self.cells.to_dict())
        return out


# ----------------------------------------------------------------------------- columns
def released_columns(problem: Problem) -> list[str]:
    """The columns a job releases: the data's, but its identifiers, in the data's order.

    Parameters
    ----------
    problem : Problem
        The job's problem on the data (:attr:`Problem.identifiers` are never released).

    Returns
    -------
    list of str

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.data.table import EncodedTable
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import build_model
    >>> t = EncodedTable.from_columns({"id": ["1", "2"], "sex": ["F", "M"], "x": ["a", "b"]})
    >>> p = Problem(t, ("sex",), {"sex": flat_hierarchy(["F", "M"])},
    ...             (build_model("k_anonymity", {"k": 2}),), build_metric("loss"),
    ...             identifiers=("id",))
    >>> released_columns(p)
    ['sex', 'x']
    """
    hidden = set(problem.identifiers)
    return [c for c in problem.table.order if c not in hidden]


def check_columns(problem: Problem, released: EncodedTable) -> list[str]:
    """The release's columns, which must be those the job releases, in order.

    Parameters
    ----------
    problem : Problem
    released : EncodedTable

    Returns
    -------
    list of str
        The columns (:func:`released_columns`).

    Raises
    ------
    InputError
        A column missing, added or renamed, or the columns in another order (naming them).
    """
    expected = released_columns(problem)
    got = list(released.order)
    if got == expected:
        return expected
    missing = [c for c in expected if c not in got]
    extra = [c for c in got if c not in expected]
    rule = (
        "A release holds the data's columns but the job's identifiers, in the data's order "
        f"({len(expected)} columns here)."
    )
    if len(missing) == 1 and len(extra) == 1 and len(got) == len(expected):
        raise InputError(
            f"Column {extra[0]!r} of the release stands where the job releases "
            f"{missing[0]!r}: a renamed column. {rule}"
        )
    if extra:
        c = extra[0]
        why = (
            "it is an identifier of the job (or an unreleased limit column), never released"
            if c in problem.identifiers
            else "the data has no such column"
        )
        raise InputError(f"The release has a column {c!r} the job does not release: {why}. {rule}")
    if missing:
        raise InputError(f"The release lacks column {missing[0]!r}, which the job releases. {rule}")
    first = next(i for i, (a, b) in enumerate(zip(got, expected)) if a != b)
    raise InputError(
        f"The release's columns are in another order: column {first + 1} is {got[first]!r} "
        f"where the job releases {expected[first]!r}. {rule}"
    )


# ----------------------------------------------------------------------------- cells
class _Texts:
    """One dictionary of label texts: equal texts get equal keys (a null and an empty text
    one key: a CSV writes both as an empty field)."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}

    def keys(self, categories: npt.NDArray[np.object_]) -> IntArray:
        """The key of each label (a loop over the distinct labels, not the rows)."""
        ids = self._ids
        return np.fromiter(
            (ids.setdefault("" if v is None else str(v), len(ids)) for v in categories.tolist()),
            dtype=np.int64,
            count=int(categories.size),
        )

    def key(self, text: str) -> int:
        """The key of one text, -1 if no label has it."""
        return self._ids.get(text, -1)


@dataclass(frozen=True)
class _Cells:
    """One released column against its original column, row by row.

    ``ok(released_rows, original_rows)`` says whether each released cell is what the job
    releases of the paired record's cell.
    """

    name: str
    original: EncodedColumn
    released: EncodedColumn
    expected: str  # what a cell must be, for the messages
    targets: IntArray  # (ways, original labels): keys a released cell may have
    released_keys: IntArray  # key of each released label
    hidden: int = -2  # the key of '*' where it is always allowed (-2: nowhere)
    covers: Any = None  # a cell cover's parsed column (then ``targets`` is unused)

    def ok(self, released_rows: IntArray, original_rows: IntArray) -> npt.NDArray[np.bool_]:
        """Whether each released cell is what the job releases of its record's cell."""
        r = self.released.codes[released_rows]
        v = self.original.codes[original_rows]
        if self.covers is not None:
            return label_covers(self.covers, r, v)
        key = self.released_keys[r]
        out: npt.NDArray[np.bool_] = key == self.hidden
        for way in self.targets:
            out |= way[v] == key
        return out


def _as_it_is(name: str, original: EncodedColumn, released: EncodedColumn) -> _Cells:
    texts = _Texts()
    targets = texts.keys(original.categories)[None, :]
    return _Cells(
        name, original, released, "its record's value", targets, texts.keys(released.categories)
    )


def _on_hierarchy(
    name: str,
    original: EncodedColumn,
    released: EncodedColumn,
    hierarchy: Hierarchy,
    *,
    hidden: bool,
    where: str,
) -> _Cells:
    texts = _Texts()
    mappings, labels = hierarchy.generalizations(original.categories)
    targets = np.stack([texts.keys(labels[lv])[mappings[lv]] for lv in range(len(labels))])
    keys = texts.keys(released.categories)
    expected = f"its record's value or a label above it in {where}" + (
        f", or {HIDDEN}" if hidden else ""
    )
    star = texts.key(HIDDEN) if hidden else -2
    if hidden and star < 0:
        star = -3  # no label reads '*': none is hidden
    return _Cells(name, original, released, expected, targets, keys, star)


def _hierarchy_name(hierarchy: Hierarchy, what: str) -> str:
    return f"{what} {hierarchy.source!r}" if hierarchy.source else what


def _label(column: EncodedColumn, row: int) -> str:
    value = column.categories[column.codes[row]]
    return "an empty field" if value is None or value == "" else repr(str(value))


def _cell_findings(
    cells: Sequence[_Cells], pairs: IntArray, check: str, kept: str
) -> list[Finding]:
    """A finding per column whose cells are not what the job releases (the first row, its
    value, its record's and how many rows), or one finding that every cell is."""
    if not cells:
        return []
    rows = np.arange(pairs.size, dtype=np.int64)
    out = []
    for c in cells:
        bad = np.flatnonzero(~c.ok(rows, pairs))
        if not bad.size:
            continue
        j = int(bad[0])
        i = int(pairs[j])
        more = f" ({bad.size:,} rows differ)" if bad.size > 1 else ""
        out.append(
            Finding(
                check,
                False,
                f"column {c.name!r}, row {j + 1} of the release holds {_label(c.released, j)} "
                f"where it must hold {c.expected}: {_label(c.original, i)} (row {i + 1} of "
                f"the data){more}.",
            )
        )
    if not out:
        names = ", ".join(c.name for c in cells[:6]) + (", ..." if len(cells) > 6 else "")
        out.append(Finding(check, True, f"{kept} ({len(cells)}: {names})."))
    return out


# ----------------------------------------------------------------------------- rows
def _match(
    cells: Sequence[_Cells], released: IntArray, original: IntArray
) -> npt.NDArray[np.bool_]:
    ok = np.ones(released.size, dtype=bool)
    for c in cells:
        ok &= c.ok(released, original)
    return ok


def _next_match(cells: Sequence[_Cells], row: int, candidates: IntArray, lo: int, hi: int) -> int:
    """The first position in ``candidates[lo..hi]`` whose record released ``row`` can stand
    for, or -1 (windows growing fourfold)."""
    width = 64
    while lo <= hi:
        top = min(lo + width, hi + 1)
        at = np.arange(lo, top)
        hit = np.flatnonzero(_match(cells, np.full(at.size, row, dtype=np.int64), candidates[at]))
        if hit.size:
            return lo + int(hit[0])
        lo, width = top, width * 4
    return -1


def _closest(cells: Sequence[_Cells], row: int, candidates: IntArray, lo: int, hi: int) -> int:
    """The position in ``candidates[lo..hi]`` whose record released ``row`` agrees with in
    the most columns (the first of them)."""
    at = np.arange(lo, hi + 1)
    rows = np.full(at.size, row, dtype=np.int64)
    agree = np.zeros(at.size, dtype=np.int64)
    for c in cells:
        agree += c.ok(rows, candidates[at])
    return lo + int(np.argmax(agree))


def _align(
    cells: Sequence[_Cells], n_released: int, candidates: IntArray, give_up: int
) -> tuple[IntArray, list[int]]:
    """The record each released row stands for, when rows were removed: the first record,
    after the previous row's, that it can stand for (a greedy match of a subsequence, which
    finds one whenever one exists). Runs of matching rows are compared in windows that
    double; a row that matches no record is paired with the record it agrees with in the
    most columns, and after ``give_up`` such rows the others are paired by place without
    searching.

    Returns
    -------
    pairs : ndarray of int64
        The data row of each released row.
    unmatched : list of int
        The released rows that match no record.
    """
    skip = candidates.size - n_released
    pairs = np.empty(n_released, dtype=np.int64)
    unmatched: list[int] = []
    j = offset = 0
    while j < n_released:
        width = 256
        while j < n_released:  # the run of rows matching at this offset
            hi = min(j + width, n_released)
            rows = np.arange(j, hi, dtype=np.int64)
            bad = np.flatnonzero(~_match(cells, rows, candidates[rows + offset]))
            stop = hi if not bad.size else j + int(bad[0])
            pairs[j:stop] = candidates[np.arange(j, stop) + offset]
            j = stop
            if bad.size:
                break
            width *= 2
        if j >= n_released:
            break
        if len(unmatched) >= give_up:  # the others at their places, without searching
            rows = np.arange(j, n_released, dtype=np.int64)
            pairs[j:] = candidates[rows + offset]
            unmatched.extend((j + np.flatnonzero(~_match(cells, rows, pairs[j:]))).tolist())
            break
        found = -1
        if offset < skip:
            found = _next_match(cells, j, candidates, j + offset + 1, j + skip)
        if found < 0:  # no record fits: the one most alike (the findings say what differs)
            found = _closest(cells, j, candidates, j + offset, min(j + skip, j + offset + 4095))
            pairs[j] = candidates[found]
            offset = found - j
            unmatched.append(j)
            j += 1
        else:
            offset = found - j
    return pairs, unmatched


def _pair_rows(
    cells: Sequence[_Cells], n_released: int, candidates: IntArray
) -> tuple[IntArray, int]:
    """:func:`_align` on every column; when its first rows match no record, the columns that
    differ in each of them (a column replaced whole) are left out and the rows aligned on
    the others, so that the findings name those columns and not the rows' order.

    Returns
    -------
    pairs : ndarray of int64
    unmatched : int
    """
    pairs, unmatched = _align(cells, n_released, candidates, give_up=FIRST_UNMATCHED)
    if len(unmatched) < FIRST_UNMATCHED:
        return pairs, len(unmatched)
    rows = np.asarray(unmatched[:FIRST_UNMATCHED], dtype=np.int64)
    culprits = {c.name for c in cells if not bool(c.ok(rows, pairs[rows]).any())}
    rest = [c for c in cells if c.name not in culprits]
    pairs, unmatched = _align(rest or cells, n_released, candidates, give_up=MAX_UNMATCHED)
    return pairs, len(unmatched)


# ----------------------------------------------------------------------------- privacy
def _entry(
    key: str, params: dict[str, Any], holds: bool, bad_classes: int, bad_rows: int, violation: str
) -> dict[str, Any]:
    """A model's verdict as ``check`` reports it: where it does not hold, what violates it."""
    out: dict[str, Any] = {
        "model": key,
        "params": params,
        "holds": holds,
        "violating_classes": bad_classes,
        "violating_rows": bad_rows,
    }
    if not holds:
        out["violation"] = violation
    return out


@dataclass
class _Classes:
    models: list[dict[str, Any]]
    classes: int
    k_after: int
    masked_rows: int
    masked_fail: bool


def _judge_classes(
    problem: Problem,
    released: EncodedTable,
    pairs: IntArray,
    *,
    mask_suppressed: bool,
    plain: Any,
) -> _Classes:
    """Group the release on its labels; every model judges every class (a per-record model
    each record, against the limit of the record it stands for). Where the job masks
    suppressed rows, the class whose every label is ``*`` is taken as the masked rows:
    suppressed, not judged (it may also hold records generalized to ``*`` everywhere: the
    limit binds it only if it fails a model)."""
    qis = list(problem.quasi_identifiers)
    stats = get_engine("numpy", released).class_stats(
        qis, sensitive=list(problem.sensitive), with_rows=True, with_keys=False
    )
    assert stats.row_class is not None
    row_class = np.asarray(stats.row_class, dtype=np.int64)
    sizes = np.asarray(stats.sizes, dtype=np.int64)
    star_rows = np.ones(released.n_rows, dtype=bool)
    for q in qis:
        col = released[q]
        code = np.flatnonzero(col.categories == HIDDEN)
        star_rows &= col.codes == (int(code[0]) if code.size else -1)
    masked = np.zeros(stats.n_classes, dtype=bool)
    if mask_suppressed and star_rows.any():
        masked[row_class[np.flatnonzero(star_rows)[0]]] = True
    verdicts = []
    for m in problem.models:
        class_bad = ~(np.asarray(m.class_ok(stats), dtype=bool) & (sizes >= m.min_class_size))
        record_bad = class_bad[row_class]
        extra: dict[str, Any] = {}
        if isinstance(m, RecordModel):
            limits = np.asarray(problem.record_parameters[m.record_parameter])[pairs]
            col = problem.table[m.attribute]
            original = EncodedColumn(col.name, col.codes[pairs], col.categories)
            verdict = m.judge_records(row_class, original, released[m.attribute], limits)
            record_bad = ~verdict.ok | (sizes[row_class] < m.min_class_size)
            class_bad = ~(verdict.class_ok & (sizes >= m.min_class_size))
            extra = verdict.report(m.measure)
        verdicts.append((m, class_bad, record_bad, extra))
    masked_fail = any(bool(cb[masked].any()) for _, cb, _, _ in verdicts)
    models = []
    for key, (m, class_bad, record_bad, extra) in zip(model_keys(problem.models), verdicts):
        class_bad = class_bad & ~masked
        record_bad = record_bad & ~masked[row_class]
        n_classes, n_rows = int(class_bad.sum()), int(record_bad.sum())
        if isinstance(m, RecordModel):
            violation = (
                f"{n_rows:,} records are over their own limit (in {n_classes:,} of the "
                f"{stats.n_classes:,} released classes)"
            )
        else:
            violation = (
                f"{n_classes:,} of the {stats.n_classes:,} released classes ({n_rows:,} rows) "
                f"do not satisfy it"
            )
        params = {k: plain(v) for k, v in m.params().items()}
        holds = not n_classes and not n_rows
        models.append({**_entry(key, params, holds, n_classes, n_rows, violation), **extra})
    kept = sizes[~masked]
    return _Classes(
        models,
        int(kept.size),
        int(kept.min()) if kept.size else 0,
        int(sizes[masked].sum()),
        masked_fail,
    )


# ----------------------------------------------------------------------------- audit
def audit_release(
    problem: Problem,
    released: EncodedTable,
    *,
    graph: bool,
    mask_suppressed: bool,
    removed: npt.NDArray[np.bool_] | None = None,
    identifying: Sequence[tuple[str, str]] = (),
    pseudo: Sequence[str] = (),
    plain: Any = None,
    blanks: bool = False,
    centroids: str | None = None,
    regions: bool = False,
) -> ReleaseAudit:
    """Verify a released table against its original and its job (see the module docstring).

    Parameters
    ----------
    problem : Problem
        The job's problem on the original data (one row per record, in the data's order).
    released : EncodedTable
        The release as read from its file (a missing value a null).
    graph : bool
        The job's algorithm releases a cell cover (judged on its anonymity graph); else the
        release forms classes.
    mask_suppressed : bool
        The job masks suppressed rows (``output: {suppressed: mask}``) rather than removing
        them.
    removed : ndarray of bool, optional
        Per data row, whether the algorithm removes it before anonymizing.
    identifying : sequence of (column, reason)
        The release's undeclared identifying columns, found by the caller
        (:func:`anonlab.diagnosis.risk.identifying_columns`).
    pseudo : sequence of str
        A cell cover's pseudo-quasi-identifiers (their hidden characters are counted by the
        loss).
    plain : callable, optional
        How a model's parameter is shown (a hierarchy as its file); default as it is.
    blanks : bool
        The job's algorithm blanks cells (local suppression): every record is released and
        judged by its wildcard frequency (a blank ``*`` matches any value).
    centroids : {"mean", "median"}, optional
        The job's algorithm releases centroids (microaggregation) aggregated so: every
        released class's quasi-identifier cells must be the centroids of its records' values
        (:func:`anonlab.release.centroids.check_centroids`) instead of hierarchy labels.
    regions : bool
        The release forms classes of region summaries (Mondrian): a quasi-identifier cell
        may also be an interval ``[lo,hi]`` covering its record's number.

    Returns
    -------
    ReleaseAudit

    Raises
    ------
    InputError
        Columns that are not those the job releases, more rows than the data has records,
        or, where no row may be removed, another number of rows (naming them).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> r = anonlab.anonymize(t, job)
    >>> audit_release(r.problem, t, graph=False, mask_suppressed=False).holds  # not generalized
    False
    >>> released = anonlab.EncodedTable.from_columns(dict(r.columns))
    >>> audit_release(r.problem, released, graph=False, mask_suppressed=False).holds
    True
    """
    show = plain if plain is not None else (lambda v: v)
    check_columns(problem, released)
    n, n_rel = problem.n_rows, released.n_rows
    candidates = np.arange(n, dtype=np.int64)
    if removed is not None:
        candidates = np.flatnonzero(~np.asarray(removed, dtype=bool)).astype(np.int64)
    n_removed = n - int(candidates.size)
    if graph or mask_suppressed or blanks:
        if n_rel != candidates.size:
            why = (
                "a cell cover releases every record"
                if graph
                else "local suppression releases every record"
                if blanks
                else "the job masks suppressed rows ('output: {suppressed: mask}')"
            )
            pre = f" ({n_removed:,} removed by the algorithm)" if n_removed else ""
            raise InputError(
                f"The release has {n_rel:,} rows; the data has {candidates.size:,} records"
                f"{pre}. The release has one row per record, in the data's order: {why}."
            )
    elif n_rel > candidates.size:
        raise InputError(
            f"The release has {n_rel:,} rows, more than the {candidates.size:,} records of the "
            "data it may hold: one row per record, in the data's order, suppressed rows "
            "removed."
        )
    qis = problem.quasi_identifiers
    generalized: dict[str, Hierarchy] = {}
    for m in problem.models:
        tree = getattr(m, "hierarchy", None)
        if isinstance(m, RecordModel) and isinstance(tree, Hierarchy) and not graph:
            generalized[m.attribute] = tree  # its values may rise on the model's tree
    as_is = [
        _as_it_is(c, problem.table[c], released[c])
        for c in released_columns(problem)
        if c not in qis and c not in generalized
    ]
    if graph:
        cells, own = ReleaseCells.parse(problem, released, pseudo=pseudo)
        del own  # the cover columns below tell the same, row by row
        qi_cells = [
            _Cells(
                q,
                problem.table[q],
                released[q],
                "a label that covers its record's value (the value, *, a label of its "
                "hierarchy, [lo,hi], {a;b} or a masked value)",
                np.zeros((0, 0), dtype=np.int64),
                np.zeros(0, dtype=np.int64),
                covers=cells.parsed[j],
            )
            for j, q in enumerate(qis)
        ]
    elif centroids is not None:  # new values, checked per class below: any cell pairs rows
        qi_cells = [
            _Cells(
                q,
                problem.table[q],
                released[q],
                "a centroid",
                np.zeros((0, problem.table[q].cardinality), dtype=np.int64),
                np.zeros(released[q].cardinality, dtype=np.int64),
                hidden=0,  # (every released key is 0, the key always allowed)
            )
            for q in qis
        ]
    elif regions:
        qi_cells = [
            _Cells(
                q,
                problem.table[q],
                released[q],
                "a label that covers its record's value (the value, *, a label of its "
                "hierarchy or [lo,hi])",
                np.zeros((0, 0), dtype=np.int64),
                np.zeros(0, dtype=np.int64),
                covers=parse_cells(problem.table[q], released[q], problem.hierarchies[q]),
            )
            for q in qis
        ]
    else:
        qi_cells = [
            _on_hierarchy(
                q,
                problem.table[q],
                released[q],
                problem.hierarchies[q],
                hidden=True,
                where=_hierarchy_name(problem.hierarchies[q], "its hierarchy"),
            )
            for q in qis
        ]
        qi_cells += [
            _on_hierarchy(
                a,
                problem.table[a],
                released[a],
                h,
                hidden=False,
                where=_hierarchy_name(h, "the model's tree"),
            )
            for a, h in generalized.items()
        ]
    unmatched = 0
    if n_rel == candidates.size:
        pairs = candidates
    else:
        pairs, unmatched = _pair_rows([*as_is, *qi_cells], n_rel, candidates)
    findings = [Finding("columns", True, _columns_detail(problem))]
    missing = int(candidates.size) - n_rel
    findings.extend(
        _cell_findings(as_is, pairs, "cells", "every cell of the columns released as they are "
                       "equals its record's")
    )  # fmt: skip
    kept = (
        "every cell covers its record's value"
        if graph or regions
        else f"every cell is its record's value or a label above it in the hierarchy, or {HIDDEN}"
    )
    if centroids is None:
        findings.extend(_cell_findings(qi_cells, pairs, "quasi-identifiers", kept))
    else:
        findings.append(_centroid_finding(problem, released, pairs, centroids))
    if identifying:
        for column, reason in identifying:
            findings.append(
                Finding(
                    "identifying columns",
                    False,
                    f"column {column!r} may identify people on its own ({reason}) and is not "
                    "declared: declare it under 'identifiers:' (never released) or as a "
                    "quasi-identifier.",
                )
            )
    else:
        findings.append(
            Finding(
                "identifying columns",
                True,
                "no undeclared column holds a different value in each row or is named like "
                "an identifier.",
            )
        )
    limit = problem.max_suppressed
    if graph:
        return _graph_audit(problem, cells, findings, n_removed, show)
    if blanks:
        return _blanks_audit(problem, released, findings, show)
    judged = _judge_classes(problem, released, pairs, mask_suppressed=mask_suppressed, plain=show)
    suppressed = judged.masked_rows if mask_suppressed else missing
    bound = suppressed if not mask_suppressed or judged.masked_fail else 0
    findings.insert(
        1, _rows_finding(n, n_rel, n_removed, suppressed, bound, limit, mask_suppressed, unmatched)
    )
    findings.append(
        Finding(
            "privacy",
            all(m["holds"] for m in judged.models),
            f"the models judged the {judged.classes:,} classes of the released labels"
            + (
                f" ({judged.masked_rows:,} rows masked with {HIDDEN} not judged)"
                if judged.masked_rows
                else ""
            )
            + f"; k after = {judged.k_after} ({CLASSES_K}).",
        )
    )
    loss = None
    if regions and n_rel:  # Mondrian's labels, measured as its verifier measures them
        keep = np.ones(n_rel, dtype=bool)
        loss = region_loss(problem, released, keep, records=pairs)
    return ReleaseAudit(
        graph=False,
        rows=n_rel,
        original_rows=n,
        removed_rows=n_removed,
        suppressed_rows=suppressed,
        suppression_limit=limit,
        classes=judged.classes,
        k_after=judged.k_after,
        k_meaning=CLASSES_K,
        models=judged.models,
        findings=findings,
        loss=loss,
    )


def _centroid_finding(
    problem: Problem, released: EncodedTable, pairs: IntArray, aggregate: str
) -> Finding:
    """Whether every class of the released values holds the centroids of its records'
    values in every quasi-identifier (a microaggregated release)."""
    qis = list(problem.quasi_identifiers)
    stats = get_engine("numpy", released).class_stats(qis, with_rows=True, with_keys=False)
    assert stats.row_class is not None
    row_class = np.asarray(stats.row_class, dtype=np.int64)
    problems, _ = check_centroids(problem.table.take(pairs), released, qis, row_class, aggregate)
    if problems:
        return Finding("quasi-identifiers", False, " ".join(problems))
    return Finding(
        "quasi-identifiers",
        True,
        f"every class of the released values holds the {aggregate} (numbers) or a most "
        f"frequent value (categories) of its records' values ({len(qis)}: "
        f"{', '.join(qis[:6])}{', ...' if len(qis) > 6 else ''}).",
    )


def _columns_detail(problem: Problem) -> str:
    cols = released_columns(problem)
    dropped = [c for c in problem.table.order if c in set(problem.identifiers)]
    return (
        f"the {len(cols)} columns the job releases, in the data's order ("
        + (f"dropped: {', '.join(dropped)}" if dropped else "no identifier to drop")
        + ")."
    )


def _rows_finding(
    n: int,
    n_rel: int,
    removed: int,
    suppressed: int,
    bound: int,
    limit: int,
    mask: bool,
    unmatched: int,
) -> Finding:
    """The rows' finding; ``bound`` of the ``suppressed`` rows count against the limit."""
    pre = f"; {removed:,} removed by the algorithm before anonymizing" if removed else ""
    if mask:
        what = (
            f"{n_rel:,} rows, one per record in the data's order ({suppressed:,} with {HIDDEN} "
            f"in every quasi-identifier, taken as suppressed{pre})"
        )
    elif suppressed or removed:
        what = (
            f"{n_rel:,} rows: the data's {n:,} records in their order, {suppressed:,} "
            f"suppressed rows removed{pre}"
        )
    else:
        what = f"{n_rel:,} rows, one per record in the data's order"
    if bound > limit:
        return Finding(
            "rows",
            False,
            f"{suppressed:,} records are suppressed ({what}), more than the {limit:,} the "
            "job allows.",
        )
    if unmatched:
        rows = f"{unmatched:,} rows of the release stand" if unmatched > 1 else "1 row stands"
        return Finding(
            "rows",
            False,
            f"{rows} for no record of the data in order ({what}); the cells below say what "
            "differs.",
        )
    return Finding("rows", True, f"{what}; the job allows {limit:,} suppressed.")


def _blanks_audit(
    problem: Problem, released: EncodedTable, findings: list[Finding], show: Any
) -> ReleaseAudit:
    """The privacy verdict of a release with blanks: every record's wildcard frequency,
    recounted from the released labels."""
    codes, blank = read_blanks(problem, released)
    freq = wildcard_frequencies(codes, blank)
    k_after = int(freq.min()) if freq.size else 0
    models = []
    for key, m in zip(model_keys(problem.models), problem.models):
        k = m.min_class_size
        short = int(np.count_nonzero(freq < k))
        wildcard = m.name == "k_anonymity"
        violation = (
            f"{short:,} records are compatible with fewer than {k} released records"
            if wildcard
            else f"a release with blanks forms no classes for {m.name!r} to judge"
        )
        params = {p: show(v) for p, v in m.params().items()}
        models.append(_entry(key, params, wildcard and not short, 0, short, violation))
    n = released.n_rows
    findings.insert(1, Finding("rows", True, f"{n:,} rows, one per record in the data's order."))
    findings.append(
        Finding(
            "privacy",
            all(m["holds"] for m in models),
            f"k after = {k_after} ({BLANKS_K}): the wildcard frequencies of the {n:,} records "
            f"({int(blank.sum()):,} blank cells).",
        )
    )
    distinct = get_engine("numpy", released).class_stats(list(problem.quasi_identifiers))
    return ReleaseAudit(
        graph=False,
        rows=n,
        original_rows=problem.n_rows,
        removed_rows=0,
        suppressed_rows=0,
        suppression_limit=problem.max_suppressed,
        classes=distinct.n_classes,
        k_after=k_after,
        k_meaning=BLANKS_K,
        models=models,
        findings=findings,
        wildcard=True,
    )


def _graph_audit(
    problem: Problem, cells: ReleaseCells, findings: list[Finding], removed: int, show: Any
) -> ReleaseAudit:
    """The privacy verdict of a cell cover: the largest k of its anonymity graph."""
    found = graph_check(problem, cells)
    graph = found.graph
    assert graph is not None
    models = []
    for key, m in zip(model_keys(problem.models), problem.models):
        k = m.min_class_size
        short = graph.short_of(k) if found.largest_k < k else 0
        violation = f"the largest k of the anonymity graph is {found.largest_k}, below {k}" + (
            f": {short:,} records are covered by fewer than {k} released records (Condition 1)"
            if short
            else f": no {k} edge-disjoint perfect matchings (Theorem 1's max-flow is "
            f"below {k} * {problem.n_rows:,})"
        )
        params = {p: show(v) for p, v in m.params().items()}
        models.append(_entry(key, params, found.largest_k >= k, 0, short, violation))
    n = problem.n_rows
    findings.insert(1, Finding("rows", True, f"{n:,} rows, one per record in the data's order."))
    findings.append(
        Finding(
            "privacy",
            all(m["holds"] for m in models),
            f"k after = {found.largest_k} ({GRAPH_K}, by max-flow, Theorem 1; Condition 1 "
            f"allows {found.condition_1_k}) on {found.edges:,} edges between "
            f"{found.distinct_original:,} original and {found.distinct_released:,} released "
            "tuples.",
        )
    )
    return ReleaseAudit(
        graph=True,
        rows=n,
        original_rows=n,
        removed_rows=removed,
        suppressed_rows=0,
        suppression_limit=problem.max_suppressed,
        classes=found.distinct_released,
        k_after=found.largest_k,
        k_meaning=GRAPH_K,
        models=models,
        findings=findings,
        cells=found,
    )
