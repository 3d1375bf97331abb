"""Engines compute class statistics; load one by name with :func:`get_engine`."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from anonlab import _lazy
from anonlab._registry import Registry

if TYPE_CHECKING:
    from anonlab.engines.base import AttributeLevels, Engine

__all__ = ["Engine", "AttributeLevels", "engine_class", "get_engine", "ENGINES"]

#: Engine and AttributeLevels, imported on their first use (the registry alone loads no numpy).
__getattr__, __dir__ = _lazy.exports(
    globals(),
    "anonlab.engines",
    {"Engine": "anonlab.engines.base", "AttributeLevels": "anonlab.engines.base"},
)

#: Engine name -> module that defines ``ENGINE`` (the engine class), imported when the engine
#: is opened (the heavy libraries of an engine are loaded by it alone).
ENGINES: Registry[str] = Registry("engine")
ENGINES.register("numpy", "anonlab.engines.numpy_engine")
ENGINES.register("duckdb", "anonlab.engines.duckdb_engine")
ENGINES.register("spark", "anonlab.engines.spark_engine")


def get_engine(name: str, data: Any, **kwargs: Any) -> Engine:
    """Create the engine ``name`` over ``data``.

    Parameters
    ----------
    name : str
        ``"numpy"`` (an :class:`~anonlab.data.EncodedTable` in memory) or ``"duckdb"``
        (a CSV/Parquet :class:`~anonlab.data.FileSource`, an Arrow table or a frame).
    data : object
        The data, in a form the engine accepts.
    **kwargs
        Engine options, e.g. ``hierarchies``.

    Returns
    -------
    Engine
    """
    engine: Engine = engine_class(name)(data, **kwargs)
    return engine


def engine_class(name: str) -> type[Engine]:
    """The engine class registered as ``name``, its capabilities declared on it.

    Parameters
    ----------
    name : str
        A key of :data:`ENGINES`.

    Returns
    -------
    type of Engine

    Raises
    ------
    ParameterError
        An unknown engine (the message suggests the closest name).

    Examples
    --------
    >>> engine_class("numpy").in_memory, engine_class("duckdb").in_memory
    (True, False)
    """
    cls: type[Engine] = importlib.import_module(ENGINES.lookup(name)).ENGINE
    return cls
