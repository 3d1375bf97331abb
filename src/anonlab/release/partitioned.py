"""Releases made partition by partition: blocks verified on their own, the union argued.

The algorithms that place individual rows (local recoding, non-homogeneous generalization,
personalized privacy, and the statistics-office families: Mondrian's regions,
microaggregation, local suppression) need the rows in memory. Out of core they follow Murakami & Uno's
approach for large tables (paper 003, section 3.2.3): the table is sorted on its
quasi-identifiers (ascending cardinality, then each value's place in its hierarchy), cut
into blocks of a bounded number of rows, and each block is anonymized on its own. Every
block's release is verified by :func:`~anonlab.release.verify.verify` before it is kept;
this module says why the union of verified blocks satisfies the job's models, and refuses
the models for which it does not.

The union argument
------------------
Released classes of different blocks whose labels coincide are one class of the release:
a class of the union is a disjoint union of verified classes. A model survives the union
when a union of classes that each satisfy it satisfies it (the same property that makes a
model monotonic under generalization, which also merges classes), and when a class's
verdict does not depend on the rest of the table. Each model declares it, with the reason
(:attr:`~anonlab.models.base.PrivacyModel.union_safe`, read by :func:`check_union`):

==========================  =========================================================
k_anonymity                 sizes add: ``|E_1 u E_2| >= k``.
alpha_k_anonymity           each bound is linear in the class's counts (Definitions 4,
(fraction, general, multi)  10-14): ``c_1 <= alpha n_1`` and ``c_2 <= alpha n_2`` give
                            ``c_1 + c_2 <= alpha (n_1 + n_2)``.
distinct_l_diversity        the union holds every value of each part.
entropy_l_diversity         entropy is concave: ``H(lambda P + (1 - lambda) Q) >=
                            lambda H(P) + (1 - lambda) H(Q) >= log l``.
recursive_cl_diversity      the union's largest count is at most the sum of the parts',
                            its tail (all but the ``l - 1`` largest) at least the sum of
                            theirs.
cell cover (k_anonymity)    each block's cover is k-regular on its own rows; their union
                            is k-regular on the table, and every edge of a block's
                            anonymity graph is an edge of the table's, so the k
                            edge-disjoint perfect matchings of the blocks together are k
                            such matchings of the table (Murakami & Uno, Theorem 1).
==========================  =========================================================

The statistics-office families release other things than hierarchy labels; the same
argument holds for each, with what its verifier checks:

==========================  =========================================================
regions (``mondrian``)      a row's released cell is an interval ``[lo,hi]``, a
                            hierarchy label, a set ``{a;b}`` or ``*``, read back by the
                            ``regions`` verifier as covering the row's own value; that
                            holds row by row, so in the union too. Rows of any blocks
                            whose summaries read the same are one released class: a
                            disjoint union of verified classes, judged as above (k: the
                            sizes add). A cell's NCP is read from its label against the
                            whole column's range or leaves (every block is encoded
                            with the whole table's values), so the union's GCP is the
                            blocks' weighted by their rows, its NCP their sum.
centroids                   classes of different blocks whose released centroids read
(``microaggregation``)      the same are one class (sizes add; models as above), and
                            the merged cells are still the class's centroids: a mean
                            ``v`` of each part is the mean of their union (a weighted
                            mean of equal means); at most half of each part below (above)
                            a median ``v`` leaves at most half of the union; a value
                            at least as frequent as any other in each part is so in
                            their union; a null of parts all missing stays one, ``*``
                            is allowed anywhere. A class's NCP is its rows' range
                            (distinct values), which grows when classes merge: the
                            union's GCP adds every block's classes measured against
                            the whole table's ranges, less the classes whose labels
                            span blocks, plus those classes measured merged, from their
                            rows (:func:`centroid_union_loss`).
blanks                      k-anonymity only (a blank, ``*``, matches any value, so a
(``local_suppression``)     record belongs to no single class; every other model is
                            refused, :func:`~anonlab.release.blanks.blank_problem`).
                            Its verifier counts a record's *compatible* records (on
                            every attribute the same label, or either one blank), as
                            sdcMicro's ``freqCalc`` does: every record compatible with
                            ``r`` in its block is so in the union, so ``r``'s frequency
                            only grows (``f_union(r) >= f_block(r) >= k``), whatever
                            the levels or blanks of the other blocks (a label of
                            another level is simply not equal). Blank-as-its-own-value
                            counting would give the same conclusion (classes of equal
                            tuples, sizes add), but is not what the verifier judges.
                            Each block may choose its own levels (``generalize:
                            optimal`` searches each block); the cells are counted per
                            (label, level, value) and merged as for local recoding.
==========================  =========================================================

Each of these written releases is judged again from the file before it is kept
(:func:`anonlab.jobs.union.write_union`): regions and centroids grouped on their written
labels and every class model judging the classes; blanks by their wildcard frequencies
recounted from the file's distinct tuples (:func:`~anonlab.release.blanks.recheck_blanks`).

Refused (:func:`check_union`): the refined simple (alpha,k)-anonymity (Definition 5's
``ceil`` is subadditive: two classes of two rows with one sensitive row each pass at
alpha = 0.1, their union does not), and every model that compares a class with the whole
table's distribution (t-closeness, beta-likeness, delta-disclosure): a block sees only its
own distribution. (With the whole table's distribution t-closeness would survive the union
too -- the EMD is convex in the class distribution -- but a block cannot judge against it.)

Per-record models (personalized privacy, paper 004) are not preserved by merging classes:
a record's Pleak counts every record of its class, and the other block's part of a merged
class may hold many records whose released values cover its value (with limits per record,
a part whose own records met their limits can push another part's records over theirs).
The verified blocks are therefore held (:class:`HeldBlocks`) until every block is done; the
classes whose labels occur in several blocks are then judged merged, record by record, by
the model itself, and an algorithm that can (:class:`RejoinsClasses`) generalizes again the
released values of the merged classes that fail, as it would have in memory, where classes
with equal labels are one class from the start. Only then are the blocks staged; the written
release is judged again, the classes spanning blocks record by record
(:func:`spanning_verdict`), before anything is written.

The loss of the union is measured exactly (:func:`union_loss`): the released cells of every
block counted per (label, level, original value) and merged by their text, the classes of
the union from the written release grouped again, measured by the job's metric against the
whole table's context. A cell cover's GCP is the row-weighted mean of the blocks' (each
cell's NCP depends on its hierarchy only), its NCP the sum.

References
----------
.. [1] K. Murakami and T. Uno, "Optimization algorithm for k-anonymization of datasets with
   low information loss", Int. J. Inf. Secur. 17 (2018), section 3.2.3 (sorting and
   partitioning) and Theorem 1.
.. [2] R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymous data publishing",
   J. Intell. Inf. Syst. 33 (2009), Lemma 2 and Definition 5.
"""

