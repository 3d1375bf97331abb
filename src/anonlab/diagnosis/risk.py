"""Re-identification risk of a quasi-identifier set, and discovery of quasi-identifiers.

The risk summary follows the prosecutor model used by ARX and sdcMicro: a record in a class of
size ``f`` is re-identified with probability ``1/f``. QI discovery answers the Diagnosis
Centre's question "which information, if available from an outside source, threatens my
data?" (Zare Mirakabad, Jantan & Bressan, section 1) with the minimal attribute subsets under
which some record falls in a class smaller than a threshold (by default: is unique).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress
from anonlab._validation import check_int
from anonlab.diagnosis.subsets import SubsetEvaluator, minimal_failing
from anonlab.engines.base import Engine, Levels
from anonlab.exceptions import ParameterError, PrivacyRiskWarning

__all__ = [
    "RiskSummary",
    "class_size_histogram",
    "risk_summary",
    "QuasiIdentifierReport",
    "discover_quasi_identifiers",
    "identifying_columns",
    "warn_identifying_columns",
]

_BUCKETS = ((1, 1), (2, 2), (3, 4), (5, 9), (10, 19), (20, None))
#: Records among which the identifying-column check first looks for a repeated value (a
#: column with one is not unique: it is not counted over the whole table).
SCREEN_ROWS = 100_000
#: Names that say "identifier": id, ID, patient_id, record-id, PersonID, SSN.
_ID_NAME = re.compile(r"(?i:^(id|ssn|uuid|guid)$|[ _.-](id|ssn|uuid|guid)$)|[a-z]ID$")


def class_size_histogram(sizes: npt.ArrayLike) -> list[dict[str, Any]]:
    """Classes and records per class-size bucket (1, 2, 3-4, 5-9, 10-19, 20+).

    Parameters
    ----------
    sizes : array_like of int
        The size of each class.

    Returns
    -------
    list of dict
        ``{"class_size": "3-4", "classes": ..., "records": ...}`` per bucket, smallest first.
    """
    s = np.asarray(sizes, dtype=np.int64)
    hist = []
    for lo, hi in _BUCKETS:
        sel = (s >= lo) if hi is None else ((s >= lo) & (s <= hi))
        label = f"{lo}+" if hi is None else (str(lo) if lo == hi else f"{lo}-{hi}")
        hist.append({"class_size": label, "classes": int(sel.sum()), "records": int(s[sel].sum())})
    return hist


def identifying_columns(engine: Engine, exclude: Sequence[str] = ()) -> list[tuple[str, str]]:
    """Columns that identify a row on their own: unique per row, or named like an identifier.

    A list, map or struct column counts too, by its JSON text (on every engine). Above
    :data:`SCREEN_ROWS` records, a column is counted over the whole table only if its values
    among that many records are all different (a repeat among them proves it is not
    unique): the answer is the same, and a large file is not read in whole for the columns
    that repeat early.

    Parameters
    ----------
    engine : Engine
        The table.
    exclude : sequence of str
        Columns already declared (quasi-identifiers, sensitive, identifiers).

    Returns
    -------
    list of (column, reason)
    """
    n = engine.n_rows
    skip = set(exclude)
    found = []
    every = list(dict.fromkeys([*engine.columns, *engine.nested_columns]))
    undeclared = [c for c in every if c not in skip]
    distinct: dict[str, int] = {}
    if n > 1:
        # a value repeated among some records proves a column is not unique: only the
        # columns whose first records are all different are counted over the whole table
        candidates = undeclared
        if n > SCREEN_ROWS and undeclared:
            head = engine.distinct_counts(undeclared, rows=SCREEN_ROWS)
            candidates = [c for c in undeclared if head[c] == SCREEN_ROWS]
        distinct = engine.distinct_counts(candidates) if candidates else {}
    for column in undeclared:
        if distinct.get(column) == n:
            found.append((column, f"it holds a different value in each of the {n:,} rows"))
        elif _ID_NAME.search(column):
            found.append((column, "its name says it is an identifier"))
    return found


def warn_identifying_columns(
    engine: Engine, exclude: Sequence[str], *, action: str, stacklevel: int = 2
) -> list[tuple[str, str]]:
    """Warn (:class:`~anonlab.exceptions.PrivacyRiskWarning`) about each identifying column.

    Parameters
    ----------
    engine : Engine
        The table.
    exclude : sequence of str
        Columns already declared.
    action : str
        What happens to such a column, said in the warning.
    stacklevel : int
        As for :func:`warnings.warn`.

    Returns
    -------
    list of (column, reason)
    """
    found = identifying_columns(engine, exclude)
    for column, reason in found:
        warnings.warn(
            PrivacyRiskWarning(
                f"Column {column!r} may identify people on its own ({reason}) and is not "
                f"declared: {action}"
            ),
            stacklevel=stacklevel + 1,
        )
    return found


@dataclass
class RiskSummary:
    """Prosecutor re-identification risk of a table under one quasi-identifier set.

    Attributes
    ----------
    quasi_identifiers : list of str
    n_rows, n_classes : int
    k : int
        Smallest class size.
    highest_risk : float
        ``1 / k``: the risk of the most exposed record.
    average_risk : float
        Mean over records of ``1 / class size`` = ``n_classes / n_rows``.
    unique_records : int
        Records alone in their class (sample uniques).
    threshold : int
        Class size below which a record counts as at risk.
    records_at_risk : int
        Records in classes smaller than ``threshold``.
    class_size_histogram : list of dict
        Records and classes per class-size bucket.
    identifying_columns : list of dict
        Columns outside S that identify rows on their own (see :func:`identifying_columns`).
    """

    quasi_identifiers: list[str]
    n_rows: int
    n_classes: int
    k: int
    highest_risk: float
    average_risk: float
    unique_records: int
    threshold: int
    records_at_risk: int
    class_size_histogram: list[dict[str, Any]]
    identifying_columns: list[dict[str, str]] = field(default_factory=list)
    levels: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form."""
        out = {
            "question": "risk",
            "quasi_identifiers": self.quasi_identifiers,
            "n_rows": self.n_rows,
            "n_classes": self.n_classes,
            "k": self.k,
            "highest_risk": self.highest_risk,
            "average_risk": self.average_risk,
            "unique_records": self.unique_records,
            "unique_fraction": self.unique_records / self.n_rows if self.n_rows else 0.0,
            "threshold": self.threshold,
            "records_at_risk": self.records_at_risk,
            "at_risk_fraction": self.records_at_risk / self.n_rows if self.n_rows else 0.0,
            "class_size_histogram": self.class_size_histogram,
            "identifying_columns": self.identifying_columns,
        }
        if self.levels:
            out["levels"] = self.levels
        return out


