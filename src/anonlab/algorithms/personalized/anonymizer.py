"""The registered personalized-privacy algorithm (``algorithm: personalized``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress, stage
from anonlab._typing import FloatArray, IntArray
from anonlab.algorithms.base import Anonymizer, Param, register
from anonlab.algorithms.personalized.clustering import (
    QuasiIdentifierIndex,
    adaptive_clustering,
    group_needs,
)
from anonlab.algorithms.personalized.sensitive import sa_generalization, tree_arrays
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.table import EncodedColumn
from anonlab.exceptions import InputError, ParameterError, PrivacyCheckError
from anonlab.metrics.info_left import release_info_left
from anonlab.models.per_record import RecordModel, RecordVerdict
from anonlab.release.clusters import Clusters
from anonlab.release.problem import Problem
from anonlab.release.recoding import generalize_cells
from anonlab.release.result import SearchStats, stat

__all__ = ["Personalized", "PersonalizedStats"]


@dataclass
class PersonalizedStats(SearchStats):
    """What the personalized-privacy algorithm did (``evaluated``: window steps of the
    clustering plus rounds of SA_Generalization).

    Attributes
    ----------
    k : int
        The smallest group.
    groups, classes : int
        Groups of the clustering and released classes (groups with equal labels are one).
    merge_rounds : int
        Rounds in which groups with a record over its limit were merged with a neighbour.
    generalized_sensitive : int
        Records whose sensitive value is released generalized.
    sensitive_moves : int
        Raises of SA_Generalization (each a batch of records from a node to its parent).
    highest_pleak, average_pleak : float
        Pleak of the release (Definition 8), by the model.
    records_over_limit : int
        Always 0 (otherwise nothing is released).
    info_left : float
        ILeft_table of the release (Definition 11), quasi-identifiers and the sensitive
        attribute (its generalized values included).
    clustering_s, sensitive_s : float
        Time of the clustering and of SA_Generalization (with the merges).

    Examples
    --------
    >>> stats = PersonalizedStats(elapsed_s=0.1, evaluated=4, groups=2, classes=2)
    >>> [label for label, _ in stats.rows()][:4]
    ['search time (s)', 'candidates evaluated', 'smallest group (k)', 'groups']
    """

    k: int = stat("smallest group (k)", 2)
    groups: int = stat("groups", 0)
    classes: int = stat("classes (groups with equal labels merged)", 0)
    merge_rounds: int = stat("merge rounds", 0)
    generalized_sensitive: int = stat("records with a generalized sensitive value", 0)
    sensitive_moves: int = stat("SA_Generalization moves", 0)
    highest_pleak: float = stat("highest Pleak", 0.0)
    average_pleak: float = stat("average Pleak", 0.0)
    records_over_limit: int = stat("records over their limit", 0)
    info_left: float = stat("information left (Definition 11)", 1.0)
    clustering_s: float = stat("clustering time (s)", 0.0)
    sensitive_s: float = stat("SA_Generalization time (s)", 0.0)


@dataclass
class _Target:
    """The per-record model the algorithm meets, its sensitive column's tree and limits."""

    model: RecordModel
    hierarchy: Hierarchy
    limits: FloatArray


