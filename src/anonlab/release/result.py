"""The typed outcome of an anonymization: recoding, release, verification, loss, statistics."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._html import html_card, html_preview, number_text
from anonlab._optional import import_optional
from anonlab.data.table import LabelColumns
from anonlab.io.writers import arrow_table
from anonlab.release.problem import Problem
from anonlab.release.recoding import FullDomain, Recoding
from anonlab.release.verify import Release

__all__ = ["AnonymizationResult", "BlockSummary", "SearchStats", "row_positions", "stat"]


def stat(label: str, default: Any = dataclasses.MISSING) -> Any:
    """A field of a :class:`SearchStats` subclass, with the label a report prints for it.

    Examples
    --------
    >>> import dataclasses
    >>> @dataclasses.dataclass
    ... class MyStats(SearchStats):
    ...     restarts: int = stat("restarts run", 0)
    >>> MyStats(0.5, 3, restarts=2).rows()
    [('search time (s)', 0.5), ('candidates evaluated', 3), ('restarts run', 2)]
    """
    if default is dataclasses.MISSING:
        return field(metadata={"label": label})
    if isinstance(default, (dict, list)):
        return field(default_factory=lambda: type(default)(default), metadata={"label": label})
    return field(default=default, metadata={"label": label})


@dataclass
class SearchStats:
    """What a search did. Each algorithm extends it with typed fields of its own.

    Fields made with :func:`stat` carry a label; reports print every labelled field without
    knowing the algorithm.

    Attributes
    ----------
    elapsed_s : float
        Time of the search (seconds), without reading, verifying and writing.
    evaluated : int
        Candidate releases evaluated (lattice nodes, tables checked, ...).

    Examples
    --------
    >>> stats = SearchStats(elapsed_s=0.25, evaluated=12)
    >>> stats.rows()
    [('search time (s)', 0.25), ('candidates evaluated', 12)]
    >>> stats.to_dict()
    {'elapsed_s': 0.25, 'evaluated': 12}
    """

    elapsed_s: float = stat("search time (s)")
    evaluated: int = stat("candidates evaluated")

    def to_dict(self) -> dict[str, Any]:
        """The JSON form: every field.

        Examples
        --------
        >>> SearchStats(elapsed_s=0.5, evaluated=3).to_dict()
        {'elapsed_s': 0.5, 'evaluated': 3}
        """
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def rows(self) -> list[tuple[str, Any]]:
        """``(label, value)`` of every labelled field, in declaration order.

        Examples
        --------
        >>> SearchStats(elapsed_s=0.5, evaluated=3).rows()
        [('search time (s)', 0.5), ('candidates evaluated', 3)]
        """
        return [
            (f.metadata["label"], getattr(self, f.name))
            for f in dataclasses.fields(self)
            if "label" in f.metadata and getattr(self, f.name) is not None
        ]


def _plain(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class BlockSummary:
    """What a block run released: its blocks and the sums of their recodings' summaries.

    A row-placing algorithm run out of core anonymizes the table block by block
    (:mod:`anonlab.release.partitioned`); each block's recoding stays with its block (their
    rows are not in memory together), so the result holds this summary instead of a
    recoding.

    Attributes
    ----------
    algorithm : str
        The algorithm that made each block's recoding.
    kind : str
        The blocks' recoding type (``Levels``, ``Clusters``, ``CellCover``).
    blocks : int
        Blocks anonymized.
    block_rows : int
        The rows per block asked for.
    summaries : mapping
        The blocks' recoding summaries, counts summed
        (:func:`anonlab.release.partitioned.merge_summaries`).

    Examples
    --------
    >>> s = BlockSummary("wong_nh", "CellCover", 3, 1500, {"generalized_cells": {"age": 7}})
    >>> s.summary()["blocks"], s.summary()["generalized_cells"]
    (3, {'age': 7})
    """

    #: The ``recoding.kind`` of the JSON form of a block run's result.
    KIND: ClassVar[str] = "Partitioned"

    algorithm: str
    kind: str
    blocks: int
    block_rows: int
    summaries: Mapping[str, Any] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The blocks and the blocks' summaries with their counts summed (for reports)."""
        return {
            "partitioned": True,
            "blocks": self.blocks,
            "block_rows": self.block_rows,
            "block_recoding": self.kind,
            **self.summaries,
        }


