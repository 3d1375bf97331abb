"""Special uniques: minimal sample uniques (MSUs), SUDA scores and DIS scores.

A record is *unique* on a set of quasi-identifiers when no other record shares its values
on them; the set is one of its *minimal sample uniques* when no smaller non-empty subset
makes it unique. A record unique on few attributes, in many ways, is the easiest to find:
the SUDA score weighs each MSU by its size (Elliot, Manning, Mayes, Gurd & Bane, *SUDA: A
Program for Detecting Special Uniques*, 2005), and the DIS score turns the scores into the
probability that a match of a sample unique with the population is correct (Skinner &
Elliot 2002; Elliot 2000, *DIS: a new approach to the measurement of statistical disclosure
risk*), both as sdcMicro's ``suda2()`` computes them.

The MSUs are found as SUDA2 finds them (Manning, Haglin & Keane, *A recursive search
algorithm for statistical disclosure assessment*, Data Mining and Knowledge Discovery
16(2), 2008): section 3's properties are what prune the search. Uniqueness is inherited by
supersets, so a set is searched only for the records that are unique on none of its
subsets one attribute smaller (the "uniqueness" and "minimality" properties); a record
unique on such a subset can share its values on the set with no other record, so the
records still searched are counted among themselves alone (SUDA2's sub-tables shrink the
same way); and a set whose remaining records hold no sample unique is dropped with all its
supersets. The sets are searched level by level, attribute subsets of one size after
another, each one vectorised over the table's distinct keys.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._html import html_card
from anonlab._validation import check_fraction, check_int
from anonlab.data.grouping import group_rows
from anonlab.data.table import EncodedTable
from anonlab.engines import get_engine
from anonlab.engines.base import Engine
from anonlab.exceptions import ParameterError

__all__ = ["DIS_FRACTION", "SudaResult", "suda2"]

#: sdcMicro's default sampling fraction of the DIS score (``DisFraction``).
DIS_FRACTION = 0.01


@dataclass(frozen=True)
class SudaResult:
    """The minimal sample uniques of a table and each record's SUDA and DIS score.

    Per-record arrays have one entry per row of the table, in its order (a row of a
    frequency set stands for its weight's records; only a row of weight 1 can be unique).

    Parameters
    ----------
    quasi_identifiers : tuple of str
        The attributes searched, in the order of the columns of :attr:`contributions`.
    max_size : int
        The largest MSU size searched (``m``).
    dis_fraction : float
        The sampling fraction the DIS scores assume.
    scores : ndarray of float64
        Each record's SUDA score: the sum over its MSUs of the weight of their size
        (:attr:`size_weights`); 0 for a record with no MSU of at most ``max_size``
        attributes.
    dis_scores : ndarray of float64
        Each record's DIS score: the probability that a record unique in the sample,
        matched on its quasi-identifiers with the population, is matched correctly,
        shared out among the records by their SUDA scores; 0 where the SUDA score is 0.
    msu_counts : ndarray of int64, shape (n_rows, max_size)
        Each record's number of MSUs of each size (column ``k - 1``: size ``k``).
    contributions : ndarray of float64, shape (n_rows, n_quasi_identifiers)
        Per record, the weights of its MSUs that contain each attribute, over its score
        (sdcMicro's ``contributionPercent``; an MSU of several attributes counts for each,
        so a row sums to more than 1 when its MSUs have more than one attribute); 0 where
        the score is 0.
    size_weights : ndarray of float64, shape (max_size,)
        The weight of an MSU of each size ``k``: ``prod_{i=k}^{m-1} (M - i)`` with ``M``
        quasi-identifiers (Elliot et al.; with ``m = M``, ``(M - k)!``).
    msu_records : ndarray of int64
        The record (row position) of each MSU, ascending.
    msu_attributes : ndarray of bool, shape (n_msus, n_quasi_identifiers)
        The attributes of each MSU.
    sample_uniques : int
        Records unique on all the quasi-identifiers.
    pair_records : int
        Records that share their quasi-identifiers with exactly one other record (the
        pairs of the DIS estimate).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351", "4351"],
    ...                                "sex": ["F", "M", "F", "F"]})
    >>> result = suda2(t, ["zip", "sex"])
    >>> result.scores.tolist(), result.msus_of(0), result.msus_of(1), result.msus_by_size
    ([1.0, 1.0, 0.0, 0.0], [('zip', 'sex')], [('sex',)], {1: 1, 2: 1})
    >>> result.pair_records, result.dis_scores.round(6).tolist()
    (2, [0.01, 0.01, 0.0, 0.0])
    """

    quasi_identifiers: tuple[str, ...]
    max_size: int
    dis_fraction: float
    scores: npt.NDArray[np.float64] = field(repr=False)
    dis_scores: npt.NDArray[np.float64] = field(repr=False)
    msu_counts: npt.NDArray[np.int64] = field(repr=False)
    contributions: npt.NDArray[np.float64] = field(repr=False)
    size_weights: npt.NDArray[np.float64] = field(repr=False)
    msu_records: npt.NDArray[np.int64] = field(repr=False)
    msu_attributes: npt.NDArray[np.bool_] = field(repr=False)
    sample_uniques: int = 0
    pair_records: int = 0

    @property
    def n_rows(self) -> int:
        """The number of rows scored."""
        return int(self.scores.size)

    @property
    def msus_by_size(self) -> dict[int, int]:
        """The number of MSUs of each size, ``{1: ..., ..., max_size: ...}``."""
        totals = self.msu_counts.sum(axis=0)
        return {k + 1: int(totals[k]) for k in range(self.max_size)}

    @property
    def records_with_msus(self) -> int:
        """The records with at least one MSU (a SUDA score above 0)."""
        return int(np.count_nonzero(self.scores > 0))

    @property
    def attribute_contributions(self) -> dict[str, float]:
        """Per attribute, the percentage of the table's total SUDA score that comes from
        MSUs containing it (sdcMicro's ``attribute_contributions``; the percentages sum
        to more than 100 when MSUs have several attributes). All 0 without MSUs."""
        total = float(self.scores.sum())
        raw = (self.contributions * self.scores[:, None]).sum(axis=0)
        share = 100 * raw / total if total > 0 else np.zeros(raw.size)
        return {q: float(v) for q, v in zip(self.quasi_identifiers, share)}

    def msus_of(self, row: int) -> list[tuple[str, ...]]:
        """The MSUs of the record at position ``row``, smallest first.

        Parameters
        ----------
        row : int

        Returns
        -------
        list of tuple of str

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"],
        ...                                "sex": ["F", "M", "F"]})
        >>> suda2(t, ["zip", "sex"]).msus_of(1)
        [('sex',)]
        """
        row = check_int(row, "row", low=0, high=self.n_rows - 1, owner="SudaResult.msus_of")
        lo, hi = np.searchsorted(self.msu_records, [row, row + 1])
        sets = [
            tuple(q for q, used in zip(self.quasi_identifiers, mask) if used)
            for mask in self.msu_attributes[lo:hi]
        ]
        return sorted(sets, key=lambda s: (len(s), [self.quasi_identifiers.index(q) for q in s]))

    def riskiest(self, n: int = 10) -> list[dict[str, Any]]:
        """The ``n`` records with the highest SUDA scores (ties: the first rows first).

        Parameters
        ----------
        n : int

        Returns
        -------
        list of dict
            ``{"row": ..., "score": ..., "dis_score": ..., "msus": [[...], ...]}`` per
            record with a score above 0, highest first.

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"],
        ...                                "sex": ["F", "M", "F"]})
        >>> [(r["row"], r["score"], r["msus"]) for r in suda2(t, ["zip", "sex"]).riskiest(2)]
        [(0, 1.0, [['zip', 'sex']]), (1, 1.0, [['sex']])]
        """
        n = check_int(n, "n", low=0, owner="SudaResult.riskiest")
        order = np.argsort(-self.scores, kind="stable")[:n]
        return [
            {
                "row": int(r),
                "score": float(self.scores[r]),
                "dis_score": float(self.dis_scores[r]),
                "msus": [list(s) for s in self.msus_of(int(r))],
            }
            for r in order
            if self.scores[r] > 0
        ]

    def _repr_html_(self) -> str:
        """The summary and the ten riskiest records as tables (Jupyter's rich display).

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"],
        ...                                "sex": ["F", "M", "F"]})
        >>> "3 of the 3 records have a minimal sample unique" in suda2(t, ["zip", "sex"])._repr_html_()
        True
        """
        data = self.to_dict()
        data["riskiest"] = [
            {**r, "msus": "; ".join(", ".join(m) for m in r["msus"])} for r in data["riskiest"]
        ]
        headline = (
            f"{self.records_with_msus:,} of the {self.n_rows:,} records have a minimal sample "
            f"unique (a set of at most {self.max_size} of the quasi-identifiers on which no "
            "other record shares their values): the higher a record's score, the more ways "
            "it can be singled out."
        )
        meanings = {
            "max_size": "the largest MSU size searched",
            "dis_fraction": "the sampling fraction the DIS scores assume",
            "msus_by_size": "MSUs of each size",
            "msus": "minimal sample uniques found",
            "records_with_msus": "records with at least one MSU",
            "sample_uniques": "records unique on all the quasi-identifiers",
            "highest_score": "the highest SUDA score (the weights of a record's MSUs summed)",
            "highest_dis_score": "the highest chance that a sample unique matched with the "
            "population is matched correctly",
            "mean_dis_score": "the expected share of the records matched correctly",
            "attribute_contributions": "percent of the scores each attribute takes part in",
        }
        return html_card("SUDA: special uniques", data, headline=headline, meanings=meanings)

    def to_dict(self, riskiest: int = 10) -> dict[str, Any]:
        """A JSON-ready summary (no per-record arrays).

        Parameters
        ----------
        riskiest : int
            How many of the riskiest records to list.

        Returns
        -------
        dict
            ``quasi_identifiers``, ``max_size``, ``dis_fraction``, ``msus_by_size``
            (keys as text), ``msus``, ``records_with_msus``, ``sample_uniques``,
            ``pair_records``, ``highest_score``, ``highest_dis_score``,
            ``mean_dis_score`` (the expected share of the sample uniques matched
            correctly, over all records), ``attribute_contributions`` (percent) and
            ``riskiest`` (:meth:`riskiest`).

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"],
        ...                                "sex": ["F", "M", "F"]})
        >>> summary = suda2(t, ["zip", "sex"]).to_dict(riskiest=0)
        >>> summary["msus_by_size"], summary["records_with_msus"], summary["pair_records"]
        ({'1': 2, '2': 1}, 3, 0)
        """
        n = max(self.n_rows, 1)
        return {
            "quasi_identifiers": list(self.quasi_identifiers),
            "max_size": self.max_size,
            "dis_fraction": self.dis_fraction,
            "msus_by_size": {str(k): v for k, v in self.msus_by_size.items()},
            "msus": int(self.msu_records.size),
            "records_with_msus": self.records_with_msus,
            "sample_uniques": self.sample_uniques,
            "pair_records": self.pair_records,
            "highest_score": float(self.scores.max(initial=0.0)),
            "highest_dis_score": float(self.dis_scores.max(initial=0.0)),
            "mean_dis_score": float(self.dis_scores.sum() / n),
            "attribute_contributions": self.attribute_contributions,
            "riskiest": self.riskiest(riskiest),
        }


def suda2(
    data: EncodedTable | Engine,
    quasi_identifiers: Sequence[str],
    *,
    max_size: int | None = None,
    dis_fraction: float = DIS_FRACTION,
) -> SudaResult:
    """Find the minimal sample uniques (MSUs) of every record and score the records.

    A record's *MSUs* are the sets of at most ``max_size`` quasi-identifiers on which no
    other record shares its values while, on every smaller non-empty subset of the set,
    another record does. A null is a value like any other (two nulls are equal), as in
    every class anonlab counts.

    The *SUDA score* of a record sums, over its MSUs, the weight of their size ``k``:
    ``prod_{i=k}^{m-1} (M - i)`` with ``M`` quasi-identifiers and ``m = max_size``
    (Elliot et al. 2005, section 2; sdcMicro's ``suda2()`` with its default
    ``original_scores=TRUE`` searches ``m = M``, where the weight is ``(M - k)!``). A
    record with no MSU, and every record that shares its quasi-identifiers with another,
    scores 0.

    The *DIS score* of a record with a SUDA score ``s > 0`` is, as sdcMicro computes it,
    ``1 / (1 + P (1 - f) / (f s^Q A))``, with ``f`` the sampling fraction
    (``dis_fraction``), ``P`` the records sharing their quasi-identifiers with exactly one
    other record, ``Q = 1 + (8 - M) / 20`` and ``A`` the sum of ``s^-Q`` over the records
    scoring above 0 (sdcMicro writes ``P (1 - f) / f`` as ``U / D - U`` with ``U`` the
    sample uniques and ``D = U f / (U f + P (1 - f))`` the file's DIS probability, which
    is the same number). It is 0 where the SUDA score is 0.

    Parameters
    ----------
    data : EncodedTable or Engine
        The table (an engine over it: numpy, DuckDB or Spark; the per-record arrays need
        the class of each row, ``class_stats(..., with_rows=True)``).
    quasi_identifiers : sequence of str
        The attributes an intruder may know (at least one).
    max_size : int, optional
        The largest MSU searched, from 1 to the number of quasi-identifiers (default:
        all of them, as sdcMicro).
    dis_fraction : float
        The sampling fraction of the table, in ``(0, 1]`` (default 0.01, sdcMicro's).

    Returns
    -------
    SudaResult

    Raises
    ------
    ParameterError
        If no quasi-identifier is given, one is named twice, ``max_size`` is below 1 or
        above the number of quasi-identifiers, or ``dis_fraction`` is outside ``(0, 1]``.
    ColumnNotFoundError
        If a quasi-identifier is not a column (naming it and the columns there are).
    DataFormatError
        If the table has no rows.

    Notes
    -----
    Where sdcMicro's ``suda2()`` differs: it never counts a missing value in an MSU (here a
    null is a value); below three quasi-identifiers it adds constant columns, so its ``M``
    is 3; it computes ``Q`` and ``D`` in single precision (its DIS scores agree with these
    to about 1e-6); and when the values of two attributes fall on the same records it
    credits the MSUs found through them, in the attribute contributions, to one of the two
    only (here each MSU credits its own attributes). On a table without nulls and with at
    least three quasi-identifiers the definitions agree (the scores of sdcMicro's own test
    examples are these).

    References
    ----------
    A. M. Manning, D. J. Haglin and J. A. Keane, "A recursive search algorithm for
    statistical disclosure assessment", Data Mining and Knowledge Discovery 16(2),
    165-196, 2008: section 3 (uniqueness and minimality properties).
    M. J. Elliot, A. Manning, K. Mayes, J. Gurd and M. Bane, "SUDA: A Program for
    Detecting Special Uniques", Joint UNECE/Eurostat work session on statistical data
    confidentiality, 2005: the SUDA score.
    C. J. Skinner and M. J. Elliot, "A measure of disclosure risk for microdata", Journal
    of the Royal Statistical Society B 64(4), 855-867, 2002: the DIS measure.

    Examples
    --------
    The sdcMicro guidelines' ten records (Residence, Gender, Education, Labour status):

    >>> from anonlab import EncodedTable
    >>> t = EncodedTable.from_rows(
    ...     [("Urban", "F", "Sec-inc", "Emp"), ("Urban", "F", "Sec-inc", "Emp"),
    ...      ("Urban", "F", "Prim-inc", "NonLF"), ("Urban", "M", "Sec-comp", "Emp"),
    ...      ("Rural", "F", "Sec-comp", "Unemp"), ("Urban", "M", "Sec-comp", "Emp"),
    ...      ("Urban", "F", "Prim-comp", "NonLF"), ("Urban", "M", "Post-sec", "Unemp"),
    ...      ("Urban", "F", "Sec-inc", "NonLF"), ("Urban", "F", "Sec-inc", "NonLF")],
    ...     ["res", "sex", "edu", "lab"])
    >>> result = suda2(t, ["res", "sex", "edu", "lab"])
    >>> result.scores.tolist()
    [0.0, 0.0, 6.0, 0.0, 12.0, 0.0, 6.0, 10.0, 0.0, 0.0]
    >>> result.msus_of(4)
    [('res',), ('sex', 'edu'), ('sex', 'lab'), ('edu', 'lab')]
    >>> result.msus_by_size
    {1: 4, 2: 5, 3: 0, 4: 0}
    >>> [round(float(d), 5) for d in result.dis_scores[[2, 4, 7]]]
    [0.00499, 0.01138, 0.00917]
    """
    engine = data if isinstance(data, Engine) else get_engine("numpy", data)
    qis = list(quasi_identifiers)
    if not qis:
        raise ParameterError("suda2 needs at least one quasi-identifier; got none.")
    engine.validate(qis, None)
    n_qi = len(qis)
    m = (
        n_qi
        if max_size is None
        else check_int(max_size, "max_size", low=1, high=n_qi, owner="suda2")
    )
    f = check_fraction(dis_fraction, "dis_fraction", low_open=True, owner="suda2")
    engine.require_rows("search for sample uniques")
    stats = engine.class_stats(qis, with_rows=True, with_keys=True)
    assert stats.keys is not None and stats.domains is not None and stats.row_class is not None
    sizes = np.asarray(stats.sizes, dtype=np.int64)
    keys = np.asarray(stats.keys)
    cards = [int(d.size) for d in stats.domains]
    weights = _size_weights(n_qi, m)

    found = _search(keys, cards, sizes, m)
    n_classes = sizes.size
    counts = np.zeros((n_classes, m), dtype=np.int64)
    raw = np.zeros((n_classes, n_qi), dtype=np.float64)
    for subset, classes in found:
        counts[classes, len(subset) - 1] += 1
        raw[np.ix_(classes, np.array(subset))] += weights[len(subset) - 1]
    class_score = counts @ weights
    with np.errstate(invalid="ignore", divide="ignore"):
        class_share = np.where(class_score[:, None] > 0, raw / class_score[:, None], 0.0)

    row_class = np.asarray(stats.row_class, dtype=np.int64)
    scores = class_score[row_class]
    sample_uniques = int(sizes[sizes == 1].sum())
    pair_records = int(sizes[sizes == 2].sum())
    dis = _dis_scores(scores, pair_records, f, n_qi)

    row_of = np.empty(n_classes, dtype=np.int64)  # (an MSU's class has one record: one row)
    row_of[row_class] = np.arange(row_class.size, dtype=np.int64)
    if found:
        msu_class = np.concatenate([c for _, c in found])
        mask = np.zeros((msu_class.size, n_qi), dtype=bool)
        at = 0
        for subset, classes in found:
            mask[at : at + classes.size, list(subset)] = True
            at += classes.size
        msu_rows = row_of[msu_class]
        order = np.argsort(msu_rows, kind="stable")
        msu_rows, mask = msu_rows[order], mask[order]
    else:
        msu_rows, mask = np.zeros(0, dtype=np.int64), np.zeros((0, n_qi), dtype=bool)
    return SudaResult(
        quasi_identifiers=tuple(qis),
        max_size=m,
        dis_fraction=f,
        scores=scores,
        dis_scores=dis,
        msu_counts=counts[row_class],
        contributions=class_share[row_class],
        size_weights=weights,
        msu_records=msu_rows,
        msu_attributes=mask,
        sample_uniques=sample_uniques,
        pair_records=pair_records,
    )


def _size_weights(n_qi: int, m: int) -> npt.NDArray[np.float64]:
    """The weight of an MSU of each size ``k = 1..m``: ``prod_{i=k}^{m-1} (n_qi - i)``."""
    return np.array(
        [float(math.prod(n_qi - i for i in range(k, m))) for k in range(1, m + 1)],
        dtype=np.float64,
    )


def _search(
    keys: npt.NDArray[np.integer],
    cards: list[int],
    sizes: npt.NDArray[np.int64],
    m: int,
) -> list[tuple[tuple[int, ...], npt.NDArray[np.int64]]]:
    """The MSUs of the distinct keys ``keys`` (one row per class of ``sizes`` records):
    per attribute subset of at most ``m`` columns, the classes it is an MSU of.

    Level ``k`` keeps, per subset still alive, which classes are unique on none of its
    subsets (``shared``); a subset of ``k + 1`` attributes is searched among the classes
    shared on all its ``k``-subsets, which no other class can join on it."""
    n_classes, n_qi = sizes.size, keys.shape[1]
    columns = [np.ascontiguousarray(keys[:, j]) for j in range(n_qi)]
    single = sizes == 1
    found: list[tuple[tuple[int, ...], npt.NDArray[np.int64]]] = []
    shared: dict[tuple[int, ...], npt.NDArray[np.bool_]] = {(): np.ones(n_classes, dtype=bool)}
    for k in range(1, m + 1):
        level: dict[tuple[int, ...], npt.NDArray[np.bool_]] = {}
        for subset in combinations(range(n_qi), k):
            below = [subset[:i] + subset[i + 1 :] for i in range(k)]
            if any(b not in shared for b in below):
                continue  # a subset holds no sample unique still searched: nor does this one
            candidate = shared[below[0]].copy()
            for b in below[1:]:
                candidate &= shared[b]
            rows = np.flatnonzero(candidate)
            if not single[rows].any():
                continue  # no sample unique left to search on this subset
            ids, n_groups = group_rows(
                [columns[j][rows] for j in subset], [cards[j] for j in subset]
            )
            count = np.bincount(ids, weights=sizes[rows], minlength=n_groups)
            unique = count[ids] == 1
            if unique.any():
                found.append((subset, rows[unique]))
            if k < m:
                still = np.zeros(n_classes, dtype=bool)
                still[rows[~unique]] = True
                if (still & single).any():
                    level[subset] = still
        shared = level
        if not shared:
            break
    return found


def _dis_scores(
    scores: npt.NDArray[np.float64], pair_records: int, fraction: float, n_qi: int
) -> npt.NDArray[np.float64]:
    """sdcMicro's DIS-SUDA score of each record (see :func:`suda2`)."""
    dis = np.zeros(scores.size, dtype=np.float64)
    positive = scores > 0
    if not positive.any():
        return dis
    q = 1.0 + (8.0 - n_qi) / 20.0
    powered = scores[positive] ** q
    adjust = float(np.sum(1.0 / powered))
    dis[positive] = 1.0 / (1.0 + pair_records * (1.0 - fraction) / fraction / (powered * adjust))
    return dis
