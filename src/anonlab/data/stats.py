"""Class statistics: the equivalence classes of chosen columns at chosen levels."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from anonlab._resources import format_bytes, memory_budget
from anonlab.data.grouping import ordered_groups
from anonlab.exceptions import InputError, ParameterError

__all__ = ["ClassStats", "SensitiveHistogram", "check_dense_counts", "count_population"]

#: Copies of the dense counts a model makes while judging them (floats, masks, products).
_DENSE_COPIES = 4
#: Dense counts up to this size (with the copies) are made without asking for memory.
_ALWAYS_FITS = 64 * 2**20


def check_dense_counts(n_classes: int, n_values: int) -> None:
    """Raise if dense counts of ``n_classes`` classes by ``n_values`` values would not fit.

    The ``(n_classes, n_values)`` int64 matrix, with the copies a model makes while judging
    it, is compared with :func:`anonlab._resources.memory_budget` (the environment variable
    ``ANONLAB_MEMORY_BUDGET`` overrides it).

    Parameters
    ----------
    n_classes, n_values : int
        The shape of the dense counts.

    Raises
    ------
    InputError
        Naming the classes, values and bytes, and the ways out.
    """
    need = int(n_classes) * int(n_values) * 8
    if need * _DENSE_COPIES <= _ALWAYS_FITS:
        return
    budget = memory_budget()
    if need * _DENSE_COPIES > budget:
        raise InputError(
            f"The counts of {n_classes:,} classes x {n_values:,} sensitive values need a dense "
            f"matrix of {format_bytes(need)} (about {format_bytes(need * _DENSE_COPIES)} "
            f"while a model judges it), more than the memory budget of "
            f"{format_bytes(budget)}. l-diversity, beta-likeness, delta-disclosure, "
            "(alpha,k)-anonymity and PrivacyFrost2 read the counts whole; t-closeness does "
            "not. Use fewer or coarser quasi-identifiers, generalize the sensitive attribute "
            "to fewer values, or raise the budget with the environment variable "
            "ANONLAB_MEMORY_BUDGET (e.g. 32G)."
        )


class SensitiveHistogram:
    """Counts of each sensitive value in each equivalence class.

    A histogram is held in one of two equivalent forms and gives the other on first use
    (then kept):

    * dense: ``counts[c, v]`` rows of class ``c`` with value ``values[v]``;
    * compressed sparse rows (CSR): the non-zero counts of class ``c`` are
      ``data[indptr[c]:indptr[c + 1]]``, of the values ``indices[indptr[c]:indptr[c + 1]]``
      (ascending).

    :meth:`from_triplets` (used by the engines and the lattice roll-up) makes the dense form
    when it costs at most a few times the non-zero counts, else the sparse one. Many classes
    and many values make the dense form large (MEPS: 26,580 classes by 9,701 incomes are
    2 GB); t-closeness reads the sparse form only, and reading :attr:`counts` raises
    :class:`~anonlab.exceptions.InputError` when the dense form would not fit the memory
    budget.

    Parameters
    ----------
    values : array_like of object
        The distinct sensitive values (a null as ``None``).
    counts : array_like of int, shape (n_classes, n_values), optional
        The dense form.
    indptr, indices, data : array_like of int, optional
        The sparse form instead of ``counts`` (all three): ``indptr`` has ``n_classes + 1``
        entries, ``indices`` and ``data`` one per non-zero count.

    Raises
    ------
    InputError
        If neither or both forms are given, or their shapes disagree.

    Examples
    --------
    >>> h = SensitiveHistogram(["flu", "hiv"], [[1, 1], [1, 0]])
    >>> h.n_values, h.counts.tolist(), h.class_totals().tolist(), h.value_totals().tolist()
    (2, [[1, 1], [1, 0]], [2, 1], [2, 1])
    """

    __slots__ = ("_counts", "_data", "_indices", "_indptr", "_rows", "n_classes", "values")

    def __init__(
        self,
        values: npt.ArrayLike,
        counts: npt.ArrayLike | None = None,
        *,
        indptr: npt.ArrayLike | None = None,
        indices: npt.ArrayLike | None = None,
        data: npt.ArrayLike | None = None,
    ) -> None:
        self.values: npt.NDArray[np.object_] = np.asarray(values, dtype=object).reshape(-1)
        self._counts: npt.NDArray[np.int64] | None = None
        self._indptr: npt.NDArray[np.int64] | None = None
        self._indices: npt.NDArray[np.int64] | None = None
        self._data: npt.NDArray[np.int64] | None = None
        self._rows: npt.NDArray[np.int64] | None = None
        sparse = (indptr, indices, data)
        nv = self.values.size
        if counts is not None and all(a is None for a in sparse):
            f = np.asarray(counts, dtype=np.int64)
            if f.ndim != 2:
                f = f.reshape(-1, nv)
            if f.shape[1] != nv:
                raise InputError(
                    f"A sensitive histogram of {nv} values got counts of shape {f.shape}."
                )
            self._counts = f
            self.n_classes: int = int(f.shape[0])
        elif counts is None and all(a is not None for a in sparse):
            self._indptr = np.asarray(indptr, dtype=np.int64).reshape(-1)
            self._indices = np.asarray(indices, dtype=np.int64).reshape(-1)
            self._data = np.asarray(data, dtype=np.int64).reshape(-1)
            nnz = int(self._indptr[-1]) if self._indptr.size else -1
            if nnz != self._indices.size or self._data.size != self._indices.size:
                raise InputError(
                    "A sparse sensitive histogram needs indptr (classes + 1 entries, the last "
                    "the number of non-zero counts) and indices and data of that length."
                )
            self.n_classes = int(self._indptr.size - 1)
        else:
            raise InputError(
                "A sensitive histogram takes either dense counts or indptr, indices and data."
            )

    @classmethod
    def from_triplets(
        cls,
        values: npt.ArrayLike,
        classes: npt.ArrayLike,
        codes: npt.ArrayLike,
        counts: npt.ArrayLike | None = None,
        *,
        n_classes: int,
    ) -> SensitiveHistogram:
        """The histogram of (class, value, count) triplets, equal pairs summed.

        The dense form when the classes times the values are at most four times the triplets
        (one counting pass), else the sparse form (the (class, value) keys grouped in order by
        :func:`~anonlab.data.grouping.ordered_groups`).

        Parameters
        ----------
        values : array_like of object
            The distinct values.
        classes, codes : array_like of int
            The class and the value (an index into ``values``) of each triplet.
        counts : array_like of int, optional
            The count of each triplet (default 1 each); integer-valued floats are accepted.
        n_classes : int
            The number of classes (``classes`` are below it).

        Returns
        -------
        SensitiveHistogram
        """
        vals = np.asarray(values, dtype=object).reshape(-1)
        nv = int(vals.size)
        g = int(n_classes)
        key = np.asarray(classes, dtype=np.int64) * nv
        key += np.asarray(codes, dtype=np.int64)
        n = int(key.size)
        w = None if counts is None else np.asarray(counts)
        space = g * nv
        if space <= max(4 * n, 1 << 16):
            dense = np.bincount(key, weights=w, minlength=space)
            return cls(vals, dense.astype(np.int64, copy=False).reshape(g, nv))
        pair, summed, ukeys = ordered_groups(key, space)
        if w is not None:
            summed = np.bincount(pair, weights=w, minlength=ukeys.size).astype(np.int64)
        nonzero = summed != 0
        if not nonzero.all():
            ukeys, summed = ukeys[nonzero], summed[nonzero]
        rows, idx = np.divmod(ukeys, nv)
        indptr = np.zeros(g + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=g), out=indptr[1:])
        out = cls(vals, indptr=indptr, indices=idx, data=summed)
        out._rows = rows
        return out

    # ------------------------------------------------------------------ the two forms
    @property
    def n_values(self) -> int:
        """The number of distinct values."""
        return int(self.values.size)

    @property
    def is_dense(self) -> bool:
        """Whether the dense form is held (made, or read through :attr:`counts`)."""
        return self._counts is not None

    @property
    def counts(self) -> npt.NDArray[np.int64]:
        """The dense counts, shape ``(n_classes, n_values)`` (made from the sparse form on
        first use and kept; do not modify).

        Raises
        ------
        InputError
            If the dense form, with the copies a model makes while judging it, would exceed
            the memory budget (see :func:`check_dense_counts`).
        """
        if self._counts is None:
            g, nv = self.n_classes, self.n_values
            check_dense_counts(g, nv)
            dense = np.zeros((g, nv), dtype=np.int64)
            dense[self.rows, self.indices] = self.data
            self._counts = dense
        return self._counts

    def _make_sparse(self) -> None:
        assert self._counts is not None
        flat = self._counts.reshape(-1)
        at = np.flatnonzero(flat)  # row-major: by class, then value
        self._data = flat[at]
        self._rows, self._indices = np.divmod(at, max(self.n_values, 1))
        self._indptr = np.zeros(self.n_classes + 1, dtype=np.int64)
        np.cumsum(np.bincount(self._rows, minlength=self.n_classes), out=self._indptr[1:])

    @property
    def indptr(self) -> npt.NDArray[np.int64]:
        """Sparse form: where each class's non-zero counts start (``n_classes + 1``)."""
        if self._indptr is None:
            self._make_sparse()
        assert self._indptr is not None
        return self._indptr

    @property
    def indices(self) -> npt.NDArray[np.int64]:
        """Sparse form: the value of each non-zero count (ascending within a class)."""
        if self._indices is None:
            self._make_sparse()
        assert self._indices is not None
        return self._indices

    @property
    def data(self) -> npt.NDArray[np.int64]:
        """Sparse form: the non-zero counts, class by class."""
        if self._data is None:
            self._make_sparse()
        assert self._data is not None
        return self._data

    @property
    def rows(self) -> npt.NDArray[np.int64]:
        """Sparse form: the class of each non-zero count (non-decreasing)."""
        if self._rows is None:
            ptr = self.indptr
            self._rows = np.repeat(np.arange(self.n_classes, dtype=np.int64), np.diff(ptr))
        return self._rows

    @property
    def nnz(self) -> int:
        """The number of non-zero counts."""
        return int(self.data.size)

    def permuted(self, order: npt.NDArray[np.integer]) -> SensitiveHistogram:
        """The same counts with the values taken in ``order`` (a permutation of the value
        indices), in the form this histogram holds.

        Parameters
        ----------
        order : ndarray of int
            ``order[i]`` is the value that comes ``i``-th.

        Returns
        -------
        SensitiveHistogram
        """
        if self._counts is not None:
            return SensitiveHistogram(self.values[order], self._counts[:, order])
        rank = np.empty(self.n_values, dtype=np.int64)
        rank[order] = np.arange(self.n_values, dtype=np.int64)
        return SensitiveHistogram.from_triplets(
            self.values[order], self.rows, rank[self.indices], self.data, n_classes=self.n_classes
        )

    def class_totals(self) -> npt.NDArray[np.int64]:
        """The rows of each class (the sums over the values)."""
        if self._counts is not None:
            # einsum rather than .sum(axis=1) on the short rows of a tall array
            # (benchmarks/README.md)
            out: npt.NDArray[np.int64] = np.einsum("ij->i", self._counts)
            return out
        cs = np.zeros(self.nnz + 1, dtype=np.int64)
        np.cumsum(self.data, out=cs[1:])
        out = cs[self.indptr[1:]] - cs[self.indptr[:-1]]
        return out

    def value_totals(self) -> npt.NDArray[np.int64]:
        """The rows with each value over all classes (the sums over the classes)."""
        if self._counts is not None:
            out: npt.NDArray[np.int64] = np.einsum("ij->j", self._counts)
            return out
        totals = np.bincount(self.indices, weights=self.data, minlength=self.n_values)
        return totals.astype(np.int64)  # exact: sums of counts, at most the rows

    def __repr__(self) -> str:
        form = "dense" if self._counts is not None else f"sparse, {self.nnz:,} non-zero"
        return f"SensitiveHistogram({self.n_classes:,} classes x {self.n_values:,} values, {form})"


