"""The greedy search of local suppression: which cells to blank, round by round.

sdcMicro's ``localSuppression`` (Templ, Kowarik & Meindl 2015, section 5.2) visits every
record whose frequency (wildcard semantics) is below ``k`` and blanks one of its key values,
the least important one that brings it closer to other records, then counts again, until
every record is k-anonymous. :func:`suppress` does the same on the distinct tuples of the
table, all unsafe tuples of a round at once:

1. count every tuple's frequency (:func:`~anonlab.release.blanks.compatible_counts`);
2. for each unsafe tuple and each attribute it may still blank (not blank yet, within the
   attribute's limit), count the frequency it would have with that attribute blank as well
   (one vectorised count per attribute);
3. each unsafe tuple takes the **least important** attribute whose blank makes it
   k-anonymous; when none does, the attribute that raises its frequency most (ties: the
   least important);
4. an attribute's limit takes the proposals in that order (a tuple that reaches ``k`` first,
   then the largest frequency) while cells remain; the others wait for the next round.

A blank only adds matches, so no record's frequency ever falls: the counts of step 2 are
lower bounds of what the tuple has after the round. Each round blanks at least one cell of
an unsafe tuple, and a tuple blank in every attribute matches all ``n >= k`` records, so the
search ends; it fails only when the limits leave an unsafe tuple nothing to blank.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from anonlab._typing import IntArray
from anonlab.exceptions import ParameterError
from anonlab.release.blanks import compatible_counts

__all__ = ["SuppressionOutcome", "suppress"]


@dataclass(frozen=True)
class SuppressionOutcome:
    """What :func:`suppress` found.

    Attributes
    ----------
    blank : ndarray of bool, shape (tuples, attributes)
        The blank cells of each distinct tuple.
    rounds : int
        Rounds of counting.
    unsafe_before : int
        Records (weights) whose frequency was below ``k`` before any blank.
    """

    blank: npt.NDArray[np.bool_]
    rounds: int
    unsafe_before: int


def suppress(
    codes: npt.NDArray[np.integer],
    weights: npt.NDArray[np.integer],
    k: int,
    rank: npt.NDArray[np.integer],
    budget: npt.NDArray[np.integer],
    names: tuple[str, ...] = (),
) -> SuppressionOutcome:
    """Blank cells of the distinct tuples until every record has ``k`` compatible records.

    Parameters
    ----------
    codes : ndarray of int, shape (tuples, attributes)
        The distinct tuples (at the full-domain level chosen before).
    weights : ndarray of int, shape (tuples,)
        The records each tuple stands for (all of a tuple's records share its blanks).
    k : int
        The k of k-anonymity.
    rank : ndarray of int, shape (attributes,)
        Each attribute's importance rank: 0 the most important; the highest rank is
        blanked first.
    budget : ndarray of int, shape (attributes,)
        The cells each attribute may still lose (0: never blanked).
    names : tuple of str
        The attributes, named in the error.

    Returns
    -------
    SuppressionOutcome

    Raises
    ------
    ParameterError
        The limits leave unsafe records with no attribute to blank.

    Examples
    --------
    >>> codes = np.array([[0, 0], [0, 1], [1, 1]])  # three distinct records, k = 2
    >>> out = suppress(codes, np.array([2, 1, 1]), 2, np.array([0, 1]), np.array([9, 9]))
    >>> out.blank.tolist(), out.rounds, out.unsafe_before
    ([[False, False], [False, True], [True, False]], 2, 2)
    """
    codes = np.asarray(codes, dtype=np.int64)
    w = np.asarray(weights, dtype=np.int64)
    n, m = codes.shape
    rank = np.asarray(rank, dtype=np.int64)
    remaining = np.asarray(budget, dtype=np.int64).copy()
    blank = np.zeros((n, m), dtype=bool)
    total = int(w.sum())
    big = (total + 2) * (m + 1)
    rounds = 0
    unsafe_before = 0
    while True:
        rounds += 1
        freq = compatible_counts(codes, blank, w, codes, blank)
        unsafe = np.flatnonzero(freq < k)
        if rounds == 1:
            unsafe_before = int(w[unsafe].sum())
        if not unsafe.size:
            return SuppressionOutcome(blank, rounds, unsafe_before)
        score = np.full((unsafe.size, m), -1, dtype=np.int64)
        for a in range(m):
            can = ~blank[unsafe, a] & (w[unsafe] <= remaining[a])
            if not can.any():
                continue
            rows = unsafe[can]
            trial = blank[rows].copy()
            trial[:, a] = True
            f = compatible_counts(codes, blank, w, codes[rows], trial)
            score[can, a] = np.where(f >= k, big + rank[a], f * (m + 1) + rank[a])
        stuck = score.max(axis=1) < 0
        if stuck.any():
            _stuck(unsafe[stuck], w, k, budget, names)
        choice = score.argmax(axis=1)
        priority = score[np.arange(unsafe.size), choice]
        for a in np.unique(choice).tolist():
            mine = np.flatnonzero(choice == a)
            order = mine[np.argsort(-priority[mine], kind="stable")]
            taken = order[np.cumsum(w[unsafe[order]]) <= remaining[a]]
            blank[unsafe[taken], a] = True
            remaining[a] -= int(w[unsafe[taken]].sum())


def _stuck(
    rows: IntArray,
    w: IntArray,
    k: int,
    budget: npt.NDArray[np.integer],
    names: tuple[str, ...],
) -> None:
    """Refuse: the limits leave these tuples nothing to blank."""
    limited = [
        f"{name} ({int(b)})" for name, b in zip(names, np.asarray(budget).tolist()) if b < 2**62
    ]
    raise ParameterError(
        f"Local suppression cannot make {int(w[rows].sum()):,} records {k}-anonymous: "
        "the per-attribute limits (and the attributes that may not be blanked) leave them "
        f"nothing more to blank ({', '.join(limited) or 'no limit given'}). Raise a limit, "
        "or generalize first ('generalize'). Nothing was written."
    )