from __future__ import annotations

import pickle
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from anonlab._typing import FloatArray, IntArray
from anonlab.data.labels import factorize
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.engines import get_engine
from anonlab.engines.base import Engine
from anonlab.exceptions import ParameterError, PrivacyCheckError
from anonlab.metrics.base import CellCounts, MetricContext, ReleaseCells
from anonlab.models.base import PrivacyModel
from anonlab.models.per_record import RecordModel, RecordVerdict
from anonlab.release.blanks import Blanks, blank_cells, read_blanks
from anonlab.release.centroids import HIDDEN, Centroids, class_ncp
from anonlab.release.clusters import Clusters
from anonlab.release.measure import metric_context, release_cells
from anonlab.release.problem import Problem
from anonlab.release.recoding import LevelRecoding, Recoding
from anonlab.release.result import SearchStats, stat
from anonlab.release.verify import Release, Verification, verify

__all__ = [
    "BlockRelease",
    "CentroidClasses",
    "DEFAULT_BLOCK_ROWS",
    "HeldBlocks",
    "PartitionStats",
    "RejoinsClasses",
    "block_ready",
    "centroid_classes",
    "centroid_union_loss",
    "check_union",
    "release_block",
    "spanning_verdict",
    "union_loss",
]

#: Rows per block by default: Murakami & Uno's partitions (section 3.2.3: 100,000 records).
#: A block's in-memory work is that of the algorithm on this many rows (well under 1 GB for
#: every family on 9 quasi-identifiers); ``block_rows`` sets it.
DEFAULT_BLOCK_ROWS = 100_000


def check_union(models: Sequence[PrivacyModel], owner: str) -> None:
    """Refuse, before any work, a model the union of verified blocks may violate.

    Each model declares whether it survives the union, and why
    (:attr:`~anonlab.models.base.PrivacyModel.union_safe`), or why not
    (:attr:`~anonlab.models.base.PrivacyModel.union_unsafe`).

    Parameters
    ----------
    models : sequence of PrivacyModel
        The job's models.
    owner : str
        The algorithm (named in the message).

    Raises
    ------
    ParameterError
        A model that does not declare that it survives the union, with its reason.
    """
    for m in models:
        if m.union_safe is not None:
            continue
        raise ParameterError(
            f"Model {m.name!r} cannot be met partition by partition ({owner} out of core): "
            f"{m.union_unsafe}. Run it with --engine numpy (engine='numpy') on a table that "
            "fits in memory. Nothing was written."
        )