@dataclass(frozen=True)
class ClassStats:
    """Equivalence classes of ``columns`` generalized to ``levels``.

    Parameters
    ----------
    columns : tuple of str
        The quasi-identifier columns grouped on.
    levels : tuple of int
        The hierarchy level of each column (0 = original values).
    sizes : ndarray of int64
        Size of each class.
    n_rows : int
        Number of rows of the table.
    keys : ndarray of int32, shape (n_classes, n_columns), optional
        Per class, the code of its value in each column's ``domains`` entry. The engines
        make it column-major (a column is one contiguous run); any layout is accepted.
    domains : tuple of ndarray, optional
        Per column, the labels of the codes in ``keys`` (a null as ``None``).
    row_class : ndarray, optional
        For each row (by position), its class index.
    sensitive : Mapping[str, SensitiveHistogram]
        Sensitive-value counts per class, per sensitive attribute.
    population_sizes : ndarray of int64, optional
        Per class, the records of the population table (the table is a sample of it) in the
        class: its rows with the same generalized key (:func:`count_population`). Only for
        the models that read a population table (k-map with a population table,
        delta-presence).
    population_rows : int, optional
        The population table's records, with ``population_sizes``: those in no class of the
        sample are ``population_rows - population_sizes.sum()``.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"],
    ...                                "disease": ["flu", "hiv", "flu"]})
    >>> stats = open_engine(t).class_stats(["zip"], sensitive=["disease"])
    >>> stats.n_classes, stats.sizes.tolist(), stats.min_size
    (2, [2, 1], 1)
    >>> stats.sensitive["disease"].counts.tolist()
    [[1, 1], [1, 0]]
    """

    columns: tuple[str, ...]
    levels: tuple[int, ...]
    sizes: npt.NDArray[np.int64]
    n_rows: int
    keys: npt.NDArray[np.int32] | None = None
    domains: tuple[npt.NDArray[np.object_], ...] | None = None
    row_class: npt.NDArray[np.integer] | None = None
    sensitive: Mapping[str, SensitiveHistogram] = field(default_factory=dict)
    population_sizes: npt.NDArray[np.int64] | None = None
    population_rows: int | None = None

    @property
    def n_classes(self) -> int:
        """Number of equivalence classes."""
        return int(self.sizes.size)

    @property
    def min_size(self) -> int:
        """Size of the smallest class: the k for which the table is k-anonymous (0 if empty)."""
        return int(self.sizes.min()) if self.sizes.size else 0

    def restricted(self, keep: npt.ArrayLike) -> ClassStats:
        """The statistics without the classes where ``keep`` is False.

        Sizes, keys, sensitive histograms and population sizes are filtered and ``n_rows`` is
        the number of rows left; domains and ``population_rows`` are unchanged. ``row_class`` (if present) maps the removed classes' rows
        to ``-1`` and the others to their class in the filtered statistics.

        Parameters
        ----------
        keep : array_like of bool, shape (n_classes,)

        Raises
        ------
        ParameterError
            If ``keep`` does not have one entry per class.
        """
        keep = np.asarray(keep, dtype=bool)
        if keep.shape != (self.n_classes,):
            raise ParameterError(
                f"The mask must have one entry per class ({self.n_classes}). "
                f"Got shape {keep.shape}."
            )
        row_class = None
        if self.row_class is not None:
            new_index = np.cumsum(keep, dtype=np.int64) - 1
            new_index[~keep] = -1
            row_class = new_index[np.asarray(self.row_class, dtype=np.int64)]
        sizes = self.sizes[keep]
        return ClassStats(
            columns=self.columns,
            levels=self.levels,
            sizes=sizes,
            n_rows=int(sizes.sum()),
            keys=None if self.keys is None else self.keys[keep],
            domains=self.domains,
            row_class=row_class,
            sensitive={
                name: SensitiveHistogram(h.values, np.asarray(h.counts)[keep])
                for name, h in self.sensitive.items()
            },
            population_sizes=(
                None if self.population_sizes is None else self.population_sizes[keep]
            ),
            population_rows=self.population_rows,
        )

    def key_labels(self) -> list[tuple[object, ...]]:
        """Return each class's key as a tuple of labels (requires ``keys``)."""
        if self.keys is None or self.domains is None:
            raise ValueError("These class statistics were computed without keys.")
        cols = [self.domains[j][self.keys[:, j]] for j in range(len(self.columns))]
        return list(zip(*cols)) if cols else [() for _ in range(self.n_classes)]

    def canonical(self) -> list[tuple[tuple[object, ...], int, dict[str, dict[object, int]]]]:
        """Return an engine-independent, sorted description of the classes.

        Each entry is (key labels, size, {sensitive attribute: {value: count>0}}). Two engines
        agree when their canonical forms are equal.
        """
        keys = self.key_labels()
        sparse = {
            name: (h.values, h.indptr, h.indices.tolist(), h.data.tolist())
            for name, h in self.sensitive.items()
        }
        out = []
        for i, key in enumerate(keys):
            sens = {
                name: {
                    values[v]: c for v, c in zip(idx[ptr[i] : ptr[i + 1]], cnt[ptr[i] : ptr[i + 1]])
                }
                for name, (values, ptr, idx, cnt) in sparse.items()
            }
            out.append((key, int(self.sizes[i]), sens))
        out.sort(key=lambda e: tuple("\x00" if x is None else str(x) for x in e[0]))
        return out


