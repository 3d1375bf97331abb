"""Releases written by DuckDB: one ``COPY (SELECT ...)`` from the source to the output file.

Each quasi-identifier is mapped to its label through its hierarchy: the value cast to an
``ENUM`` of the hierarchy's values gives its position, which indexes a list of labels;
suppressed classes are found the same way, by their class number in a list of flags. A pure
projection, so the rows keep their order.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab._validation import check_columns
from anonlab.data.stats import ClassStats
from anonlab.engines.base import ReleasePlan
from anonlab.engines.duckdb_engine.dialect import copy_options, csv_scan, summary, text_of
from anonlab.engines.sql import literal, quoted
from anonlab.exceptions import DataFormatError, ParameterError

if TYPE_CHECKING:
    from anonlab.engines.duckdb_engine.engine import DuckDBEngine

__all__ = ["DuckDBRelease"]

#: The most suppressed classes a release looks up in a hash table held in a list (DuckDB
#: copies a constant list for every chunk of 2,048 rows, so its size costs per row); with
#: more, a hash join finds them, and the rows' order is not kept.
_BUCKETED = 1 << 16


class DuckDBRelease:
    """The release writer of a :class:`~anonlab.engines.duckdb_engine.DuckDBEngine`.

    Examples
    --------
    >>> from anonlab.engines.duckdb_engine import DuckDBEngine
    >>> from anonlab.datasets import load_adult
    >>> with DuckDBEngine(load_adult()) as engine:  # doctest: +SKIP
    ...     engine.write_release(plan, "release.csv", fmt="csv")
    """

    def __init__(self, engine: DuckDBEngine) -> None:
        self._engine = engine

    def write(
        self,
        plan: ReleasePlan,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        separator: str = ",",
    ) -> int:
        """Stream the release ``plan`` describes from the source into ``path`` with one
        ``COPY (SELECT ...)``; rows keep the source's order (see :meth:`Engine.write_release`).

        Each quasi-identifier's value is cast to an ENUM of its hierarchy's values; the
        position indexes the list of its labels at the plan's level and the list of its
        codes. The lists sit in a one-row table joined to every row (DuckDB copies a
        constant list of the query for every chunk of rows). A row is suppressed when its
        class number (the codes in mixed radix; each attribute's codes count only the
        labels that occur in a suppressed class, the others are one code) is in a hash
        table held in a list, or, when more than :data:`_BUCKETED` classes are suppressed,
        found by a hash join (the rows' order is then not kept).
        """
        check_columns(list(plan.columns), self._engine.columns)
        self._engine.validate(list(plan.quasi_identifiers), None)
        options = copy_options(fmt, separator)
        pa = import_optional("pyarrow")
        lists: dict[str, Any] = {}  # the one-row table's columns
        labels: dict[str, str] = {}  # quasi-identifier -> SQL of its released label
        codes: list[str] = []  # per quasi-identifier: SQL of its class code
        cards: list[int] = []
        # per quasi-identifier, the code of each label that occurs in a suppressed class
        compact = [
            {
                lab: i + 1
                for i, lab in enumerate(sorted({k[j] for k in plan.suppressed}, key=_nulls_last))
            }
            for j in range(len(plan.quasi_identifiers))
        ]
        for j, q in enumerate(plan.quasi_identifiers):
            label, code = self._mapping(plan, j, compact[j], lists)
            labels[q] = label
            codes.append(code)
            cards.append(len(compact[j]) + 1)
        flag = self._suppressed_flag(plan, compact, codes, cards, lists)
        select = []
        for c in plan.columns:
            if c in labels:
                expr = labels[c]
                if flag is not None and plan.mask_suppressed:
                    expr = f"CASE WHEN {flag} THEN '*' ELSE {expr} END"
                select.append(f"{expr} AS {quoted(c)}")
            else:
                select.append(f"{self._engine._copied(c, fmt)} AS {quoted(c)}")
        where = [f"{self._engine._text(c, 's.')} IS NOT NULL" for c in self._engine._drop_nulls]
        if flag is not None and not plan.mask_suppressed:
            where.append(f"NOT {flag}")
        view = f"release_lists_{next(self._engine._serial)}"
        if lists:  # a DuckDB table: joined from an Arrow view, each chunk copied the lists
            arrow = pa.table(
                {
                    k: pa.ListArray.from_arrays(pa.array([0, len(v)], pa.int32()), pa.array(v))
                    for k, v in lists.items()
                }
            )
            self._engine.con.register(f"{view}_arrow", arrow)
            self._engine._run(f"CREATE OR REPLACE TEMP TABLE {view} AS SELECT * FROM {view}_arrow")
            self._engine.con.unregister(f"{view}_arrow")
        query = (
            f"SELECT {', '.join(select) or '1 AS one'} FROM {self._engine._raw} AS s"
            + (f", {view} AS L" if lists else "")
            + (f" WHERE {' AND '.join(where)}" if where else "")
        )
        try:
            return self._engine._copy_release(query, path, options)
        finally:
            if lists:
                self._engine.con.execute(f"DROP TABLE IF EXISTS {view}")

    def _mapping(
        self,
        plan: ReleasePlan,
        j: int,
        compact: dict[str | None, int],
        lists: dict[str, Any],
    ) -> tuple[str, str]:
        """The SQL of quasi-identifier ``j``'s released label and code.

        Adds to ``lists`` the labels at the plan's level and the codes (``compact``: the
        code of each label that occurs in a suppressed class; every other label is 0), both
        by the position of a value in the ENUM of the hierarchy's values.
        """
        q = plan.quasi_identifiers[j]
        lv = plan.levels[j]
        h = plan.hierarchies[q]
        value = text_of(f"s.{quoted(q)}", self._engine._kinds.get(q, "VARCHAR"))
        kind = self._engine._enum_type(q, h)
        by_leaf = {r[0]: r[lv] for r in h.rows()}
        released = [by_leaf[v] for v in self._engine._enum_values(kind)]
        known = set(released)
        root = plan.root_label(j)
        for lab in compact:
            if lab is not None and lab not in known:
                raise ParameterError(
                    f"A suppressed class has the label {lab!r} in quasi-identifier {q!r}, "
                    f"which is not one of its labels at level {lv}."
                )
        position = f"enum_code(CAST({value} AS {kind})) + 1"
        null_code = compact.get(root, 0) if root is not None else compact.get(None, 0)
        lists[f"c{j}"] = [compact.get(lab, 0) for lab in released]
        code = f"coalesce(L.c{j}[{position}], {null_code})"
        if lv == 0:
            label = value
        else:
            lists[f"l{j}"] = released
            label = f"L.l{j}[{position}]"
            if root is not None:
                label = f"coalesce({label}, {literal(root)})"
        return label, code

    def _suppressed_flag(
        self,
        plan: ReleasePlan,
        compact: list[dict[str | None, int]],
        codes: list[str],
        cards: list[int],
        lists: dict[str, Any],
    ) -> str | None:
        """SQL that is true on the rows of a suppressed class (None: nothing suppressed)."""
        if not plan.suppressed:
            return None
        pa = import_optional("pyarrow")
        m = len(codes)
        name = f"suppressed_{next(self._engine._serial)}"
        keys = np.array(
            [[compact[j][lab] for j, lab in enumerate(key)] for key in plan.suppressed],
            dtype=np.int64,
        ).reshape(len(plan.suppressed), m)
        space = math.prod(cards)
        if space >= 2**62:  # pragma: no cover - billions of distinct suppressed labels
            raise ParameterError(
                f"The {len(plan.suppressed):,} suppressed classes have too many distinct "
                "labels to be looked up; allow less suppression or higher levels."
            )
        number = _number(codes, cards)
        numbers = np.unique(keys @ _strides(cards))
        if numbers.size > _BUCKETED:  # many: a hash join (the rows' order is not kept)
            self._engine._run(f"CREATE OR REPLACE TEMP TABLE {name} (n BIGINT)")
            self._engine.con.register(f"{name}_arrow", pa.table({"n": numbers}))
            self._engine._run(f"INSERT INTO {name} SELECT n FROM {name}_arrow")
            self._engine.con.unregister(f"{name}_arrow")
            return f"({number} IN (SELECT n FROM {name}))"
        # a hash table in a list: bucket b holds the suppressed numbers equal to b modulo B
        buckets = 1 << max(int(numbers.size).bit_length() - 2, 0)
        at = numbers % buckets
        order = np.argsort(at, kind="stable")
        offsets = np.zeros(buckets + 1, dtype=np.int64)
        np.cumsum(np.bincount(at, minlength=buckets), out=offsets[1:])
        lists["buckets"] = pa.ListArray.from_arrays(pa.array(offsets), pa.array(numbers[order]))
        return f"list_contains(L.buckets[({number}) % {buckets} + 1], {number})"

    def release_stats(
        self,
        path: str | os.PathLike[str],
        *,
        fmt: str,
        quasi_identifiers: Sequence[str],
        sensitive: Sequence[str] = (),
        separator: str = ",",
    ) -> ClassStats:
        """Group a written release again, read back from its file (see
        :meth:`Engine.release_stats`)."""
        if fmt == "parquet":
            scan = f"read_parquet({literal(str(path))})"
        elif fmt in ("csv", "csv.gz"):
            scan = csv_scan(path, fmt, separator)
        else:
            raise ParameterError(f"Unknown release format {fmt!r}.")
        cols = list(quasi_identifiers)
        wanted = cols + [c for c in sensitive if c not in cols]
        try:
            kinds = self._engine._kinds_of(scan)
        except self._engine._duckdb.Error as exc:
            raise DataFormatError(f"Cannot read the written release back: {summary(exc)}") from None
        casts = ", ".join(
            f"{text_of(quoted(c), kinds.get(c, 'VARCHAR'))} AS {quoted(c)}" for c in wanted
        )
        try:
            self._engine.con.execute(
                f"CREATE OR REPLACE TEMP VIEW released AS SELECT {casts} FROM {scan}"
            )
        except self._engine._duckdb.Error as exc:
            raise DataFormatError(f"Cannot read the written release back: {summary(exc)}") from None
        return self._engine._view_stats(
            cols,
            tuple(0 for _ in cols),
            list(sensitive),
            with_rows=False,
            with_keys=True,
            view="released",
        )


def _number(codes: Sequence[str], cards: Sequence[int]) -> str:
    """SQL of the codes as one number in mixed radix (the first the most significant)."""
    if not codes:
        return "0"
    expr = codes[0]
    for code, card in zip(codes[1:], cards[1:]):
        expr = f"({expr}) * {card} + {code}"
    return expr


def _strides(cards: Sequence[int]) -> npt.NDArray[np.int64]:
    """The place value of each digit of a mixed-radix number (the first the most significant)."""
    strides = np.ones(len(cards), dtype=np.int64)
    for j in range(len(cards) - 2, -1, -1):
        strides[j] = strides[j + 1] * cards[j + 1]
    return strides


def _nulls_last(label: str | None) -> tuple[bool, str]:
    """Sort key of labels, a null last."""
    return (label is None, "" if label is None else label)
