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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._html import html_card
from anonlab._progress import Progress
from anonlab._validation import check_fraction, check_int
from anonlab.data.hierarchy import Hierarchy
from anonlab.diagnosis.sample_risk import SampleRisk, check_population_options, sample_risk
from anonlab.diagnosis.subsets import SubsetEvaluator, minimal_failing
from anonlab.engines import get_engine
from anonlab.engines.base import AttributeLevels, Engine, root_label
from anonlab.exceptions import ParameterError, PrivacyRiskWarning

__all__ = [
    "RiskSummary",
    "class_size_histogram",
    "risk_summary",
    "QuasiIdentifierReport",
    "discover_quasi_identifiers",
    "identifying_columns",
    "named_like_an_identifier",
    "warn_identifying_columns",
    "IDENTIFYING_THRESHOLD",
    "DEPENDENCY_TOLERANCE",
]

_BUCKETS = ((1, 1), (2, 2), (3, 4), (5, 9), (10, 19), (20, None))
#: The share of the records a released column, or pair of columns, may make unique before
#: it identifies people (:func:`identifying_columns`; a job's ``identifying_threshold``).
IDENTIFYING_THRESHOLD = 0.01
#: A column determines another when predicting it errs on at most this share of the records
#: that guessing its most common value errs on (:func:`identifying_columns`).
DEPENDENCY_TOLERANCE = 0.01
#: ... and on at most this many records: the dependencies are first looked for among the
#: first :data:`SCREEN_ROWS` records, where one that errs on more cannot hold.
DEPENDENCY_EXCEPTIONS = 1_000
#: Records the identifying-column check reads in memory: it counts the dependencies and
#: pairs of a table with no more there, and screens the dependencies of a larger one there.
SCREEN_ROWS = 100_000
#: Names (lower case, separators dropped) that say a column identifies people or records.
IDENTIFIER_NAMES = frozenset(
    {
        "id", "ssn", "uuid", "guid", "name", "fullname", "firstname", "lastname", "surname",
        "forename", "givenname", "familyname", "middlename", "maidenname", "username",
        "email", "emailaddress", "mail", "phone", "phonenumber", "telephone", "mobile",
        "mobilephone", "cellphone", "fax", "mrn", "medicalrecordnumber", "dob",
        "dateofbirth", "birthdate", "birthday", "pid", "duid", "dupersid", "personid",
        "patientid", "recordno", "recordnumber", "recordid", "socialsecuritynumber",
        "passport", "passportnumber", "address", "streetaddress", "ipaddress", "iban",
        "accountnumber",
    }
)  # fmt: skip
#: Last words of a name that say a column identifies (``patient_id``, ``home phone``).
IDENTIFIER_WORDS = frozenset(
    {"id", "ssn", "uuid", "guid", "mrn", "dob", "pid", "duid", "email", "phone", "address"}
)
#: Words before ``name`` that make it a person's name (``first_name``, not ``drug_name``).
_PERSON_WORDS = frozenset(
    {
        "first", "last", "full", "given", "family", "middle", "maiden", "sur", "patient",
        "person", "customer", "client", "employee", "member", "user", "owner", "contact",
        "mother", "father", "spouse", "child", "doctor", "physician",
    }
)  # fmt: skip
#: The words of a column name: runs of letters, split where lower case turns upper.
_WORDS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+")
_NAMED = "its name says it identifies people or records"


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

    Examples
    --------
    >>> [(b["class_size"], b["classes"], b["records"]) for b in class_size_histogram([1, 1, 2, 7])]
    [('1', 2, 2), ('2', 1, 2), ('3-4', 0, 0), ('5-9', 1, 7), ('10-19', 0, 0), ('20+', 0, 0)]
    """
    s = np.asarray(sizes, dtype=np.int64)
    hist = []
    for lo, hi in _BUCKETS:
        sel = (s >= lo) if hi is None else ((s >= lo) & (s <= hi))
        label = f"{lo}+" if hi is None else (str(lo) if lo == hi else f"{lo}-{hi}")
        hist.append({"class_size": label, "classes": int(sel.sum()), "records": int(s[sel].sum())})
    return hist


def named_like_an_identifier(column: str) -> bool:
    """Whether a column's name says it identifies a person or a record.

    The name is split into words (at spaces, ``_``, ``-``, ``.`` and lower-to-upper case
    changes) and compared without case: it is one of :data:`IDENTIFIER_NAMES` once its
    separators are dropped (``PERSONID``, ``record_no``, ``e-mail``, ``date_of_birth``), or
    its last word is one of :data:`IDENTIFIER_WORDS` (``patient_id``, ``PatientID``,
    ``home phone``), or it ends with ``name`` after a word of a person
    (``first_name``, ``PatientName``; ``drug_name`` does not).

    Parameters
    ----------
    column : str

    Returns
    -------
    bool

    Examples
    --------
    >>> [named_like_an_identifier(c) for c in ("PatientID", "DUID", "e-mail", "valid")]
    [True, True, True, False]
    >>> [named_like_an_identifier(c) for c in ("last_name", "drug_name", "education-num")]
    [True, False, False]
    """
    words = [w.lower() for w in _WORDS.findall(column)]
    if not words:
        return False
    if "".join(words) in IDENTIFIER_NAMES or words[-1] in IDENTIFIER_WORDS:
        return True
    return len(words) > 1 and words[-1] == "name" and words[-2] in _PERSON_WORDS


def identifying_columns(
    engine: Engine,
    exclude: Sequence[str] = (),
    *,
    threshold: float = IDENTIFYING_THRESHOLD,
    quasi_identifiers: Sequence[str] = (),
    hierarchies: Mapping[str, Hierarchy] | None = None,
    levels: AttributeLevels | None = None,
    insensitive: Sequence[str] = (),
) -> list[tuple[str, str]]:
    """Undeclared columns that identify people: a release that keeps them re-identifies.

    A column neither in ``exclude`` nor among ``quasi_identifiers`` nor ``insensitive`` is
    reported when

    1. it makes more than ``threshold`` of the records unique on its own (a record is
       *unique* on a column when no other record holds its value);
    2. its name says it identifies (:func:`named_like_an_identifier`);
    3. it depends on a quasi-identifier Q, one quasi-identifier at a time: it determines
       Q (Q's original value is read off it, undoing Q's generalization) or Q determines
       it, and Q generalized to its coarsest allowed level (``levels``; by default the top
       of its hierarchy, where a single root takes the nulls too; without a hierarchy, one
       value) does not determine it (it would tell more of Q than the release shows);
    4. with another column (undeclared, or insensitive but not unique on its own) it
       makes more than ``threshold`` of the records unique: the pair is reported under
       its first undeclared column, with each such partner.

    Each column is reported once, for the first reason that holds, in that order. *A
    determines B* is measured on the records whose A value another record shares (a value
    held by one record determines anything): predicting each record's B as the most
    common B among the records of its A value errs on at most :data:`DEPENDENCY_TOLERANCE`
    of the records that guessing B's most common value errs on (Goodman and Kruskal's
    lambda of B given A at least 1 - tolerance; an exact dependency errs on none) and on at
    most :data:`DEPENDENCY_EXCEPTIONS` records, and B varies on those records. A
    quasi-identifier that is nearly unique itself thus determines nothing by chance: its
    values held by one record are no evidence; nor does a near-constant column's most
    common value make it determined by everything. A column of lists, maps or structs
    (counted by its JSON text; it is no attribute, so it forms no classes) is reported only
    when it holds a different value in each row, or for its name.

    Every engine gives the same answer, from counts: ``distinct_counts`` of every column
    but the quasi-identifiers (one scan); ``class_sizes`` of a column with more values than
    the threshold of the records, and of a pair whose columns' class sizes let it make that
    many records unique; ``class_stats`` of a column beside a quasi-identifier. A table of
    at most
    :data:`SCREEN_ROWS` records is read in memory once (``Engine.head``) for the
    dependencies and pairs; in a larger one a dependency is counted over the whole table
    only if it errs on at most :data:`DEPENDENCY_EXCEPTIONS` of the first
    :data:`SCREEN_ROWS` records (it errs on at least as many of all the records).

    Parameters
    ----------
    engine : Engine
        The table.
    exclude : sequence of str
        Columns already declared (quasi-identifiers, sensitive attributes, identifiers).
    threshold : float
        The share of the records, in [0, 1], a column or a pair may make unique (default
        :data:`IDENTIFYING_THRESHOLD`, 1 %); at 1 only a column with a different value in
        each record is reported for its uniqueness.
    quasi_identifiers : sequence of str
        The quasi-identifiers whose dependent columns are reported (reason 3).
    hierarchies : Mapping[str, Hierarchy], optional
        The quasi-identifiers' hierarchies (to generalize one to its level in ``levels``).
    levels : Mapping[str, int], optional
        The coarsest level each quasi-identifier may be released at (default: the top of
        its hierarchy; without a hierarchy, one value).
    insensitive : sequence of str
        Columns released as they are, knowingly: not reported, but partners of pairs.

    Returns
    -------
    list of (column, reason)
        In the table's column order; each reason gives its figures.

    References
    ----------
    L. A. Goodman and W. H. Kruskal, "Measures of association for cross classifications",
    Journal of the American Statistical Association 49 (1954): the asymmetric lambda, the
    proportional reduction of the errors of predicting one classification from another.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.engines import get_engine
    >>> rows = [(str(i % 5), "fm"[i % 2], "21"[i % 2], str(i)) for i in range(20)]
    >>> table = EncodedTable.from_rows(rows, ["age", "sex", "sex_code", "weight"])
    >>> for column, reason in identifying_columns(
    ...     get_engine("numpy", table), quasi_identifiers=["age", "sex"]
    ... ):
    ...     print(f"{column}: {reason}")
    sex_code: it determines quasi-identifier 'sex' (2 values -> 2 values)
    weight: it holds a different value in each of the 20 records
    """
    threshold = check_fraction(threshold, "threshold", owner="identifying_columns")
    every = list(dict.fromkeys([*engine.columns, *engine.nested_columns]))
    nested = set(engine.nested_columns)
    qis = [q for q in dict.fromkeys(quasi_identifiers) if q in every and q not in nested]
    released = [c for c in dict.fromkeys(insensitive) if c in every and c not in qis]
    declared = {*exclude, *qis, *released}
    undeclared = [c for c in every if c not in declared]
    if engine.n_rows <= 1:  # one record is unique on anything: only the names are telling
        return [(c, _NAMED) for c in undeclared if named_like_an_identifier(c)]
    counts = _Counts(engine, threshold)
    counts.distinct([*undeclared, *released])  # (a quasi-identifier's values: in its pairs)
    found: dict[str, str] = {}
    for column in undeclared:
        reason = counts.unique_reason(column, nested=column in nested)
        if reason is None and named_like_an_identifier(column):
            reason = _NAMED
        if reason is not None:
            found[column] = reason
    flat = [c for c in undeclared if c not in found and c not in nested]
    partners = [c for c in released if c not in nested and counts.unique_reason(c) is None]
    counts.load([*flat, *partners, *qis])
    coarsest = _coarsest(qis, hierarchies or {}, levels or {})
    for column in flat:
        reason = counts.dependency(column, qis, coarsest)
        if reason is not None:
            found[column] = reason
    for column, reason in counts.pairs([c for c in flat if c not in found], partners):
        found[column] = reason
    return [(c, found[c]) for c in undeclared if c in found]


@dataclass
class _Coarsest:
    """A quasi-identifier at its coarsest allowed level: ``level`` of ``hierarchy``; with
    ``level`` None, one value (a hierarchy's single root, where a null goes too, or no
    hierarchy: every value to ``*``)."""

    hierarchy: Hierarchy | None
    level: int | None

    def codes(
        self, codes: npt.NDArray[np.int64], labels: npt.NDArray[np.object_]
    ) -> npt.NDArray[np.int64]:
        """The codes of the quasi-identifier's values (``labels[codes]``) at this level."""
        if self.level == 0:
            return codes
        if self.level is None or self.hierarchy is None:
            return np.zeros_like(codes)
        mapping, _ = self.hierarchy.generalization(labels, self.level)
        return mapping.astype(np.int64)[codes]

    @property
    def said(self) -> str:
        return "one value" if self.level is None else f"level {self.level}"


