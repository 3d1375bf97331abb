"""The scoring functions of PrivacyFrost2 (Kiyomoto & Miyake, CD-ARES 2014, section 6).

A score rates how well a generalized table meets the user's requirements; PrivacyFrost2
keeps the table with the highest score. Every score is a function of three vectors with one
entry per quasi-identifier ``a^i``:

``counts`` (the paper's ``e_{a^i}``)
    "the number of value types of an attribute a^i in the table" (section 6.1): how many
    distinct values the attribute shows in the generalized table. Section 5.3 bounds it by
    ``b_w``, the number of hierarchy nodes on the attribute's level, which confirms that
    ``e`` is a count of values, not a level.
``priorities`` (``v_{a^i}``)
    Positive integers; a larger value asks for more detail (section 3).
``base_counts`` (``e^b_{a^i}``)
    ``e`` before anonymization: the distinct original values (used by the log-based score).

Scores are replaceable (section 6.1: "The function is implemented as a replaceable module"):
subclass :class:`Score` and implement :meth:`Score.scores`. A score that is a sum or a
maximum of one term per attribute may also say so (:attr:`Score.combine` and
:meth:`Score._term`, as the built-in ones do): the compiled partial-domain step then scores
from the tabulated terms (:meth:`Score.terms`) instead of calling it.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray
from anonlab._validation import Param, did_you_mean
from anonlab.exceptions import ParameterError

__all__ = ["SCORES", "BasicScore", "EtaScore", "LogScore", "Score", "build_score"]


def _as_matrix(counts: npt.ArrayLike) -> FloatArray:
    arr = np.asarray(counts, dtype=np.float64)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ParameterError(
            f"Score counts must be a vector or a matrix (one row per table). Got shape {arr.shape}."
        )
    return arr


class Score(ABC):
    """A PrivacyFrost2 scoring function ``S_t`` (paper section 6); higher is better.

    Subclasses implement :meth:`scores` (vectorised over many tables). A score must be
    non-decreasing in every ``e_{a^i}`` for the top-down pruning bound of section 5.3 to be
    exact; a subclass that is not sets ``monotone = False`` and the bound is disabled.

    Attributes
    ----------
    name : str
        The name in :data:`SCORES` and job files.
    monotone : bool
        Whether the score never decreases when any ``e_{a^i}`` grows.

    References
    ----------
    S. Kiyomoto and Y. Miyake, "PrivacyFrost2: A Efficient Data Anonymization Tool Based on
    Scoring Functions", CD-ARES 2014, LNCS 8708, pp. 211-225, sections 5.3 and 6.
    """

    name: ClassVar[str] = ""
    monotone: ClassVar[bool] = True
    #: How :meth:`terms` combines the per-attribute terms of :meth:`_term` (``"sum"`` or
    #: ``"max"``) when the score is such a reduction; None when it is not.
    combine: ClassVar[str | None] = None

    @abstractmethod
    def scores(
        self,
        counts: npt.ArrayLike,
        priorities: npt.ArrayLike,
        base_counts: npt.ArrayLike,
    ) -> FloatArray:
        """Return the score of each table.

        Parameters
        ----------
        counts : array_like, shape (n_tables, n_attributes) or (n_attributes,)
            ``e_{a^i}``: distinct values of each attribute in each table.
        priorities : array_like, shape (n_attributes,)
            ``v_{a^i}``.
        base_counts : array_like, shape (n_attributes,)
            ``e^b_{a^i}``: distinct values of each attribute before anonymization.

        Returns
        -------
        ndarray of float64, shape (n_tables,)
        """

    def score(
        self,
        counts: npt.ArrayLike,
        priorities: npt.ArrayLike,
        base_counts: npt.ArrayLike,
    ) -> float:
        """Return the score of one table (``counts`` is one vector ``e``)."""
        return float(self.scores(counts, priorities, base_counts)[0])

    def upper_bound(
        self,
        counts: npt.ArrayLike,
        priorities: npt.ArrayLike,
        base_counts: npt.ArrayLike,
        attribute: int,
        max_count: int,
    ) -> float:
        """Bound the score after de-generalizing one attribute (paper section 5.3).

        The de-generalized attribute shows at most ``max_count`` values (the paper's
        ``b_{w+1}``, the number of hierarchy nodes on the next level); the others keep theirs.
        For a monotone score the bound is the score with ``e_{a^i}`` raised to ``max_count``;
        for the basic score this is the paper's ``s' + delta_s`` with
        ``delta_s = (b_{w+1} - e_{a^i}) v_{a^i}``. A non-monotone score returns ``+inf``
        (nothing is skipped).

        Parameters
        ----------
        counts, priorities, base_counts : array_like
            As in :meth:`scores`, for the current table (one vector).
        attribute : int
            Index of the attribute to de-generalize.
        max_count : int
            Upper bound of its number of values after the de-generalization.

        Returns
        -------
        float
        """
        if not self.monotone:
            return math.inf
        e = np.array(counts, dtype=np.float64).reshape(-1)
        e[attribute] = max(e[attribute], float(max_count))
        return self.score(e, priorities, base_counts)

    def terms(
        self,
        priorities: npt.ArrayLike,
        base_counts: npt.ArrayLike,
        max_counts: npt.ArrayLike,
    ) -> tuple[str, list[FloatArray]] | None:
        """The score as one term per attribute, tabulated, if it is a sum or a maximum of
        such terms (then compiled code can score a table without calling :meth:`scores`).

        Parameters
        ----------
        priorities, base_counts : array_like
            As in :meth:`scores`.
        max_counts : array_like of int
            The largest ``e_{a^i}`` to tabulate per attribute.

        Returns
        -------
        (str, list of ndarray) or None
            :attr:`combine` (``"sum"`` or ``"max"``) and per attribute ``i`` its term
            (:meth:`_term`) for ``e_{a^i}`` = ``0..max_counts[i]``: :meth:`score` is that
            reduction of the terms, with the same floating-point values. None when the
            score is not of this form, or when a subclass changed :meth:`scores` without
            giving its terms.
        """
        owner = next(c for c in type(self).__mro__ if "scores" in vars(c))
        if self.combine is None or "_term" not in vars(owner):
            return None
        v = np.asarray(priorities, dtype=np.float64)
        eb = np.asarray(base_counts, dtype=np.float64)
        tops = np.asarray(max_counts, dtype=np.int64)
        counts = [np.arange(int(tops[i]) + 1, dtype=np.float64) for i in range(v.size)]
        return self.combine, [self._term(c, i, v, eb) for i, c in enumerate(counts)]

    def _term(self, counts: FloatArray, i: int, v: FloatArray, eb: FloatArray) -> FloatArray:
        """Attribute ``i``'s term for each of ``counts`` (see :meth:`terms`), computed by the
        operations of :meth:`scores`; ``v`` and ``eb`` are the priorities and base counts."""
        raise NotImplementedError

    def params(self) -> dict[str, Any]:
        """The parameters, as passed to :func:`build_score`."""
        return {}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


class BasicScore(Score):
    """The basic scoring function (paper section 6.1).

    .. math:: S_t = \\sum_{a^i} v_{a^i} \\, e_{a^i}

    References
    ----------
    Kiyomoto and Miyake, CD-ARES 2014, section 6.1.
    """

    name = "basic"
    combine = "sum"

    def scores(
        self,
        counts: npt.ArrayLike,
        priorities: npt.ArrayLike,
        base_counts: npt.ArrayLike,
    ) -> FloatArray:
        """``sum_i v_i e_i`` per table (see :meth:`Score.scores`)."""
        e = _as_matrix(counts)
        v = np.asarray(priorities, dtype=np.float64)
        return np.asarray(e @ v, dtype=np.float64)

    def _term(self, counts: FloatArray, i: int, v: FloatArray, eb: FloatArray) -> FloatArray:
        """``v_i e_i``: integers, so any order of summation gives the score exactly."""
        return np.asarray(v[i] * counts, dtype=np.float64)

    def upper_bound(
        self,
        counts: npt.ArrayLike,
        priorities: npt.ArrayLike,
        base_counts: npt.ArrayLike,
        attribute: int,
        max_count: int,
    ) -> float:
        """The paper's ``s' + delta_s``, ``delta_s = (b_{w+1} - e_{a^i}) v_{a^i}`` (5.3)."""
        e = np.asarray(counts, dtype=np.float64).reshape(-1)
        v = np.asarray(priorities, dtype=np.float64)
        s = float(e @ v)
        return s + max(float(max_count) - float(e[attribute]), 0.0) * float(v[attribute])


class EtaScore(Score):
    """The eta-based scoring function (paper section 6.2).

    .. math::

        S_t = \\sum_{a^i} v_{a^i} \\, \\eta(e_{a^i}), \\qquad
        \\eta(x) = \\begin{cases} 2 & x > d \\\\ 1 & d/2 < x \\le d \\\\
        0 & x \\le d/2 \\end{cases}

    A table gains little from many values of one attribute, so tables tend to be generalized
    uniformly.

    Parameters
    ----------
    d : int
        The constant ``d`` of ``eta``, an int >= 1 (``e`` counts values, so ``d`` is a
        number of values).

    Raises
    ------
    ParameterError
        If ``d`` is not an int >= 1.

    References
    ----------
    Kiyomoto and Miyake, CD-ARES 2014, section 6.2.
    """

    name = "eta"
    combine = "sum"
    _parameter_constraints: ClassVar[dict[str, Param]] = {"d": Param(int, low=1)}

    def __init__(self, d: int) -> None:
        self.d: int = self._parameter_constraints["d"].check(d, "d", owner=type(self).__name__)

    def eta(self, x: npt.ArrayLike) -> FloatArray:
        """The step function ``eta`` of section 6.2, elementwise."""
        arr = np.asarray(x, dtype=np.float64)
        out = np.where(arr > self.d, 2.0, np.where(2.0 * arr > self.d, 1.0, 0.0))
        return np.asarray(out, dtype=np.float64)

    def scores(
        self,
        counts: npt.ArrayLike,
        priorities: npt.ArrayLike,
        base_counts: npt.ArrayLike,
    ) -> FloatArray:
        """``sum_i v_i eta(e_i)`` per table (see :meth:`Score.scores`)."""
        e = _as_matrix(counts)
        v = np.asarray(priorities, dtype=np.float64)
        return np.asarray(self.eta(e) @ v, dtype=np.float64)

    def _term(self, counts: FloatArray, i: int, v: FloatArray, eb: FloatArray) -> FloatArray:
        """``v_i eta(e_i)``: integers, so any order of summation gives the score exactly."""
        return np.asarray(v[i] * self.eta(counts), dtype=np.float64)

    def params(self) -> dict[str, Any]:
        """``{"d": d}``."""
        return {"d": self.d}


class LogScore(Score):
    """The logarithm-based scoring function (paper section 6.3).

    .. math:: S_t = \\max_{a^i} v_{a^i} \\, \\frac{\\log e_{a^i}}{\\log e^b_{a^i}}

    The score is decided by one attribute: the precision of the top-priority attribute
    matters most. Each ratio is in ``[0, 1]`` (``1`` = as many values as before
    anonymization; a single value gives ``log 1 = 0``).

    Notes
    -----
    ``e`` counts values, so ``e >= 1`` for any non-empty table and ``log e`` is finite. The
    paper leaves ``e^b = 1`` (an attribute with one original value) undefined
    (``0 / 0``); such an attribute carries no information at any level, and its term is
    taken as 0 so that it cannot mask the other attributes in the maximum.

    References
    ----------
    Kiyomoto and Miyake, CD-ARES 2014, section 6.3 and Fig. 2.
    """

    name = "log"
    combine = "max"

    def scores(
        self,
        counts: npt.ArrayLike,
        priorities: npt.ArrayLike,
        base_counts: npt.ArrayLike,
    ) -> FloatArray:
        """``max_i v_i log(e_i) / log(e^b_i)`` per table (see :meth:`Score.scores`)."""
        e = _as_matrix(counts)
        v = np.asarray(priorities, dtype=np.float64)
        base = np.asarray(base_counts, dtype=np.float64)
        if e.shape[1] == 0:
            return np.zeros(e.shape[0], dtype=np.float64)
        denom = np.log(np.maximum(base, 1.0))
        num = np.log(np.maximum(e, 1.0))
        safe = np.where(denom > 0, denom, 1.0)
        ratio = np.where(denom > 0, num / safe, 0.0)
        return np.asarray((ratio * v).max(axis=1), dtype=np.float64)

    def _term(self, counts: FloatArray, i: int, v: FloatArray, eb: FloatArray) -> FloatArray:
        """``v_i log(e_i) / log(e^b_i)`` (0 when ``e^b_i = 1``), by the operations of
        :meth:`scores`."""
        denom = np.log(np.maximum(eb, 1.0))
        if not denom[i] > 0:
            return np.zeros(counts.size, dtype=np.float64)
        return np.asarray(np.log(np.maximum(counts, 1.0)) / denom[i] * v[i], dtype=np.float64)


#: Every scoring function by name.
SCORES: dict[str, type[Score]] = {cls.name: cls for cls in (BasicScore, EtaScore, LogScore)}

_PARAMS: dict[str, tuple[str, ...]] = {"basic": (), "eta": ("d",), "log": ()}


def build_score(name: str, **params: Any) -> Score:
    """Build a PrivacyFrost2 scoring function by name (paper section 6).

    Parameters
    ----------
    name : {"basic", "eta", "log"}
        The scoring function.
    **params
        Its parameters: ``d`` (int >= 1) for ``"eta"``; none for the others.

    Returns
    -------
    Score

    Raises
    ------
    ParameterError
        If the name is unknown (the message lists the valid names), a parameter is missing
        or unknown, or a value is out of range.

    Examples
    --------
    >>> build_score("eta", d=3)
    EtaScore(d=3)
    """
    if not isinstance(name, str) or name not in SCORES:
        raise ParameterError(
            f"Unknown PrivacyFrost2 score {name!r}.{did_you_mean(str(name), SCORES)} "
            f"Valid scores: {', '.join(sorted(SCORES))}."
        )
    wanted = _PARAMS[name]
    unknown = sorted(set(params) - set(wanted))
    if unknown:
        takes = ", ".join(map(repr, wanted)) if wanted else "no parameters"
        raise ParameterError(
            f"Unknown parameter {unknown[0]!r} of PrivacyFrost2 score {name!r} (it takes {takes})."
        )
    missing = [p for p in wanted if p not in params]
    if missing:
        raise ParameterError(
            f"The PrivacyFrost2 score {name!r} needs the parameter {missing[0]!r}"
            + (
                " (an int >= 1: eta(x) is 2 above d values, 1 above d/2, else 0)."
                if name == "eta"
                else "."
            )
        )
    factory: Callable[..., Score] = SCORES[name]
    return factory(**params)