def block_ready(problem: Problem) -> bool:
    """Whether a block can be anonymized on its own.

    True when the block, as one class (every quasi-identifier at its root), satisfies every
    class model (paper 002, Lemma 1: a fraction bound must hold on the block as a whole) and
    has the rows the models need. A block that is not ready is anonymized together with the
    next one.
    """
    need = max([m.min_class_size for m in problem.models] + [1])
    if problem.n_records < need:
        return False
    models = [m for m in problem.models if not isinstance(m, RecordModel)]
    if not any(m.sensitive_attributes for m in models):
        return True
    whole = get_engine("numpy", problem.table).class_stats([], sensitive=list(problem.sensitive))
    for m in models:
        try:
            m.check_feasible(whole)
        except ParameterError:
            return False
        if not bool(np.asarray(m.class_ok(whole), dtype=bool).all()):
            return False
    return True


# --------------------------------------------------------------------------- one block
@dataclass
class BlockRelease:
    """What a verified block contributes to the release (small: no row of another block).

    Attributes
    ----------
    rows : ndarray of int64
        The block's rows, by their position in the source.
    labels : dict of str to EncodedColumn
        The released values of the columns the release changes, row-aligned with ``rows``.
    keep : ndarray of bool
        Per row, False when it is suppressed.
    verification : Verification
        The block's verification.
    loss : float
        The block's loss, by the job's metric against the block's own context.
    cells : list of tuple, optional
        Class-forming releases: per quasi-identifier the released cells counted per
        (label text, level, original value text), with kept and suppressed counts.
    suppressed_sizes : ndarray of int64
        The sizes of the block's suppressed classes.
    search : SearchStats
        The algorithm's statistics on the block.
    summary : dict
        The recoding's summary on the block.
    kind : str
        The recoding's type (``Levels``, ``Clusters``, ``CellCover``).
    seconds : float
        Time of the block (fit and verification).
    replaced : tuple of str
        The columns the release changes (set from ``labels``).
    n_rows : int
        Rows of the block (kept after :meth:`forget_rows`).
    verifier : str
        How the recoding's release is verified (``Recoding.verifier``: ``classes``,
        ``graph``, ``regions``, ``centroids``, ``blanks``): how the union is re-checked
        and measured.
    centroids : CentroidClasses, optional
        A microaggregated block: its released classes' keys, sizes and NCP.
    """

    rows: IntArray
    labels: dict[str, EncodedColumn]
    keep: npt.NDArray[np.bool_]
    verification: Verification
    loss: float
    cells: list[tuple[Any, ...]] | None
    suppressed_sizes: IntArray
    search: SearchStats
    summary: dict[str, Any]
    kind: str = ""
    seconds: float = 0.0

    replaced: tuple[str, ...] = ()
    n_rows: int = 0
    verifier: str = "classes"
    centroids: CentroidClasses | None = None

    def __post_init__(self) -> None:
        self.replaced = tuple(self.labels)
        self.n_rows = int(self.rows.size)

    def forget_rows(self) -> None:
        """Drop the per-row arrays once the labels are staged (the figures stay)."""
        self.rows = np.zeros(0, dtype=np.int64)
        self.labels = {}
        self.keep = np.zeros(0, dtype=bool)


def release_block(
    problem: Problem,
    recoding: Recoding,
    rows: IntArray,
    *,
    search: SearchStats,
    context: MetricContext | None = None,
) -> BlockRelease:
    """Verify one block's recoding (:func:`~anonlab.release.verify.verify`) and keep what
    the release of the whole table needs of it.

    Parameters
    ----------
    problem : Problem
        The block's problem.
    recoding : Recoding
        What the algorithm returned for it.
    rows : ndarray of int64
        The block's rows, by their position in the source (row-aligned with the table).
    search : SearchStats
        The algorithm's statistics.
    context : MetricContext, optional
        The algorithm's metric context of the block, if it has one.

    Raises
    ------
    PrivacyCheckError
        The block fails its verification: nothing may be released.
    """
    if recoding.rows is not None:  # pragma: no cover - only PrivacyFrost2 removes rows
        raise ParameterError("A per-partition release keeps every row of its block.")
    release = verify(problem, recoding, mask_suppressed=True, context=context)
    changed = list(problem.quasi_identifiers)
    if isinstance(recoding, Clusters) and recoding.sensitive is not None:
        changed.append(recoding.sensitive)
    if release.suppressed.any():  # the labels of suppressed rows, not their mask
        released = recoding.apply(problem)
    else:  # every row as verified (nothing is masked)
        released = problem.table.with_columns(
            {c: EncodedColumn(c, *release.columns.encoded(c)) for c in changed}
        )
    labels = {c: released[c] for c in changed}
    keep = np.ones(problem.n_rows, dtype=bool)
    cells: list[tuple[Any, ...]] | None = None
    supp_sizes = np.zeros(0, dtype=np.int64)
    stats = release.classes
    if recoding.forms_classes and stats.row_class is not None:  # suppressed classes
        keep = ~release.suppressed[stats.row_class]
        supp_sizes = np.asarray(stats.sizes[release.suppressed], dtype=np.int64)
    centroids = None
    if isinstance(recoding, Centroids):
        assert stats.row_class is not None
        row_class = np.asarray(stats.row_class, dtype=np.int64)
        centroids = centroid_classes(problem, labels, row_class, release.suppressed)
    elif isinstance(recoding, Blanks):  # cells at the level, or blank (the top)
        blank = read_blanks(problem, released)[1]
        cells = [
            (label, level, problem.table[q].categories[value], count, np.zeros_like(count))
            for q, (value, level, label, count) in zip(
                problem.quasi_identifiers, blank_cells(problem, recoding, blank)
            )
        ]
    elif isinstance(recoding, LevelRecoding):  # a release that forms classes
        assert stats.row_class is not None
        ctx = metric_context(problem) if context is None else context
        counted = release_cells(problem, recoding, stats, release.suppressed, ctx)
        base = ctx.base
        assert base.domains is not None
        cells = []
        for j, q in enumerate(problem.quasi_identifiers):
            c = counted.cells[j]
            values = base.domains[base.columns.index(q)][c.value]
            cells.append((released[q].categories[c.label], c.level, values, c.kept, c.suppressed))
    return BlockRelease(
        np.asarray(rows, dtype=np.int64),
        labels,
        keep,
        release.verification,
        release.loss,
        cells,
        supp_sizes,
        search,
        recoding.summary(problem),
        type(recoding).__name__,
        verifier=recoding.verifier,
        centroids=centroids,
    )


