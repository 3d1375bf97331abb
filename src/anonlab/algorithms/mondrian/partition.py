"""Mondrian's greedy multidimensional partitioning, all open regions cut at once.

LeFevre, DeWitt & Ramakrishnan (ICDE 2006), section 4: start from one region holding every
row; while a region has an *allowable cut*, cut it on the dimension with the widest
normalized range, at the median; a cut is allowable when every part satisfies the privacy
models. Here every open region is cut in the same round (one sort of the open rows per
round, no loop over rows or regions):

* **numeric** attributes (an order): the region's values sorted; *strict* partitioning cuts
  between distinct values, at the boundary nearest the median (the rows ``<= median`` or
  ``< median`` on the left, whichever is more balanced); *relaxed* partitioning, where that
  cut leaves a part under ``k`` rows, cuts at the median row itself, rows equal to the
  median going to either side (section 4.2). The
  normalized range is ``(max - min) / (column max - column min)``.
* **categorical** attributes released as sets (``categorical: set``): cut like numbers on
  the order of the region's values by frequency, the most frequent first (ties in the
  hierarchy's order), so that a dominant value is cut off from the rare ones rather than
  mixed with them; the normalized range is the share of the domain's values the region
  holds, ``distinct values / leaves`` (0 for one value), as a number's counts the share of
  the column's range.
* **hierarchical** attributes: the region's values share a lowest common label; it is cut
  into the children of that label that hold at least ``k`` rows each, the children with
  fewer pooled in one more part (or into the largest child when the pool has fewer than
  ``k``). The normalized range is ``leaves under the label / leaves`` (0 for one value).

If the cut on the widest dimension is not allowable (a part under ``k`` rows, or failing
another model), the next widest is tried; a region none of whose dimensions can be cut is
final. Every class-judging model judges the candidate parts among all the other regions (a
t-closeness distance against the whole table's distribution); sample-based and per-record
models are left to the verification, which suppresses what they fail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray, IntArray
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.labels import natural_order
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.data.table import EncodedColumn
from anonlab.exceptions import ParameterError
from anonlab.models.base import PrivacyModel
from anonlab.release.problem import Problem

__all__ = ["Dimension", "Partitioning", "dimensions", "numbers_of", "partition"]


def numbers_of(col: EncodedColumn) -> FloatArray | None:
    """The number of each category of ``col``, or None if one is not a finite number (a
    null included).

    Examples
    --------
    >>> from anonlab.data.table import EncodedColumn
    >>> col = EncodedColumn.from_values("age", ["30", "4.5"])
    >>> col.categories.tolist(), numbers_of(col).tolist()
    (['4.5', '30'], [4.5, 30.0])
    >>> numbers_of(EncodedColumn.from_values("sex", ["F", "M"])) is None
    True
    """
    out = np.empty(col.cardinality, dtype=np.float64)
    for i, v in enumerate(col.categories.tolist()):
        if v is None:
            return None
        try:
            out[i] = float(str(v))
        except ValueError:
            return None
    return out if bool(np.isfinite(out).all()) else None


@dataclass
class Dimension:
    """One quasi-identifier as Mondrian cuts it.

    Attributes
    ----------
    name : str
    kind : str
        ``interval`` (cut on its order) or ``hierarchy`` (cut into children).
    row_key : ndarray of int64
        Per row: the rank of its number (interval), or its category code (hierarchy).
    numbers : ndarray of float64
        Interval: the number of each rank.
    texts : ndarray of object
        Interval: a label of each rank (the first category with that number).
    level_codes : ndarray of int64, shape (height + 1, categories)
        Hierarchy: each category's label code at each level.
    level_labels : list of ndarray
        Hierarchy: the labels of each level.
    level_leaves : list of ndarray
        Hierarchy: the leaves under each label of each level.
    domain : int
        Hierarchy: its leaves.
    """

    name: str
    kind: str
    row_key: IntArray
    numbers: FloatArray = field(default_factory=lambda: np.zeros(0))
    texts: npt.NDArray[np.object_] = field(default_factory=lambda: np.zeros(0, dtype=object))
    level_codes: IntArray = field(default_factory=lambda: np.zeros((0, 0), dtype=np.int64))
    level_labels: list[npt.NDArray[np.object_]] = field(default_factory=list)
    level_leaves: list[IntArray] = field(default_factory=list)
    domain: int = 1

    @property
    def span(self) -> float:
        """Interval: the column's range."""
        return float(self.numbers[-1] - self.numbers[0]) if self.numbers.size else 0.0