def count_population(
    sample: ClassStats, population: ClassStats, *, name: str, check: bool = True
) -> ClassStats:
    """``sample`` with the population table's records of each of its classes.

    Both are the classes of the same columns at the same levels (from any engine, with keys
    and domains); a sample class and a population class are the same class when their labels
    are equal in every column. The sample is part of the population, so no sample class may
    hold more records than the population's.

    Parameters
    ----------
    sample : ClassStats
        The classes of the sample (the table to release).
    population : ClassStats
        The classes of the population table.
    name : str
        The population table, as error messages name it.
    check : bool
        Refuse a sample class larger than the population's (default); without it, such a
        class gets the population's count (a written release's class of masked rows).

    Returns
    -------
    ClassStats
        ``sample`` with :attr:`ClassStats.population_sizes` and
        :attr:`ClassStats.population_rows`.

    Raises
    ------
    InputError
        If a sample class has more records than the population holds of it (a sample row
        absent from the population), naming the class.

    Examples
    --------
    >>> import numpy as np
    >>> sample = ClassStats(("zip",), (0,), np.array([2, 1]), 3, keys=np.array([[0], [1]]),
    ...                     domains=(np.array(["4350", "4351"], dtype=object),))
    >>> pop = ClassStats(("zip",), (0,), np.array([3, 5, 4]), 12,
    ...                  keys=np.array([[0], [1], [2]]),
    ...                  domains=(np.array(["4351", "4350", "4352"], dtype=object),))
    >>> with_pop = count_population(sample, pop, name="pop.csv")
    >>> with_pop.population_sizes.tolist(), with_pop.population_rows
    ([5, 3], 12)
    """
    if sample.keys is None or sample.domains is None:
        raise ParameterError("Counting a population needs the sample classes' keys.")
    if population.keys is None or population.domains is None:
        raise ParameterError("Counting a population needs the population classes' keys.")
    m = len(sample.columns)
    mapped = np.empty((sample.n_classes, m), np.int64)
    for j in range(m):  # a sample label -> its code in the population (-1: absent)
        where = {label: code for code, label in enumerate(population.domains[j].tolist())}
        to_pop = np.array([where.get(label, -1) for label in sample.domains[j].tolist()], np.int64)
        mapped[:, j] = to_pop[np.asarray(sample.keys[:, j])] if to_pop.size else -1
    both = np.concatenate([np.asarray(population.keys, dtype=np.int64), mapped])
    if both.size:
        _, ids = np.unique(both, axis=0, return_inverse=True)
        ids = np.asarray(ids).ravel()
    else:
        ids = np.zeros(both.shape[0], dtype=np.int64)
    per_id = np.zeros(int(ids.max()) + 1 if ids.size else 0, np.int64)
    per_id[ids[: population.n_classes]] = population.sizes
    big = per_id[ids[population.n_classes :]]
    absent = np.any(mapped < 0, axis=1)
    big[absent] = 0
    short = big < sample.sizes
    if check and short.any():
        i = int(np.argmax(short))
        key = ", ".join(
            f"{q}={sample.domains[j][sample.keys[i, j]]!r}" for j, q in enumerate(sample.columns)
        )
        raise InputError(
            f"The population table {name} has {int(big[i]):,} records of the class ({key}), "
            f"the sample {int(sample.sizes[i]):,}; the sample must be part of the population."
        )
    return dataclasses.replace(
        sample, population_sizes=big, population_rows=int(population.sizes.sum())
    )