@dataclass(frozen=True)
class CentroidClasses:
    """A microaggregated block's released classes, as its union is measured.

    Attributes
    ----------
    keys : ndarray of int64
        Per released (kept) class, a 64-bit hash of its labels (:func:`label_keys`).
    sizes : ndarray of int64
        Its rows.
    ncp : ndarray of float64
        One of its rows' NCP summed over the quasi-identifiers, against the whole table's
        ranges and domains (:func:`~anonlab.release.centroids.class_ncp`).
    suppressed_rows : int
        The block's suppressed rows (every cell counts 1).
    """

    keys: IntArray
    sizes: IntArray
    ncp: FloatArray
    suppressed_rows: int


def label_keys(
    labels: Mapping[str, EncodedColumn], columns: Sequence[str], rows: IntArray
) -> IntArray:
    """A 64-bit hash of the labels of ``rows`` in ``columns`` (a null as None): equal
    labels, equal keys, in one process.

    Examples
    --------
    >>> a = EncodedColumn.from_values("x", ["1", "2", "1"])
    >>> keys = label_keys({"x": a}, ["x"], np.array([0, 1, 2]))
    >>> bool(keys[0] == keys[2]), bool(keys[0] == keys[1])
    (True, False)
    """
    texts = [labels[c].categories[labels[c].codes[rows]].tolist() for c in columns]
    return np.array([hash(t) for t in zip(*texts)], dtype=np.int64).reshape(-1)


def _first_rows(
    labels: Mapping[str, EncodedColumn], qis: list[str], row_class: IntArray, n_classes: int
) -> tuple[IntArray, dict[str, npt.NDArray[np.bool_]]]:
    """Each class's first row, and per quasi-identifier whether its cell is ``*``."""
    first = np.full(n_classes, row_class.size, dtype=np.int64)
    np.minimum.at(first, row_class, np.arange(row_class.size, dtype=np.int64))
    hidden = {
        q: np.asarray(labels[q].categories[labels[q].codes[first]] == HIDDEN, dtype=bool)
        for q in qis
    }
    return first, hidden


def centroid_classes(
    problem: Problem,
    labels: Mapping[str, EncodedColumn],
    row_class: IntArray,
    suppressed: npt.NDArray[np.bool_],
) -> CentroidClasses:
    """A verified microaggregated block's classes, to measure the union's GCP exactly.

    Parameters
    ----------
    problem : Problem
        The block's problem (its table encoded with the whole table's labels).
    labels : Mapping[str, EncodedColumn]
        The released quasi-identifiers, row-aligned with the block.
    row_class : ndarray of int64
        The released class of each row (the verification's grouping).
    suppressed : ndarray of bool
        Per class, whether it is suppressed.

    Examples
    --------
    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import KAnonymity
    >>> t = EncodedTable.from_columns({"x": ["0", "2", "1", "1"]})
    >>> p = Problem(t, ("x",), {"x": flat_hierarchy(t["x"].categories)}, (KAnonymity(2),),
    ...             build_metric("gcp"))
    >>> labels = {"x": EncodedColumn.from_values("x", ["1", "1", "1", "1"])}
    >>> c = centroid_classes(p, labels, np.array([0, 0, 1, 1]), np.zeros(2, dtype=bool))
    >>> c.sizes.tolist(), c.ncp.tolist(), bool(c.keys[0] == c.keys[1])
    ([2, 2], [1.0, 0.0], True)
    """
    qis = list(problem.quasi_identifiers)
    n_classes = int(suppressed.size)
    first, hidden = _first_rows(labels, qis, row_class, n_classes)
    ncp = class_ncp(problem.table, qis, row_class, suppressed, hidden, whole_domain=True)
    sizes = np.bincount(row_class, minlength=n_classes).astype(np.int64)
    kept = ~suppressed
    return CentroidClasses(
        label_keys(labels, qis, first[kept]),
        sizes[kept],
        ncp[kept],
        int(sizes[suppressed].sum()),
    )