def _interval(col: EncodedColumn, nums: FloatArray) -> Dimension:
    distinct, first, rank = np.unique(nums, return_index=True, return_inverse=True)
    return Dimension(
        col.name,
        "interval",
        rank.reshape(-1)[col.codes].astype(np.int64),
        numbers=distinct,
        texts=col.categories[first],
    )


def _hierarchical(col: EncodedColumn, hierarchy: Hierarchy) -> Dimension:
    mappings, labels = hierarchy.generalizations(col.categories)
    leaves = []
    for level in range(hierarchy.height + 1):
        leaf_codes, leaf_labels = hierarchy.leaf_generalization(level)
        by_text = dict(
            zip(leaf_labels.tolist(), np.bincount(leaf_codes, minlength=leaf_labels.size).tolist())
        )
        leaves.append(np.array([by_text.get(v, 1) for v in labels[level].tolist()], dtype=np.int64))
    return Dimension(
        col.name,
        "hierarchy",
        col.codes.astype(np.int64),
        level_codes=np.asarray(mappings, dtype=np.int64),
        level_labels=list(labels),
        level_leaves=leaves,
        domain=int(hierarchy.leaves.size),
    )


def _set(col: EncodedColumn, hierarchy: Hierarchy) -> Dimension:
    """A categorical attribute cut on the order of its hierarchy's values (siblings side by
    side) and released as the set of a region's values."""
    leaves = hierarchy.leaves
    bad = next(
        (v for v in col.categories.tolist() if v is not None and set(str(v)) & set("{};")), None
    )
    if bad is not None:
        raise ParameterError(
            f"Mondrian cannot release attribute {col.name!r} as sets: its value {bad!r} holds "
            "'{', '}' or ';'. Use 'categorical: hierarchy'."
        )
    rank = hierarchy.leaf_index(col.categories)
    rank = np.where(rank < 0, leaves.size, rank)  # (a null: a value of its own, last)
    texts = np.empty(leaves.size + 1, dtype=object)
    texts[: leaves.size] = leaves
    texts[rank] = col.categories
    return Dimension(
        col.name,
        "set",
        rank[col.codes].astype(np.int64),
        numbers=np.arange(leaves.size + 1, dtype=np.float64)[
            : leaves.size + (col.null_code is not None)
        ],
        texts=texts,
        domain=int(leaves.size),
    )


def _sets(dim: Dimension, k: IntArray, first: IntArray) -> tuple[npt.NDArray[np.object_], IntArray]:
    """Each region's set of values (``k``: the rows' ranks sorted by region): the value
    itself when it is one, ``*`` when it holds every value, else ``{a;b}`` in the
    hierarchy's order, a null as the empty member last (``{a;b;}``); with the label of each
    region."""
    n_groups = first.size
    region = np.repeat(np.arange(n_groups), np.diff(np.append(first, k.size)))
    width = int(k.max()) + 1 if k.size else 1
    pairs = np.unique(region * width + k)
    g, rank = pairs // width, pairs % width
    starts = np.flatnonzero(np.diff(np.concatenate([[-1], g])))
    ends = np.append(starts[1:], g.size)
    null = dim.domain  # (the rank of a null)
    labels: dict[tuple[int, ...], int] = {}
    text: list[object] = []
    of_group = np.empty(n_groups, dtype=np.int64)
    ranks = rank.tolist()
    for i, (a, b) in enumerate(zip(starts.tolist(), ends.tolist())):
        members = tuple(ranks[a:b])
        hit = labels.get(members)
        if hit is None:
            values = [m for m in members if m != null]
            if len(members) == 1:
                lab = dim.texts[members[0]]
            elif len(values) >= dim.domain:
                lab = "*"
            else:  # (a null: the empty member, last)
                names = [str(dim.texts[m]) for m in values] + [""] * (null in members)
                lab = "{" + ";".join(names) + "}"
            hit = labels[members] = len(text)
            text.append(lab)
        of_group[i] = hit
    return np.array(text, dtype=object), of_group


