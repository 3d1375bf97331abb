"""The public entry points: open data once, ask diagnosis questions about it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from anonlab._progress import Progress
from anonlab._validation import did_you_mean
from anonlab.anonymization import AnonymizationResult, CheckReport, anonymize, check
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.schema import Schema
from anonlab.data.source import CsvOptions, FileSource
from anonlab.data.table import EncodedTable
from anonlab.datasets import ADULT_QUASI_IDENTIFIERS, adult_hierarchies, load_adult
from anonlab.diagnosis import (
    QuasiIdentifierReport,
    RiskSummary,
    ask,
    discover_quasi_identifiers,
    risk_summary,
)
from anonlab.diagnosis.questions import Answer
from anonlab.engines import Engine, get_engine
from anonlab.exceptions import AnonlabError, ParameterError, PrivacyRiskWarning
from anonlab.io import read_hierarchy, read_table

__all__ = [
    "ADULT_QUASI_IDENTIFIERS",
    "AnonlabError",
    "AnonymizationResult",
    "ParameterError",
    "PrivacyRiskWarning",
    "adult_hierarchies",
    "did_you_mean",
    "load_adult",
    "CheckReport",
    "anonymize",
    "check",
    "open_engine",
    "load_hierarchies",
    "diagnose",
    "risk",
    "find_quasi_identifiers",
]

HierarchySpec = Mapping[str, "Hierarchy | str | os.PathLike[str]"]


def load_hierarchies(spec: HierarchySpec | None) -> dict[str, Hierarchy]:
    """Return hierarchies by attribute, reading the ones given as ARX-format file paths."""
    out: dict[str, Hierarchy] = {}
    for attr, h in (spec or {}).items():
        if isinstance(h, Hierarchy):
            out[attr] = h if h.attribute is not None else h.named(attr)
        else:
            out[attr] = read_hierarchy(Path(h), attribute=attr)
    return out


def open_engine(
    data: Any,
    *,
    engine: str = "numpy",
    hierarchies: HierarchySpec | None = None,
    csv_options: CsvOptions | None = None,
    drop_missing: Sequence[str] | bool | None = None,
    schema: Schema | None = None,
    columns: Sequence[str] | None = None,
    **engine_options: Any,
) -> Engine:
    """Open ``data`` with an engine, ready for many questions (partitions are cached).

    Parameters
    ----------
    data : path, FileSource, EncodedTable, DataFrame, pyarrow Table or Engine
        The table. An Engine is returned as it is.
    engine : str
        ``"numpy"`` (in memory) or ``"duckdb"`` (files scanned out of core).
    hierarchies : Mapping[str, Hierarchy or path], optional
        Hierarchies of attributes that questions may generalize.
    csv_options : CsvOptions, optional
        How to parse CSV files.
    drop_missing : sequence of str or bool, optional
        Drop the rows with a null in any of these columns (True: in any column).
    schema : Schema, optional
        Attribute roles.
    columns : sequence of str, optional
        Read only these columns (the numpy engine; DuckDB reads what each query needs).
    **engine_options
        Passed to the engine (e.g. ``memory_limit`` for DuckDB).

    Returns
    -------
    Engine
    """
    if isinstance(data, Engine):
        return data
    hier = load_hierarchies(hierarchies)
    if engine == "duckdb" and not isinstance(data, EncodedTable):
        if isinstance(data, (str, os.PathLike)):
            data = FileSource(Path(data), csv=csv_options or CsvOptions())
        return get_engine(
            "duckdb", data, hierarchies=hier, drop_nulls=drop_missing or None, **engine_options
        )
    table = read_table(data, csv_options=csv_options, schema=schema, columns=columns)
    if drop_missing:
        table = table.drop_nulls(None if drop_missing is True else list(drop_missing))
    return get_engine(engine, table, hierarchies=hier, **engine_options)


def _candidates(data: Any, engine: Engine) -> list[str]:
    table = getattr(engine, "table", None)
    if isinstance(table, EncodedTable):
        return table.candidate_attributes()
    return list(engine.columns)


def diagnose(
    data: Any,
    *,
    quasi_identifiers: Sequence[str] | None = None,
    attributes: Sequence[str] | None = None,
    k: int | None = None,
    delta: float | None = None,
    find_delta: bool = False,
    max_k: int | None = None,
    levels: Mapping[str, int] | None = None,
    hierarchies: HierarchySpec | None = None,
    engine: str = "numpy",
    csv_options: CsvOptions | None = None,
    list_rows: bool = False,
    progress: Progress | None = None,
    max_size: int | None = None,
) -> Answer:
    """Answer the Diagnosis Centre question (Q1-Q12) decided by what is given.

    Parameters
    ----------
    data : path, EncodedTable, DataFrame, pyarrow Table or Engine
        The table (open it once with :func:`open_engine` to ask many questions fast).
    quasi_identifiers : sequence of str, optional
        The attribute set S (Q1, Q2, Q5, Q6, Q9, Q11).
    attributes : sequence of str, optional
        Candidates of subset questions (default: every column not marked identifier or
        sensitive).
    k : int, optional
        Required k.
    delta : float, optional
        Suppression threshold in [0, 1].
    find_delta : bool
        Ask for the smallest delta (Q9-Q12).
    max_k : int, optional
        Largest k of the tables of Q11 and Q12 (default 50).
    levels : Mapping[str, int], optional
        Ask at these hierarchy levels (needs ``hierarchies``).
    hierarchies : Mapping[str, Hierarchy or path], optional
        Hierarchies of the attributes.
    engine : str
        ``"numpy"`` or ``"duckdb"``.
    csv_options : CsvOptions, optional
        How to parse a CSV path.
    list_rows : bool
        With suppression, also return the positions of the suppressed rows.
    progress : callable, optional
        ``progress(advance, total)`` during subset searches.
    max_size : int, optional
        Subset questions: examine subsets of at most this many attributes.

    Returns
    -------
    SubsetAnswer, SearchAnswer or TableAnswer
        With ``to_dict()`` giving the JSON documented in the README.

    References
    ----------
    Zare Mirakabad, M. R., Jantan, A., Bressan, S. *k-anonymity Diagnosis Centre*.

    Examples
    --------
    >>> from anonlab import diagnose, load_adult
    >>> diagnose(load_adult(), quasi_identifiers=["age", "sex"]).k
    1
    """
    eng = open_engine(data, engine=engine, hierarchies=hierarchies, csv_options=csv_options)
    if quasi_identifiers is None and attributes is None:
        attributes = _candidates(data, eng)
    return ask(
        eng,
        quasi_identifiers=quasi_identifiers,
        attributes=attributes,
        k=k,
        delta=delta,
        find_delta=find_delta,
        max_k=max_k,
        levels=levels,
        list_rows=list_rows,
        progress=progress,
        max_size=max_size,
    )


def risk(
    data: Any,
    quasi_identifiers: Sequence[str],
    *,
    threshold: int = 5,
    levels: Mapping[str, int] | None = None,
    hierarchies: HierarchySpec | None = None,
    engine: str = "numpy",
    csv_options: CsvOptions | None = None,
) -> RiskSummary:
    """Summarise the prosecutor re-identification risk under ``quasi_identifiers``.

    See :func:`anonlab.diagnosis.risk_summary`.
    """
    eng = open_engine(data, engine=engine, hierarchies=hierarchies, csv_options=csv_options)
    return risk_summary(eng, quasi_identifiers, threshold=threshold, levels=levels)


def find_quasi_identifiers(
    data: Any,
    attributes: Sequence[str] | None = None,
    *,
    threshold: int = 2,
    max_size: int | None = None,
    levels: Mapping[str, int] | None = None,
    hierarchies: HierarchySpec | None = None,
    engine: str = "numpy",
    csv_options: CsvOptions | None = None,
    progress: Progress | None = None,
) -> QuasiIdentifierReport:
    """Find the minimal attribute subsets that single out records (QI discovery).

    See :func:`anonlab.diagnosis.discover_quasi_identifiers`.
    """
    eng = open_engine(data, engine=engine, hierarchies=hierarchies, csv_options=csv_options)
    attrs = attributes if attributes is not None else _candidates(data, eng)
    return discover_quasi_identifiers(
        eng, attrs, threshold=threshold, max_size=max_size, levels=levels, progress=progress
    )
