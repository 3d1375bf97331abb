"""Reading tables and hierarchies, writing outputs atomically.

The names below are imported on their first use, so that ``anonlab.io.temporary`` (which the
command line loads at its start) does not load numpy.
"""

from typing import TYPE_CHECKING

from anonlab import _lazy

if TYPE_CHECKING:
    from anonlab.data.source import CsvOptions
    from anonlab.io.atomic import atomic_write, check_input_file
    from anonlab.io.hierarchies import read_hierarchy, write_hierarchy
    from anonlab.io.readers import column_names, memory_estimate, read_table
    from anonlab.io.sniff import sniff_header, sniff_separator

_SOURCES = {
    "CsvOptions": "anonlab.data.source",
    "atomic_write": "anonlab.io.atomic",
    "check_input_file": "anonlab.io.atomic",
    "column_names": "anonlab.io.readers",
    "memory_estimate": "anonlab.io.readers",
    "read_hierarchy": "anonlab.io.hierarchies",
    "read_table": "anonlab.io.readers",
    "sniff_header": "anonlab.io.sniff",
    "sniff_separator": "anonlab.io.sniff",
    "write_hierarchy": "anonlab.io.hierarchies",
}

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

__getattr__, __dir__ = _lazy.exports(globals(), "anonlab.io", _SOURCES)