@register
class Personalized(Anonymizer):
    """Personalized privacy: every record's leakage within its owner's limit.

    Song et al.'s Anonymity_Generalization: sort the table on the quasi-identifiers
    (ascending cardinality, as the out-of-core blocks are cut), cluster it adaptively (a
    tuple joins the current group or starts the next, whichever keeps more information,
    line 6), generalize each group's quasi-identifiers to their lowest common labels, and
    raise sensitive values with SA_Generalization until every record's Pleak
    (Definition 8) is within its own limit. The limits come from the job's
    ``personalized:`` key and the ``personalized_leakage`` model, which gives the tree of
    the sensitive attribute; without them every limit is 1 and the release is k-anonymous.

    Beyond the paper, which gives up when a record's limit is below ``1/|group|``
    (Theorem 1, line 16): every group is sized ``max(k, ceil(1/limit))`` for each of its
    members, and a group in which a record stays over its limit with every value of its
    leakage collection at the root is merged with a neighbour and generalized afresh. Every
    limit of at least ``1/N`` (``N`` the leaves of the sensitive tree) is always met: with
    every value of a group at the root, each record's Pleak is ``1/N``. The algorithm fails
    only when the whole table in one group still leaves a record over its limit.

    Parameters
    ----------
    k : int, optional
        The smallest group (default: the largest minimal class size of the job's models,
        at least 2, Definition 4).

    References
    ----------
    .. [1] J. Song, L. Huang, G. Wang, Y. Kang and H. Liu, "The k-anonymization method
       satisfying personalized privacy preservation", Chemical Engineering Transactions 46
       (2015), section 6 (Anonymity_Generalization, SA_Generalization), Theorems 1-2.

    Examples
    --------
    >>> import anonlab
    >>> disease = anonlab.Hierarchy([["flu", "respiratory", "*"], ["cold", "respiratory", "*"],
    ...                              ["hiv", "infection", "*"], ["hepatitis", "infection", "*"]])
    >>> t = anonlab.EncodedTable.from_columns({
    ...     "age": ["31", "32", "33", "34", "41", "42", "43", "44"],
    ...     "disease": ["flu", "cold", "hiv", "hepatitis", "flu", "hiv", "cold", "hepatitis"],
    ...     "pleak": ["1", "1", "0.5", "0.5", "1", "0.5", "1", "0.5"]})
    >>> job = {"quasi_identifiers": {"age": {"intervals": {"widths": [5, 10]}}},
    ...        "sensitive": ["disease"],
    ...        "models": [{"k_anonymity": {"k": 2}},
    ...                   {"personalized_leakage": {"attribute": "disease", "hierarchy": disease}}],
    ...        "personalized": {"limit_column": "pleak"}, "metric": "info_left",
    ...        "algorithm": "personalized"}
    >>> result = anonlab.anonymize(t, job)
    >>> result.columns["age"].tolist()
    ['[30, 35)', '[30, 35)', '[30, 35)', '[30, 35)', '[40, 45)', '[40, 45)', '[40, 45)', '[40, 45)']
    >>> result.checks
    {'k_anonymity': True, 'personalized_leakage': True}
    """

    name: ClassVar[str] = "personalized"
    family: ClassVar[str] = "each person's own limit, with the personalized section"
    _parameter_constraints: ClassVar[dict[str, Param]] = {"k": Param(int, low=2, none=True)}

    def __init__(self, *, k: int | None = None) -> None:
        self.k = k

    # ------------------------------------------------------------------ checks
    def accepts_partitions(self) -> bool:
        """True: out of core, each block of the sorted table is clustered on its own."""
        return True

    def _check_problem(self, problem: Problem) -> None:
        """Refuse, before any work, models it cannot meet and tables too small for a group."""
        self._target(problem)
        k = self._k(problem)
        if problem.n_rows < k:
            raise InputError(
                f"Algorithm 'personalized' makes groups of at least {k} rows; the table has "
                f"{problem.n_rows}. Nothing was written."
            )

    def _k(self, problem: Problem) -> int:
        """The smallest group: the parameter, or the models' largest minimal class size."""
        if self.k is not None:
            return int(self.k)
        return max([2] + [m.min_class_size for m in problem.models])

    def _target(self, problem: Problem) -> _Target | None:
        """The per-record model and its limits; refuse models the algorithm cannot meet."""
        record = [m for m in problem.models if isinstance(m, RecordModel)]
        for m in problem.models:
            if not isinstance(m, RecordModel) and (m.sensitive_attributes or m.sample_based):
                raise ParameterError(
                    f"Algorithm 'personalized' meets k-anonymity and per-record leakage limits; "
                    f"model {m.name!r} is not one of them. Use 'optimal' or 'privacyfrost2' for "
                    "it, or leave it out."
                )
        if not record:
            return None
        if len(record) > 1:
            raise ParameterError(
                "Algorithm 'personalized' meets one per-record model; the job has "
                f"{len(record)} ({', '.join(m.name for m in record)})."
            )
        model = record[0]
        hierarchy = getattr(model, "hierarchy", None)
        if not isinstance(hierarchy, Hierarchy):
            raise ParameterError(
                f"Algorithm 'personalized' generalizes sensitive attribute {model.attribute!r} "
                f"on its tree, which model {model.name!r} does not give."
            )
        limits = problem.record_parameters.get(model.record_parameter)
        if limits is None:
            raise ParameterError(
                f"Model {model.name!r} needs a limit per record ({model.record_parameter!r}): "
                "give the job 'personalized: {limit_column: ...}' or '{default_limit: ...}'."
            )
        model.validate(problem.table[model.attribute])
        return _Target(model, hierarchy, np.asarray(limits, dtype=np.float64))

    def rejoin_classes(
        self,
        problem: Problem,
        model: RecordModel,
        row_class: IntArray,
        original: EncodedColumn,
        limits: FloatArray,
        rank: IntArray,
    ) -> EncodedColumn:
        """SA_Generalization on classes merged across blocks, as on one class in memory.

        Out of core each block is clustered on its own; groups of different blocks released
        with the same labels are one class of the release, as groups with equal labels are
        one class in memory. For the merged classes in which a record is over its limit,
        SA_Generalization starts again from the original values of every record of the
        class (:class:`~anonlab.release.partitioned.RejoinsClasses`).

        Parameters
        ----------
        problem : Problem
            The whole table's problem.
        model : RecordModel
            The per-record model (its tree generalizes the values).
        row_class : ndarray of int64
            The merged class of each row.
        original : EncodedColumn
            The rows' sensitive values.
        limits : ndarray of float
            Each row's limit.
        rank : ndarray of int64
            The order of the rows in the walk of SA_Generalization.

        Returns
        -------
        EncodedColumn
            The released sensitive value of each row.

        Raises
        ------
        InputError
            A merged class in which a record stays over its limit with every value of its
            leakage collection at the root (its quasi-identifiers are fixed by then).
        """
        del problem
        hierarchy = getattr(model, "hierarchy", None)
        if not isinstance(hierarchy, Hierarchy):  # pragma: no cover - _target refused it
            raise ParameterError(f"Model {model.name!r} gives no tree to generalize with.")
        ancestors, leaves = tree_arrays(hierarchy, original.categories)
        codes = original.codes.astype(np.int64)
        out = sa_generalization(row_class, codes, limits, rank, ancestors, leaves)
        if out.stuck.any():
            stuck = np.flatnonzero(np.isin(row_class, np.flatnonzero(out.stuck)))
            raise InputError(
                f"{int(out.stuck.sum())} classes whose labels occur in several blocks hold "
                f"records over their leakage limit once merged ({stuck.size} records), even "
                "with every sensitive value of their leakage collections at the root; in "
                "memory their groups would have merged with a neighbour. Use larger blocks "
                "(--block-rows), --engine numpy, or limits of at least 1/N (N: leaves of the "
                f"tree of {model.attribute!r}). Nothing was written."
            )
        return generalize_cells(original, hierarchy, out.levels)

    # -------------------------------------------------------------------- fit
    def _fit(self, problem: Problem, progress: Progress | None) -> None:
        t0 = time.perf_counter()
        target = self._target(problem)
        k = self._k(problem)
        n = problem.n_rows
        limits = np.ones(n) if target is None else target.limits
        stage(progress, "clustering")
        index = QuasiIdentifierIndex.of(problem)
        needs = group_needs(limits, k, n)
        block_need = np.maximum.reduceat(needs[index.order], index.offsets[:-1])
        starts, scan_steps = adaptive_clustering(index, block_need)
        t1 = time.perf_counter()
        stage(progress, "generalizing sensitive values")
        rank = np.empty(n, dtype=np.int64)
        rank[index.order] = np.arange(n, dtype=np.int64)
        work = _Work(problem, index, starts, target, rank)
        work.solve()
        t2 = time.perf_counter()
        verdict = work.final_check()
        levels = work.levels.T.astype(np.int64)
        sensitive = None if target is None else target.model.attribute
        self.recoding_ = Clusters(
            levels=levels,
            group=work.row_group,
            sensitive=sensitive,
            sensitive_hierarchy=None if target is None else target.hierarchy,
            sensitive_levels=None if target is None else work.sa_levels,
        )
        self.search_ = PersonalizedStats(
            elapsed_s=time.perf_counter() - t0,
            evaluated=scan_steps + work.sa_steps,
            k=k,
            groups=int(work.starts.size),
            classes=int(work.group_class.max()) + 1,
            merge_rounds=work.rounds,
            generalized_sensitive=int(np.count_nonzero(work.sa_levels)),
            sensitive_moves=work.moves,
            highest_pleak=verdict.highest if verdict is not None else 0.0,
            average_pleak=verdict.average if verdict is not None else 0.0,
            records_over_limit=0,
            info_left=work.info_left(),
            clustering_s=t1 - t0,
            sensitive_s=t2 - t1,
        )
        if progress is not None:
            progress(1, 1)


