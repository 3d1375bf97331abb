"""k-anonymity of a class-size vector, with and without deterministic suppression.

Implements compute-k (Algorithm 1) and compute-k-with-suppression (Algorithm 4) of
Zare Mirakabad, Jantan & Bressan, *k-anonymity Diagnosis Centre*, section 4.2 and 4.5, on
class sizes from any engine. By Lemma 2 (deterministic suppression) the largest k reachable
by suppressing at most ``floor(delta * n)`` rows is obtained by removing whole classes, the
smallest first.

Unlike the paper's loop (``while partialSum < delta*|r|``), which may remove one class too
many and exceed the budget, the number of suppressed rows here never exceeds
``floor(delta * n)``; and only the classes smaller than the final k are removed.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["compute_k", "k_with_suppression", "delta_for_k", "delta_curve", "suppression_budget"]


def suppression_budget(delta: float, n_rows: int) -> int:
    """Return ``floor(delta * n_rows)``, the most rows a delta-suppression may remove.

    A tiny tolerance keeps ``0.3 * 10`` at 3 despite floating point.
    """
    return int(math.floor(delta * n_rows + 1e-9))


def compute_k(sizes: npt.NDArray[np.int64]) -> int:
    """Return the k of a table with classes of ``sizes``: the smallest class size.

    Algorithm 1 (compute-k) of the Diagnosis Centre paper, section 4.2. An empty table has
    ``k = 0``.

    Examples
    --------
    >>> import numpy as np
    >>> compute_k(np.array([3, 2, 5]))
    2
    """
    return int(sizes.min()) if sizes.size else 0


def k_with_suppression(sizes: npt.NDArray[np.int64], n_rows: int, delta: float) -> tuple[int, int]:
    """Return the largest k reachable by suppressing at most ``floor(delta * n)`` rows.

    Algorithm 4 (compute-k-with-suppression) of the Diagnosis Centre paper, section 4.5,
    with the budget respected exactly (Lemma 2: remove whole classes, smallest first).

    Parameters
    ----------
    sizes : ndarray of int64
        Class sizes.
    n_rows : int
        Number of rows (the sum of ``sizes``).
    delta : float
        Suppression threshold in [0, 1].

    Returns
    -------
    k : int
        The k of the suppressed table (the largest class is never removed).
    suppressed_rows : int
        Rows removed: exactly those of the classes smaller than ``k``.

    Examples
    --------
    >>> import numpy as np
    >>> k_with_suppression(np.array([1, 2, 5]), 8, 0.125)
    (2, 1)
    """
    if sizes.size == 0:
        return 0, 0
    s = np.sort(sizes)
    budget = suppression_budget(delta, n_rows)
    prefix = np.cumsum(s)
    # the number j of smallest classes removable within the budget, keeping at least one
    j = int(np.searchsorted(prefix, budget, side="right"))
    j = min(j, s.size - 1)
    k = int(s[j])
    # remove only the classes smaller than k (ties of size k are kept)
    removed = int(np.searchsorted(s, k, side="left"))
    suppressed = int(prefix[removed - 1]) if removed else 0
    return k, suppressed


def delta_for_k(sizes: npt.NDArray[np.int64], n_rows: int, k: int) -> tuple[float, int, int]:
    """Return the smallest delta for which the delta-suppressed table is k-anonymous.

    The rows of every class smaller than ``k`` must go (Lemma 2); if no class has ``k``
    rows, all rows go.

    Returns
    -------
    delta : float
        ``suppressed_rows / n_rows``.
    suppressed_rows : int
        Rows to suppress.
    achieved_k : int
        The k of the remaining table (0 if nothing remains).

    Examples
    --------
    >>> import numpy as np
    >>> delta_for_k(np.array([1, 2, 5]), 8, 2)
    (0.125, 1, 2)
    """
    if sizes.size == 0 or n_rows == 0:
        return 0.0, 0, 0
    small = sizes < k
    suppressed = int(sizes[small].sum())
    rest = sizes[~small]
    achieved = int(rest.min()) if rest.size else 0
    return suppressed / n_rows, suppressed, achieved


def delta_curve(
    sizes: npt.NDArray[np.int64], n_rows: int, ks: npt.NDArray[np.int64]
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Vectorised :func:`delta_for_k` for many k at once (questions Q11 and Q12).

    Returns
    -------
    deltas : ndarray of float64
    suppressed_rows : ndarray of int64

    Examples
    --------
    >>> import numpy as np
    >>> deltas, suppressed = delta_curve(np.array([1, 2, 5]), 8, np.array([1, 2, 3]))
    >>> deltas.tolist(), suppressed.tolist()
    ([0.0, 0.125, 0.375], [0, 1, 3])
    """
    s = np.sort(sizes)
    prefix = np.concatenate([[0], np.cumsum(s)])
    idx = np.searchsorted(s, ks, side="left")
    suppressed = prefix[idx].astype(np.int64)
    deltas = suppressed / n_rows if n_rows else np.zeros(len(ks))
    return np.asarray(deltas, dtype=np.float64), suppressed
