"""anonlab: a privacy diagnosis centre and anonymizer for tabular microdata.

Diagnose how exposed a table is (for which k it is k-anonymous, which attribute combinations
single people out, how many rows must go to reach k) and anonymize it with the least information loss.
"""

from __future__ import annotations

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
    date_hierarchy,
    flat_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    taxonomy_hierarchy,
)
from anonlab.datasets import adult_hierarchies, load_adult
from anonlab.exceptions import AnonlabError
from anonlab.io import read_hierarchy, read_table, write_hierarchy

__version__ = "0.1.0"

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
    "load_adult",
    "load_hierarchies",
    "masking_hierarchy",
    "open_engine",
    "read_hierarchy",
    "read_table",
    "risk",
    "taxonomy_hierarchy",
    "write_hierarchy",
    "__version__",
]
