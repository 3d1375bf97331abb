"""The typed outcome of an anonymization: recoding, release, verification, loss, statistics."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab.data.table import LabelColumns
from anonlab.release.problem import Problem
from anonlab.release.recoding import FullDomain, Recoding
from anonlab.release.verify import Release

__all__ = ["AnonymizationResult", "SearchStats", "row_positions", "stat"]


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


@dataclass
class AnonymizationResult:
    """The outcome of :func:`anonlab.anonymize`.

    Attributes
    ----------
    algorithm : str
        The registered name of the algorithm.
    parameters : dict
        Its parameters, as validated.
    recoding : Recoding
        What the algorithm returned (levels, level vectors, ...).
    release : Release
        The verified released table, its verification and its loss measured on it.
    search : SearchStats
        The algorithm's own figures (typed per algorithm).
    problem : Problem
        The problem the recoding answers.
    output : str, optional
        Where the table was written.

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
    recoding: Recoding = field(repr=False)
    release: Release = field(repr=False)
    search: SearchStats
    problem: Problem = field(repr=False)
    output: str | None = None

    @cached_property
    def summary(self) -> dict[str, Any]:
        """What the recoding did, for reports (levels per attribute, or rows per level),
        made when first read (:meth:`Recoding.summary`)."""
        return self.recoding.summary(self.problem)

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
            "recoding": {"kind": type(self.recoding).__name__, **_plain(self.summary)},
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