def _masked(hierarchy: Hierarchy) -> bool:
    """Whether the hierarchy masks characters (a zip code's digits: labels such as
    ``435*``), so that its numbers are codes rather than quantities."""
    if hierarchy.height < 1:
        return False
    return any(
        v is not None and "*" in str(v) and str(v) != "*"
        for v in hierarchy.level_labels(1).tolist()
    )


def dimensions(
    problem: Problem, intervals: Sequence[str] | None, *, sets: bool = False
) -> list[Dimension]:
    """How each quasi-identifier is cut.

    Parameters
    ----------
    problem : Problem
    intervals : sequence of str, optional
        The attributes cut on their order and released as intervals; None: every attribute
        whose values are all numbers (no missing value) and whose hierarchy does not mask
        characters.
    sets : bool
        Cut the other attributes on the order of their hierarchy's values and release a
        region's set of values ``{a;b}`` instead of their lowest common hierarchy label.

    Raises
    ------
    ParameterError
        An attribute named in ``intervals`` that is not a quasi-identifier or whose values
        are not all numbers, or an attribute with neither an order nor a hierarchy above its
        values (one line naming it).

    Examples
    --------
    >>> import anonlab
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import KAnonymity
    >>> t = anonlab.EncodedTable.from_columns({"age": ["30", "41"], "sex": ["F", "M"]})
    >>> p = Problem(t, ("age", "sex"), {q: flat_hierarchy(t[q].categories) for q in t.names},
    ...             (KAnonymity(2),), build_metric("gcp"))
    >>> [d.kind for d in dimensions(p, None)]
    ['interval', 'hierarchy']
    """
    qis = problem.quasi_identifiers
    if intervals is not None:
        unknown = [a for a in intervals if a not in qis]
        if unknown:
            raise ParameterError(
                f"Mondrian's 'intervals' names {unknown[0]!r}, which is not a quasi-identifier "
                f"(they are: {', '.join(qis)})."
            )
    out = []
    for q in qis:
        col = problem.table[q]
        hierarchy = problem.hierarchies[q]
        nums = numbers_of(col)
        if intervals is not None and q in intervals:
            if nums is None:
                bad = next(
                    (v for v in col.categories.tolist() if v is None or not _is_number(v)), None
                )
                raise ParameterError(
                    f"Mondrian cannot cut attribute {q!r} on an order: its value {bad!r} is not "
                    "a number. Leave it out of 'intervals' to cut it on its hierarchy."
                )
            out.append(_interval(col, nums))
            continue
        numeric = intervals is None and nums is not None and not _masked(hierarchy)
        if numeric:
            assert nums is not None
            out.append(_interval(col, nums))
        elif hierarchy.height < 1 and col.cardinality > 1:
            raise ParameterError(
                f"Mondrian cannot cut attribute {q!r}: it has neither an order (its values are "
                "not all numbers) nor a hierarchy above its values. Give it a hierarchy (or "
                "'hierarchy: auto') in the job."
            )
        elif sets:
            out.append(_set(col, hierarchy))
        else:
            out.append(_hierarchical(col, hierarchy))
    return out


def _is_number(v: object) -> bool:
    try:
        return bool(np.isfinite(float(str(v))))
    except ValueError:
        return False


@dataclass
class Partitioning:
    """The regions Mondrian found.

    Attributes
    ----------
    group : ndarray of int64
        The region of each row.
    released : dict of str to EncodedColumn
        Each quasi-identifier's released column.
    rounds : int
        Rounds of cuts (every open region cut once per round).
    cuts_tried : int
        Candidate cuts judged.
    """

    group: IntArray
    released: dict[str, EncodedColumn]
    rounds: int
    cuts_tried: int


def _segment(keys: IntArray, starts: IntArray) -> tuple[IntArray, IntArray]:
    """Min and max of ``keys`` in each segment beginning at ``starts`` (none empty)."""
    return np.minimum.reduceat(keys, starts), np.maximum.reduceat(keys, starts)


