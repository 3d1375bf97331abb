"""Import optional dependencies with a clear message when they are missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from anonlab.exceptions import OptionalDependencyError

__all__ = ["import_optional"]

_EXTRAS = {
    "duckdb": "duckdb",
    "pyarrow": "pyarrow",
    "pandas": "pandas",
    "polars": "polars",
    "pyspark": "spark",
    "matplotlib": "report",
    "starlette": "web",
    "uvicorn": "web",
    "python_multipart": "web",
    "sklearn": "utility",
}


def import_optional(name: str, *, feature: str | None = None) -> ModuleType:
    """Import and return the module ``name``, or raise :class:`OptionalDependencyError`.

    Parameters
    ----------
    name : str
        Top-level module name, e.g. ``"duckdb"``.
    feature : str, optional
        What the module is needed for, used in the message.

    Returns
    -------
    types.ModuleType
        The imported module.
    """
    try:
        return importlib.import_module(name)
    except ImportError as exc:  # pragma: no cover - depends on the environment
        extra = _EXTRAS.get(name.split(".")[0], name)
        need = f" for {feature}" if feature else ""
        raise OptionalDependencyError(
            f"{name!r} is needed{need} but is not installed; "
            f"install it with: pip install 'anonlab[{extra}]'"
        ) from exc
