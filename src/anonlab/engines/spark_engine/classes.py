"""Classes numbered as the numpy engine numbers them, from the groups Spark brings back.

The lexicographic order of the classes' codes, the columns taken in table order; a column's
codes follow the natural order of its values at level 0, the hierarchy's label order above.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab.data.labels import factorize
from anonlab.data.stats import ClassStats, SensitiveHistogram

if TYPE_CHECKING:
    from anonlab.engines.spark_engine.engine import SparkEngine

__all__ = ["SparkClasses", "grouped"]


class SparkClasses:
    """The class statistics queries of a :class:`~anonlab.engines.spark_engine.SparkEngine`:
    many subsets in one job, the classes numbered, rows joined back to their classes.

    Examples
    --------
    >>> from anonlab.engines.spark_engine import SparkEngine
    >>> with SparkEngine("people.parquet") as engine:  # doctest: +SKIP
    ...     stats = engine.class_stats(["age", "sex"], with_rows=True)
    """

    def __init__(self, engine: SparkEngine) -> None:
        self._engine = engine

    def grouping_sets(self, keys: Sequence[tuple[tuple[str, int], ...]]) -> None:
        """Compute and remember the class sizes of several (column, level) keys in one job."""
        union = sorted({cl for key in keys for cl in key}, key=lambda cl: (cl[0], cl[1]))
        if len(keys) == 1 or len(union) > 60:
            for key in keys:
                self._engine.class_sizes([c for c, _ in key], dict(key))
            return
        # the same column at two levels is two columns of the union (g_j per (column, level))
        index = {cl: j for j, cl in enumerate(union)}
        base = self._engine._base_pairs(union)
        view = f"anonlab_sets_{id(self._engine)}"
        base.createOrReplaceTempView(view)
        sets = ", ".join("(" + ", ".join(f"g{index[cl]}" for cl in key) + ")" for key in keys)
        bits = ", ".join(f"grouping(g{j}) AS b{j}" for j in range(len(union)))
        try:
            res = self._engine._collect(
                self._engine.spark.sql(
                    f"SELECT {bits}, count(*) AS n FROM {view} GROUP BY GROUPING SETS ({sets})"
                )
            )
        finally:
            self._engine.spark.catalog.dropTempView(view)
        n = np.asarray(res.column("n").to_numpy(), dtype=np.int64)
        code = np.zeros(n.size, dtype=np.int64)
        for j in range(len(union)):  # which columns were grouped on (grouping() = 0)
            code |= (1 - np.asarray(res.column(f"b{j}").to_numpy(), dtype=np.int64)) << j
        for key in keys:
            want = sum(1 << index[cl] for cl in key)
            self._engine._sizes[key] = n[code == want]

    def class_stats(
        self,
        cols: list[str],
        lv: tuple[int, ...],
        sensitive: list[str],
        with_rows: bool,
        with_keys: bool,
    ) -> ClassStats:
        """Return class statistics (see :class:`Engine`), numbered as the numpy engine does.

        One ``groupBy`` of the classes with the first sensitive attribute (its histogram and
        the class sizes), one per further sensitive attribute; ``with_rows`` joins the
        classes back to the rows and brings each row's class to the driver.
        """
        base = self._engine._base(cols, lv, list(sensitive))
        stats, class_keys, domains, by_table = grouped(
            self._engine._collect,
            self._engine._pa,
            base,
            cols,
            lv,
            list(sensitive),
            with_keys=with_keys,
            table_order=self._engine._names,
        )
        if self._engine._n_rows is None:  # every row is in a class
            self._engine._n_rows = stats.n_rows
        if with_rows:
            stats = dataclasses.replace(
                stats, row_class=self.row_classes(cols, lv, class_keys, domains, by_table)
            )
        return stats

    def row_classes(
        self,
        cols: Sequence[str],
        lv: tuple[int, ...],
        class_keys: npt.NDArray[np.int64],
        domains: Sequence[npt.NDArray[np.object_]],
        by_table: Sequence[int],
    ) -> npt.NDArray[np.int64]:
        """The class of every row, by position: the classes joined back to the rows."""
        F = self._engine._F
        pa = self._engine._pa
        n_cls = class_keys.shape[0]
        base = self._engine._base(cols, lv, mid=True)
        if not cols:
            joined = base.select("mid", F.lit(0).cast("long").alias("cid"))
        else:
            arrays = {
                f"k{j}": pa.array(domains[t][class_keys[:, t]].tolist(), type=pa.string())
                for t, j in enumerate(by_table)
            }
            arrays["cid"] = pa.array(np.arange(n_cls, dtype=np.int64))
            classes = self._engine._frame(pa.table(arrays))
            on = None
            for j in range(len(cols)):
                cond = F.col(f"g{j}").eqNullSafe(F.col(f"k{j}"))
                on = cond if on is None else on & cond
            joined = base.join(classes, on, "inner").select("mid", "cid")
        res = self._engine._collect(joined)
        at = self._engine._positions(res.column("mid"))
        out = np.empty(self._engine.n_rows, dtype=np.int64)
        out[at] = np.asarray(res.column("cid").to_numpy(), dtype=np.int64)
        return out

    def rows_in_small_classes(
        self, cols: list[str], lv: tuple[int, ...], k: int
    ) -> npt.NDArray[np.int64]:
        """Return row positions in classes smaller than ``k``: the small classes (one
        ``groupBy``) joined back to the rows."""
        F = self._engine._F
        if not cols:
            n = self._engine.n_rows
            return np.arange(n if n < int(k) else 0, dtype=np.int64)
        groups = [f"g{j}" for j in range(len(cols))]
        base = self._engine._base(cols, lv, mid=True)
        small = (
            base.groupBy(*groups)
            .count()
            .where(F.col("count") < int(k))
            .select(*[F.col(g).alias(f"s{j}") for j, g in enumerate(groups)])
        )
        on = None
        for j in range(len(cols)):
            cond = F.col(f"g{j}").eqNullSafe(F.col(f"s{j}"))
            on = cond if on is None else on & cond
        res = self._engine._collect(base.join(small, on, "left_semi").select("mid"))
        return np.sort(self._engine._positions(res.column("mid")))


def grouped(
    collect: Callable[[Any], Any],
    pa: Any,
    base: Any,
    cols: Sequence[str],
    lv: tuple[int, ...],
    sensitive: Sequence[str],
    *,
    with_keys: bool,
    table_order: Sequence[str],
    n_rows: int | None = None,
) -> tuple[ClassStats, npt.NDArray[np.int64], list[npt.NDArray[np.object_]], list[int]]:
    """Class statistics of ``base`` (columns ``g0..``, ``x0..``) without rows, with the
    sorted class keys (columns in table order), their domains and that column order
    (``collect`` brings a DataFrame's rows to the driver as Arrow, ``pa`` is pyarrow)."""
    m = len(cols)
    groups = [f"g{j}" for j in range(m)]
    first = collect(base.groupBy(*groups, *(["x0"] if sensitive else [])).count())
    # codes of each column's labels: natural order at level 0, the hierarchy's above
    domains = [label_domain(first.column(g), natural=lv[j] == 0) for j, g in enumerate(groups)]
    order = {c: i for i, c in enumerate(table_order)}
    by_table = sorted(range(m), key=lambda j: order[cols[j]])  # class numbering order
    radix = [domains[j].size for j in by_table]

    def codes_of(table: Any) -> npt.NDArray[np.int64]:
        out = np.empty((table.num_rows, m), dtype=np.int64)
        for j in range(m):
            out[:, j] = encode_labels(pa, table.column(f"g{j}"), domains[j])
        return out

    class_keys, first_cid = _classes(codes_of(first)[:, by_table], radix)
    n_cls = class_keys.shape[0]
    counts = np.asarray(first.column("count").to_numpy(), dtype=np.int64)
    sizes = np.bincount(first_cid, weights=counts, minlength=n_cls).astype(np.int64)
    total = int(sizes.sum()) if n_rows is None else n_rows
    if not m and total == 0:
        sizes = np.zeros(0, dtype=np.int64)
    keys: npt.NDArray[np.int32] | None = None
    doms: tuple[npt.NDArray[np.object_], ...] | None = None
    if with_keys:  # column-major (n_cls, m), as the numpy engine's
        back = np.empty(m, dtype=np.int64)
        back[by_table] = np.arange(m)
        keys = np.ascontiguousarray(class_keys[:, back].T, dtype=np.int32).T
        doms = tuple(domains)
    hists = {}
    for i, s in enumerate(sensitive):
        if i == 0:
            table, cid = first, first_cid
        else:
            table = collect(base.groupBy(*groups, f"x{i}").count().withColumnRenamed(f"x{i}", "x0"))
            cid = _lookup(class_keys, codes_of(table)[:, by_table], radix)
        values = label_domain(table.column("x0"), natural=True)
        hists[s] = SensitiveHistogram.from_triplets(
            values,
            cid,
            encode_labels(pa, table.column("x0"), values),
            np.asarray(table.column("count").to_numpy(), dtype=np.int64),
            n_classes=n_cls,
        )
    stats = ClassStats(
        columns=tuple(cols),
        levels=lv,
        sizes=sizes,
        n_rows=total,
        keys=keys,
        domains=doms,
        row_class=None,
        sensitive=hists,
    )
    return stats, class_keys, [domains[j] for j in by_table], by_table


def label_domain(column: Any, *, natural: bool) -> npt.NDArray[np.object_]:
    """The distinct labels of a fetched Arrow column in code order, a null last: the natural
    order of :func:`~anonlab.data.labels.factorize` (level 0), else code-point order (the
    labels of a hierarchy level)."""
    values = np.asarray(column.unique().to_pylist(), dtype=object)
    if natural:
        return factorize(values)[1]
    null = np.asarray(values == None, dtype=bool)  # noqa: E711 - elementwise
    present = np.array(sorted(values[~null].tolist()), dtype=object)
    return np.append(present, np.array([None], dtype=object)) if null.any() else present


def encode_labels(pa: Any, column: Any, domain: npt.NDArray[np.object_]) -> npt.NDArray[np.int64]:
    """The index in ``domain`` (distinct labels, a null last if any) of each value of a
    fetched Arrow column."""
    pc = import_optional("pyarrow.compute")
    has_null = domain.size > 0 and domain[-1] is None
    present = domain[:-1] if has_null else domain
    idx = pc.index_in(column, value_set=pa.array(present.tolist(), type=pa.string()))
    filled = pc.fill_null(idx, domain.size - 1) if has_null else idx
    return np.asarray(filled.to_numpy(), dtype=np.int64)


def _classes(
    codes: npt.NDArray[np.int64], radix: Sequence[int]
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """The distinct rows of ``codes`` in lexicographic order, and each row's index there."""
    if codes.shape[1] == 0:
        return np.zeros((1 if codes.shape[0] else 0, 0), dtype=np.int64), np.zeros(
            codes.shape[0], dtype=np.int64
        )
    packed = _pack(codes, radix)
    if packed is not None:
        uniq, first, inv = np.unique(packed, return_index=True, return_inverse=True)
        return codes[first], inv.reshape(-1).astype(np.int64)
    uniq_rows, inv = np.unique(codes, axis=0, return_inverse=True)
    return uniq_rows, inv.reshape(-1).astype(np.int64)


def _lookup(
    class_keys: npt.NDArray[np.int64], codes: npt.NDArray[np.int64], radix: Sequence[int]
) -> npt.NDArray[np.int64]:
    """The index in ``class_keys`` (sorted distinct rows) of each row of ``codes``."""
    if class_keys.shape[1] == 0:
        return np.zeros(codes.shape[0], dtype=np.int64)
    keys, packed = _pack(class_keys, radix), _pack(codes, radix)
    if keys is not None and packed is not None:
        return np.searchsorted(keys, packed).astype(np.int64)
    both = np.concatenate([class_keys, codes])
    _, inv = np.unique(both, axis=0, return_inverse=True)
    inv = inv.reshape(-1)
    where = np.empty(int(inv.max()) + 1, dtype=np.int64)
    where[inv[: class_keys.shape[0]]] = np.arange(class_keys.shape[0])
    return where[inv[class_keys.shape[0] :]]


def _pack(codes: npt.NDArray[np.int64], radix: Sequence[int]) -> npt.NDArray[np.int64] | None:
    """Rows of codes as one mixed-radix int64 each (lexicographic order kept), if it fits."""
    if float(np.prod([max(r, 1) for r in radix], dtype=np.float64)) >= 2.0**62:
        return None
    out = np.zeros(codes.shape[0], dtype=np.int64)
    for j, r in enumerate(radix):
        out = out * max(r, 1) + codes[:, j]
    return out
