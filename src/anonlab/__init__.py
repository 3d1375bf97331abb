"""anonlab: a privacy diagnosis centre and anonymizer for tabular microdata.

Diagnose how exposed a table is (for which k it is k-anonymous, which attribute combinations
single people out, how many rows must go to reach k) and anonymize it with the least information loss.

The names below are imported on first use (PEP 562), so ``import anonlab`` and the command
line's ``--help`` do not load numpy and every algorithm before they are needed.
``anonlab.report`` is both the package of the report module and a function:
``anonlab.report(data, quasi_identifiers=..., job=..., output="report.html")`` calls
:func:`anonlab.api.report` (the self-contained HTML report).

Examples
--------
>>> import anonlab
>>> anonlab.load_adult().n_rows
30162
"""

from __future__ import annotations

import sys as _sys
from types import ModuleType as _ModuleType
from typing import TYPE_CHECKING
from typing import Any as _Any

from anonlab import _lazy
from anonlab import report as _report_package

if TYPE_CHECKING:
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

#: Each public name and the module it comes from, imported when the name is first used.
_SOURCES = {
    "AnonymizationResult": "anonlab.api",
    "CheckReport": "anonlab.api",
    "anonymize": "anonlab.api",
    "check": "anonlab.api",
    "diagnose": "anonlab.api",
    "find_quasi_identifiers": "anonlab.api",
    "load_hierarchies": "anonlab.api",
    "open_engine": "anonlab.api",
    "ClassStats": "anonlab.data",
    "CsvOptions": "anonlab.data",
    "EncodedTable": "anonlab.data",
    "FileSource": "anonlab.data",
    "Hierarchy": "anonlab.data",
    "Role": "anonlab.data",
    "Schema": "anonlab.data",
    "auto_hierarchy": "anonlab.data",
    "date_hierarchy": "anonlab.data",
    "flat_hierarchy": "anonlab.data",
    "infer_hierarchy": "anonlab.data",
    "interval_hierarchy": "anonlab.data",
    "masking_hierarchy": "anonlab.data",
    "taxonomy_hierarchy": "anonlab.data",
    "adult_hierarchies": "anonlab.datasets",
    "load_adult": "anonlab.datasets",
    "AnonlabError": "anonlab.exceptions",
    "read_hierarchy": "anonlab.io",
    "read_table": "anonlab.io",
    "write_hierarchy": "anonlab.io",
}

__all__ = [
    "AnonymizationResult",
    "CheckReport",
    "anonymize",
    "check",
    "diagnose",
    "find_quasi_identifiers",
    "load_hierarchies",
    "open_engine",
    "risk",
    "ClassStats",
    "CsvOptions",
    "EncodedTable",
    "FileSource",
    "Hierarchy",
    "Role",
    "Schema",
    "auto_hierarchy",
    "date_hierarchy",
    "flat_hierarchy",
    "infer_hierarchy",
    "interval_hierarchy",
    "masking_hierarchy",
    "taxonomy_hierarchy",
    "adult_hierarchies",
    "load_adult",
    "AnonlabError",
    "read_hierarchy",
    "read_table",
    "write_hierarchy",
    "report",
    "__version__",
]

_public, _ = _lazy.exports(globals(), "anonlab", _SOURCES)


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def __getattr__(name: str) -> _Any:
    """Import a public name on its first use (it is then kept in the namespace)."""
    if name == "__version__":  # the package's metadata (pyproject.toml), said in one place
        from importlib import metadata

        try:
            version = metadata.version("anonlab")
        except metadata.PackageNotFoundError:  # pragma: no cover - a source tree never installed
            version = "0+unknown"
        globals()[name] = version
        return version
    return _public(name)


class _CallableReport(_ModuleType):
    """The ``anonlab.report`` package, callable as :func:`anonlab.api.report`."""

    def __call__(self, data: _Any, **options: _Any) -> str:
        """Write the self-contained HTML report: :func:`anonlab.api.report`, whose
        parameters and examples these are."""
        from anonlab.api import report

        return report(data, **options)


_report_package.__class__ = _CallableReport


class _Package(_ModuleType):
    """The ``anonlab`` package, whose ``risk`` is :func:`anonlab.api.risk` even once the
    subpackage ``anonlab.risk`` (the population risk math) is imported: an import sets the
    package's attribute of that name to the subpackage, which stays in ``sys.modules``."""

    @property
    def risk(self) -> _Any:
        from anonlab.api import risk

        return risk

    @risk.setter
    def risk(self, subpackage: _ModuleType) -> None:
        del subpackage  # the import of anonlab.risk: the name stays the API's function


_sys.modules[__name__].__class__ = _Package
