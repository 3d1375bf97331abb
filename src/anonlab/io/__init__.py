"""Reading tables and hierarchies, writing outputs atomically."""

from anonlab.io.atomic import atomic_write
from anonlab.io.hierarchies import read_hierarchy, write_hierarchy
from anonlab.io.readers import read_table

__all__ = ["read_table", "read_hierarchy", "write_hierarchy", "atomic_write"]
