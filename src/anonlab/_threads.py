"""Keep BLAS to one thread where anonlab's vector products are too small to share out."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

__all__ = ["single_threaded_blas"]

_controller: Any = None


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Run the block with the BLAS library (OpenBLAS, MKL, ...) on one thread.

    anonlab's dot products are vectors of at most a few hundred thousand entries: a BLAS
    thread pool wakes its threads for each of them and spends more time (and CPU, spinning)
    than it saves (benchmarks/README.md, "Measurements behind choices in the code").
    The limit is lifted when the block ends. Without threadpoolctl the block runs as it is.
    """
    global _controller
    if _controller is None:
        try:
            import threadpoolctl
        except ImportError:  # pragma: no cover - a core dependency
            _controller = False
        else:
            _controller = threadpoolctl.ThreadpoolController()
    if _controller is False:
        yield
        return
    with _controller.limit(limits=1, user_api="blas"):
        yield