class _Judge:
    """Every class-judging model's verdict on candidate classes (beside all other rows)."""

    def __init__(self, problem: Problem, need: int) -> None:
        self.need = need
        self.models: list[PrivacyModel] = [
            m
            for m in problem.models
            if not m.sample_based and not hasattr(m, "record_parameter") and m.name != "k_anonymity"
        ]
        self.sensitive = {
            a: problem.table[a]
            for a in sorted({a for m in self.models for a in m.sensitive_attributes})
        }
        self.qis = problem.quasi_identifiers
        self.n = problem.n_rows

    def ok(self, row_class: IntArray, n_classes: int) -> npt.NDArray[np.bool_]:
        """Per class, whether it has ``need`` rows and every model holds on it."""
        sizes = np.bincount(row_class, minlength=n_classes).astype(np.int64)
        ok = sizes >= self.need
        if not self.models:
            return ok
        hist = {
            a: SensitiveHistogram.from_triplets(
                col.categories, row_class, col.codes, n_classes=n_classes
            )
            for a, col in self.sensitive.items()
        }
        stats = ClassStats(
            self.qis, (0,) * len(self.qis), sizes, self.n, row_class=row_class, sensitive=hist
        )
        for m in self.models:
            ok &= np.asarray(m.class_ok(stats), dtype=bool)
        return ok


