"""t-closeness with the equal, ordered and hierarchical ground distances (Li et al.; ARX)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._validation import Param
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.labels import natural_order
from anonlab.data.stats import ClassStats
from anonlab.exceptions import ParameterError
from anonlab.models._common import (
    ATTRIBUTE,
    GLOBAL_REFERENCE,
    SensitiveModel,
    max_or_zero,
)
from anonlab.models.base import ClassRule, RuleArray, RuleParams

__all__ = [
    "EqualTCloseness",
    "HierarchicalTCloseness",
    "OrderedTCloseness",
    "equal_t_closeness_rule",
]


def equal_t_closeness_rule(
    size: int, counts: RuleArray, table_counts: RuleArray, n_total: int, params: RuleParams
) -> bool:
    """:meth:`EqualTCloseness.class_ok` of one class (a
    :class:`~anonlab.models.base.ClassRule`), with ``params = (t,)``: the integer numerators
    of :meth:`EqualTCloseness.class_distance` summed exactly, divided once, compared with
    ``t`` (an empty table's ``0 / 0`` fails, as NaN does)."""
    n = int(counts.sum())
    terms = 0  # sum over the class's values of |p_count n - f N| - p_count n, exact
    for v in range(counts.size):
        if counts[v] > 0:
            pn = int(table_counts[v]) * n
            terms += abs(pn - int(counts[v]) * n_total) - pn
    num = float(n) * float(n_total) + float(terms)
    den = 2.0 * float(n_total) * float(max(n, 1))
    return bool(den > 0.0 and num / den <= params[0])


class _TCloseness(SensitiveModel):
    """Shared parts of the t-closeness variants."""

    monotonic_generalization = True
    monotonic_suppression = False
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "attribute": ATTRIBUTE,
        "t": Param(float, low=0, high=1, finite=True),
    }
    union_unsafe = GLOBAL_REFERENCE

    def _init(self, attribute: str, t: float) -> None:
        self.attribute: str = self._checked("attribute", attribute)
        self.t: float = self._checked("t", t)

    def class_distance(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """The earth mover's distance of each class to the table distribution."""
        raise NotImplementedError

    def class_ok(self, stats: ClassStats) -> npt.NDArray[np.bool_]:
        """Return, per class, whether its distance is at most ``t`` (equality allowed)."""
        return np.asarray(self.class_distance(stats) <= self.t, dtype=bool)

    def class_values(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """The distance of each class (see :meth:`class_distance`)."""
        return self.class_distance(stats)

    def value(self, stats: ClassStats) -> float:
        """Return the largest class distance: the model holds iff ``t >= value``."""
        return max_or_zero(self.class_distance(stats))


class EqualTCloseness(_TCloseness):
    """t-closeness with the equal ground distance (every two values at distance 1).

    With ``p(s)`` the frequency of ``s`` in the whole table and ``q(s) = f(s)/n_E`` in the
    class, a class passes iff

    .. math:: D[P, Q] = \\tfrac12 \\sum_{s} |p(s) - q(s)| \\le t,

    the sum running over every value of the column (ARX ``EqualDistanceTCloseness``, which
    writes it as ``(1 + sum_{s in E}(|p - q| - p)) / 2``).

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    t : float
        ``0 <= t <= 1``.

    Raises
    ------
    ParameterError
        If ``t`` is not in [0, 1].

    Notes
    -----
    *Monotonicity.* Under generalization: yes. The distance to the fixed table
    distribution is convex in the class distribution, and a merged class's distribution is
    the size-weighted mean of its parts', so its distance is at most the larger one. The
    numerators are computed exactly (integer-valued) and divided once, so this also holds
    in floating point. Under suppression: no (a passing class merged with a failing one
    may fail; ARX declares t-closeness non-monotonic with suppression).

    *Value.* :meth:`value` is the largest class distance. It equals pycanon's
    ``t_closeness`` for a text (string-typed) sensitive column; for a numeric column pycanon
    uses the ordered distance instead (compare with :class:`OrderedTCloseness`).

    References
    ----------
    .. [1] N. Li, T. Li, S. Venkatasubramanian, "t-closeness: privacy beyond k-anonymity
       and l-diversity", ICDE 2007, Section 4.2 (EMD with equal ground distance).
    .. [2] ARX ``criteria/EqualDistanceTCloseness`` (docs/concepts/metrics-reference.md,
       section 2).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350"] * 2 + ["4351"] * 2,
    ...                                "disease": ["flu", "hiv", "flu", "flu"]})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
    >>> model = EqualTCloseness("disease", t=0.3)
    >>> model.class_distance(stats).tolist(), model.class_ok(stats).tolist()
    ([0.25, 0.25], [True, True])
    """

    name = "equal_t_closeness"

    def __init__(self, attribute: str, t: float) -> None:
        self._init(attribute, t)

    def class_distance(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """``sum_s |p(s) - q(s)| / 2`` per class, from the class's non-zero counts only.

        With integer numerators ``e(s) = p_count(s) n_E - f(s) N`` the sum over every value
        is ``n_E N + sum_{s in E} (|e(s)| - p_count(s) n_E)`` (values absent from the class
        have ``e(s) = p_count(s) n_E``), divided once by ``2 N n_E``.
        """
        c = self.counts(stats)
        rows = c.rows
        pn = c.p_count[c.indices] * c.n[rows]
        term = np.abs(pn - c.data * c.n_total) - pn  # exact: integers
        num = c.n.astype(np.float64) * float(c.n_total)
        num += np.bincount(rows, weights=term, minlength=c.n.size)
        den = 2.0 * float(c.n_total) * np.maximum(c.n, 1).astype(np.float64)
        return np.asarray(num / den, dtype=np.float64)

    def class_rule(self) -> ClassRule | None:
        """:func:`equal_t_closeness_rule` with ``(t,)`` (None for a subclass: it may judge
        otherwise)."""
        return (
            ClassRule(equal_t_closeness_rule, (self.t,)) if type(self) is EqualTCloseness else None
        )

    def params(self) -> dict[str, Any]:
        """``{"attribute": ..., "t": ...}``."""
        return {"attribute": self.attribute, "t": self.t}


class OrderedTCloseness(_TCloseness):
    """t-closeness with the ordered ground distance (values on a line, Li et al.).

    The ``M`` distinct values of the whole column are sorted; with ``r_i = q_i - p_i`` in
    that order, a class passes iff

    .. math:: D[P, Q] = \\frac{1}{M - 1} \\sum_{i=1}^{M} \\Big| \\sum_{j \\le i} r_j \\Big|
              \\le t

    (ARX ``OrderedDistanceTCloseness``: ``sum_i |sum_{k<=i}(f_k/n_E - p_k)| <= t (M - 1)``).
    ``M`` counts every distinct value of the column (the dictionary), not only those in the
    class; with ``M = 1`` the distance is 0.

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    t : float
        ``0 <= t <= 1``.
    order : sequence of str, optional
        The values from smallest to largest. It must list every value of the column (a
        null, if not listed, comes last). Without it the order is numeric when every value
        parses as a number, else lexicographic by code point (ARX's default, a STRING
        column compared with ``String.compareTo``, agrees except for characters outside the
        Basic Multilingual Plane). An explicit order always wins, also for numeric values.

    Raises
    ------
    ParameterError
        If ``t`` is not in [0, 1], ``order`` lists a value twice, or (when judging) a value of
        the column is missing from ``order``.

    Notes
    -----
    *Monotonicity.* Under generalization: yes. The distance to the fixed table
    distribution is convex in the class distribution, and a merged class's distribution is
    the size-weighted mean of its parts', so its distance is at most the larger one. The
    numerators are computed exactly (integer-valued) and divided once, so this also holds
    in floating point. Under suppression: no (a passing class merged with a failing one
    may fail; ARX declares t-closeness non-monotonic with suppression).

    *Value.* :meth:`value` is the largest class distance. It equals pycanon's
    ``t_closeness`` for a numeric sensitive column (pycanon sorts with ``np.unique``).

    References
    ----------
    .. [1] N. Li, T. Li, S. Venkatasubramanian, "t-closeness: privacy beyond k-anonymity
       and l-diversity", ICDE 2007, Section 4.2 (EMD with ordered distance).
    .. [2] ARX ``criteria/OrderedDistanceTCloseness`` (docs/concepts/metrics-reference.md,
       section 2).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350"] * 2 + ["4351"] * 2,
    ...                                "salary": ["30", "40", "50", "60"]})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["salary"])
    >>> model = OrderedTCloseness("salary", t=0.4, order=["30", "40", "50", "60"])
    >>> model.class_distance(stats).tolist(), model.class_ok(stats).tolist()
    ([0.3333333333333333, 0.3333333333333333], [True, True])
    """

    name = "ordered_t_closeness"

    def __init__(self, attribute: str, t: float, order: Sequence[str] | None = None) -> None:
        self._init(attribute, t)
        self.order: tuple[str | None, ...] | None = None
        if order is not None:
            if isinstance(order, (str, bytes)) or not isinstance(order, Sequence):
                raise ParameterError(
                    f"The 'order' parameter of {type(self).__name__} must be a list of the "
                    f"values from smallest to largest. Got {order!r} instead."
                )
            labels = tuple(None if v is None else str(v) for v in order)
            seen: set[str | None] = set()
            for v in labels:
                if v in seen:
                    raise ParameterError(
                        f"The 'order' parameter of {type(self).__name__} lists {v!r} twice."
                    )
                seen.add(v)
            self.order = labels
        self._cache: dict[tuple[object, ...], npt.NDArray[np.intp]] = {}

    def permutation(self, values: npt.NDArray[np.object_]) -> npt.NDArray[np.intp]:
        """Return the indices of ``values`` from smallest to largest."""
        key = tuple(values.tolist())
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        if self.order is None:
            perm = natural_order(values)
        else:
            rank = {v: i for i, v in enumerate(self.order)}
            ranks = np.empty(len(values), dtype=np.int64)
            for i, v in enumerate(values):  # loop over distinct values only
                label = None if v is None else str(v)
                if label in rank:
                    ranks[i] = rank[label]
                elif label is None:
                    ranks[i] = len(rank)
                else:
                    raise ParameterError(
                        f"Value {label!r} of sensitive attribute {self.attribute!r} is missing "
                        f"from the 'order' parameter of {type(self).__name__}."
                    )
            perm = np.argsort(ranks, kind="stable").astype(np.intp)
        self._cache[key] = perm
        return perm

    def class_distance(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """``sum_i |cumsum(q - p)_i| / (M - 1)`` per class, from its non-zero counts only.

        In rank order, with ``G_i`` the table's cumulative count and ``F_i`` the class's,
        the numerator is ``sum_i |n_E G_i - N F_i|``. ``F`` is constant between two values
        of the class and ``G`` is non-decreasing, so on each such segment the sign changes
        once, at a point found by binary search in ``G``; both parts are sums of ``G``,
        read from its prefix sums. Every term is an integer; one division at the end.
        """
        c = self.counts(stats)
        m = len(c.values)
        g = c.n.size
        if m <= 1:
            return np.zeros(g, dtype=np.float64)
        perm = self.permutation(c.values)
        cdf = np.cumsum(c.p_count[perm])  # G_i: non-decreasing, G_{M-1} = N
        pre = np.zeros(m + 1, dtype=np.int64)  # pre[i] = G_0 + ... + G_{i-1}
        np.cumsum(cdf, out=pre[1:])
        same = np.array_equal(perm, np.arange(m))
        hist = c.hist if same else c.hist.permuted(perm)  # the class's values in rank order
        rows, a, f = hist.rows, hist.indices, hist.data
        if f.size == 0:
            return np.zeros(g, dtype=np.float64)
        total = np.zeros(f.size + 1, dtype=np.int64)
        np.cumsum(f, out=total[1:])
        big_f = total[1:] - total[hist.indptr[rows]]  # F on the segment [a, b)
        n_e = c.n[rows]
        first = np.r_[True, rows[1:] != rows[:-1]]
        last = np.r_[first[1:], True]
        b = np.where(last, m, np.r_[a[1:], 0])  # the class's next value, or M
        n_total = int(c.n_total)
        # the first i with n_E G_i >= N F: G_i >= ceil(N F / n_E), within [a, b]
        split = np.searchsorted(cdf, (n_total * big_f + n_e - 1) // n_e, side="left")
        split = np.minimum(np.maximum(split, a), b)
        # (N F - n_E G) summed over [a, t) plus (n_E G - N F) over [t, b)
        term = (float(n_total) * big_f.astype(np.float64)) * (2 * split - a - b).astype(np.float64)
        term += n_e.astype(np.float64) * (pre[b] - 2 * pre[split] + pre[a]).astype(np.float64)
        # before the class's first value F = 0: n_E G summed over [0, a)
        term += np.where(first, n_e.astype(np.float64) * pre[a].astype(np.float64), 0.0)
        num = np.bincount(rows, weights=term, minlength=g)
        den = float(c.n_total) * float(m - 1) * np.maximum(c.n, 1).astype(np.float64)
        return np.asarray(num / den, dtype=np.float64)

    def params(self) -> dict[str, Any]:
        """``{"attribute": ..., "t": ..., "order": ...}``."""
        return {
            "attribute": self.attribute,
            "t": self.t,
            "order": None if self.order is None else list(self.order),
        }


_Tree = tuple[npt.NDArray[np.int64] | None, list[npt.NDArray[np.int64]]]


class HierarchicalTCloseness(_TCloseness):
    """t-closeness with the hierarchical ground distance of a taxonomy of the values.

    The ground distance of two values is the level of their lowest common ancestor divided by
    the height ``H`` of the hierarchy. The EMD is computed bottom-up as in ARX
    (``HierarchicalDistanceTCloseness``), every node identified by its (level, label):

    * for each leaf ``s``: ``extra(s) = p_count(s) n_E - f(s) N`` (global count times class
      size minus class count times table size);
    * for each node at level ``l = 1..H``: ``pos`` = sum of its children's positive extras,
      ``neg`` = sum of their negative extras (negated); ``cost += l * min(pos, neg)`` and
      ``extra(node) = pos - neg``;
    * ``D = cost / (H N n_E)``; a class passes iff ``D <= t``.

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    t : float
        ``0 <= t <= 1``.
    hierarchy : Hierarchy
        A hierarchy of the sensitive attribute of height >= 1 covering every value.

    Raises
    ------
    ParameterError
        If ``t`` is not in [0, 1] or ``hierarchy`` is not a Hierarchy of height >= 1.
    HierarchyError
        When judging, if a value of the column is not in the hierarchy.

    Notes
    -----
    *Monotonicity.* Under generalization: yes. The distance to the fixed table
    distribution is convex in the class distribution, and a merged class's distribution is
    the size-weighted mean of its parts', so its distance is at most the larger one. The
    numerators are computed exactly (integer-valued) and divided once, so this also holds
    in floating point. Under suppression: no (a passing class merged with a failing one
    may fail; ARX declares t-closeness non-monotonic with suppression).

    The top level ``H`` is treated as one root even if the hierarchy lists several labels
    there (values under different top labels are at distance 1). A null sensitive value is a
    node of its own up to the root.

    *Value.* :meth:`value` is the largest class distance (pycanon has no hierarchical
    distance).

    References
    ----------
    .. [1] N. Li, T. Li, S. Venkatasubramanian, "t-closeness: privacy beyond k-anonymity
       and l-diversity", ICDE 2007, Section 4.2 (EMD with hierarchical distance).
    .. [2] ARX ``criteria/HierarchicalDistanceTCloseness`` (anonlab
       docs/concepts/metrics-reference.md, section 2).

    Examples
    --------
    >>> from anonlab import EncodedTable, Hierarchy
    >>> from anonlab.api import open_engine
    >>> tree = Hierarchy([["flu", "respiratory", "*"], ["cold", "respiratory", "*"],
    ...                   ["hiv", "infection", "*"]])
    >>> t = EncodedTable.from_columns({"zip": ["4350"] * 2 + ["4351"] * 2,
    ...                                "disease": ["flu", "cold", "hiv", "hiv"]})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
    >>> model = HierarchicalTCloseness("disease", t=0.3, hierarchy=tree)
    >>> model.class_distance(stats).tolist(), model.class_ok(stats).tolist()
    ([0.5, 0.5], [False, False])
    """

    name = "hierarchical_t_closeness"

    def __init__(self, attribute: str, t: float, hierarchy: Hierarchy) -> None:
        self._init(attribute, t)
        if not isinstance(hierarchy, Hierarchy):
            raise ParameterError(
                f"The 'hierarchy' parameter of {type(self).__name__} must be a Hierarchy of "
                f"attribute {self.attribute!r}. Got {type(hierarchy).__name__} instead."
            )
        if hierarchy.height < 1:
            raise ParameterError(
                f"The 'hierarchy' parameter of {type(self).__name__} must have at least one "
                f"level above the values (height >= 1). Got height {hierarchy.height} instead."
            )
        self.hierarchy = hierarchy
        self._cache: dict[tuple[object, ...], _Tree] = {}

    def _tree(self, values: npt.NDArray[np.object_]) -> _Tree:
        """The values in tree order and, per level ``1..H-1``, the node of each value.

        Nodes are numbered in the order of their first value, so values already in tree
        order (numbers under intervals, say) keep their order: ``order`` is None then.
        """
        key = tuple(values.tolist())
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        h = self.hierarchy
        h.leaf_index(values)  # raises if a value is missing from the hierarchy
        m = len(values)
        nodes: list[npt.NDArray[np.int64]] = []
        for level in range(1, h.height):  # the top level is one root (its extra is 0)
            _, node = np.unique(h.generalization(values, level)[0], return_inverse=True)
            node = node.reshape(-1).astype(np.int64)
            first = np.full(int(node.max()) + 1 if m else 0, m, dtype=np.int64)
            np.minimum.at(first, node, np.arange(m, dtype=np.int64))
            renumber = np.empty(first.size, dtype=np.int64)
            renumber[np.argsort(first, kind="stable")] = np.arange(first.size)
            nodes.append(renumber[node])
        # each node's values are contiguous when sorted by the nodes from the top down
        perm = np.lexsort([np.arange(m)] + nodes).astype(np.int64)
        order = None if np.array_equal(perm, np.arange(m)) else perm
        tree = (order, [node if order is None else node[order] for node in nodes])
        self._cache[key] = tree
        return tree

    def class_distance(self, stats: ClassStats) -> npt.NDArray[np.float64]:
        """The hierarchical EMD of each class (see the class docstring), from the tree
        nodes that hold some of the class's rows.

        Summed over the levels, ARX's ``l * min(pos, neg)`` telescopes to the negative
        extras of every node below the root: ``sum_u max(F(u) N - P(u) n_E, 0)``, with
        ``F(u)`` and ``P(u)`` the class's and the table's rows under node ``u``. A node
        without rows of the class adds nothing, so only the class's values and their
        ancestors are visited: with a class's values in tree order, the values under a node
        are one run. Every term is an integer; one division at the end.
        """
        c = self.counts(stats)
        g = c.n.size
        n_total = int(c.n_total)
        order, nodes = self._tree(c.values)
        hist, p_count = c.hist, c.p_count
        if order is not None:  # the class's values in tree order
            hist, p_count = hist.permuted(order), p_count[order]
        rows, idx, f = hist.rows, hist.indices, hist.data
        if f.size == 0:
            return np.zeros(g, dtype=np.float64)
        n_e = c.n[rows]
        cost = np.bincount(  # the values (level 0)
            rows, weights=np.maximum(f * n_total - p_count[idx] * n_e, 0), minlength=g
        )
        total = np.zeros(f.size + 1, dtype=np.int64)  # the class's rows up to each value
        np.cumsum(f, out=total[1:])
        new_class = np.r_[True, rows[1:] != rows[:-1]]
        for node in nodes:  # loop over levels only
            p_node = np.bincount(node, weights=p_count).astype(np.int64)
            at_node = node[idx]
            run = np.flatnonzero(new_class | np.r_[True, at_node[1:] != at_node[:-1]])
            big_f = total[np.r_[run[1:], f.size]] - total[run]
            extra = big_f * n_total - p_node[at_node[run]] * n_e[run]
            cost += np.bincount(rows[run], weights=np.maximum(extra, 0), minlength=g)
        den = float(self.hierarchy.height) * float(c.n_total)
        den_e = den * np.maximum(c.n, 1).astype(np.float64)
        return np.asarray(cost / den_e, dtype=np.float64)

    def params(self) -> dict[str, Any]:
        """``{"attribute": ..., "t": ..., "hierarchy": Hierarchy}``."""
        return {"attribute": self.attribute, "t": self.t, "hierarchy": self.hierarchy}
