"""The engine interface: class statistics of a table, whatever holds the rows.

An engine answers one question, "what are the equivalence classes of these columns at these
hierarchy levels?", for data in memory (numpy), in files processed out of core (DuckDB) or on
a cluster (Spark). Diagnosis and algorithms only talk to this interface.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._validation import check_columns, check_int
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats
from anonlab.exceptions import HierarchyError

__all__ = ["Engine", "Levels"]

Levels = Mapping[str, int]


class Engine:
    """Base class of the engines.

    Subclasses implement :meth:`class_sizes`, :meth:`class_stats` and
    :meth:`rows_in_small_classes`; the base class validates columns and levels.

    Parameters
    ----------
    hierarchies : Mapping[str, Hierarchy], optional
        Hierarchies of the columns that may be generalized.
    """

    name: ClassVar[str] = "base"

    def __init__(self, hierarchies: Mapping[str, Hierarchy] | None = None) -> None:
        self.hierarchies: dict[str, Hierarchy] = dict(hierarchies or {})

    # ------------------------------------------------------------- to implement
    @property
    def n_rows(self) -> int:
        """Number of rows of the data."""
        raise NotImplementedError

    @property
    def columns(self) -> list[str]:
        """Column names of the data."""
        raise NotImplementedError

    def class_sizes(
        self, columns: Sequence[str], levels: Levels | None = None
    ) -> npt.NDArray[np.int64]:
        """Return the sizes of the equivalence classes of ``columns`` at ``levels``.

        Parameters
        ----------
        columns : sequence of str
            Columns to group on (the empty sequence gives one class of all rows).
        levels : Mapping[str, int], optional
            Hierarchy level per column; missing columns are at level 0.

        Returns
        -------
        ndarray of int64
            One size per class, in no particular order.
        """
        raise NotImplementedError

    def class_stats(
        self,
        columns: Sequence[str],
        levels: Levels | None = None,
        *,
        sensitive: Sequence[str] = (),
        with_rows: bool = False,
        with_keys: bool = True,
    ) -> ClassStats:
        """Return the full class statistics of ``columns`` at ``levels``.

        Parameters
        ----------
        columns : sequence of str
            Columns to group on.
        levels : Mapping[str, int], optional
            Hierarchy level per column.
        sensitive : sequence of str
            Sensitive attributes whose value counts per class are wanted.
        with_rows : bool
            Also return the class of every row (may be unsupported out of core).
        with_keys : bool
            Also return each class's key and the labels it codes (``keys``, ``domains``);
            without them (``None``) when only sizes, histograms and rows are wanted.

        Returns
        -------
        ClassStats
        """
        raise NotImplementedError

    def rows_in_small_classes(
        self, columns: Sequence[str], levels: Levels | None, k: int
    ) -> npt.NDArray[np.int64]:
        """Return the positions of the rows whose class has fewer than ``k`` rows, ascending."""
        raise NotImplementedError

    # ------------------------------------------------------------- shared
    def class_sizes_many(
        self,
        subsets: Iterable[Sequence[str]],
        levels: Levels | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> list[npt.NDArray[np.int64]]:
        """Return :meth:`class_sizes` for each subset (engines may batch this)."""
        out = []
        for subset in subsets:
            out.append(self.class_sizes(subset, levels))
            if progress is not None:
                progress(1)
        return out

    def validate(self, columns: Sequence[str], levels: Levels | None) -> tuple[int, ...]:
        """Check that ``columns`` exist and ``levels`` are valid; return the level tuple."""
        check_columns(list(columns), self.columns)
        levels = levels or {}
        check_columns(list(levels), self.columns, what="column in levels")
        out = []
        for col in columns:
            lv = levels.get(col, 0)
            if lv == 0:
                out.append(0)
                continue
            h = self.hierarchies.get(col)
            if h is None:
                raise HierarchyError(
                    f"Attribute {col!r} is asked at level {lv} but has no hierarchy."
                )
            out.append(check_int(lv, f"level of attribute {col!r}", low=0, high=h.height))
        return tuple(out)