def _rows(rows: IntArray) -> str:
    """Row positions for a message: the first ten, then ``...``."""
    return ", ".join(str(r) for r in rows[:10].tolist()) + (", ..." if rows.size > 10 else "")


class _Work:
    """The groups of the clustering, their classes and the sensitive levels, merged and
    generalized again until every record meets its limit."""

    def __init__(
        self,
        problem: Problem,
        index: QuasiIdentifierIndex,
        starts: IntArray,
        target: _Target | None,
        rank: IntArray,
    ) -> None:
        self.problem = problem
        self.index = index
        self.starts = starts
        self.target = target
        self.rank = rank
        n = problem.n_rows
        self.sa_levels = np.zeros(n, dtype=np.int64)
        self.rounds = self.moves = self.sa_steps = 0
        if target is not None:
            col = problem.table[target.model.attribute]
            self.codes = col.codes.astype(np.int64)
            self.ancestors, self.leaves = tree_arrays(target.hierarchy, col.categories)
        self._layout()

    def _layout(self) -> None:
        """Each group's labels, the classes (groups with equal labels), each row's group."""
        ix = self.index
        last = np.append(self.starts[1:], ix.n_blocks) - 1
        self.levels = ix.box(self.starts, last)
        labels = ix.labels(self.starts, self.levels)
        _, group_class = np.unique(labels.T, axis=0, return_inverse=True)
        self.group_class = group_class.reshape(-1).astype(np.int64)
        block_group = np.searchsorted(self.starts, np.arange(ix.n_blocks), side="right") - 1
        row_group = np.empty(self.problem.n_rows, dtype=np.int64)
        row_group[ix.order] = np.repeat(block_group, ix.counts)
        self.row_group = row_group
        self.row_class = self.group_class[row_group]

    def solve(self) -> None:
        """SA_Generalization on every class; merge the groups of stuck classes with a
        neighbour and redo their classes, until none is stuck."""
        if self.target is None:
            return
        redo = np.ones(self.problem.n_rows, dtype=bool)
        while True:
            rows = np.flatnonzero(redo)
            out = sa_generalization(
                self.row_class[rows],
                self.codes[rows],
                self.target.limits[rows],
                self.rank[rows],
                self.ancestors,
                self.leaves,
            )
            self.sa_levels[rows] = out.levels
            self.moves += out.moves
            self.sa_steps += out.steps
            if not out.stuck.any():
                return
            stuck = np.zeros(int(self.row_class.max()) + 1, dtype=bool)
            stuck[np.unique(self.row_class[rows])[out.stuck]] = True
            before = self.row_class.copy()
            if not self._merge(stuck[self.group_class]):
                self._fail()
            self.rounds += 1
            self._layout()
            redo = self._changed(before, stuck)

    def _merge(self, stuck_group: npt.NDArray[np.bool_]) -> bool:
        """Merge each stuck group with the neighbour whose union keeps more information
        (never across a forced block); False if none can merge."""
        ix = self.index
        g = np.flatnonzero(stuck_group)
        n_groups = self.starts.size
        last = np.append(self.starts[1:], ix.n_blocks) - 1
        prev_ok = (g > 0) & ~ix.forced[self.starts[g]]
        next_ok = (g < n_groups - 1) & ~ix.forced[self.starts[np.minimum(g + 1, n_groups - 1)]]
        lo_prev = self.starts[np.maximum(g - 1, 0)]
        hi_next = last[np.minimum(g + 1, n_groups - 1)]
        v_prev = ix.value(lo_prev, ix.box(lo_prev, last[g]))
        v_next = ix.value(self.starts[g], ix.box(self.starts[g], hi_next))
        take_next = next_ok & (~prev_ok | (v_next >= v_prev))
        take_prev = prev_ok & ~take_next
        gone = np.concatenate([g[take_next] + 1, g[take_prev]])
        if gone.size == 0:
            return False
        keep = np.ones(n_groups, dtype=bool)
        keep[gone] = False
        self.starts = self.starts[keep]
        return True

    def _changed(self, before: IntArray, stuck: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
        """Rows whose class is not a class of the last round with the same rows, done."""
        n_new = int(self.row_class.max()) + 1
        lo = np.full(n_new, np.iinfo(np.int64).max)
        hi = np.full(n_new, -1)
        np.minimum.at(lo, self.row_class, before)
        np.maximum.at(hi, self.row_class, before)
        same = (lo == hi) & (
            np.bincount(self.row_class, minlength=n_new) == np.bincount(before)[np.maximum(lo, 0)]
        )
        same &= ~stuck[np.clip(lo, 0, stuck.size - 1)]
        changed: npt.NDArray[np.bool_] = ~same[self.row_class]
        self.sa_levels[changed] = 0
        return changed

    def _fail(self) -> None:
        """No merge is left: say which records stay over their limit, and why."""
        assert self.target is not None
        verdict = self._verdict()
        bad = verdict.violating
        t = self.target
        n_leaves = int(t.hierarchy.leaves.size)
        lim = verdict.parameters[bad]
        # Theorem 1 with the record's own value at the root, in the group that helps it most
        # (itself and every record of another value): no table leaks less
        others = self.problem.n_rows - np.bincount(self.codes)[self.codes[bad]]
        proven = bad[lim < 1.0 / (n_leaves * (others + 1.0)) - 1e-12]
        largest = int(np.bincount(self.row_class).max())
        proof = ""
        if proven.size:
            proof = (
                f" No table can meet the limits of {proven.size} of them (rows "
                f"{_rows(proven)}): a record's own term alone leaks at least "
                "1/(N * (records of other values + 1))."
            )
        raise InputError(
            f"SA_Generalization cannot bring {bad.size} record(s) within their leakage limits "
            f"(rows {_rows(bad)}; limits {lim.min():.3g} to {lim.max():.3g}): with their groups "
            f"merged as far as possible (classes of up to {largest:,} rows) and the sensitive "
            f"values covering theirs raised to the root, their Pleak stays at "
            f"{verdict.values[bad].min():.3g} to {verdict.values[bad].max():.3g}. Every limit of "
            f"at least 1/N = {1.0 / n_leaves:.3g} (N = {n_leaves} leaves in the tree of "
            f"{t.model.attribute!r}) is always met; a lower one only in a group where few "
            "records share the record's value and the others keep theirs off its branch, "
            f"which anonlab does not search for.{proof} Raise these limits to at least "
            f"{1.0 / n_leaves:.3g} or give the tree more leaves. Nothing was written."
        )

    def _released(self) -> tuple[Any, Any]:
        """The sensitive column as it was and as released."""
        assert self.target is not None
        col = self.problem.table[self.target.model.attribute]
        if not self.sa_levels.any():
            return col, col
        return col, generalize_cells(col, self.target.hierarchy, self.sa_levels)

    def _verdict(self) -> RecordVerdict:
        """The model's judgement of every record of the current release."""
        assert self.target is not None
        original, released = self._released()
        return self.target.model.judge_records(
            self.row_class, original, released, self.target.limits
        )

    def final_check(self) -> RecordVerdict | None:
        """The model's own judgement of every record of the release (never trusted from the
        algorithm's bookkeeping); a record over its limit raises PrivacyCheckError."""
        if self.target is None:
            return None
        verdict = self._verdict()
        if not bool(verdict.ok.all()):  # pragma: no cover - SA_Generalization fixes them all
            raise PrivacyCheckError(
                f"{verdict.violating.size} records are over their leakage limit after the "
                f"algorithm (rows {_rows(verdict.violating)}). Nothing was released."
            )
        return verdict

    def info_left(self) -> float:
        """ILeft_table (Definition 11) of the release, the sensitive attribute included."""
        problem = self.problem
        levels = {
            q: self.levels[j][self.row_group] for j, q in enumerate(problem.quasi_identifiers)
        }
        trees = dict(problem.hierarchies)
        if self.target is not None:
            levels[self.target.model.attribute] = self.sa_levels
            trees[self.target.model.attribute] = self.target.hierarchy
        return float(release_info_left(problem.table, levels, trees).mean())