def partition(
    problem: Problem, dims: Sequence[Dimension], *, relaxed: bool = False
) -> Partitioning:
    """Cut the table into regions (LeFevre et al., section 4) and summarize each.

    Parameters
    ----------
    problem : Problem
    dims : sequence of Dimension
        :func:`dimensions` of the problem.
    relaxed : bool
        Relaxed partitioning (rows equal to the median may go to either side) instead of
        strict.

    Returns
    -------
    Partitioning

    Examples
    --------
    >>> import anonlab
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import KAnonymity
    >>> t = anonlab.EncodedTable.from_columns({"age": ["30", "32", "40", "41"]})
    >>> p = Problem(t, ("age",), {"age": flat_hierarchy(t["age"].categories)},
    ...             (KAnonymity(2),), build_metric("gcp"))
    >>> out = partition(p, dimensions(p, None))
    >>> out.group.tolist(), out.released["age"].labels().tolist()
    ([0, 0, 1, 1], ['[30,32]', '[30,32]', '[40,41]', '[40,41]'])
    """
    n = problem.n_rows
    d = len(dims)
    need = max([m.min_class_size for m in problem.models] + [1])
    judge = _Judge(problem, need)
    keys = [dim.row_key for dim in dims]
    interval_dims = np.array([dim.kind != "hierarchy" for dim in dims], dtype=bool)
    perm = np.arange(n, dtype=np.int64)
    row_part = np.zeros(n, dtype=np.int64)  # every row's region (ids need not be dense)
    next_id = 1
    # open regions: start in perm, size, id, dimensions tried
    o_start = np.zeros(1, dtype=np.int64)
    o_size = np.full(1, n, dtype=np.int64)
    o_id = np.zeros(1, dtype=np.int64)
    o_tried = np.zeros((1, d), dtype=bool)
    rounds = tried_cuts = 0
    while o_start.size:
        can = o_size >= 2 * need
        o_start, o_size, o_id, o_tried = o_start[can], o_size[can], o_id[can], o_tried[can]
        if not o_start.size:
            break
        rounds += 1
        n_open = o_start.size
        offsets = np.concatenate([[0], np.cumsum(o_size)[:-1]])
        total = int(o_size.sum())
        pos = np.repeat(o_start - offsets, o_size) + np.arange(total, dtype=np.int64)
        rows = perm[pos]
        pid = np.repeat(np.arange(n_open, dtype=np.int64), o_size)
        # the normalized width of every open region on every dimension
        width = np.zeros((n_open, d), dtype=np.float64)
        lca = np.zeros((n_open, d), dtype=np.int64)
        for j, dim in enumerate(dims):
            k = keys[j][rows]
            if dim.kind == "set":  # the distinct values of the region, normalized
                base = int(dim.numbers.size)
                pairs = np.unique(pid * base + k)
                distinct = np.bincount(pairs // base, minlength=n_open).astype(np.float64)
                width[:, j] = np.where(distinct > 1, distinct / dim.domain, 0.0)
                continue
            if dim.kind == "interval":
                lo, hi = _segment(k, offsets)
                span = dim.span
                width[:, j] = (dim.numbers[hi] - dim.numbers[lo]) / span if span > 0 else 0.0
                continue
            top = dim.level_codes.shape[0]
            level = np.full(n_open, top, dtype=np.int64)  # (top: no common label)
            for lv in range(top - 1, -1, -1):
                lo, hi = _segment(dim.level_codes[lv][k], offsets)
                level = np.where(lo == hi, lv, level)
            lca[:, j] = level
            first = dim.level_codes[np.minimum(level, top - 1), k[offsets]]
            under = _leaves_of(dim, np.minimum(level, top - 1), first)
            w = under / dim.domain
            w[level >= top] = 1.0
            w[level == 0] = 0.0
            width[:, j] = w
        width[o_tried] = -1.0
        width[width <= 0] = -1.0
        choice = np.argmax(width, axis=1)
        live = width[np.arange(n_open), choice] > 0
        # each row's sort key on its region's chosen dimension
        row_choice = choice[pid]
        sort_val = np.zeros(total, dtype=np.int64)
        for j, dim in enumerate(dims):
            at = np.flatnonzero(row_choice == j)
            if not at.size:
                continue
            k = keys[j][rows[at]]
            if dim.kind == "interval":
                sort_val[at] = k
            elif dim.kind == "set":
                sort_val[at] = _by_frequency(pid[at], k, int(dim.numbers.size))
            else:
                top = dim.level_codes.shape[0]
                child = np.maximum(np.minimum(lca[pid[at], j], top) - 1, 0)
                sort_val[at] = dim.level_codes[child, k]
        width_key = int(sort_val.max()) + 2 if total else 1
        order = np.argsort(pid * width_key + sort_val, kind="stable")
        rows, sort_val = rows[order], sort_val[order]
        # group of each row within its region (0, 1, ...), and the number of groups
        local = np.zeros(total, dtype=np.int64)
        groups = np.ones(n_open, dtype=np.int64)
        pos_in = np.arange(total, dtype=np.int64) - offsets[pid]
        is_int = interval_dims[choice] & live
        if is_int.any():
            cut = _interval_cuts(sort_val, offsets, o_size, relaxed, need)
            ok_cut = is_int & (cut >= need) & (o_size - cut >= need)
            groups[ok_cut] = 2
            sel = ok_cut[pid]
            local[sel] = (pos_in[sel] >= cut[pid[sel]]).astype(np.int64)
        hier = live & ~is_int
        if hier.any():
            h_local, h_groups = _children(sort_val, pid, hier, need, n_open)
            sel = hier[pid]
            local[sel] = h_local[sel]
            groups[hier] = h_groups[hier]
        splitting = live & (groups >= 2)
        tried_cuts += int(splitting.sum())
        # judge the candidate parts beside every other region
        accepted = splitting
        if judge.models and splitting.any():
            cand = row_part.copy()
            offset = np.zeros(n_open, dtype=np.int64)
            offset[splitting] = next_id + np.concatenate([[0], np.cumsum(groups[splitting])[:-1]])
            srows = splitting[pid]
            cand[rows[srows]] = offset[pid[srows]] + local[srows]
            uniq, dense = np.unique(cand, return_inverse=True)
            verdict = judge.ok(dense.reshape(-1).astype(np.int64), int(uniq.size))
            part_ok = np.ones(n_open, dtype=bool)
            bad_rows = srows & ~verdict[dense.reshape(-1)[rows]]
            part_ok[np.unique(pid[bad_rows])] = False
            accepted = splitting & part_ok
        # regions not cut on their choice: try their next dimension
        refused = live & ~accepted
        o_tried[np.flatnonzero(refused), choice[refused]] = True
        # reorder the open rows: region by region, part by part
        order = np.argsort(
            pid * (int(groups.max()) + 1) + np.where(accepted[pid], local, 0), kind="stable"
        )
        rows, local_sorted = rows[order], np.where(accepted[pid], local, 0)[order]
        perm[pos] = rows
        # the new open regions: the parts of the accepted, the refused with more to try
        new_start: list[IntArray] = []
        new_size: list[IntArray] = []
        new_id: list[IntArray] = []
        new_tried: list[npt.NDArray[np.bool_]] = []
        if accepted.any():
            a_rows = accepted[pid]
            a_pos = np.flatnonzero(a_rows)
            boundary = np.ones(a_pos.size, dtype=bool)
            boundary[1:] = (pid[a_pos][1:] != pid[a_pos][:-1]) | (
                local_sorted[a_pos][1:] != local_sorted[a_pos][:-1]
            )
            starts = a_pos[boundary]
            sizes = np.diff(np.concatenate([np.flatnonzero(boundary), [a_pos.size]]))
            ids = next_id + np.arange(starts.size, dtype=np.int64)
            next_id += int(starts.size)
            part_of_pos = np.repeat(ids, sizes)
            row_part[rows[a_pos]] = part_of_pos
            abs_start = pos[starts]  # (pos is contiguous within a region)
            new_start.append(abs_start)
            new_size.append(sizes.astype(np.int64))
            new_id.append(ids)
            new_tried.append(np.zeros((starts.size, d), dtype=bool))
        more = refused & ~o_tried.all(axis=1)
        if more.any():
            new_start.append(o_start[more])
            new_size.append(o_size[more])
            new_id.append(o_id[more])
            new_tried.append(o_tried[more])
        if new_start:
            o_start = np.concatenate(new_start)
            o_size = np.concatenate(new_size)
            o_id = np.concatenate(new_id)
            o_tried = np.concatenate(new_tried)
        else:
            o_start = np.zeros(0, dtype=np.int64)
    _, group = np.unique(row_part, return_inverse=True)
    group = group.reshape(-1).astype(np.int64)
    by_group = np.argsort(group, kind="stable")
    first = np.flatnonzero(np.diff(np.concatenate([[-1], group[by_group]])))
    released = {dim.name: _summaries(dim, by_group, first, problem.table[dim.name]) for dim in dims}
    return Partitioning(group, released, rounds, tried_cuts)


def _by_frequency(region: IntArray, key: IntArray, base: int) -> IntArray:
    """Each row's place when the values of its region are ordered most frequent first
    (ties: in the hierarchy's order); one number per region and value, increasing by region.

    Examples
    --------
    >>> _by_frequency(np.array([0, 0, 0, 1, 1, 1]), np.array([2, 1, 1, 0, 2, 2]), 3).tolist()
    [1, 0, 0, 3, 2, 2]
    """
    pair, inverse, count = np.unique(region * base + key, return_inverse=True, return_counts=True)
    order = np.lexsort((pair % base, -count, pair // base))
    place = np.empty(pair.size, dtype=np.int64)
    place[order] = np.arange(pair.size, dtype=np.int64)
    out: IntArray = place[inverse.reshape(-1)]
    return out


def _leaves_of(dim: Dimension, level: IntArray, code: IntArray) -> FloatArray:
    """The leaves under label ``code`` of ``level`` (vectorized over regions)."""
    out = np.empty(level.size, dtype=np.float64)
    for lv in np.unique(level).tolist():
        at = level == lv
        out[at] = dim.level_leaves[lv][code[at]]
    return out


def _interval_cuts(
    sort_val: IntArray, offsets: IntArray, sizes: IntArray, relaxed: bool, need: int
) -> IntArray:
    """The cut of each region (rows before it go left), its rows sorted by value: between
    distinct values, nearest the median; relaxed, where that leaves a part under ``need``
    rows, at the median row (rows equal to the median on both sides)."""
    median = sort_val[offsets + (sizes - 1) // 2]
    n_open = offsets.size
    width_key = int(sort_val.max()) + 2
    region = np.repeat(np.arange(n_open, dtype=np.int64), sizes)
    composite = region * width_key + sort_val
    target = np.arange(n_open, dtype=np.int64) * width_key + median
    le = np.searchsorted(composite, target, side="right") - offsets  # rows <= median
    lt = np.searchsorted(composite, target, side="left") - offsets  # rows < median
    half = sizes / 2.0
    le_ok = le < sizes
    lt_ok = lt > 0
    use_le = le_ok & (~lt_ok | (np.abs(le - half) <= np.abs(lt - half)))
    cut: IntArray = np.where(use_le, le, np.where(lt_ok, lt, 0))
    if relaxed:
        short = np.minimum(cut, sizes - cut) < need
        cut = np.where(short, sizes // 2, cut)
    return cut


def _children(
    sort_val: IntArray, pid: IntArray, hier: npt.NDArray[np.bool_], need: int, n_open: int
) -> tuple[IntArray, IntArray]:
    """Each row's part when its region is cut into children (rows sorted by region then
    child): a child of at least ``need`` rows is a part; the smaller ones are pooled in one
    more part, or join the largest child when the pool is smaller than ``need``."""
    total = sort_val.size
    new_run = np.ones(total, dtype=bool)
    new_run[1:] = (pid[1:] != pid[:-1]) | (sort_val[1:] != sort_val[:-1])
    run_start = np.flatnonzero(new_run)
    run_size = np.diff(np.concatenate([run_start, [total]]))
    run_part = pid[run_start]
    run_of_row = np.cumsum(new_run) - 1
    large = run_size >= need
    # the large runs numbered within their region
    n_large = np.bincount(run_part, weights=large, minlength=n_open).astype(np.int64)
    before: IntArray = np.cumsum(large) - large  # large runs before each run
    region_first_run = np.searchsorted(run_part, np.arange(n_open))
    run_local = before - before[region_first_run][run_part]
    pool = np.bincount(run_part, weights=run_size * ~large, minlength=n_open).astype(np.int64)
    pooled = pool >= need
    # the first largest run of each region (its local number) takes a pool smaller than need
    size_key = np.where(large, run_size, -1)
    best = np.full(n_open, -1, dtype=np.int64)
    np.maximum.at(best, run_part, size_key)
    cand = np.flatnonzero(large & (size_key == best[run_part]))[::-1]
    biggest = np.full(n_open, -1, dtype=np.int64)
    biggest[run_part[cand]] = run_local[cand]  # (reversed: the first such run is written last)
    small_local = np.where(pooled[run_part], n_large[run_part], biggest[run_part])
    run_local = np.where(large, run_local, small_local)
    groups = n_large + pooled.astype(np.int64)
    groups[n_large == 0] = 1  # every child small: no cut
    local = run_local[run_of_row]
    local[~hier[pid]] = 0
    local = np.maximum(local, 0)
    return local.astype(np.int64), groups


def _summaries(
    dim: Dimension, by_group: IntArray, first: IntArray, col: EncodedColumn
) -> EncodedColumn:
    """The released column: each region's interval or lowest common hierarchy label
    (``by_group``: the rows sorted by region; ``first``: where each region begins)."""
    k = dim.row_key[by_group]
    group = np.empty(k.size, dtype=np.int64)
    group[by_group] = np.repeat(np.arange(first.size), np.diff(np.append(first, k.size)))
    if dim.kind == "set":
        text, label_of_group = _sets(dim, k, first)
    elif dim.kind == "interval":
        lo, hi = _segment(k, first)
        pairs, inv = np.unique(np.stack([lo, hi], axis=1), axis=0, return_inverse=True)
        text = np.array(
            [
                str(dim.texts[a]) if a == b else f"[{dim.texts[a]},{dim.texts[b]}]"
                for a, b in pairs.tolist()
            ],
            dtype=object,
        )
        label_of_group = inv.reshape(-1)
    else:
        top = dim.level_codes.shape[0]
        level = np.full(first.size, top, dtype=np.int64)
        for lv in range(top - 1, -1, -1):
            lo, hi = _segment(dim.level_codes[lv][k], first)
            level = np.where(lo == hi, lv, level)
        code = dim.level_codes[np.minimum(level, top - 1), k[first]]
        pairs, inv = np.unique(np.stack([level, code], axis=1), axis=0, return_inverse=True)
        text = np.array(
            ["*" if a >= top else dim.level_labels[a][b] for a, b in pairs.tolist()],
            dtype=object,
        )
        label_of_group = inv.reshape(-1)
    # one code per distinct text, in natural order (a null last)
    texts = np.array([t for t in text.tolist()], dtype=object)
    present = [t for t in dict.fromkeys(texts.tolist())]
    non_null = [t for t in present if t is not None]
    cats = np.array(non_null, dtype=object)
    cats = cats[natural_order(cats)] if cats.size else cats
    if len(non_null) < len(present):
        cats = np.append(cats, np.array([None], dtype=object))
    code_of = {t: i for i, t in enumerate(cats.tolist())}
    text_code = np.array([code_of[t] for t in texts.tolist()], dtype=np.int32)
    return EncodedColumn(col.name, text_code[label_of_group][group], cats)
