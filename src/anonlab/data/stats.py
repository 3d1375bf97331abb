"""Class statistics: the equivalence classes of chosen columns at chosen levels."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

__all__ = ["ClassStats", "SensitiveHistogram"]


@dataclass(frozen=True)
class SensitiveHistogram:
    """Counts of each sensitive value in each equivalence class.

    Parameters
    ----------
    values : ndarray of object
        The distinct sensitive values (a null as ``None``).
    counts : ndarray of int64, shape (n_classes, n_values)
        ``counts[c, v]`` rows of class ``c`` with value ``values[v]``.
    """

    values: npt.NDArray[np.object_]
    counts: npt.NDArray[np.int64]


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
    """

    columns: tuple[str, ...]
    levels: tuple[int, ...]
    sizes: npt.NDArray[np.int64]
    n_rows: int
    keys: npt.NDArray[np.int32] | None = None
    domains: tuple[npt.NDArray[np.object_], ...] | None = None
    row_class: npt.NDArray[np.integer] | None = None
    sensitive: Mapping[str, SensitiveHistogram] = field(default_factory=dict)

    @property
    def n_classes(self) -> int:
        """Number of equivalence classes."""
        return int(self.sizes.size)

    @property
    def min_size(self) -> int:
        """Size of the smallest class: the k for which the table is k-anonymous (0 if empty)."""
        return int(self.sizes.min()) if self.sizes.size else 0

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
        out = []
        for i, key in enumerate(keys):
            sens = {
                name: {h.values[v]: int(h.counts[i, v]) for v in np.flatnonzero(h.counts[i])}
                for name, h in self.sensitive.items()
            }
            out.append((key, int(self.sizes[i]), sens))
        out.sort(key=lambda e: tuple("\x00" if x is None else str(x) for x in e[0]))
        return out
