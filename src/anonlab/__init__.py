"""anonlab: a privacy diagnosis centre and anonymizer for tabular microdata.

Diagnose how exposed a table is (for which k it is k-anonymous, which attribute combinations
single people out, how many rows must go to reach k) and anonymize it with the least information loss.

``anonlab.report`` is both the package of the report module and a function:
``anonlab.report(data, quasi_identifiers=..., job=..., output="report.html")`` calls
:func:`anonlab.api.report` (the self-contained HTML report).
"""

from __future__ import annotations

from importlib import metadata as _metadata
from types import ModuleType as _ModuleType
from typing import Any as _Any

from anonlab import report as _report_package
from anonlab.api import (
    AnonymizationResult,
    CheckReport,
    anonymize,
    check,
    diagnose,
    find_quasi_identifiers,
    load_hierarchies,
    open_engine,
    risk,
)
from anonlab.api import report as _api_report
from anonlab.data import (
    ClassStats,
    CsvOptions,
    EncodedTable,
    FileSource,
    Hierarchy,
    Role,
    Schema,
    auto_hierarchy,
    date_hierarchy,
    flat_hierarchy,
    infer_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    taxonomy_hierarchy,
)
from anonlab.datasets import adult_hierarchies, load_adult
from anonlab.exceptions import AnonlabError
from anonlab.io import read_hierarchy, read_table, write_hierarchy

try:  # the version is the package's metadata (pyproject.toml), said in one place
    __version__ = _metadata.version("anonlab")
except _metadata.PackageNotFoundError:  # pragma: no cover - a source tree never installed
    __version__ = "0+unknown"


class _CallableReport(_ModuleType):
    """The ``anonlab.report`` package, callable as :func:`anonlab.api.report`."""

    def __call__(self, data: _Any, **options: _Any) -> str:
        return _api_report(data, **options)

    __call__.__doc__ = _api_report.__doc__


_report_package.__class__ = _CallableReport

__all__ = [
    "AnonymizationResult",
    "CheckReport",
    "anonymize",
    "check",
    "AnonlabError",
    "ClassStats",
    "CsvOptions",
    "EncodedTable",
    "FileSource",
    "Hierarchy",
    "Role",
    "Schema",
    "adult_hierarchies",
    "date_hierarchy",
    "diagnose",
    "find_quasi_identifiers",
    "flat_hierarchy",
    "interval_hierarchy",
    "infer_hierarchy",
    "auto_hierarchy",
    "load_adult",
    "load_hierarchies",
    "masking_hierarchy",
    "open_engine",
    "read_hierarchy",
    "read_table",
    "report",
    "risk",
    "taxonomy_hierarchy",
    "write_hierarchy",
    "__version__",
]