def risk_summary(
    engine: Engine,
    quasi_identifiers: Sequence[str],
    *,
    threshold: int = 5,
    levels: Levels | None = None,
) -> RiskSummary:
    """Summarise the prosecutor re-identification risk under ``quasi_identifiers``.

    Parameters
    ----------
    engine : Engine
        Class statistics of the table.
    quasi_identifiers : sequence of str
        The attribute set S.
    threshold : int
        Records in classes smaller than this are counted as at risk (default 5).
    levels : Mapping[str, int], optional
        Hierarchy level per attribute.

    Returns
    -------
    RiskSummary
    """
    qi = list(quasi_identifiers)
    if not qi:
        raise ParameterError("The set of quasi-identifiers S is empty.")
    engine.validate(qi, None)  # (a list or struct column is named as such)
    n = engine.require_rows("diagnose")
    threshold = check_int(threshold, "threshold", low=1)
    used = {a: v for a, v in (levels or {}).items() if a in qi and v}
    sizes = engine.class_sizes(qi, used)
    hist = class_size_histogram(sizes)
    k = int(sizes.min())
    found = warn_identifying_columns(
        engine,
        qi,
        action="this summary does not count it, and a release that keeps it re-identifies "
        "people; add it to the quasi-identifiers or drop it.",
        stacklevel=2,
    )
    return RiskSummary(
        quasi_identifiers=qi,
        n_rows=n,
        n_classes=int(sizes.size),
        k=k,
        highest_risk=1.0 / k,
        average_risk=sizes.size / n,
        unique_records=int(sizes[sizes == 1].sum()),
        threshold=threshold,
        records_at_risk=int(sizes[sizes < threshold].sum()),
        class_size_histogram=hist,
        identifying_columns=[{"column": c, "reason": r} for c, r in found],
        levels=used,
    )