def _coarsest(
    qis: Sequence[str], hierarchies: Mapping[str, Hierarchy], levels: AttributeLevels
) -> dict[str, _Coarsest]:
    """Each quasi-identifier's coarsest allowed level (by default the top of its hierarchy)."""
    out = {}
    for q in qis:
        h, level = hierarchies.get(q), levels.get(q)
        if h is None:
            top = 0 if level == 0 else None
        else:
            top = h.height if level is None else min(int(level), h.height)
            if top and root_label(h, top) is not None:
                top = None
        out[q] = _Coarsest(h, top)
    return out


class _Counts:
    """The counts behind :func:`identifying_columns`, each asked of the engine once.

    The distinct values, and the records unique on a column, are counted by ``engine``.
    The dependencies and pairs of the columns given to :meth:`load` are counted on their
    first :data:`SCREEN_ROWS` records, read in memory once: over the whole table when it
    has no more, else as a screen before ``engine`` counts what passes it.
    """

    def __init__(self, engine: Engine, threshold: float) -> None:
        self.engine = engine
        self.n = engine.n_rows
        self.threshold = threshold
        self.limit = threshold * self.n  # more unique records than this identify
        self.values: dict[str, int] = {}
        self._sizes: dict[str, npt.NDArray[np.int64]] = {}
        self._loaded: list[str] = []
        self._screen: Engine | None = None

    def distinct(self, columns: list[str]) -> None:
        """Count the distinct values of ``columns`` (one scan)."""
        columns = list(dict.fromkeys(columns))
        if columns:
            self.values.update(self.engine.distinct_counts(columns))

    def load(self, columns: list[str]) -> None:
        """The columns the dependencies and pairs are counted on (read when first asked)."""
        self._loaded = list(dict.fromkeys(columns))

    @property
    def complete(self) -> bool:
        """Whether :attr:`screen` holds every record."""
        return self.n <= SCREEN_ROWS

    @property
    def screen(self) -> Engine:
        """The first :data:`SCREEN_ROWS` records of the loaded columns, in memory."""
        if self._screen is None:
            if self.complete and self.engine.in_memory:
                self._screen = self.engine
            else:
                self._screen = get_engine("numpy", self.engine.head(self._loaded, SCREEN_ROWS))
        return self._screen

    @property
    def whole(self) -> Engine:
        """What counts the loaded columns over the whole table."""
        return self.screen if self.complete and self._loaded else self.engine

    def sizes(self, column: str) -> npt.NDArray[np.int64]:
        """The sizes of ``column``'s classes (one per value)."""
        if column not in self._sizes:
            if self.values[column] == self.n:  # no need to group: each value once
                self._sizes[column] = np.ones(self.n, dtype=np.int64)
            else:
                loaded = column in self._loaded
                self._sizes[column] = (self.whole if loaded else self.engine).class_sizes([column])
        return self._sizes[column]

    def unique_reason(self, column: str, *, nested: bool = False) -> str | None:
        """Why ``column`` identifies on its own (reason 1), or None. Only a column with
        more values than the threshold of the records is grouped (each unique record is a
        value of its own); a nested one is not: it is reported when all its values differ."""
        d = self.values[column]
        if d == self.n:
            return f"it holds a different value in each of the {self.n:,} records"
        if nested or d <= self.limit:
            return None
        u = int(np.count_nonzero(self.sizes(column) == 1))
        if u <= self.limit:
            return None
        return (
            f"{_percent(u / self.n)} of the {self.n:,} records ({u:,}) are unique on it "
            f"(threshold {100 * self.threshold:g} %)"
        )

    def dependency(
        self, column: str, qis: list[str], coarsest: Mapping[str, _Coarsest]
    ) -> str | None:
        """Why ``column`` depends on one of the quasi-identifiers ``qis`` (reason 3), or
        None.

        Above :data:`SCREEN_ROWS` records, a quasi-identifier is tested over the whole
        table only if it passes on the first ones: a column that errs on more than
        :data:`DEPENDENCY_EXCEPTIONS` of them errs on more of all the records (the
        records of a value that do not hold its most common partner only grow with more
        records)."""
        candidates = list(qis)
        if self.values[column] < 2 or not candidates:  # a constant tells nothing
            return None
        stats = self.screen.class_stats([column], sensitive=candidates, with_keys=False)
        for q in candidates:
            h = stats.sensitive[q]
            if self.complete:
                reason = self._depends(column, q, h.rows, h.indices, h.data, h.values, coarsest)
            elif _may_depend(h.rows, h.indices, h.data):
                whole = self.engine.class_stats([column, q])
                assert whole.keys is not None and whole.domains is not None
                keys = whole.keys.astype(np.int64)
                reason = self._depends(
                    column, q, keys[:, 0], keys[:, 1], whole.sizes, whole.domains[1], coarsest
                )
            else:
                reason = None
            if reason is not None:
                return reason
        return None

    def _depends(
        self,
        column: str,
        q: str,
        x: npt.NDArray[np.int64],
        v: npt.NDArray[np.int64],
        w: npt.NDArray[np.int64],
        labels: npt.NDArray[np.object_],
        coarsest: Mapping[str, _Coarsest],
    ) -> str | None:
        """Reason 3 of ``column`` and ``q``, from their distinct pairs of codes ``(x, v)``
        (``labels``: ``q``'s values) and the records ``w`` of each."""
        top = coarsest[q]
        # (q released as one value tells nothing: predicting from one value errs as often as
        # guessing the most common value does)
        if top.level is not None and _determines(*_joint(top.codes(v, labels), x, w)) is not None:
            return None  # q's release tells it already
        errors = _determines(x, v, w)
        if errors is not None:
            dx, dq = _distinct(x), _distinct(v)
            but = f" but for {errors:,} records" if errors else ""
            return f"it determines quasi-identifier {q!r}{but} ({dx:,} values -> {dq:,} values)"
        errors = _determines(v, x, w)
        if errors is not None:
            dx, dq = _distinct(x), _distinct(v)
            but = f" but for {errors:,} records" if errors else ""
            return (
                f"quasi-identifier {q!r} determines it{but} ({dq:,} values -> {dx:,} values), "
                f"and it tells more of {q!r} than {q!r} generalized to {top.said}"
            )
        return None

    def pairs(self, columns: list[str], partners: list[str]) -> list[tuple[str, str]]:
        """Reason 4: each of ``columns`` with the partners (later ``columns`` or
        ``partners``) with which it makes more than the threshold of the records unique."""
        out = []
        for i, a in enumerate(columns):
            others = [b for b in [*columns[i + 1 :], *partners] if self._pair_may_identify(a, b)]
            if not others:
                continue
            hits = []
            for b in others:
                u = int(np.count_nonzero(self.whole.class_sizes([a, b]) == 1))
                if u > self.limit:
                    hits.append((u, b))
            if hits:
                hits.sort(key=lambda h: -h[0])  # (stable: ties keep the table's order)
                (u, b), more = hits[0], hits[1:]
                said = f"together with {b!r} it makes {_percent(u / self.n)} of the "
                said += f"{self.n:,} records ({u:,}) unique"
                said += "".join(f", with {c!r} {_percent(v / self.n)} ({v:,})" for v, c in more)
                out.append((a, f"{said} (threshold {100 * self.threshold:g} %)"))
        return out

    def _pair_may_identify(self, a: str, b: str) -> bool:
        """Whether ``a`` and ``b`` have enough values to make more than the threshold of
        the records unique together: at most ``min(f, d_b)`` records of a value of ``a``
        held by ``f`` records are unique on the pair (``d_b - 1`` if ``f > d_b``: two of
        them then share their ``b``), and the same the other way."""
        da, db = self.values[a], self.values[b]
        if min(self.n, da * db) <= self.limit:
            return False
        return min(_pair_bound(self.sizes(a), db), _pair_bound(self.sizes(b), da)) > self.limit


