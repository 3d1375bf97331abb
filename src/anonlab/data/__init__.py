"""The data model: encoded tables, schemas, hierarchies and class statistics."""

from anonlab.data.auto import AutoHierarchy, auto_hierarchy, infer_hierarchy
from anonlab.data.builders import (
    date_hierarchy,
    flat_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
    taxonomy_hierarchy,
)
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.schema import Role, Schema
from anonlab.data.source import CsvOptions, FileSource
from anonlab.data.stats import ClassStats, SensitiveHistogram
from anonlab.data.table import EncodedColumn, EncodedTable

__all__ = [
    "AutoHierarchy",
    "ClassStats",
    "CsvOptions",
    "EncodedColumn",
    "EncodedTable",
    "FileSource",
    "Hierarchy",
    "Role",
    "Schema",
    "SensitiveHistogram",
    "auto_hierarchy",
    "date_hierarchy",
    "flat_hierarchy",
    "infer_hierarchy",
    "interval_hierarchy",
    "masking_hierarchy",
    "taxonomy_hierarchy",
]
