"""The progress-callback type shared by long searches (stdlib only)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress"]

#: ``progress(advance, total)``: called as work advances; ``total`` may be None if unknown.
Progress = Callable[[int, "int | None"], None]
