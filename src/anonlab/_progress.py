"""The progress-callback type shared by long searches (stdlib only)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress", "stage"]

#: ``progress(advance, total)``: called as work advances; ``total`` may be None if unknown.
#: A callback may also have a ``stage(message)`` method: it is told when a new step starts
#: (reading the data, searching, writing the output), see :func:`stage`.
Progress = Callable[[int, "int | None"], None]


def stage(progress: Progress | None, message: str) -> None:
    """Tell ``progress`` that a new step starts, if it listens (has a ``stage`` method)."""
    hook = getattr(progress, "stage", None)
    if callable(hook):
        hook(message)