def centroid_union_loss(
    problem: Problem,
    blocks: Sequence[CentroidClasses],
    row_class: IntArray,
    original: EncodedTable,
    released: EncodedTable,
) -> float:
    """The GCP of the union of microaggregated blocks (exact).

    A class's NCP depends on its rows' range (numbers) or distinct values (categories), so
    the union's classes whose labels occur in several blocks are measured again, merged:
    every block's classes are summed, less those whose labels span blocks, plus the merged
    classes measured on their rows (:meth:`~anonlab.engines.base.Engine.staged_spanning`).
    Ranges and domains are the whole table's. A block's class is found among those that
    span blocks by a 64-bit hash of its labels (:func:`label_keys`): the privacy re-check
    never uses it, and only a collision (odds about ``classes^2 / 2^64``) would misstate
    the loss.

    Parameters
    ----------
    problem : Problem
        The whole table's problem.
    blocks : sequence of CentroidClasses
        Every block's classes.
    row_class : ndarray of int64
        The merged class of each row of the classes spanning blocks.
    original, released : EncodedTable
        Those rows' quasi-identifiers in the source (the whole table's labels) and as
        released.

    Examples
    --------
    Two blocks release the centroid 1, one of ``[0, 2]`` (NCP 1), one of ``[1, 1]`` (0):
    merged, the class spans ``[0, 2]`` and every one of its rows counts 1.

    >>> from anonlab.data.builders import flat_hierarchy
    >>> from anonlab.metrics import build_metric
    >>> from anonlab.models import KAnonymity
    >>> t = EncodedTable.from_columns({"x": ["0", "2", "1", "1"]})
    >>> p = Problem(t, ("x",), {"x": flat_hierarchy(t["x"].categories)}, (KAnonymity(2),),
    ...             build_metric("gcp"))
    >>> released = EncodedTable.from_columns({"x": ["1", "1", "1", "1"]})
    >>> key = label_keys({"x": released["x"]}, ["x"], np.array([0]))
    >>> a = CentroidClasses(key, np.array([2]), np.array([1.0]), 0)
    >>> b = CentroidClasses(key, np.array([2]), np.array([0.0]), 0)
    >>> centroid_union_loss(p, [a, b], np.zeros(4, dtype=np.int64), t, released)
    1.0
    >>> centroid_union_loss(p, [a], np.zeros(0, dtype=np.int64), t, released)  # no merge
    0.5
    """
    qis = list(problem.quasi_identifiers)
    n = problem.n_records
    if not n or not qis:
        return 0.0
    total = sum(float((b.ncp * b.sizes).sum()) + b.suppressed_rows * len(qis) for b in blocks)
    if row_class.size:
        n_classes = int(row_class.max()) + 1
        labels = {q: released[q] for q in qis}
        first, hidden = _first_rows(labels, qis, row_class, n_classes)
        spanning = label_keys(labels, qis, first)
        for b in blocks:
            part = np.isin(b.keys, spanning)
            total -= float((b.ncp[part] * b.sizes[part]).sum())
        none = np.zeros(n_classes, dtype=bool)
        merged = class_ncp(original, qis, row_class, none, hidden, whole_domain=True)
        total += float((merged * np.bincount(row_class, minlength=n_classes)).sum())
    return total / (n * len(qis))


