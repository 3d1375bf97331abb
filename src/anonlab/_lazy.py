"""Names of a package, and whole modules, imported on their first use, so that importing the
package (and the command line's ``--help``) loads none of the modules they come from.

Examples
--------
>>> namespace = {}
>>> __getattr__, __dir__ = exports(namespace, "demo", {"sqrt": "math"})
>>> __getattr__("sqrt")(16.0), "sqrt" in namespace
(4.0, True)
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable, Mapping, MutableMapping
from importlib import import_module
from types import ModuleType
from typing import Any

__all__ = ["exports", "module"]


def exports(
    namespace: MutableMapping[str, Any], package: str, sources: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module-level ``__getattr__`` and ``__dir__`` of a package with lazy names.

    Parameters
    ----------
    namespace : dict
        The package's ``globals()``: a name, once imported, is kept there (the next use
        finds it without calling ``__getattr__``).
    package : str
        The package's name, as an unknown attribute's error names it.
    sources : mapping of str to str
        Each public name and the module that defines it.

    Returns
    -------
    (callable, callable)
        ``__getattr__(name)`` (imports the name's module, or raises AttributeError) and
        ``__dir__()`` (the package's names with the lazy ones).

    Examples
    --------
    >>> namespace = {}
    >>> __getattr__, __dir__ = exports(namespace, "demo", {"pi": "math"})
    >>> __dir__()
    ['pi']
    >>> __getattr__("tau")
    Traceback (most recent call last):
    ...
    AttributeError: module 'demo' has no attribute 'tau'
    """

    def __getattr__(name: str) -> Any:
        if name not in sources:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(import_module(sources[name]), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *sources})

    return __getattr__, __dir__


def module(name: str) -> ModuleType:
    """The module ``name``, loaded when one of its attributes is first read.

    The standard library's lazy import (:class:`importlib.util.LazyLoader`): the module is
    found and entered in ``sys.modules`` now, and runs on the first attribute access. A
    module already imported is returned as it is.

    Parameters
    ----------
    name : str
        The module's full name (``"anonlab.api"``).

    Returns
    -------
    module

    Examples
    --------
    >>> colorsys = module("colorsys")
    >>> colorsys.rgb_to_hsv(1.0, 0.0, 0.0)
    (0.0, 1.0, 1.0)
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    lazy = importlib.util.module_from_spec(spec)
    sys.modules[name] = lazy
    loader.exec_module(lazy)
    parent, _, child = name.rpartition(".")
    if parent:  # as an import does: the package's attribute is the module
        setattr(sys.modules[parent], child, lazy)
    return lazy
