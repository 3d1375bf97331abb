"""The registered microaggregation algorithm (``algorithm: microaggregation``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from anonlab._progress import Progress, stage
from anonlab._typing import FloatArray, IntArray
from anonlab.algorithms.base import Anonymizer, Param, register
from anonlab.algorithms.microaggregation.grouping import count_blocks, mdav
from anonlab.data.table import EncodedColumn, EncodedTable
from anonlab.engines import get_engine
from anonlab.exceptions import InputError, ParameterError
from anonlab.models.per_record import RecordModel
from anonlab.release.centroids import AGGREGATES, Centroids, il1s, numeric_values, sse_sst
from anonlab.release.problem import Problem
from anonlab.release.result import SearchStats, stat

__all__ = ["Microaggregation", "MicroaggregationStats"]

#: The weight of a missing value's indicator in the distances: rows that miss a value are
#: grouped together before any row that has it (standardized values rarely lie 1000 apart).
NULL_WEIGHT = 1000.0


@dataclass
class MicroaggregationStats(SearchStats):
    """What microaggregation did (``evaluated``: groups formed by MDAV).

    Attributes
    ----------
    k : int
        The smallest group MDAV forms.
    groups : int
        Groups of the release (after the merges a class-judging model needed).
    smallest_group, largest_group : int
        Their sizes.
    blocks : int
        Blocks MDAV ran on (1: plain MDAV on the whole table).
    merged_groups : int
        MDAV's groups merged with their nearest group because a model failed them.
    sse_sst : float
        SSE/SST of the numeric quasi-identifiers, standardized (0: nothing lost; 1: every
        record released as the table's mean).
    il1s : float
        sdcMicro's IL1s: the mean absolute change of a numeric cell in units of
        ``sqrt(2)`` standard deviations of its attribute.

    Examples
    --------
    >>> stats = MicroaggregationStats(elapsed_s=0.1, evaluated=2, groups=2)
    >>> [label for label, _ in stats.rows()][:3]
    ['search time (s)', 'candidates evaluated', 'smallest group (k)']
    """

    k: int = stat("smallest group (k)", 2)
    groups: int = stat("groups", 0)
    smallest_group: int = stat("smallest group", 0)
    largest_group: int = stat("largest group", 0)
    blocks: int = stat("blocks MDAV ran on", 1)
    merged_groups: int = stat("groups merged for the models", 0)
    sse_sst: float = stat("SSE/SST (numeric, standardized)", 0.0)
    il1s: float = stat("IL1s (sdcMicro)", 0.0)


@register
class Microaggregation(Anonymizer):
    """Microaggregation by MDAV: groups of at least k records, each released as its centroid.

    The numeric quasi-identifiers are standardized (z-scores: the mean subtracted, divided by
    the standard deviation) and MDAV (Domingo-Ferrer & Torra 2005, section 3.1; Domingo-Ferrer
    & Mateo-Sanz 2002) groups the records on them, multivariate: every group holds k to
    ``2k - 1`` records (:func:`~anonlab.algorithms.microaggregation.grouping.mdav`). Each numeric
    value is released as its group's mean (``aggregate: mean``) or median (``aggregate:
    median``); each categorical quasi-identifier, with ``categorical: mode``, as the group's
    most frequent value (without it a non-numeric quasi-identifier is refused). A missing
    value counts as far from every value, so that rows missing it are grouped together; a
    group that mixes missing and present values releases ``*`` there.

    Beyond k-anonymity, a model that judges classes by their sensitive values (l-diversity,
    t-closeness, (alpha,k)) is met by merging every group it fails with its nearest group
    (centroids in standardized values), round after round, until every group passes or one
    is left; the verification then suppresses what still fails within the limit.

    Tables larger than ``block_size`` rows are first cut into blocks of at most that many
    rows by median cuts along each block's first principal component, and MDAV runs in each
    (partitioning before microaggregating, cf. Solé, Muntés-Mulero & Nin 2012): its cost
    falls from ``O(n^2 / k)`` to ``O(n * block_size / k)``.

    Parameters
    ----------
    k : int, optional
        The smallest group (default: the largest minimal class size of the job's models, at
        least 2).
    aggregate : {"mean", "median"}
        A numeric group's released value.
    categorical : {"mode"}, optional
        How a non-numeric quasi-identifier is released (None: it is refused).
    block_size : int, optional
        The largest block MDAV runs on (raised to ``4k``); None: plain MDAV on the whole
        table. Default 5000.

    References
    ----------
    .. [1] J. Domingo-Ferrer and J. M. Mateo-Sanz, "Practical data-oriented microaggregation
       for statistical disclosure control", IEEE TKDE 14(1) (2002), 189-201.
    .. [2] J. Domingo-Ferrer and V. Torra, "Ordinal, continuous and heterogeneous
       k-anonymity through microaggregation", Data Mining and Knowledge Discovery 11(2)
       (2005), 195-212, section 3.1 (MDAV).
    .. [3] A. Solé, V. Muntés-Mulero and J. Nin, "Efficient microaggregation techniques for
       large numerical data volumes", International Journal of Information Security 11(4)
       (2012), 253-267.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({
    ...     "age": ["30", "31", "35", "60", "62", "64"],
    ...     "sex": ["F", "F", "M", "M", "M", "F"]})
    >>> job = {"quasi_identifiers": {"age": {}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 3}}],
    ...        "algorithm": {"name": "microaggregation", "categorical": "mode"}}
    >>> result = anonlab.anonymize(t, job)
    >>> result.columns["age"].tolist(), result.columns["sex"].tolist()
    (['32', '32', '32', '62', '62', '62'], ['F', 'F', 'F', 'M', 'M', 'M'])
    >>> result.metric, round(result.loss, 4), result.checks
    ('gcp', 0.5662, {'k_anonymity': True})
    """

    name: ClassVar[str] = "microaggregation"
    family: ClassVar[str] = "MDAV: groups of k records released as their centroid"
    verifier: ClassVar[str] = "centroids"
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "k": Param(int, low=2, none=True),
        "aggregate": Param(str, choices=AGGREGATES),
        "categorical": Param(str, choices=("mode",), none=True),
        "block_size": Param(int, low=2, none=True),
    }
    #: The conformance suite's job: the categorical quasi-identifier ``sex`` by its mode.
    conformance_job: ClassVar[dict[str, Any]] = {
        "algorithm": {"name": "microaggregation", "categorical": "mode"}
    }

    def __init__(
        self,
        *,
        k: int | None = None,
        aggregate: str = "mean",
        categorical: str | None = None,
        block_size: int | None = 5000,
    ) -> None:
        self.k = k
        self.aggregate = aggregate
        self.categorical = categorical
        self.block_size = block_size

    # ------------------------------------------------------------------ checks
    def accepts_partitions(self) -> bool:
        """True: out of core, each block of the sorted table is microaggregated on its own
        (groups of different blocks whose centroids read the same are one released class;
        :mod:`anonlab.release.partitioned`)."""
        return True

    def _k(self, problem: Problem) -> int:
        if self.k is not None:
            return int(self.k)
        return max([2] + [m.min_class_size for m in problem.models])

    def _check_problem(self, problem: Problem) -> None:
        """Refuse models it cannot meet, a non-numeric attribute without a categorical rule
        and a k larger than the table."""
        for m in problem.models:
            if isinstance(m, RecordModel) or m.sample_based:
                raise ParameterError(
                    f"Algorithm 'microaggregation' meets models that judge each released "
                    f"class; model {m.name!r} is not one of them. Use 'optimal' for it, or "
                    "leave it out. Nothing was written."
                )
        numeric = self._numeric(problem)
        if not any(numeric.values()):
            raise ParameterError(
                "Algorithm 'microaggregation' groups records on their numeric quasi-"
                f"identifiers; none of {', '.join(map(repr, numeric))} is numeric. Nothing "
                "was written."
            )
        k = self._k(problem)
        if problem.n_rows < k:
            raise InputError(
                f"Algorithm 'microaggregation' makes groups of at least k = {k} rows; the "
                f"table has only {problem.n_rows}. Nothing was written."
            )

    def _numeric(self, problem: Problem) -> dict[str, bool]:
        """Whether each quasi-identifier is numeric; a non-numeric one without the
        categorical rule is refused, naming it."""
        out = {}
        for q in problem.quasi_identifiers:
            col = problem.table[q]
            out[q] = numeric_values(col) is not None
            if not out[q] and self.categorical is None:
                bad = next(v for v in col.categories.tolist() if v is not None)
                raise ParameterError(
                    f"Algorithm 'microaggregation' needs numbers in quasi-identifier {q!r}, "
                    f"which holds {str(bad)!r}; release it as each group's most frequent "
                    "value with 'categorical: mode', or leave it out. Nothing was written."
                )
        return out

    # ------------------------------------------------------------------ fit
    def _fit(self, problem: Problem, progress: Progress | None) -> None:
        t0 = time.perf_counter()
        numeric = self._numeric(problem)
        k = self._k(problem)
        points = _standardized(problem, numeric)
        stage(progress, "grouping records (MDAV)")
        group = mdav(points, k, self.block_size)
        formed = int(group.max()) + 1
        group, merged = _meet_models(problem, group, points, k)
        recoding = Centroids(
            group=group,
            aggregate=self.aggregate,
            categorical=tuple(q for q, num in numeric.items() if not num),
        )
        released = recoding.apply(problem)
        columns = [q for q, num in numeric.items() if num]
        sizes = np.bincount(group)
        n = problem.n_rows
        size = n if self.block_size is None else max(int(self.block_size), 4 * k)
        self.recoding_ = recoding
        self.search_ = MicroaggregationStats(
            elapsed_s=time.perf_counter() - t0,
            evaluated=formed,
            k=k,
            groups=int(sizes.size),
            smallest_group=int(sizes.min()),
            largest_group=int(sizes.max()),
            blocks=count_blocks(n, size),
            merged_groups=merged,
            sse_sst=sse_sst(problem.table, released, columns),
            il1s=il1s(problem.table, released, columns),
        )


def _standardized(problem: Problem, numeric: dict[str, bool]) -> FloatArray:
    """The points MDAV groups: each numeric quasi-identifier as z-scores (a missing value
    at 0), and per quasi-identifier with a missing value its indicator times
    :data:`NULL_WEIGHT`."""
    columns = []
    for q, num in numeric.items():
        col = problem.table[q]
        if num:
            numbers = numeric_values(col)
            assert numbers is not None
            x = numbers[col.codes]
            null = np.isnan(x)
            mean = float(np.nanmean(x)) if not null.all() else 0.0
            sd = float(np.nanstd(x)) if not null.all() else 0.0
            columns.append(np.where(null, 0.0, (x - mean) / (sd if sd > 0 else 1.0)))
        else:
            null = col.codes == (-1 if col.null_code is None else col.null_code)
        if null.any():
            columns.append(null * NULL_WEIGHT)
    return np.ascontiguousarray(np.stack(columns, axis=1))


def _meet_models(
    problem: Problem, group: IntArray, points: FloatArray, k: int
) -> tuple[IntArray, int]:
    """Merge every group that a model judging sensitive values fails with its nearest group,
    round after round, until every group passes or one is left; the groups and how many
    were merged."""
    from scipy.sparse import coo_matrix  # (here: importing scipy takes a second)
    from scipy.sparse.csgraph import connected_components
    from scipy.spatial import cKDTree

    models = [m for m in problem.models if m.sensitive_attributes]
    if not models:
        return group, 0
    sensitive = list(problem.sensitive)
    merged = 0
    while True:
        n_groups = int(group.max()) + 1
        if n_groups == 1:
            return group, merged
        labels = np.arange(n_groups).astype(str).astype(object)
        table = EncodedTable(
            (
                EncodedColumn("group", group.astype(np.int32), labels),
                *(problem.table[s] for s in sensitive),
            )
        )
        stats = get_engine("numpy", table).class_stats(
            ["group"], sensitive=sensitive, with_rows=True, with_keys=False
        )
        assert stats.row_class is not None
        ok = np.asarray(stats.sizes) >= k
        for m in problem.models:
            ok &= np.asarray(m.class_ok(stats), dtype=bool)
        failing_rows = ~ok[np.asarray(stats.row_class)]
        failing = np.unique(group[failing_rows])
        if not failing.size:
            return group, merged
        sizes = np.bincount(group, minlength=n_groups)
        centroids = np.stack(
            [
                np.bincount(group, weights=points[:, j], minlength=n_groups) / sizes
                for j in range(points.shape[1])
            ],
            axis=1,
        )
        _, near = cKDTree(centroids).query(centroids[failing], k=2)
        other = np.where(near[:, 0] == failing, near[:, 1], near[:, 0])
        graph = coo_matrix((np.ones(failing.size), (failing, other)), shape=(n_groups, n_groups))
        _, component = connected_components(graph, directed=False)
        group = component[group].astype(np.int64)
        merged += int(failing.size)