# --------------------------------------------------------------------------- the union
def union_loss(
    problem: Problem,
    blocks_cells: Sequence[list[tuple[Any, ...]]],
    class_sizes: IntArray,
    suppressed_sizes: IntArray,
    context: MetricContext | None = None,
) -> float:
    """The job's metric on the union of the blocks' releases (exact).

    Parameters
    ----------
    problem : Problem
        The whole table's problem (a frequency set: its context is the whole table's).
    blocks_cells : sequence
        Each block's :attr:`BlockRelease.cells`.
    class_sizes : ndarray of int64
        The sizes of the released classes of the union (not suppressed): the written
        release grouped again.
    suppressed_sizes : ndarray of int64
        The sizes of every block's suppressed classes.
    context : MetricContext, optional
        The whole table's metric context.
    """
    ctx = metric_context(problem) if context is None else context
    base = ctx.base
    assert base.domains is not None
    merged = []
    for j, q in enumerate(problem.quasi_identifiers):
        parts = [b[j] for b in blocks_cells]
        label_text = np.concatenate([p[0] for p in parts])
        level = np.concatenate([p[1] for p in parts]).astype(np.int64)
        value_text = np.concatenate([p[2] for p in parts])
        kept = np.concatenate([p[3] for p in parts]).astype(np.int64)
        supp = np.concatenate([p[4] for p in parts]).astype(np.int64)
        domain = base.domains[base.columns.index(q)]
        value = _codes_in(value_text, domain, q)
        label, labels = factorize(label_text)
        n_val = max(int(domain.size), 1)
        n_lv = int(level.max()) + 1 if level.size else 1
        key = (label.astype(np.int64) * n_lv + level) * n_val + value
        uniq, inv = np.unique(key, return_inverse=True)
        inv = inv.reshape(-1)
        rest, v = np.divmod(uniq, n_val)
        lab, lv = np.divmod(rest, n_lv)
        merged.append(
            CellCounts(
                value=v.astype(np.int64),
                level=lv.astype(np.int64),
                label=lab.astype(np.int64),
                kept=np.bincount(inv, weights=kept, minlength=uniq.size).astype(np.int64),
                suppressed=np.bincount(inv, weights=supp, minlength=uniq.size).astype(np.int64),
            )
        )
        del labels
    sizes = np.concatenate([np.asarray(class_sizes, np.int64), np.asarray(suppressed_sizes)])
    flags = np.zeros(sizes.size, dtype=bool)
    flags[np.asarray(class_sizes).size :] = True
    cells = ReleaseCells(problem.quasi_identifiers, tuple(merged), sizes, flags)
    return float(problem.metric.release_loss(cells, ctx))


def _codes_in(
    texts: npt.NDArray[np.object_], domain: npt.NDArray[np.object_], what: str
) -> IntArray:
    """The position of each text in ``domain`` (a loop over the distinct texts only)."""
    inv, uniq = factorize(texts)
    where = {v: i for i, v in enumerate(domain.tolist())}
    missing = [v for v in uniq.tolist() if v not in where]
    if missing:  # pragma: no cover - the blocks' values are the whole table's
        raise ParameterError(f"Value {missing[0]!r} of {what!r} is not in the whole table.")
    codes = np.array([where[v] for v in uniq.tolist()], dtype=np.int64)
    out: IntArray = codes[np.asarray(inv, dtype=np.int64)] if codes.size else np.zeros(0, np.int64)
    return out


def spanning_verdict(
    model: RecordModel,
    row_class: npt.ArrayLike,
    original: EncodedColumn,
    released: EncodedColumn,
    limits: npt.ArrayLike,
) -> RecordVerdict:
    """A per-record model's verdict on the rows of classes that span several blocks.

    Each block's classes were verified record by record; a class whose labels occur in
    several blocks is the union of their parts, and a record's measure (Pleak, paper 004
    Definition 8) counts every record of the union. The model judges those records again,
    on the union (:meth:`~anonlab.models.per_record.RecordModel.judge_records`).

    Parameters
    ----------
    model : RecordModel
    row_class : array_like of int
        The union class of each row.
    original, released : EncodedColumn
        The sensitive attribute before and after the release, row-aligned.
    limits : array_like of float
        Each row's own limit.
    """
    return model.judge_records(np.asarray(row_class, np.int64), original, released, limits)


@runtime_checkable
class RejoinsClasses(Protocol):
    """An algorithm that can release again the values a per-record model judges, for rows
    whose classes merged across blocks (``personalized``: SA_Generalization on the merged
    classes)."""

    def rejoin_classes(
        self,
        problem: Problem,
        model: RecordModel,
        row_class: IntArray,
        original: EncodedColumn,
        limits: FloatArray,
        rank: IntArray,
    ) -> EncodedColumn:
        """The released column of ``model.attribute`` for these rows, every record of every
        class within its limit, the quasi-identifiers as they are.

        Parameters
        ----------
        problem : Problem
            The whole table's problem (its models).
        model : RecordModel
            The per-record model the merged classes fail.
        row_class : ndarray of int64
            The merged class of each row.
        original : EncodedColumn
            The rows' values of ``model.attribute``, as in the table.
        limits : ndarray of float
            Each row's own limit.
        rank : ndarray of int64
            The order in which the algorithm walks the rows.

        Raises
        ------
        InputError
            A merged class that no generalization of those values brings within.
        """
        ...  # pragma: no cover - a protocol


@dataclass
class _Held:
    """One held block's file and the label tuples of its classes."""

    path: Path
    keys: list[tuple[Any, ...]]