@dataclass
class QuasiIdentifierReport:
    """Minimal attribute subsets that expose records (QI discovery).

    Attributes
    ----------
    threshold : int
        A subset exposes a record when the record's class is smaller than this (2: unique).
    subsets : list of dict
        Each minimal subset with its k, the number of records it exposes and their row
        positions (``exposed_row_positions``, 0-based, ascending).
    evaluations : int
        Subsets whose classes were computed.
    constant_columns : list of str
        Candidates that hold one value in every row.
    """

    threshold: int
    subsets: list[dict[str, Any]]
    evaluations: int
    attributes: list[str]
    max_size: int | None = None
    levels: dict[str, int] = field(default_factory=dict)
    constant_columns: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form."""
        out = {
            "question": "quasi-identifiers",
            "threshold": self.threshold,
            "subsets": self.subsets,
            "evaluations": self.evaluations,
            "attributes": self.attributes,
            "max_size": self.max_size,
        }
        if self.levels:
            out["levels"] = self.levels
        if self.constant_columns:
            out["constant_columns"] = self.constant_columns
        return out


def discover_quasi_identifiers(
    engine: Engine,
    attributes: Sequence[str] | None = None,
    *,
    threshold: int = 2,
    max_size: int | None = None,
    levels: Levels | None = None,
    progress: Progress | None = None,
) -> QuasiIdentifierReport:
    """Find all minimal attribute subsets under which some record is in a class < threshold.

    With ``threshold = 2`` these are the minimal combinations that single out at least one
    person: any outside source holding one of them re-identifies someone. Supersets of a
    reported subset are not reported (they expose at least the same records).

    Parameters
    ----------
    engine : Engine
        Class statistics of the table.
    attributes : sequence of str, optional
        Candidate attributes (default: every column).
    threshold : int
        Class size below which a record is exposed (default 2: unique records).
    max_size : int, optional
        Largest subset size to examine.
    levels : Mapping[str, int], optional
        Hierarchy level per attribute.
    progress : callable, optional
        ``progress(advance, total)`` per evaluation.

    Returns
    -------
    QuasiIdentifierReport
    """
    attrs = list(attributes) if attributes is not None else list(engine.columns)
    engine.validate(attrs, None)
    threshold = check_int(threshold, "threshold", low=2)
    if max_size is not None:
        max_size = check_int(max_size, "max_size", low=1)
    used = {a: v for a, v in (levels or {}).items() if a in attrs and v}
    evaluator = SubsetEvaluator(engine, used, progress)
    found = minimal_failing(
        evaluator, attrs, lambda s: bool(s.min() >= threshold), max_size=max_size
    )
    subsets: list[dict[str, Any]] = [
        {
            "attributes": list(s),
            "k": int(sizes.min()),
            "records_exposed": int(sizes[sizes < threshold].sum()),
            "exposed_row_positions": engine.rows_in_small_classes(
                list(s), {a: v for a, v in used.items() if a in s}, threshold
            ).tolist(),
        }
        for s, sizes in found
    ]
    subsets.sort(key=lambda e: (len(e["attributes"]), -int(e["records_exposed"])))
    return QuasiIdentifierReport(
        threshold, subsets, evaluator.evaluations, attrs, max_size, used, evaluator.constant
    )
