"""The anonymization problem: what the user asked for, independent of any algorithm."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._validation import check_columns
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.table import EncodedTable
from anonlab.exceptions import InputError, ParameterError
from anonlab.metrics.base import Metric
from anonlab.models.base import PrivacyModel

__all__ = ["Problem"]


@dataclass(frozen=True)
class Problem:
    """A table, its quasi-identifiers and hierarchies, the privacy models and the metric.

    Every anonymization family reads its input from a Problem and returns a
    :class:`~anonlab.release.recoding.Recoding`; :func:`~anonlab.release.verify.verify`
    then applies and re-checks it. A Problem knows nothing of lattices, searches or job
    files. It validates itself when built: every name it holds exists, every hierarchy
    covers its column, the level bounds fit the hierarchies, and no model asks for classes
    larger than the table.

    Parameters
    ----------
    table : EncodedTable
        The data, one row per person; or a frequency set (a table with row weights,
        :attr:`EncodedTable.weights`: each row stands for that many people), which the
        full-domain searches accept (``Anonymizer.accepts_frequency_set``) and the other
        families refuse.
    quasi_identifiers : sequence of str
        The quasi-identifier columns (kept in table order).
    hierarchies : Mapping[str, Hierarchy]
        A hierarchy for every quasi-identifier.
    models : sequence of PrivacyModel
        All must hold on the release.
    metric : Metric
        The information loss to minimise.
    max_suppressed : int
        The most records (rows, each counted by its weight) that may be suppressed.
    level_bounds : Mapping[str, tuple[int, int]], optional
        Per quasi-identifier, the lowest and highest level a release may use (default: 0 and
        the hierarchy's height).
    weights : Mapping[str, float], optional
        Attribute weights of the metric.
    priorities : Mapping[str, int], optional
        Attribute priorities (PrivacyFrost2; higher keeps finer; default 1).
    record_parameters : Mapping[str, ndarray], optional
        Per-record parameters (one value per row), e.g. a personal leakage limit.
    identifiers : sequence of str, optional
        Columns that are never released.
    engine : str
        The engine that computes class statistics (``"numpy"``).

    Raises
    ------
    InputError
        A name that is not a column, a hierarchy that does not cover its column, level
        bounds outside the hierarchy, a model that needs more rows than the table has.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.data.builders import flat_hierarchy, masking_hierarchy
    >>> from anonlab.metrics.arx import Height
    >>> from anonlab.models import KAnonymity
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4351", "4360"], "sex": ["F", "M", "F"]})
    >>> p = Problem(t, ("zip", "sex"),
    ...             {"zip": masking_hierarchy(t["zip"].categories), "sex": flat_hierarchy(["F", "M"])},
    ...             (KAnonymity(2),), Height(), max_suppressed=1)
    >>> p.n_rows, p.heights, p.max_levels
    (3, (4, 1), (4, 1))
    """

    table: EncodedTable
    quasi_identifiers: tuple[str, ...]
    hierarchies: Mapping[str, Hierarchy]
    models: tuple[PrivacyModel, ...]
    metric: Metric
    max_suppressed: int = 0
    level_bounds: Mapping[str, tuple[int, int]] = field(default_factory=dict)
    weights: Mapping[str, float] = field(default_factory=dict)
    priorities: Mapping[str, int] = field(default_factory=dict)
    record_parameters: Mapping[str, npt.NDArray[Any]] = field(default_factory=dict)
    identifiers: tuple[str, ...] = ()
    engine: str = "numpy"

    def __post_init__(self) -> None:
        table = self.table
        if table.n_rows == 0:
            raise InputError("The table is empty: it has no rows to anonymize.")
        order = {c: i for i, c in enumerate(table.names)}
        table.require(list(self.quasi_identifiers), what="quasi-identifier")
        qis = tuple(sorted(self.quasi_identifiers, key=lambda q: order[q]))
        object.__setattr__(self, "quasi_identifiers", qis)
        object.__setattr__(self, "models", tuple(self.models))
        object.__setattr__(self, "identifiers", tuple(self.identifiers))
        if not qis:
            raise ParameterError("The problem needs at least one quasi-identifier.")
        check_columns(list(self.identifiers), list(table.order), what="identifier")
        overlap = set(self.identifiers) & set(qis)
        if overlap:
            raise ParameterError(
                f"Column {sorted(overlap)[0]!r} is both an identifier and a quasi-identifier."
            )
        missing = [q for q in qis if q not in self.hierarchies]
        if missing:
            raise ParameterError(f"Quasi-identifier {missing[0]!r} has no hierarchy.")
        for q in qis:  # covers every value (a row of the file is named if the rows are)
            col = table.column(q)
            rows = col.codes if table.weights is None else None
            self.hierarchies[q].check_covers(col.categories, rows)
        for m in self.models:
            table.require(list(m.sensitive_attributes), what=f"attribute of model {m.name!r}")
            both = set(m.sensitive_attributes) & set(qis)
            if both:
                raise ParameterError(
                    f"Column {sorted(both)[0]!r} is both a quasi-identifier and the sensitive "
                    f"attribute of model {m.name!r}; a column has one role."
                )
            if m.min_class_size > table.n_records:
                raise ParameterError(
                    f"Model {m.name!r} needs classes of at least {m.min_class_size} rows, but "
                    f"the table has only {table.n_records} rows. Nothing was written."
                )
        if isinstance(self.max_suppressed, bool) or not 0 <= int(self.max_suppressed):
            raise ParameterError(
                f"The suppression limit must be a number of rows >= 0. Got {self.max_suppressed!r}."
            )
        object.__setattr__(self, "max_suppressed", min(int(self.max_suppressed), table.n_records))
        bounds: dict[str, tuple[int, int]] = {}
        for q in qis:
            h = self.hierarchies[q].height
            lo, hi = self.level_bounds.get(q, (0, h))
            if not 0 <= lo <= hi <= h:
                raise ParameterError(
                    f"Levels of quasi-identifier {q!r} must satisfy 0 <= min_level <= "
                    f"max_level <= {h} (its hierarchy's height). Got min_level={lo}, "
                    f"max_level={hi}."
                )
            bounds[q] = (int(lo), int(hi))
        object.__setattr__(self, "level_bounds", bounds)
        for name, values in self.record_parameters.items():
            if np.asarray(values).shape[:1] != (table.n_rows,):
                raise ParameterError(
                    f"The per-record parameter {name!r} must have one value per row "
                    f"({table.n_rows}); it has {np.asarray(values).shape[0]}."
                )

    # ----------------------------------------------------------------- derived
    @property
    def n_rows(self) -> int:
        """Rows of the table (of a frequency set: its distinct combinations)."""
        return self.table.n_rows

    @property
    def n_records(self) -> int:
        """Records the table stands for: its rows, each counted by its weight (N of the
        metrics, the base of the suppression limit)."""
        return self.table.n_records

    @property
    def weighted(self) -> bool:
        """Whether the table is a frequency set (rows with a multiplicity)."""
        return self.table.weighted

    @property
    def sensitive(self) -> tuple[str, ...]:
        """The sensitive attributes the models read, sorted."""
        return tuple(sorted({a for m in self.models for a in m.sensitive_attributes}))

    @property
    def sort_order(self) -> tuple[str, ...]:
        """The quasi-identifiers in the order the table is sorted on by the algorithms that
        scan sorted records and by the out-of-core blocks: ascending cardinality (a column's
        labels, a null counting as one; ties in :attr:`quasi_identifiers` order), as Murakami
        & Uno sort before cutting partitions (paper 003, section 3.2.3). A block's columns
        carry the whole table's labels, so a block and the whole table sort alike: each
        block is a run of the whole table's order.

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> from anonlab.data.builders import flat_hierarchy
        >>> from anonlab.metrics.arx import Height
        >>> from anonlab.models import KAnonymity
        >>> t = EncodedTable.from_columns({"age": ["31", "42", "53"], "sex": ["F", "M", "F"]})
        >>> h = {"age": flat_hierarchy(["31", "42", "53"]), "sex": flat_hierarchy(["F", "M"])}
        >>> Problem(t, ("age", "sex"), h, (KAnonymity(2),), Height()).sort_order
        ('sex', 'age')
        """
        cards = {q: self.table[q].cardinality for q in self.quasi_identifiers}
        return tuple(sorted(self.quasi_identifiers, key=cards.__getitem__))

    @property
    def min_levels(self) -> tuple[int, ...]:
        """The lowest level of each quasi-identifier (in :attr:`quasi_identifiers` order)."""
        return tuple(self.level_bounds[q][0] for q in self.quasi_identifiers)

    @property
    def max_levels(self) -> tuple[int, ...]:
        """The highest level of each quasi-identifier."""
        return tuple(self.level_bounds[q][1] for q in self.quasi_identifiers)

    @property
    def heights(self) -> tuple[int, ...]:
        """The hierarchy height of each quasi-identifier."""
        return tuple(self.hierarchies[q].height for q in self.quasi_identifiers)

    @property
    def monotonic(self) -> bool:
        """Whether anonymity is monotonic under generalization (and under suppression when
        rows may be suppressed): every model says so."""
        if self.max_suppressed > 0:
            return all(m.monotonic_generalization and m.monotonic_suppression for m in self.models)
        return all(m.monotonic_generalization for m in self.models)

    def with_models(self, models: Sequence[PrivacyModel]) -> Problem:
        """The same problem with other models (validated again).

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> from anonlab.data.builders import flat_hierarchy
        >>> from anonlab.metrics.arx import Height
        >>> from anonlab.models import DistinctLDiversity, KAnonymity
        >>> t = EncodedTable.from_columns({"sex": ["F", "M"], "disease": ["flu", "hiv"]})
        >>> p = Problem(t, ("sex",), {"sex": flat_hierarchy(["F", "M"])}, (KAnonymity(2),), Height())
        >>> p.with_models([DistinctLDiversity("disease", 2)]).sensitive
        ('disease',)
        """
        return dataclasses.replace(self, models=tuple(models))
