"""Reading tables and hierarchies, writing outputs atomically."""

from anonlab.data.source import CsvOptions
from anonlab.io.atomic import atomic_write, check_input_file
from anonlab.io.hierarchies import read_hierarchy, write_hierarchy
from anonlab.io.readers import column_names, memory_estimate, read_table
from anonlab.io.sniff import sniff_header, sniff_separator

__all__ = [
    "CsvOptions",
    "atomic_write",
    "check_input_file",
    "column_names",
    "memory_estimate",
    "read_hierarchy",
    "read_table",
    "sniff_header",
    "sniff_separator",
    "write_hierarchy",
]
