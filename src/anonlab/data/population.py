"""The population table a sample was drawn from, as the models that read one hold it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from anonlab.data.table import EncodedTable
from anonlab.exceptions import ColumnNotFoundError, InputError

__all__ = ["Population"]


@dataclass(frozen=True, eq=False)
class Population:
    """A population table: the records the released table (the sample, ARX's research subset)
    is part of.

    k-map with a population table and delta-presence count, for every class of the sample,
    the population's records with the same generalized key (ARX's ``DataSubset``: the
    population is the data, the sample its subset). Only the quasi-identifiers are read.

    Parameters
    ----------
    table : EncodedTable
        The population's records (one row per person).
    name : str
        How messages name it: its file, or ``"(in memory)"`` (the default).

    Raises
    ------
    InputError
        If ``table`` is not an :class:`~anonlab.data.table.EncodedTable` or has no rows.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> pop = Population(EncodedTable.from_columns({"zip": ["4350", "4351", "4350"]}), "pop.csv")
    >>> pop.n_rows, pop
    (3, Population('pop.csv', 3 rows))
    >>> pop.require(["zip", "age"])
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ColumnNotFoundError: The population table pop.csv has no column 'age' (a quasi-identifier); it has 'zip'.
    """

    table: EncodedTable
    name: str = "(in memory)"

    def __post_init__(self) -> None:
        if not isinstance(self.table, EncodedTable):
            raise InputError(
                f"A population table must be an EncodedTable (read a file or a data frame "
                f"with anonlab.read_table). Got {type(self.table).__name__}."
            )
        if self.table.n_rows == 0:
            raise InputError(f"The population table {self.name} is empty: it has no records.")

    @property
    def n_rows(self) -> int:
        """The population's records."""
        return self.table.n_records

    def require(self, quasi_identifiers: Sequence[str]) -> None:
        """Raise unless the population table holds every quasi-identifier.

        Raises
        ------
        ColumnNotFoundError
            Naming the table, the first missing quasi-identifier and the columns it has.
        """
        names = list(self.table.names)
        for q in quasi_identifiers:
            if q not in names:
                raise ColumnNotFoundError(
                    f"The population table {self.name} has no column {q!r} (a "
                    f"quasi-identifier); it has {', '.join(map(repr, names[:20]))}."
                )

    def __repr__(self) -> str:
        return f"Population({self.name!r}, {self.n_rows:,} rows)"