class HeldBlocks:
    """Verified blocks of a per-record release, held in files until every block is done.

    Each block's released labels, its rows' values of the per-record models' attributes and
    their limits are written to a file of ``folder``; the label tuple of each of its classes
    (its kept rows) stays in memory. :meth:`stage` finds the classes whose labels occur in
    several blocks, judges them merged, has the algorithm release again the values of those
    that fail (:class:`RejoinsClasses`) and stages every block (with those values) for the
    engine to write.

    Parameters
    ----------
    problem : Problem
        The whole table's problem.
    folder : Path
        An empty folder the caller removes afterwards.
    """

    def __init__(self, problem: Problem, folder: Path) -> None:
        self.problem = problem
        self.folder = folder
        self.models = [m for m in problem.models if isinstance(m, RecordModel)]
        self.blocks: list[_Held] = []
        self.rejoined_classes = 0
        self.rejoined_records = 0

    def hold(self, block: BlockRelease, problem: Problem) -> None:
        """Write ``block`` (verified, of the block problem ``problem``) to a file."""
        qis = self.problem.quasi_identifiers
        kept = np.flatnonzero(block.keep)
        cols = [block.labels[q] for q in qis]
        codes = np.stack([c.codes[kept] for c in cols], axis=1) if qis else np.zeros((0, 0))
        uniq, inverse = np.unique(codes, axis=0, return_inverse=True)
        keys = [  # one per class, not per row
            tuple(cols[j].categories[u[j]] for j in range(len(cols))) for u in uniq.tolist()
        ]
        row_key = np.full(block.rows.size, -1, dtype=np.int64)
        row_key[kept] = inverse.reshape(-1)
        data = {
            "rows": block.rows,
            "keep": block.keep,
            "labels": block.labels,
            "row_key": row_key,
            "original": {m.attribute: problem.table[m.attribute] for m in self.models},
            "limits": {m.record_parameter: problem.record_parameters[m.record_parameter]
                       for m in self.models},
        }  # fmt: skip
        path = self.folder / f"block_{len(self.blocks):06d}.pickle"
        with open(path, "wb") as fh:
            pickle.dump(data, fh, protocol=pickle.HIGHEST_PROTOCOL)
        self.blocks.append(_Held(path, keys))

    def _load(self, held: _Held) -> dict[str, Any]:
        with open(held.path, "rb") as fh:
            data: dict[str, Any] = pickle.load(fh)
        return data

    def stage(self, engine: Engine, algorithm: object) -> None:
        """Judge the merged classes, release again those that fail, stage every block.

        Raises
        ------
        PrivacyCheckError
            A merged class fails and the algorithm cannot release it again
            (:func:`_check_spanning` would refuse the written release).
        """
        seen = Counter(k for held in self.blocks for k in set(held.keys))
        spanning = {k: i for i, k in enumerate(k for k, n in seen.items() if n > 1)}
        changed: dict[tuple[int, str], tuple[IntArray, npt.NDArray[np.object_]]] = {}
        if spanning:
            for m in self.models:
                changed.update(self._rejoin(m, spanning, algorithm))
        for b, held in enumerate(self.blocks):
            data = self._load(held)
            labels = dict(data["labels"])
            for (block, name), (at, texts) in changed.items():
                if block == b:
                    labels[name] = _with_texts(labels[name], at, texts)
            engine.stage_labels(data["rows"], labels, data["keep"])

    def _rejoin(
        self, model: RecordModel, spanning: Mapping[tuple[Any, ...], int], algorithm: object
    ) -> dict[tuple[int, str], tuple[IntArray, npt.NDArray[np.object_]]]:
        """The merged classes judged by ``model``; those that fail released again by the
        algorithm: per (block, column), the rows changed and their new labels."""
        name = model.attribute
        parts: list[tuple[int, IntArray, IntArray]] = []  # (block, rows in it, merged class)
        codes, released, limits, rank = [], [], [], []
        categories = None
        for b, held in enumerate(self.blocks):
            ids = np.array([spanning.get(k, -1) for k in held.keys], dtype=np.int64)
            data = self._load(held)
            row_key = data["row_key"]
            at = np.flatnonzero(row_key >= 0)
            at = at[ids[row_key[at]] >= 0]
            if at.size == 0:
                continue
            original: EncodedColumn = data["original"][name]
            categories = original.categories if categories is None else categories
            parts.append((b, at, ids[row_key[at]]))
            codes.append(original.codes[at])
            col: EncodedColumn = data["labels"][name]
            released.append(col.categories[col.codes[at]])
            limits.append(np.asarray(data["limits"][model.record_parameter])[at])
            rank.append(np.asarray(data["rows"])[at])
        if categories is None:
            return {}
        row_class = np.concatenate([p[2] for p in parts])
        original_all = EncodedColumn(name, np.concatenate(codes), categories)
        texts = np.concatenate(released)
        bounds = np.concatenate(limits)
        verdict = model.judge_records(row_class, original_all, _text_column(name, texts), bounds)
        if bool(verdict.ok.all()) or not isinstance(algorithm, RejoinsClasses):
            return {}  # (the written release's re-check refuses what still fails)
        failing = np.flatnonzero(~verdict.class_ok)
        redo = np.flatnonzero(np.isin(row_class, failing))
        _, dense = np.unique(row_class[redo], return_inverse=True)
        again = algorithm.rejoin_classes(
            self.problem,
            model,
            dense.reshape(-1).astype(np.int64),
            EncodedColumn(name, original_all.codes[redo], categories),
            bounds[redo],
            np.concatenate(rank)[redo],
        )
        new_texts = texts.copy()
        new_texts[redo] = again.categories[again.codes]
        check = model.judge_records(row_class, original_all, _text_column(name, new_texts), bounds)
        if not bool(check.ok.all()):  # pragma: no cover - rejoin_classes raises first
            raise PrivacyCheckError(
                f"{int(np.unique(row_class[~check.ok]).size)} classes whose labels occur in "
                "several blocks hold records over their limit once merged, even released "
                "again. Nothing was released."
            )
        self.rejoined_classes += int(failing.size)
        self.rejoined_records += int(np.count_nonzero(new_texts[redo] != texts[redo]))
        out: dict[tuple[int, str], tuple[IntArray, npt.NDArray[np.object_]]] = {}
        start = 0
        for b, at, _ in parts:
            stop = start + at.size
            mine = (redo >= start) & (redo < stop)
            if mine.any():
                out[(b, name)] = (at[redo[mine] - start], new_texts[redo[mine]])
            start = stop
        return out


