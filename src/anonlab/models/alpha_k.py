"""(alpha,k)-anonymity: simple, general and multi-attribute (Wong, Li, Fu & Wang 2009).

Reading of the paper (R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymous data
publishing", J. Intell. Inf. Syst., 2009):

* **Definition 4** (alpha-deassociation) bounds the fraction ``|(E,s)| / |E| <= alpha`` of a
  sensitive value ``s`` in every class.
* **Definition 5** (refined alpha-deassociation) replaces it, after the k = 2, alpha = 0.1
  example, with a count bound with a ceiling: ``|(E,s)| <= ceil(alpha |E|)``. The ceiling
  lets a class of two hold one sensitive row even when ``alpha |E| < 1``; so under
  Definition 5 ``alpha`` is *not* a cap on the inference confidence: the confidence of a
  class is at most ``ceil(alpha |E|) / |E| < alpha + 1 / |E|``. Definition 8 (precisely
  alpha-deassociated trunks) uses the same ``ceil(alpha p)``.
* Lemma 2 (the generalization property) is true for Definition 4 and for Definitions
  10-14, whose bounds are fractions, but **not for Definition 5**: ``ceil`` is
  subadditive, so merging two passing classes can fail. With alpha = 0.1, two classes of
  two rows with one sensitive row each pass (``1 <= ceil(0.2) = 1``); their union (four
  rows, two sensitive) does not (``2 > ceil(0.4) = 1``). The same happens at alpha = 0.5
  with classes of three rows holding two sensitive rows each. The simple refined model is
  therefore flagged non-monotonic; ``refined=False`` selects Definition 4 (monotonic).
* Lemma 1 (choice of alpha) and Lemma 5 (further removal) are stated with the fraction
  of Definition 4; :func:`further_removal_bound` implements Lemma 5.
* Definitions 4 and 5 state ``0 < alpha < 1``, Definitions 10-13 ``0 <= alpha <= 1``;
  anonlab accepts ``0 < alpha <= 1`` (alpha = 1 only leaves k-anonymity).
* Section 6.1: several sensitive values of one attribute can be combined into one
  sensitive class; the simple model then bounds their summed count.
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._validation import Param, did_you_mean
from anonlab.data.stats import ClassStats
from anonlab.exceptions import ParameterError
from anonlab.models._common import (
    ATTRIBUTE,
    Counts,
    ceil_tolerant,
    counts_of,
    distinct_in_table,
    max_or_zero,
)
from anonlab.models.base import PrivacyModel

__all__ = ["AlphaKAnonymity", "further_removal_bound"]


def _label(value: object) -> str | None:
    return None if value is None else str(value)


#: The constraint of alpha, the largest frequency a class may give a sensitive value.
_ALPHA = Param(float, low=0, high=1, low_open=True)


def _normalize_values(values: object, owner: str) -> tuple[str | None, ...]:
    if isinstance(values, (str, numbers.Number)) and not isinstance(values, bool):
        return (_label(values),)
    if isinstance(values, Iterable) and not isinstance(values, (bytes, dict)):
        out = sorted({_label(v) for v in values}, key=lambda v: (v is None, v or ""))
        if out:
            return tuple(out)
    raise ParameterError(
        f"The 'values' parameter of {owner} must be a sensitive value or a non-empty list of "
        f"values. Got {values!r} instead."
    )


class AlphaKAnonymity(PrivacyModel):
    """(alpha,k)-anonymity: k-anonymity plus a cap on the frequency of sensitive values.

    Three variants, chosen by the parameters. Each class ``E`` must have ``|E| >= k`` and:

    * **simple** (``values`` given; Definitions 5 and 6): with ``(E,s)`` the rows of ``E``
      holding one of ``values`` (Section 6.1: several values form one combined sensitive
      class), ``|(E,s)| <= ceil(alpha |E|)`` (refined, the default), or
      ``|(E,s)| / |E| <= alpha`` with ``refined=False`` (Definition 4);
    * **general** (``values=None``, one attribute; Definitions 10-12): every value ``x`` of
      the attribute is alpha-rare, ``|(E,x)| / |E| <= alpha``;
    * **multi-attribute** (``attribute`` a list; Definitions 13-14): the general condition
      for every listed attribute.

    Ceilings are taken with a relative tolerance of 1e-9 (``0.1 * 30`` counts as 3).
    A null sensitive value is a value of its own.

    Parameters
    ----------
    attribute : str or list of str
        The sensitive attribute, or several for the multi-attribute variant.
    alpha : float
        ``0 < alpha <= 1``.
    k : int
        ``k >= 1``.
    values : str or iterable of str, optional
        The sensitive value(s) of the simple variant (one attribute only). Each must occur
        in the column (a misspelt value would otherwise pass silently).
    refined : bool
        Simple variant only: use the ceiling of Definition 5 (default) or the fraction of
        Definition 4.

    Raises
    ------
    ParameterError
        If ``alpha`` is not in (0, 1], ``k`` not an int >= 1, ``values`` is given with
        several attributes, or (when judging) a sensitive value is not in the column.

    Notes
    -----
    *Monotonicity under generalization.* General, multi-attribute and simple with
    ``refined=False``: yes (Wong et al. 2009, Lemma 2: each bound is a linear constraint on the
    class distribution, and the size bound is preserved by unions). Simple refined
    (Definition 5): **no**; see the module docstring for the counterexample.
    *Under suppression:* no for every variant (a passing class merged with a failing one
    may fail).

    *Value.* :meth:`value` is the largest frequency ``|(E,s)| / |E|`` (simple: of the
    combined sensitive values; general/multi: of any value of any listed attribute). The
    fraction variants hold iff ``alpha >= value`` (and ``k <=`` the smallest class); the
    refined variant then holds too, and possibly for smaller alpha. For the general variant
    this equals the alpha of pycanon's ``alpha_k_anonymity`` (``gen=True``).

    References
    ----------
    .. [1] R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymous data
       publishing", J. Intell. Inf. Syst. 33, 2009: Section 2 (Definitions 4-6),
       Section 6.1 (Definitions 10-12), Section 6.2 (Definitions 13-14).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350"] * 3 + ["4351"] * 3,
    ...                                "disease": ["flu", "hiv", "cold", "hiv", "hiv", "flu"]})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
    >>> model = AlphaKAnonymity("disease", alpha=0.5, k=3, values="hiv")
    >>> model.class_ok(stats).tolist(), model.value(stats)
    ([True, True], 0.6666666666666666)
    """

    name = "alpha_k_anonymity"
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "attribute": ATTRIBUTE,
        "alpha": _ALPHA,
        "k": Param(int, low=1),
        "refined": Param(bool),
    }
    monotonic_suppression = False
    union_safe: str | None = "each alpha bound is linear in a class's counts (Definitions 4, 10-14)"

    def __init__(
        self,
        attribute: str | Sequence[str],
        alpha: float,
        k: int,
        values: str | Iterable[str] | None = None,
        refined: bool = True,
    ) -> None:
        owner = type(self).__name__
        if isinstance(attribute, str):
            self.attributes: tuple[str, ...] = (self._checked("attribute", attribute),)
            self.multi = False
        elif isinstance(attribute, Sequence) and attribute:
            self.attributes = tuple(self._checked("attribute", a) for a in attribute)
            if len(set(self.attributes)) != len(self.attributes):
                raise ParameterError(f"The 'attribute' parameter of {owner} names a column twice.")
            self.multi = True
        else:
            raise ParameterError(
                f"The 'attribute' parameter of {owner} must be a sensitive column or a "
                f"non-empty list of them. Got {attribute!r} instead."
            )
        self.alpha: float = self._checked("alpha", alpha)
        self.k: int = self._checked("k", k)
        self.refined: bool = self._checked("refined", refined)
        self.values: tuple[str | None, ...] | None = None
        if values is not None:
            if len(self.attributes) > 1:
                raise ParameterError(
                    f"The 'values' parameter of {owner} needs a single sensitive attribute; "
                    f"got {len(self.attributes)}. Omit 'values' for the multi-attribute model "
                    "(every value of every attribute alpha-rare)."
                )
            self.values = _normalize_values(values, owner)
        self.monotonic_generalization = not (self.values is not None and self.refined)
        if not self.monotonic_generalization:
            self.union_safe = None
            self.union_unsafe = (
                "the refined bound |(E,s)| <= ceil(alpha |E|) (Definition 5) is not kept when "
                "classes of two blocks with the same labels merge; set 'refined: false' "
                "(Definition 4's fraction, which is kept)"
            )

    # ----------------------------------------------------------------- description
    @property
    def attribute(self) -> str:
        """The first (usually only) sensitive attribute."""
        return self.attributes[0]

    @property
    def variant(self) -> str:
        """``"simple"``, ``"general"`` or ``"multi"``."""
        if self.values is not None:
            return "simple"
        return "multi" if self.multi else "general"

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """The sensitive attributes."""
        return self.attributes

    @property
    def min_class_size(self) -> int:
        """``k``."""
        return self.k

    # ----------------------------------------------------------------- judging
    def _sensitive_count(self, c: Counts) -> npt.NDArray[np.int64]:
        assert self.values is not None
        index = {_label(v): i for i, v in enumerate(c.values)}
        cols = []
        for v in self.values:  # loop over the (few) chosen sensitive values
            if v not in index:
                present = [str(x) for x in index if x is not None]
                raise ParameterError(
                    f"Sensitive value {v!r} of model {self.name!r} does not occur in attribute "
                    f"{self.attribute!r}.{did_you_mean(str(v), present)} "
                    f"Values: {', '.join(map(repr, present[:10]))}"
                    f"{', ...' if len(present) > 10 else ''}."
                )
            cols.append(index[v])
        return np.asarray(c.f[:, cols].sum(axis=1), dtype=np.int64)

    def class_frequency(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """Per class, the largest frequency the model bounds (see :meth:`value`)."""
        out = np.zeros(stats.n_classes, dtype=np.float64)
        for attr in self.attributes:  # loop over sensitive attributes
            c = counts_of(stats, attr, self.name)
            n = np.maximum(c.n, 1).astype(np.float64)
            if self.values is not None:
                top = self._sensitive_count(c).astype(np.float64)
            else:
                top = (c.f.max(axis=1) if c.f.shape[1] else np.zeros(c.n.size)).astype(np.float64)
            out = np.maximum(out, top / n)
        return out

    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """Return, per class, ``|E| >= k`` and the alpha bound of the variant."""
        ok = np.asarray(stats.sizes >= self.k, dtype=bool)
        if self.values is not None and self.refined:
            c = counts_of(stats, self.attribute, self.name)
            cap = ceil_tolerant(self.alpha * c.n.astype(np.float64))
            return np.asarray(ok & (self._sensitive_count(c) <= cap), dtype=bool)
        return np.asarray(ok & (self.class_frequency(stats) <= self.alpha), dtype=bool)

    def max_count(self, sizes: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """Return, per class size ``n``, the most rows a class of ``n`` rows may hold.

        The count bounded is that of :meth:`class_ok`: the combined sensitive values
        (simple variant) or each single value (general, multi-attribute). A class of ``n``
        rows passes the alpha bound iff its count is at most ``max_count(n)``: with the
        ceiling ``ceil(alpha n)`` (Definition 5, simple refined), otherwise the largest
        ``c`` with ``c / n <= alpha`` compared in floating point exactly as :meth:`class_ok`
        compares (Definitions 4 and 10-14). Search code sizes classes with it (Wong et al. 2009's
        trunks, Definition 8) without re-deriving the model's arithmetic.

        Parameters
        ----------
        sizes : array_like of int
            Class sizes (>= 0).

        Returns
        -------
        ndarray of int64
            The largest allowed count per size (0 for an empty class).
        """
        n = np.asarray(sizes, dtype=np.int64)
        nf = n.astype(np.float64)
        if self.values is not None and self.refined:
            return ceil_tolerant(self.alpha * nf)
        c = np.floor(self.alpha * nf).astype(np.int64)
        safe = np.maximum(nf, 1.0)
        c = np.where((c + 1) / safe <= self.alpha, c + 1, c)  # floating-point rounding
        c = np.where(c / safe > self.alpha, c - 1, c)
        return np.minimum(np.maximum(c, 0), n)

    def class_values(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """Per class, the largest bounded frequency (see :meth:`value`)."""
        return self.class_frequency(stats)

    def value(self, stats: ClassStats) -> float:
        """Return the largest bounded frequency over all classes (0 for no class)."""
        return max_or_zero(self.class_frequency(stats))

    def check_feasible(self, stats: ClassStats) -> None:
        """Raise ParameterError when no release can satisfy the model.

        General and multi-attribute variants: every class holds some value with frequency
        at least ``1 / d`` (``d`` distinct values in the table), so ``alpha < 1 / d`` is
        impossible. Simple variant: the sensitive values must occur in the column.
        """
        for attr in self.attributes:
            c = counts_of(stats, attr, self.name)
            if self.values is not None:
                self._sensitive_count(c)
                continue
            d = distinct_in_table(c)
            if d and self.alpha < 1.0 / d:
                raise ParameterError(
                    f"The 'alpha' parameter of {type(self).__name__} (alpha={self.alpha:g}) is "
                    f"below 1/{d}: sensitive attribute {attr!r} has only {d} distinct values, "
                    f"so every class holds a value with frequency >= 1/{d}. "
                    f"Choose alpha >= {1.0 / d:.6g}."
                )

    def params(self) -> dict[str, Any]:
        """The job-file parameters (``attribute``, ``alpha``, ``k``, ``values``, ``refined``)."""
        return {
            "attribute": list(self.attributes) if self.multi else self.attribute,
            "alpha": self.alpha,
            "k": self.k,
            "values": None if self.values is None else list(self.values),
            "refined": self.refined,
        }


def further_removal_bound(n_remaining: int, n_sensitive: int | Sequence[int], alpha: float) -> int:
    """Return how many rows may be removed from ``D_r`` keeping it alpha-deassociable.

    Paper 002, Lemma 5: after removing the precisely alpha-deassociated trunks, at most

    .. math:: q_{max} = \\Big\\lfloor |D_r| - \\frac{|(D_r, s)|}{\\alpha} \\Big\\rfloor

    further rows can be removed, because ``|(D_r, s)| / (|D_r| - q) <= alpha``
    (inequality (1)). For the general and multi-attribute models (Sections 6.1, 6.2) pass
    the count of every sensitive value: the bound is the minimum over them.

    Parameters
    ----------
    n_remaining : int
        ``|D_r|``, the rows remaining.
    n_sensitive : int or sequence of int
        ``|(D_r, s)|``, the remaining rows with the sensitive value (one per value).
    alpha : float
        ``0 < alpha <= 1``.

    Returns
    -------
    int
        ``q_max``. A negative result means ``D_r`` itself exceeds alpha (Lemma 1 fails): no
        row can be removed. The floor snaps values within 1e-9 of an integer to it.

    Raises
    ------
    ParameterError
        On a negative count or alpha outside (0, 1].

    Notes
    -----
    Monotonicity does not apply (a bound, not a model). In the paper's Table 10 example,
    ``|D_r| = 4``, ``|(D_r, s)| = 1``, alpha = 0.5 gives ``4 - 1/0.5 = 2``.

    References
    ----------
    .. [1] R. C.-W. Wong et al., "(alpha, k)-anonymous data publishing", 2009, Section 4.1
       (Further Removal, Lemma 5, Algorithm 1 line 9) and Sections 6.1-6.2.

    Examples
    --------
    >>> further_removal_bound(10, 2, 0.5)
    6
    >>> further_removal_bound(10, [2, 4], 0.5)
    2
    """
    owner = "further_removal_bound"
    n_r: int = Param(int, low=0).check(n_remaining, "n_remaining", owner=owner)
    a: float = _ALPHA.check(alpha, "alpha", owner=owner)
    raw: list[object] = list(n_sensitive) if isinstance(n_sensitive, Sequence) else [n_sensitive]
    if not raw:
        raise ParameterError(f"The 'n_sensitive' parameter of {owner} is empty.")
    counts = [Param(int, low=0).check(s, "n_sensitive", owner=owner) for s in raw]
    x = n_r - np.asarray(counts, dtype=np.float64) / a
    return int((-ceil_tolerant(-x)).min())
