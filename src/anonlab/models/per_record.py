"""The per-record model interface: each record judged against a parameter of its own.

Most privacy models judge equivalence classes (:meth:`PrivacyModel.class_ok`). A per-record
model gives every record a value (its probability of privacy leakage, say) and every record
its own bound on that value (a personal limit, one per row, held by the
:class:`~anonlab.release.problem.Problem` as ``record_parameters[model.record_parameter]``).
The release layer and ``anonlab check`` judge such a model record by record on the table they
are given (:meth:`RecordModel.judge_records`); a class fails when one of its records does.
Searches that only see class statistics use :meth:`PrivacyModel.class_ok`, which a
per-record model implements as a bound that never accepts a class the per-record judgement
rejects.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from anonlab.data.table import EncodedColumn
from anonlab.models.base import PrivacyModel

__all__ = ["RecordModel", "RecordVerdict"]

#: Slack of a comparison of a record's value with its parameter: sums of fractions such as
#: 1/3 + 1/3 + 1/3 are not exact in floating point, and a user writes 0.1 for a tenth.
TOLERANCE = 1e-9


@dataclass(frozen=True)
class RecordVerdict:
    """A per-record model's judgement of a table.

    Attributes
    ----------
    values : ndarray of float
        The model's measure of each record (row order of the table judged).
    parameters : ndarray of float
        Each record's own bound.
    ok : ndarray of bool
        Per record, whether its value is within its bound.
    class_ok : ndarray of bool
        Per class of the table, whether every record in it is within its bound.
    """

    values: npt.NDArray[np.float64]
    parameters: npt.NDArray[np.float64]
    ok: npt.NDArray[np.bool_]
    class_ok: npt.NDArray[np.bool_]

    @property
    def violating(self) -> npt.NDArray[np.int64]:
        """Row positions of the records over their bound."""
        return np.flatnonzero(~self.ok).astype(np.int64)

    def report(self, measure: str) -> dict[str, Any]:
        """What ``anonlab check`` prints: the violating rows, the highest and the average
        value (``highest_<measure>``, ``average_<measure>``)."""
        n = int(self.values.size)
        return {
            "violating_records": self.violating.tolist(),
            f"highest_{measure}": float(self.values.max()) if n else 0.0,
            f"average_{measure}": float(self.values.mean()) if n else 0.0,
        }


class RecordModel(PrivacyModel):
    """A privacy model with a bound per record (see the module docstring).

    Attributes
    ----------
    record_parameter : str
        The key of the per-record bounds in ``Problem.record_parameters``.
    measure : str
        The name of the per-record value in reports (``"pleak"``).
    attribute : str
        The sensitive attribute the model reads.
    """

    record_parameter: ClassVar[str] = ""
    measure: ClassVar[str] = "value"
    attribute: str

    @abstractmethod
    def record_values(
        self,
        row_class: npt.NDArray[np.integer],
        original: EncodedColumn,
        released: EncodedColumn,
    ) -> npt.NDArray[np.float64]:
        """The model's measure of each record of a release.

        Parameters
        ----------
        row_class : ndarray of int
            The class of each row (rows with equal released quasi-identifiers).
        original : EncodedColumn
            The sensitive attribute as it was, one value per row.
        released : EncodedColumn
            The sensitive attribute as released (possibly generalized), row-aligned.
        """

    @abstractmethod
    def bind(self, *, column: str | None, default: float | None) -> Self:
        """The model reading its bounds from ``column`` of the table (a missing cell taking
        ``default``), or ``default`` for every record: what a search that sees only class
        statistics judges with."""

    def validate(self, column: EncodedColumn) -> None:
        """Raise :class:`~anonlab.exceptions.InputError` if the model cannot judge a table
        with this sensitive column (a value it does not know, say). The default accepts."""
        del column

    def judge_records(
        self,
        row_class: npt.NDArray[np.integer],
        original: EncodedColumn,
        released: EncodedColumn,
        parameters: npt.ArrayLike,
    ) -> RecordVerdict:
        """Judge every record of a release against its own bound.

        Parameters
        ----------
        row_class : ndarray of int
            The class of each row.
        original, released : EncodedColumn
            The sensitive attribute before and after the release (row-aligned).
        parameters : array_like of float
            Each row's bound.

        Returns
        -------
        RecordVerdict
        """
        classes = np.asarray(row_class, dtype=np.int64)
        bounds = np.asarray(parameters, dtype=np.float64)
        values = self.record_values(classes, original, released)
        ok = values <= bounds + TOLERANCE
        n_classes = int(classes.max()) + 1 if classes.size else 0
        failing = np.bincount(classes, weights=(~ok).astype(np.float64), minlength=n_classes)
        return RecordVerdict(values, bounds, ok, failing == 0)