def _text_column(name: str, texts: npt.NDArray[np.object_]) -> EncodedColumn:
    """A column of these labels (a null stays a null)."""
    return EncodedTable.from_columns({name: texts})[name]


def _with_texts(
    col: EncodedColumn, rows: IntArray, texts: npt.NDArray[np.object_]
) -> EncodedColumn:
    """``col`` with the labels of ``rows`` replaced by ``texts``."""
    labels = col.categories[col.codes].copy()
    labels[rows] = texts
    return _text_column(col.name, labels)


# --------------------------------------------------------------------------- result shapes
def merge_summaries(into: dict[str, Any], other: Mapping[str, Any]) -> dict[str, Any]:
    """Sum the counts of two recoding summaries (nested mappings of numbers); other values
    keep the first block's."""
    for key, value in other.items():
        if key not in into:
            into[key] = _copy(value)
        elif isinstance(value, Mapping) and isinstance(into[key], dict):
            merge_summaries(into[key], value)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if key != "k":
                into[key] = into[key] + value
    return into


def _copy(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return list(value)
    return value


@dataclass
class PartitionStats(SearchStats):
    """What a per-partition run did (``elapsed_s`` and ``evaluated`` summed over blocks).

    Attributes
    ----------
    blocks : int
        Blocks anonymized.
    block_rows : int
        Rows per block asked for.
    smallest_block, largest_block : int
        Rows of the smallest and the largest block anonymized.
    merged_blocks : int
        Blocks anonymized together with the next (a block not ready on its own, or a last
        block too small).
    spanning_classes : int
        Released classes whose labels occur in several blocks (merged in the release).
    rejoined_classes, rejoined_records : int
        Of those, the classes a per-record model failed merged, whose values the algorithm
        released again, and the records whose released value changed.
    per_block : list of dict
        Per block: rows, seconds, rows suppressed, the algorithm's own figures (JSON only).
    """

    blocks: int = stat("blocks", 0)
    block_rows: int = stat("rows per block (--block-rows)", 0)
    smallest_block: int = stat("smallest block", 0)
    largest_block: int = stat("largest block", 0)
    merged_blocks: int = stat("blocks merged with the next", 0)
    spanning_classes: int = stat("classes spanning blocks", 0)
    rejoined_classes: int = stat("spanning classes released again merged", 0)
    rejoined_records: int = stat("records released again in merged classes", 0)
    per_block: list[dict[str, Any]] = field(default_factory=list)


def combine_verifications(
    problem: Problem, blocks: Sequence[BlockRelease], classes: int, method: str
) -> Verification:
    """The verification of the union: the blocks' suppressed rows summed, ``classes`` the
    union's (the written release grouped again), every model holding."""
    keys = list(blocks[0].verification.checks) if blocks else []
    return Verification(
        {k: True for k in keys},
        sum(b.verification.suppressed_rows for b in blocks),
        0,
        classes,
        method,
    )


def union_release(
    columns: Any,
    verification: Verification,
    loss: float,
    metric: str,
    classes: ClassStats,
) -> Release:
    """A :class:`~anonlab.release.verify.Release` of the union (its rows are in the file)."""
    return Release(
        columns,
        verification,
        loss,
        metric,
        classes,
        np.zeros(classes.n_classes, dtype=bool),
    )
