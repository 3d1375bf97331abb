"""numba, imported here and nowhere else in anonlab (architecture rule 8), on first use.

Compiled kernels are plain Python functions for numba's nopython mode (loops over numpy
arrays, no Python objects) kept in the module that uses them; :func:`jit` compiles one, its
machine code cached on disk by numba so that later processes load it instead of compiling.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["jit", "numba"]


def numba() -> ModuleType:
    """The numba module (imported on the first call)."""
    import numba as nb

    return nb


def jit(f: Callable[..., Any], *, inline: bool = False, parallel: bool = False) -> Any:
    """``f`` compiled in nopython mode, cached on disk, releasing the GIL.

    Parameters
    ----------
    f : callable
        A plain-Python kernel.
    inline : bool
        Inline it into the compiled functions that call it (small helpers).
    parallel : bool
        Compile its ``numba.prange`` loops to run on numba's threads.
    """
    how: Any = "always" if inline else "never"
    return numba().njit(cache=True, nogil=True, inline=how, parallel=parallel)(f)