@dataclass
class AnonymizationResult:
    """The outcome of :func:`anonlab.anonymize`.

    Attributes
    ----------
    algorithm : str
        The registered name of the algorithm.
    parameters : dict
        Its parameters, as validated.
    recoding : Recoding or None
        What the algorithm returned (levels, level vectors, ...); None for a block run,
        whose recodings stay with their blocks (see ``blocks``).
    release : Release
        The verified released table, its verification and its loss measured on it.
    search : SearchStats
        The algorithm's own figures (typed per algorithm).
    problem : Problem
        The problem the recoding answers.
    output : str, optional
        Where the table was written.
    blocks : BlockSummary, optional
        A block run's blocks and their recodings' summaries (out of core, row-placing
        algorithms); None otherwise.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "height"}
    >>> result = anonlab.anonymize(t, job)
    >>> result.algorithm, result.transformation, result.loss, result.checks
    ('optimal', {'zip': 1}, 1.0, {'k_anonymity': True})
    >>> result.columns["zip"].tolist()
    ['435*', '435*', '436*', '436*', '435*', '435*', '436*', '436*']
    """

    algorithm: str
    parameters: dict[str, Any]
    recoding: Recoding | None = field(repr=False)
    release: Release = field(repr=False)
    search: SearchStats
    problem: Problem = field(repr=False)
    output: str | None = None
    blocks: BlockSummary | None = None

    @cached_property
    def summary(self) -> dict[str, Any]:
        """What the recoding did, for reports (levels per attribute, or rows per level),
        made when first read (:meth:`Recoding.summary`; a block run's
        :meth:`BlockSummary.summary`)."""
        if self.recoding is None:
            return {} if self.blocks is None else self.blocks.summary()
        return self.recoding.summary(self.problem)

    @property
    def forms_classes(self) -> bool:
        """Whether the release is read as equivalence classes (a cell cover's is not; a
        block run's union is grouped again into classes)."""
        return self.recoding is None or self.recoding.forms_classes

    # --------------------------------------------------------------- shortcuts
    @property
    def transformation(self) -> dict[str, int]:
        """The level of each quasi-identifier of a full-domain release (else empty)."""
        if isinstance(self.recoding, FullDomain):
            return dict(self.recoding.levels)
        return {}

    @property
    def loss(self) -> float:
        """The job's metric measured on the released table."""
        return self.release.loss

    @property
    def metric(self) -> str:
        """The metric's name."""
        return self.release.metric

    @property
    def suppressed_rows(self) -> int:
        """Rows suppressed because their class fails a model."""
        return self.release.verification.suppressed_rows

    @property
    def checks(self) -> dict[str, bool]:
        """Per model, whether it holds on the release (always True)."""
        return self.release.verification.checks

    @property
    def columns(self) -> LabelColumns:
        """The released table: column name -> labels, decoded when first read."""
        return self.release.columns

    @property
    def elapsed_s(self) -> float:
        """Time of the search."""
        return self.search.elapsed_s

    @property
    def evaluated_nodes(self) -> int:
        """Candidate releases the search evaluated."""
        return self.search.evaluated

    def _repr_html_(self) -> str:
        """The result as tables (figures with their meaning, the first rows released), as
        Jupyter shows it.

        Examples
        --------
        >>> import anonlab
        >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
        >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
        ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "height"}
        >>> html = anonlab.anonymize(t, job)._repr_html_()
        >>> "every model holds (k_anonymity)" in html, "<td>435*</td>" in html
        (True, True)
        """
        verification = self.release.verification
        rows = self.columns.n_rows
        headline = (
            f"{rows:,} rows released; every model holds ({', '.join(self.checks)}), re-checked "
            f"on the release: its smallest class has {verification.k_after:,} records; "
            f"{self.suppressed_rows:,} rows suppressed; {self.metric} loss "
            f"{number_text(self.loss)}."
        )
        data = self.to_dict()
        data.pop("recoding")  # its levels are the transformation's
        data["loss"] = self.loss
        data["metric"] = self.metric
        return html_card(
            f"Anonymized by {self.algorithm}",
            data,
            headline=headline,
            skip=("k_meaning",) + (("parameters",) if not self.parameters else ()),
            meanings={
                "k_after": verification.k_meaning,
                "metric": "the measure of information loss the search minimised",
            },
            extra=html_preview(self.columns, rows),
        )

    # ------------------------------------------------------------------ frames
    def to_arrow(self) -> Any:
        """The released table as a pyarrow Table.

        The columns released as they are keep the type they were read with (numbers from a
        pandas or polars frame or a Parquet file stay numbers; an EncodedTable built from
        Python values holds text); the generalized ones are text (their labels, ``*`` where a
        suppressed row is masked).
        Out of core (``engine="duckdb"`` or ``"spark"``) the rows are in the output file and
        this holds what :attr:`columns` holds: the released distinct combinations.

        Returns
        -------
        pyarrow.Table

        Examples
        --------
        >>> import anonlab
        >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
        >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
        ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "height"}
        >>> anonlab.anonymize(t, job).to_arrow().column("zip").to_pylist()[:4]
        ['435*', '435*', '436*', '436*']
        """
        return arrow_table(self.columns)

    def to_pandas(self) -> Any:
        """The released table as a pandas DataFrame (needs ``pip install 'anonlab[pandas]'``).

        See :meth:`to_arrow` for the columns' types.

        Returns
        -------
        pandas.DataFrame

        Raises
        ------
        OptionalDependencyError
            pandas is not installed.

        Examples
        --------
        >>> import anonlab
        >>> t = anonlab.EncodedTable.from_columns({"sex": ["F", "M"] * 3, "visits": [1, 2, 3] * 2})
        >>> job = {"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 3}}]}
        >>> released = anonlab.anonymize(t, job).to_pandas()
        >>> released.shape, released["visits"].tolist()
        ((6, 2), ['1', '2', '3', '1', '2', '3'])
        """
        import_optional("pandas", feature="AnonymizationResult.to_pandas")
        return self.to_arrow().to_pandas()

    def to_polars(self) -> Any:
        """The released table as a polars DataFrame (needs ``pip install 'anonlab[polars]'``).

        See :meth:`to_arrow` for the columns' types.

        Returns
        -------
        polars.DataFrame

        Raises
        ------
        OptionalDependencyError
            polars is not installed.

        Examples
        --------
        >>> import anonlab
        >>> t = anonlab.EncodedTable.from_columns({"sex": ["F", "M"] * 3, "visits": [1, 2, 3] * 2})
        >>> job = {"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 3}}]}
        >>> released = anonlab.anonymize(t, job).to_polars()
        >>> released.shape, released["sex"].to_list()
        ((6, 2), ['F', 'M', 'F', 'M', 'F', 'M'])
        """
        polars = import_optional("polars", feature="AnonymizationResult.to_polars")
        return polars.from_arrow(self.to_arrow())

    @property
    def _kind(self) -> str:
        """The recoding's type name, as the JSON form gives it."""
        return BlockSummary.KIND if self.recoding is None else type(self.recoding).__name__

    def to_dict(self) -> dict[str, Any]:
        """The JSON form printed by ``anonlab anonymize --json``.

        Examples
        --------
        >>> import anonlab
        >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
        >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
        ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "height"}
        >>> d = anonlab.anonymize(t, job).to_dict()
        >>> d["transformation"], d["loss"]
        ({'zip': 1}, {'metric': 'height', 'value': 1.0, 'measured_on': 'release'})
        """
        out: dict[str, Any] = {
            "algorithm": self.algorithm,
            "parameters": _plain(self.parameters),
            "transformation": self.transformation,
            "recoding": {"kind": self._kind, **_plain(self.summary)},
            "loss": {"metric": self.metric, "value": self.loss, "measured_on": "release"},
            "suppressed_rows": self.suppressed_rows,
            "checks": self.checks,
            "verification": self.release.verification.to_dict(),
            "search": self.search.to_dict(),
            "elapsed_s": self.elapsed_s,
            "evaluated_nodes": self.evaluated_nodes,
        }
        if self.output is not None:
            out["output"] = self.output
        return out


def row_positions(rows: npt.NDArray[np.int64] | None) -> list[int] | None:
    """Row positions as a plain list (None stays None)."""
    return None if rows is None else [int(r) for r in rows]
