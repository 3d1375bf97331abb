"""The anonymity graph of a non-homogeneous release and its k-anonymity (Definition 1).

Murakami & Uno (section 2) join original record ``r_i`` and released record ``r'_j`` by an
edge when every released cell of ``r'_j`` covers the value of ``r_i``. The release is
k-anonymous (Definition 1) iff that graph holds ``k`` edge-disjoint perfect matchings, which
Theorem 1 checks by a maximum flow: source -> every original record (capacity ``k``), every
edge (capacity 1), every released record -> sink (capacity ``k``); the release is
k-anonymous iff the flow reaches ``k * n``. Condition 1 (every vertex has degree ``>= k``) is a
quick necessary test.

Identical records are contracted: the ``m_u`` copies of an original tuple ``u`` and the ``m_v``
copies of a released tuple ``v`` become one vertex each, with capacities ``k * m_u``,
``k * m_v`` and ``m_u * m_v`` on the edge. The contracted flow reaches ``k * n`` iff the
uncontracted one does (spreading a contracted flow evenly over the copies gives a fractional
flow of the same value, and max-flow has an integral optimum), so 100,000 records with a
third of them repeated check on a graph of their distinct tuples.

:func:`check_release` reports the largest k a released table has beside its original (binary
search over max-flows, bounded by Condition 1); the ``graph`` verifier in
:data:`anonlab.release.verify.VERIFIERS` re-checks every :class:`CellCover` before anything is
returned or written. It first reads the cover the algorithm claims as a certificate: each of
its edges re-derived from the released labels, and every record in exactly ``k`` covers, that
cover *is* a flow of value ``k * n`` in Theorem 1's network (the first half of its proof); only
when it is not does the verifier build the whole graph and run the max-flow itself.

References
----------
.. [1] K. Murakami and T. Uno, "Optimization algorithm for k-anonymization of datasets with
   low information loss", Int. J. Inf. Secur. 17 (2018), section 2, Condition 1,
   Definition 1 and Theorem 1.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from anonlab._resources import memory_budget
from anonlab._typing import IntArray
from anonlab.data.grouping import unique_rows
from anonlab.data.table import EncodedColumn, EncodedTable, LabelColumns
from anonlab.engines import get_engine
from anonlab.exceptions import InputError, ParameterError, PrivacyCheckError
from anonlab.metrics.base import MetricContext
from anonlab.release._kernels import kernels
from anonlab.release.cellcover import CellCover, ParsedColumn, cell_loss, parse_cells
from anonlab.release.problem import Problem
from anonlab.release.recoding import Recoding
from anonlab.release.verify import VERIFIERS, Release, Verification, model_keys

__all__ = [
    "GRAPH_K",
    "AnonymityGraph",
    "ReleaseCheck",
    "ReleaseCells",
    "attribute_ncp",
    "check_release",
    "cover_problem",
    "graph_check",
    "label_covers",
]

#: What the k of a cell cover is (:attr:`Verification.k_meaning`).
GRAPH_K = "the largest k of the anonymity graph (Murakami & Uno, Definition 1)"


def cover_problem(problem: Problem, owner: str) -> int:
    """The k a cell cover must honour; refuse models and metrics it cannot.

    Parameters
    ----------
    problem : Problem
    owner : str
        Who asks (named in the messages).

    Returns
    -------
    int
        The largest ``min_class_size`` of the problem's models.

    Raises
    ------
    ParameterError
        A model other than k-anonymity (a cell cover forms no classes for l-diversity,
        t-closeness, ... to judge), or a metric other than ``gcp`` / ``ncp``.
    """
    other = [m.name for m in problem.models if m.name != "k_anonymity"]
    if other:
        raise ParameterError(
            f"{owner} releases a non-homogeneous generalization, which is k-anonymous on its "
            f"anonymity graph but forms no equivalence classes; it cannot honour {other[0]!r}. "
            "Use k_anonymity alone, or a class-forming algorithm."
        )
    if problem.metric.name not in ("gcp", "ncp"):
        raise ParameterError(
            f"{owner} measures its release with 'gcp' or 'ncp' (Murakami & Uno, equations "
            f"(1)-(3)); the job asks for {problem.metric.name!r}. Set 'metric: gcp'."
        )
    return max([m.min_class_size for m in problem.models] + [1])


# --------------------------------------------------------------------------- cells
@dataclass(frozen=True)
class ReleaseCells:
    """A released table read against its original, column by column.

    Attributes
    ----------
    original : ndarray of int64, shape (rows, quasi-identifiers)
        The original value codes.
    released : ndarray of int64, shape (rows, quasi-identifiers)
        The released label codes.
    parsed : tuple of ParsedColumn
        What each released label covers.
    """

    original: IntArray
    released: IntArray
    parsed: tuple[ParsedColumn, ...]

    @classmethod
    def read(
        cls,
        problem: Problem,
        released: EncodedTable,
        *,
        pseudo: Sequence[str] = (),
    ) -> ReleaseCells:
        """Parse the released quasi-identifiers and check every row generalizes its own.

        Raises
        ------
        InputError
            A different row count, a missing column, a label that is not a generalization,
            or a released cell that does not cover its own record's value (naming the row and
            the column).
        """
        cells, own = cls.parse(problem, released, pseudo=pseudo)
        for j, q in enumerate(problem.quasi_identifiers):
            if not bool(own[:, j].all()):
                row = int(np.flatnonzero(~own[:, j])[0])
                out, col = released[q], problem.table[q]
                raise InputError(
                    f"Row {row + 1}, column {q!r}: the released value {out.categories[out.codes[row]]!r} "
                    f"does not cover the original value {col.categories[col.codes[row]]!r}; "
                    "each released record must generalize its own."
                )
        return cells

    @classmethod
    def parse(
        cls,
        problem: Problem,
        released: EncodedTable,
        *,
        pseudo: Sequence[str] = (),
    ) -> tuple[ReleaseCells, npt.NDArray[np.bool_]]:
        """Parse the released quasi-identifiers; tell which cells cover their own record.

        Returns
        -------
        cells : ReleaseCells
        own : ndarray of bool, shape (rows, quasi-identifiers)
            Whether each released cell covers the value of its own record (the record in
            the same row of the original).

        Raises
        ------
        InputError
            A different row count, a missing column, or a label that is not a
            generalization (naming it and the column).
        """
        qis = problem.quasi_identifiers
        if released.n_rows != problem.n_rows:
            fewer = (
                " A release whose suppressed rows were removed cannot be matched to its "
                "records: write it with 'output: {suppressed: mask}' in the job to check it here "
                "(each masked row is then a released record covering every record)."
                if released.n_rows < problem.n_rows
                else ""
            )
            raise InputError(
                f"The released table has {released.n_rows:,} rows; the original has "
                f"{problem.n_rows:,}. A release checked on its anonymity graph has one row per "
                f"record, in the original's order.{fewer}"
            )
        released.require(list(qis), what="quasi-identifier of the release")
        parsed = []
        orig = np.empty((problem.n_rows, len(qis)), dtype=np.int64)
        rel = np.empty_like(orig)
        own = np.empty(orig.shape, dtype=bool)
        for j, q in enumerate(qis):
            col: EncodedColumn = problem.table[q]
            out = released[q]
            p = parse_cells(col, out, problem.hierarchies[q], pseudo=q in pseudo)
            orig[:, j] = col.codes
            rel[:, j] = out.codes
            own[:, j] = label_covers(p, out.codes, col.codes)
            parsed.append(p)
        return cls(orig, rel, tuple(parsed)), own

    def covers(self, released_rows: IntArray, original_rows: IntArray) -> npt.NDArray[np.bool_]:
        """Whether released record ``released_rows[e]`` covers original ``original_rows[e]``:
        in every column its label covers the value (:func:`label_covers`)."""
        rows = np.ascontiguousarray(released_rows, dtype=np.int64)
        other = np.ascontiguousarray(original_rows, dtype=np.int64)
        n = self.original.shape[0]
        for x in (rows, other):
            if x.size and (int(x.min()) < 0 or int(x.max()) >= n):
                raise IndexError(f"A row number outside 0..{n - 1}.")
        out = np.ones(rows.size, dtype=bool)
        if self.parsed:
            kernels().cover_pairs(
                np.ascontiguousarray(self.released, dtype=np.int64),
                np.ascontiguousarray(self.original, dtype=np.int64),
                rows,
                other,
                _Covers.of(self.parsed),
                out,
            )
        return out


def label_covers(
    p: ParsedColumn, labels: npt.NDArray[np.integer], values: npt.NDArray[np.integer]
) -> npt.NDArray[np.bool_]:
    """Whether each released label code covers the paired original value code.

    Parameters
    ----------
    p : ParsedColumn
        The released labels of the column, parsed (:func:`parse_cells`).
    labels, values : ndarray of int
        Released label codes and original value codes, paired.

    Returns
    -------
    ndarray of bool

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.data.table import EncodedColumn
    >>> from anonlab.release.cellcover import parse_cells
    >>> original = EncodedColumn.from_values("sex", ["F", "M"])
    >>> released = EncodedColumn.from_values("sex", ["*", "M"])
    >>> p = parse_cells(original, released, flat_hierarchy(["F", "M"]))
    >>> label_covers(p, released.codes, np.array([1, 0])).tolist()  # '*' covers M, M not F
    [True, False]
    """
    lab = np.asarray(labels, dtype=np.int64)
    val = np.asarray(values, dtype=np.int64)
    exact = p.exact[lab]
    out: npt.NDArray[np.bool_] = np.where(
        exact >= 0, exact == val, p.cover[lab, val] & (exact == -1)
    )
    return out


# --------------------------------------------------------------------------- graph
@dataclass
class AnonymityGraph:
    """The anonymity graph with identical records contracted.

    Attributes
    ----------
    n_rows : int
    original_count : ndarray of int64
        The multiplicity of each distinct original tuple.
    released_count : ndarray of int64
        The multiplicity of each distinct released tuple.
    source, target : ndarray of int64
        The edges: distinct original tuple ``source[e]`` is covered by distinct released tuple
        ``target[e]``.
    build_s : float
        Seconds to build it.
    row_tuple : ndarray of int64
        The distinct original tuple of each row.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"]})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 2}}], "algorithm": "wong_nh", "metric": "gcp"}
    >>> r = anonlab.anonymize(t, job)
    >>> released = anonlab.EncodedTable.from_columns(dict(r.columns))
    >>> released["zip"].labels().tolist()
    ['*', '*', '*', '*']
    >>> graph = check_release(r.problem, released).graph
    >>> graph.largest_k(), graph.holds(2), graph.holds(3), graph.n_edges
    (4, True, True, 4)
    """

    n_rows: int
    original_count: IntArray
    released_count: IntArray
    source: IntArray
    target: IntArray
    build_s: float = 0.0
    flow_s: float = field(default=0.0)
    row_tuple: IntArray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)

    @classmethod
    def build(cls, cells: ReleaseCells) -> AnonymityGraph:
        """Every edge between distinct original and distinct released tuples.

        The distinct original tuples, sorted, form a trie; the distinct released tuples,
        sorted by their keys (:class:`_Tries`), another. One compiled walk through both
        (:func:`~anonlab.release._kernels._join_tries`) pairs them column by column, the
        released tuples with the same labels on the first columns walking them together
        (against a join per pattern of hidden columns: benchmarks/README.md, "Measurements
        behind choices in the code").

        Raises
        ------
        InputError
            If the edges would not fit the memory budget.
        """
        start = time.perf_counter()
        u_tuples, u_row, u_count = unique_rows(cells.original)
        v_labels, _, v_count = unique_rows(cells.released)
        budget = max(memory_budget() // 48, 1_000_000)
        covers = _Covers.of(cells.parsed)
        tries = _Tries.of(u_tuples, v_labels, cells.parsed, covers)
        src, at, n = kernels().join(tries, covers, budget)
        if n < 0:
            raise InputError(
                f"The anonymity graph has more than {budget:,} edges between distinct records, "
                "more than the memory budget allows (set ANONLAB_MEMORY_BUDGET higher). A "
                "release that hides this much is better checked on a sample."
            )
        return cls(
            int(cells.original.shape[0]),
            u_count.astype(np.int64),
            v_count.astype(np.int64),
            src,
            tries.released[at],
            time.perf_counter() - start,
            row_tuple=np.asarray(u_row, dtype=np.int64).reshape(-1),
        )

    @property
    def n_edges(self) -> int:
        """Edges between distinct tuples."""
        return int(self.source.size)

    def degrees(self) -> tuple[IntArray, IntArray]:
        """The degree (in records) of every original and every released record's tuple."""
        du = np.bincount(
            self.source,
            weights=self.released_count[self.target],
            minlength=self.original_count.size,
        )
        dv = np.bincount(
            self.target,
            weights=self.original_count[self.source],
            minlength=self.released_count.size,
        )
        return du.astype(np.int64), dv.astype(np.int64)

    def short_of(self, k: int) -> int:
        """The records covered by fewer than ``k`` released records (their degree is below
        ``k``: Condition 1 fails for them)."""
        du, _ = self.degrees()
        return int(np.count_nonzero(du[self.row_tuple] < k)) if du.size else 0

    def condition_1(self) -> int:
        """The largest k for which every vertex has degree ``>= k`` (Condition 1)."""
        du, dv = self.degrees()
        if du.size == 0 or dv.size == 0:
            return 0
        return int(min(du.min(), dv.min()))

    def max_flow(self, k: int) -> int:
        """The maximum flow of Theorem 1's network with capacities ``k`` (contracted)."""
        from scipy.sparse import csr_array
        from scipy.sparse.csgraph import maximum_flow

        start = time.perf_counter()
        nu, nv = self.original_count.size, self.released_count.size
        sink = nu + nv + 1
        mu = self.original_count[self.source]
        mv = self.released_count[self.target]
        edge_cap = np.minimum(mu * mv, k * np.minimum(mu, mv))
        rows = np.concatenate([np.zeros(nu, np.int64), 1 + self.source, 1 + nu + np.arange(nv)])
        cols = np.concatenate([1 + np.arange(nu), 1 + nu + self.target, np.full(nv, sink)])
        caps = np.concatenate([k * self.original_count, edge_cap, k * self.released_count])
        if int(caps.max(initial=0)) >= 2**31 or k * self.n_rows >= 2**31:
            raise InputError("The release is too large for a 32-bit max-flow (k * rows >= 2^31).")
        graph = csr_array(
            (caps.astype(np.int32), (rows.astype(np.int32), cols.astype(np.int32))),
            shape=(sink + 1, sink + 1),
        )
        value = int(maximum_flow(graph, 0, sink, method="dinic").flow_value)
        self.flow_s += time.perf_counter() - start
        return value

    def holds(self, k: int) -> bool:
        """Whether the release is k-anonymous under Definition 1 (Theorem 1)."""
        if k <= 1:
            return True  # every record covers itself: the identical perfect matching
        if self.condition_1() < k:
            return False
        return self.max_flow(k) == k * self.n_rows

    def largest_k(self, at_least: int = 1) -> int:
        """The largest k under Definition 1: Condition 1's bound if it holds, else a binary
        search below it.

        Parameters
        ----------
        at_least : int
            A k known to hold (a verified cover's): the search starts there.
        """
        lo = max(at_least, 1)
        hi = max(self.condition_1(), lo)
        if lo < hi:  # (the bound itself first: a release often has the k Condition 1 allows)
            if self.max_flow(hi) == hi * self.n_rows:
                return hi
            hi -= 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.max_flow(mid) == mid * self.n_rows:
                lo = mid
            else:
                hi = mid - 1
        return lo


class _Covers(NamedTuple):
    """Which values each released label covers (:func:`label_covers`), every column's table
    flattened: label ``l`` of column ``c`` covers value code ``x`` iff
    ``table[offset[c] + l * width[c] + x]``.

    Attributes
    ----------
    table : ndarray of bool
    offset : ndarray of int64
        Per column, where its table starts.
    width : ndarray of int64
        Per column, the number of value codes.
    """

    table: npt.NDArray[np.bool_]
    offset: IntArray
    width: IntArray

    @classmethod
    def of(cls, parsed: Sequence[ParsedColumn]) -> _Covers:
        """The tables of the parsed columns."""
        tables = [
            label_covers(p, np.arange(p.exact.size)[:, None], np.arange(p.cover.shape[1])[None, :])
            for p in parsed
        ]
        sizes = np.array([t.size for t in tables], dtype=np.int64)
        return cls(
            np.concatenate([t.reshape(-1) for t in tables] + [np.zeros(0, dtype=bool)]),
            (np.cumsum(sizes) - sizes).astype(np.int64),
            np.array([p.cover.shape[1] for p in parsed], dtype=np.int64),
        )


class _Tries(NamedTuple):
    """The two tries :func:`~anonlab.release._kernels._join_tries` walks.

    Attributes
    ----------
    original : ndarray of int64, shape (columns, distinct original tuples)
        The value codes of the distinct original tuples, column by column, the tuples in
        lexicographic order (as :func:`~anonlab.data.grouping.unique_rows` numbers them).
    keys : ndarray of int64, shape (columns, distinct released tuples)
        Each distinct released tuple's key in each column: the value code its label is, or,
        for a label covering several values (or none), the column's number of value codes
        plus the label code; the tuples in lexicographic order of their keys.
    last : ndarray of int64
        Per released tuple (in that order), the last column whose label does not cover every
        value (-1: none).
    released : ndarray of int64
        The released tuple (its position in the distinct released tuples) at each position
        of ``keys``.
    """

    original: IntArray
    keys: IntArray
    last: IntArray
    released: IntArray

    @classmethod
    def of(
        cls,
        u_tuples: IntArray,
        v_labels: IntArray,
        parsed: Sequence[ParsedColumn],
        covers: _Covers,
    ) -> _Tries:
        """The tries of the distinct original tuples (sorted) and released label tuples."""
        m = len(parsed)
        keys: IntArray = np.empty(v_labels.shape, dtype=np.int64)
        # the labels that do not cover every value
        bound: npt.NDArray[np.bool_] = np.empty(v_labels.shape, dtype=bool)
        for j, p in enumerate(parsed):
            lab = v_labels[:, j]
            exact = p.exact[lab]
            width = int(covers.width[j])
            keys[:, j] = np.where(exact >= 0, exact, width + lab)
            start = int(covers.offset[j])
            table = covers.table[start : start + p.exact.size * width].reshape(-1, width)
            full = np.asarray(table.all(axis=1), dtype=bool)
            bound[:, j] = ~full[lab]
        order = np.lexsort(keys[:, ::-1].T) if m else np.arange(keys.shape[0])
        bound = bound[order]
        last = np.full(keys.shape[0], -1, dtype=np.int64)
        if m:
            last[:] = np.where(bound.any(axis=1), m - 1 - np.argmax(bound[:, ::-1], axis=1), -1)
        return cls(
            np.ascontiguousarray(u_tuples.T, dtype=np.int64),
            np.ascontiguousarray(keys[order].T),
            last,
            order.astype(np.int64),
        )


def certified(cells: ReleaseCells, covers: npt.NDArray[np.integer], k: int) -> bool:
    """Whether ``covers`` is a k-regular cover re-derived from the released labels.

    Every released record ``j`` names ``k`` distinct rows, every row is named exactly ``k``
    times and every named row is covered by ``j``'s released cells: a flow of value ``k * n``
    in Theorem 1's network, so ``k`` edge-disjoint perfect matchings exist.
    """
    c = np.asarray(covers, dtype=np.int64)
    n = cells.original.shape[0]
    if c.shape != (n, k) or k < 1:
        return False
    if c.size and (int(c.min()) < 0 or int(c.max()) >= n):
        return False
    srt = np.sort(c, axis=1)
    if k > 1 and bool((srt[:, 1:] == srt[:, :-1]).any()):
        return False
    if not bool((np.bincount(c.reshape(-1), minlength=n) == k).all()):
        return False
    released_rows = np.repeat(np.arange(n, dtype=np.int64), k)
    return bool(cells.covers(released_rows, c.reshape(-1)).all())


# --------------------------------------------------------------------------- verification
def _weights(problem: Problem) -> list[float]:
    top = max(problem.weights.values(), default=1.0) if problem.weights else 1.0
    return [
        float(problem.weights.get(q, 1.0)) / top if top > 0 else 1.0
        for q in problem.quasi_identifiers
    ]


def _loss(problem: Problem, cells: ReleaseCells, metric: str) -> tuple[float, float]:
    """The metric (``ncp`` or ``gcp``) and the share of hidden sites, from the labels."""
    codes = [cells.released[:, j] for j in range(cells.released.shape[1])]
    ncp, sites, hidden = cell_loss(cells.parsed, codes, _weights(problem))
    n = problem.n_rows
    count = sum(p.sites for p in cells.parsed)
    share = hidden / (n * count) if n and count else 0.0
    if metric == "ncp":
        return ncp, share
    return (ncp / (n * sites) if n and sites else 0.0), share


def attribute_ncp(problem: Problem, recoding: CellCover) -> list[float]:
    """``sum_r NCP(q, r)`` of each quasi-identifier of a cell cover's release, unweighted.

    The per-attribute terms of the NCP(T) the ``graph`` verifier measures (Murakami & Uno,
    Eqs. 1-2; a pseudo-quasi-identifier counts its hidden characters), read from the labels.

    Parameters
    ----------
    problem : Problem
    recoding : CellCover
        The release's recoding.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"]})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 2}}], "algorithm": "wong_nh", "metric": "gcp"}
    >>> r = anonlab.anonymize(t, job)
    >>> released = anonlab.EncodedTable.from_columns(dict(r.columns))
    >>> attribute_ncp(r.problem, r.recoding)
    [4.0]
    """
    cells = ReleaseCells.read(problem, recoding.apply(problem), pseudo=recoding.pseudo_qids)
    return [
        cell_loss([parsed], [cells.released[:, j]], [1.0])[0]
        for j, parsed in enumerate(cells.parsed)
    ]


def _verify_graph(
    problem: Problem,
    recoding: Recoding,
    *,
    mask_suppressed: bool,
    context: MetricContext | None,
) -> Release:
    """Verify a cell cover on its anonymity graph (Theorem 1) and measure it on its labels."""
    del mask_suppressed, context  # a cell cover suppresses nothing; its loss is cell by cell
    k = cover_problem(problem, "The graph verification")
    released = recoding.apply(problem)
    pseudo = recoding.pseudo_qids if isinstance(recoding, CellCover) else ()
    start = time.perf_counter()
    cells = ReleaseCells.read(problem, released, pseudo=pseudo)
    covers = recoding.covers if isinstance(recoding, CellCover) else None
    graph: AnonymityGraph | None = None
    if covers is not None and certified(cells, covers, k):
        method = (
            f"anonymity graph (Murakami & Uno, Definition 1): the algorithm's {k}-regular cover, "
            "every edge re-derived from the released labels, is a flow of value k*n (Theorem 1)"
        )
    else:
        graph = AnonymityGraph.build(cells)
        if not graph.holds(k):
            cond = graph.condition_1()
            why = (
                f"Condition 1 fails (a record has degree {cond} < {k})"
                if cond < k
                else f"the maximum flow is below {k} * {problem.n_rows} (Theorem 1)"
            )
            raise PrivacyCheckError(
                f"Re-check failed: the release of {type(recoding).__name__} is not "
                f"{k}-anonymous on its anonymity graph: {why}. Nothing was released."
            )
        method = (
            f"anonymity graph (Murakami & Uno, Definition 1): max-flow {k}*n on "
            f"{graph.n_edges:,} edges between distinct tuples (Theorem 1)"
        )
    if graph is None:
        graph = AnonymityGraph.build(cells)
    largest = graph.largest_k(at_least=k)  # "k after": the release's own k, not the job's
    elapsed = time.perf_counter() - start
    loss, _ = _loss(problem, cells, problem.metric.name)
    hidden = set(problem.identifiers)
    columns = LabelColumns(
        [col for col in released.columns if col.name not in hidden],
        None,
        typed={n: a for n, a in released.typed.items() if n not in hidden},
        order=[n for n in released.order if n not in hidden],
    )
    stats = get_engine("numpy", released).class_stats(list(problem.quasi_identifiers))
    checks = {key: True for key in model_keys(problem.models)}
    verification = Verification(
        checks,
        0,
        0,
        stats.n_classes,
        f"{method} in {elapsed:.3f} s",
        k_after=largest,
        k_meaning=GRAPH_K,
    )
    return Release(
        columns,
        verification,
        loss,
        problem.metric.name,
        stats,
        np.zeros(stats.n_classes, dtype=bool),
    )


VERIFIERS.register("graph", _verify_graph)


# --------------------------------------------------------------------------- check
@dataclass
class ReleaseCheck:
    """What ``anonlab check --release`` reports of a non-homogeneous release.

    Attributes
    ----------
    largest_k : int
        The largest k under Definition 1.
    condition_1_k : int
        The largest k Condition 1 allows (an upper bound of ``largest_k``).
    gcp, ncp : float
        Equations (1)-(3) on the released cells (each attribute one quasi-identifier).
    hidden_share : float
        The share of cells released as ``*`` (Definition 2 on a concealing release).
    distinct_original, distinct_released, edges : int
        The contracted anonymity graph.
    build_s, flow_s : float
        Seconds to build the graph and to run the max-flows.
    graph : AnonymityGraph, optional
        The graph itself (not in the JSON form).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"]})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 2}}], "algorithm": "wong_nh", "metric": "gcp"}
    >>> r = anonlab.anonymize(t, job)
    >>> released = anonlab.EncodedTable.from_columns(dict(r.columns))
    >>> report = check_release(r.problem, released)
    >>> report.largest_k, report.gcp, report.distinct_original, report.distinct_released
    (4, 1.0, 4, 1)
    """

    largest_k: int
    condition_1_k: int
    gcp: float
    ncp: float
    hidden_share: float
    distinct_original: int
    distinct_released: int
    edges: int
    build_s: float
    flow_s: float
    graph: AnonymityGraph | None = field(default=None, repr=False, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "largest_k": self.largest_k,
            "condition_1_k": self.condition_1_k,
            "gcp": self.gcp,
            "ncp": self.ncp,
            "hidden_share": self.hidden_share,
            "distinct_original": self.distinct_original,
            "distinct_released": self.distinct_released,
            "edges": self.edges,
            "build_s": self.build_s,
            "flow_s": self.flow_s,
            "method": "max-flow on the anonymity graph (Murakami & Uno, Theorem 1)",
        }


def check_release(problem: Problem, released: EncodedTable) -> ReleaseCheck:
    """The largest k of a released non-homogeneous table beside its original.

    Parameters
    ----------
    problem : Problem
        The original table, its quasi-identifiers and hierarchies.
    released : EncodedTable
        The release: one row per original record, in the same order.

    Raises
    ------
    InputError
        A release that does not fit its original (rows, columns, cells; naming them).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"]})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 2}}], "algorithm": "wong_nh", "metric": "gcp"}
    >>> r = anonlab.anonymize(t, job)
    >>> released = anonlab.EncodedTable.from_columns(dict(r.columns))
    >>> check_release(r.problem, released).largest_k
    4
    >>> check_release(r.problem, t).largest_k  # the original itself: every record unique
    1
    """
    return graph_check(problem, ReleaseCells.read(problem, released))


def graph_check(problem: Problem, cells: ReleaseCells) -> ReleaseCheck:
    """:func:`check_release` of cells already read: the largest k by max-flow and the loss
    read from the labels.

    Parameters
    ----------
    problem : Problem
    cells : ReleaseCells
        The release read against the problem's table (:meth:`ReleaseCells.parse`).

    Returns
    -------
    ReleaseCheck
    """
    graph = AnonymityGraph.build(cells)
    largest = graph.largest_k()
    ncp, share = _loss(problem, cells, "ncp")
    gcp, _ = _loss(problem, cells, "gcp")
    return ReleaseCheck(
        largest,
        graph.condition_1(),
        gcp,
        ncp,
        share,
        int(graph.original_count.size),
        int(graph.released_count.size),
        graph.n_edges,
        graph.build_s,
        graph.flow_s,
        graph,
    )