def _pair_bound(sizes: npt.NDArray[np.int64], other: int) -> int:
    """The most records unique on a pair, given the class sizes of one column and the
    number of values of the other."""
    return int(np.where(sizes <= other, sizes, other - 1).sum())


def _distinct(codes: npt.NDArray[np.int64]) -> int:
    """The number of distinct codes (every record is in a pair: its column's values)."""
    return int(np.unique(codes).size)


def _joint(
    a: npt.NDArray[np.int64], b: npt.NDArray[np.int64], w: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct ``(a, b)`` pairs and their summed counts ``w``."""
    span = int(b.max()) + 1 if b.size else 1
    keys, inverse = np.unique(a * span + b, return_inverse=True)
    return keys // span, keys % span, np.bincount(inverse, weights=w).astype(np.int64)


def _may_depend(
    a: npt.NDArray[np.int64], b: npt.NDArray[np.int64], w: npt.NDArray[np.int64]
) -> bool:
    """Whether ``a`` may determine ``b``, or ``b`` ``a``, on more records than these."""
    return min(_errors(a, b, w)[0], _errors(b, a, w)[0]) <= DEPENDENCY_EXCEPTIONS


def _errors(
    a: npt.NDArray[np.int64], b: npt.NDArray[np.int64], w: npt.NDArray[np.int64]
) -> tuple[int, int]:
    """On the records whose ``a`` value another record shares: how many predicting ``b``
    from ``a`` (each ``a`` value's most common ``b``) gets wrong, and how many guessing
    ``b``'s most common value gets wrong. ``(a, b)`` are distinct pairs, ``w`` their
    records."""
    per_a = np.bincount(a, weights=w)
    shared = per_a[a] >= 2  # a value held by one record is no evidence
    a, b, w = a[shared], b[shared], w[shared]
    total = int(w.sum())
    if total == 0:
        return 0, 0
    best = np.zeros(per_a.size, dtype=np.int64)
    np.maximum.at(best, a, w)
    return total - int(best.sum()), total - int(np.bincount(b, weights=w).max())


def _determines(
    a: npt.NDArray[np.int64], b: npt.NDArray[np.int64], w: npt.NDArray[np.int64]
) -> int | None:
    """The records on which ``a`` fails to predict ``b`` when ``a`` determines ``b`` (see
    :func:`identifying_columns`), else None."""
    errors, guess = _errors(a, b, w)
    if guess == 0:  # b does not vary where a could tell it
        return None
    if errors > DEPENDENCY_TOLERANCE * guess or errors > DEPENDENCY_EXCEPTIONS:
        return None
    return errors


def _percent(share: float) -> str:
    """A share as a percentage with three digits that matter (``47.1 %``, ``6.00 %``,
    ``0.26 %``)."""
    pct = 100 * share
    return f"{pct:.1f} %" if pct >= 10 else f"{pct:#.3g} %" if pct >= 1 else f"{pct:#.2g} %"


def warn_identifying_columns(
    engine: Engine,
    exclude: Sequence[str],
    *,
    action: str,
    stacklevel: int = 2,
    threshold: float = IDENTIFYING_THRESHOLD,
    quasi_identifiers: Sequence[str] = (),
    hierarchies: Mapping[str, Hierarchy] | None = None,
    levels: AttributeLevels | None = None,
    insensitive: Sequence[str] = (),
    released_as_is: Sequence[str] = (),
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
    threshold, quasi_identifiers, hierarchies, levels, insensitive
        As for :func:`identifying_columns`.
    released_as_is : sequence of str
        Columns a job declares insensitive (released as they are): still checked, and the
        warning says they are released as they are rather than undeclared.

    Returns
    -------
    list of (column, reason)
        As :func:`identifying_columns` returns them.
    """
    found = identifying_columns(
        engine,
        exclude,
        threshold=threshold,
        quasi_identifiers=quasi_identifiers,
        hierarchies=hierarchies,
        levels=levels,
        insensitive=insensitive,
    )
    for column, reason in found:
        status = (
            "is released as it is (insensitive)" if column in released_as_is else "is not declared"
        )
        warnings.warn(
            PrivacyRiskWarning(
                f"Column {column!r} may identify people ({reason}) and {status}: {action}"
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
    sample : SampleRisk, optional
        The prosecutor, journalist and marketer risk, sample uniqueness and, where the
        population is told, the population estimates and the weighted risk.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import risk
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"], "sex": ["F", "F", "M"]})
    >>> summary = risk(t, ["zip", "sex"], threshold=2)
    >>> summary.n_classes, summary.average_risk, summary.records_at_risk
    (2, 0.6666666666666666, 1)
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
    sample: SampleRisk | None = None

    def _repr_html_(self) -> str:
        """The risk summary as tables with each figure's meaning (Jupyter's rich display).

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> from anonlab.api import risk
        >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"]})
        >>> "1 of the 3 records (33.33 %) is alone" in risk(t, ["zip"])._repr_html_()
        True
        """
        percent = 100 * self.unique_records / self.n_rows if self.n_rows else 0.0
        verb = "is" if self.unique_records == 1 else "are"
        headline = (
            f"{self.unique_records:,} of the {self.n_rows:,} records ({percent:.2f} %) {verb} "
            f"alone in their class on {', '.join(self.quasi_identifiers)}: whoever knows these "
            "values of such a person finds their record; the most exposed record is "
            f"re-identified with probability {self.highest_risk:.4g}, a record on average with "
            f"{self.average_risk:.4g}."
        )
        return html_card("Re-identification risk", self.to_dict(), headline=headline)

    def to_dict(self) -> dict[str, Any]:
        """Return the JSON form.

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> from anonlab.api import risk
        >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"]})
        >>> d = risk(t, ["zip"], threshold=2).to_dict()
        >>> d["k"], d["unique_records"], d["records_at_risk"]
        (1, 1, 1)
        """
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
        if self.sample is not None:
            out.update(self.sample.to_dict())
        return out


def risk_summary(
    engine: Engine,
    quasi_identifiers: Sequence[str],
    *,
    threshold: int = 5,
    levels: AttributeLevels | None = None,
    sampling_fraction: float | None = None,
    population_size: int | None = None,
    weight: str | None = None,
    population: Engine | None = None,
    declared: Sequence[str] = (),
    released_as_is: Sequence[str] = (),
) -> RiskSummary:
    """Summarise the re-identification risk under ``quasi_identifiers``.

    The prosecutor model's figures (``k``, highest and average risk, uniques, records at
    risk), and the three attacker models of :func:`~anonlab.diagnosis.sample_risk.sample_risk`
    (``sample``); told the population the sample was drawn from (one of
    ``sampling_fraction``, ``population_size``, ``weight``, ``population``), also the
    estimated share of population uniques and, with weights, the Benedetti-Franconi risk.

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
    sampling_fraction : float, optional
        The share of the population the table holds, in (0, 1].
    population_size : int, optional
        The population's records (at least the table's).
    weight : str, optional
        A column of sampling weights; never a quasi-identifier, not counted as identifying.
    population : Engine, optional
        The population table (journalist model against its classes).
    declared : sequence of str
        Other columns a job gives a role that keeps them out of the release as they are
        (identifiers) or judges them (sensitive): not listed as identifying.
    released_as_is : sequence of str
        Columns a job releases as they are (insensitive): listed when they identify, the
        warning saying so.

    Returns
    -------
    RiskSummary

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"], "sex": ["F", "F", "M"]})
    >>> summary = risk_summary(open_engine(t), ["zip", "sex"], threshold=2)
    >>> summary.k, summary.unique_records, summary.highest_risk
    (1, 1, 1.0)
    """
    qi = list(quasi_identifiers)
    if not qi:
        raise ParameterError("The set of quasi-identifiers S is empty.")
    engine.validate(qi, None)  # (a list or struct column is named as such)
    n = engine.require_rows("diagnose")
    threshold = check_int(threshold, "threshold", low=1)
    check_population_options(
        sampling_fraction=sampling_fraction,
        population_size=population_size,
        weight=weight,
        population=population,
    )
    used = {a: v for a, v in (levels or {}).items() if a in qi and v}
    sample = sample_risk(
        engine,
        qi,
        threshold=threshold,
        levels=used,
        sampling_fraction=sampling_fraction,
        population_size=population_size,
        weight=weight,
        population=population,
    )
    sizes = engine.class_sizes(qi, used)
    hist = class_size_histogram(sizes)
    k = int(sizes.min())
    found = warn_identifying_columns(
        engine,
        [*qi, *([weight] if weight is not None else []), *declared],
        action="this summary does not count it, and a release that keeps it re-identifies "
        "people; add it to the quasi-identifiers or drop it.",
        stacklevel=2,
        quasi_identifiers=qi,
        hierarchies=engine.hierarchies,
        levels={q: used.get(q, 0) for q in qi},
        released_as_is=released_as_is,
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
        sample=sample,
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

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import find_quasi_identifiers
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351", "4351"],
    ...                                "sex": ["F", "M", "F", "F"]})
    >>> report = find_quasi_identifiers(t)
    >>> report.threshold, [s["attributes"] for s in report.subsets]
    (2, [['sex']])
    """

    threshold: int
    subsets: list[dict[str, Any]]
    evaluations: int
    attributes: list[str]
    max_size: int | None = None
    levels: dict[str, int] = field(default_factory=dict)
    constant_columns: list[str] = field(default_factory=list)

    def _repr_html_(self) -> str:
        """The sets that single people out, as a table (Jupyter's rich display).

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> from anonlab.api import find_quasi_identifiers
        >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351", "4351"],
        ...                                "sex": ["F", "M", "F", "F"]})
        >>> "<td>sex</td>" in find_quasi_identifiers(t)._repr_html_()
        True
        """
        data = self.to_dict()
        data["subsets"] = [
            {
                **{k: v for k, v in s.items() if k != "exposed_row_positions"},
                "attributes": ", ".join(s["attributes"]),
            }
            for s in self.subsets
        ]
        headline = (
            f"{len(self.subsets):,} smallest sets of attributes put some record in a class of "
            f"fewer than {self.threshold} records ({self.evaluations:,} sets evaluated): each "
            "is a quasi-identifier to protect."
        )
        return html_card("Quasi-identifiers found", data, headline=headline)

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
    levels: AttributeLevels | None = None,
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

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351", "4351"],
    ...                                "sex": ["F", "M", "F", "F"]})
    >>> report = discover_quasi_identifiers(open_engine(t), ["zip", "sex"])
    >>> [s["attributes"] for s in report.subsets], report.evaluations
    ([['sex']], 2)
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
