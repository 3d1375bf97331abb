"""The progress-callback type shared by long searches, and notes to the user (stdlib only)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

__all__ = ["Progress", "at_end", "listener", "listening", "note", "stage"]

#: ``progress(advance, total)``: called as work advances; ``total`` may be None if unknown.
#: A callback may also have a ``stage(message)`` method: it is told when a new step starts
#: (reading the data, searching, writing the output), see :func:`stage`; and a
#: ``note(message)`` method: it is told what the user should read on a line of its own
#: (the engine chosen, kernels being compiled), see :func:`note`.
Progress = Callable[[int, "int | None"], None]

#: The callback :func:`note` tells when it is given none (set by :func:`listening`).
_LISTENER: ContextVar[Progress | None] = ContextVar("anonlab_listener", default=None)
#: What to do when the innermost :func:`listening` block ends (see :func:`at_end`).
_AT_END: ContextVar[list[Callable[[], None]] | None] = ContextVar("anonlab_at_end", default=None)


def stage(progress: Progress | None, message: str) -> None:
    """Tell ``progress`` that a new step starts, if it listens (has a ``stage`` method)."""
    hook = getattr(progress, "stage", None)
    if callable(hook):
        hook(message)


@contextmanager
def listening(progress: Progress | None) -> Iterator[None]:
    """Within the block, :func:`note` without a callback tells ``progress`` (if not None).

    Code that is not handed the callback (numba compiling a kernel on its first call) can
    then still tell the user what it does.

    Examples
    --------
    >>> class Printer:
    ...     def __call__(self, advance, total): pass
    ...     def note(self, message): print(message)
    >>> with listening(Printer()):
    ...     note("compiling")
    compiling
    >>> note("nobody listens")
    """
    if progress is None:
        yield
        return
    token = _LISTENER.set(progress)
    closing: list[Callable[[], None]] = []
    at_end_token = _AT_END.set(closing)
    try:
        yield
    finally:
        try:
            for fn in closing:  # (still heard by ``progress``)
                fn()
        finally:
            _AT_END.reset(at_end_token)
            _LISTENER.reset(token)


def at_end(fn: Callable[[], None]) -> None:
    """Call ``fn`` when the innermost :func:`listening` block ends, before its callback stops
    listening (a note then still reaches it); outside any block nobody listens, and ``fn``
    is dropped.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> with listening(SimpleNamespace(note=print)):
    ...     at_end(lambda: note("done in 1.0 s"))
    ...     note("working")
    working
    done in 1.0 s
    """
    closing = _AT_END.get()
    if closing is not None:
        closing.append(fn)


def listener() -> Progress | None:
    """The callback of the innermost :func:`listening` block (None outside any).

    Examples
    --------
    >>> listener() is None
    True
    """
    return _LISTENER.get()


def note(message: str, progress: Progress | None = None) -> None:
    """Tell the user ``message`` on a line of its own: through ``progress.note`` if it has
    one, else as a stage (:func:`stage`). Without ``progress``, the callback of the
    innermost :func:`listening` block hears it, if any.

    Examples
    --------
    >>> class Bar:
    ...     def __call__(self, advance, total): pass
    ...     def stage(self, message): print("stage:", message)
    >>> note("engine: numpy", Bar())
    stage: engine: numpy
    """
    target = progress if progress is not None else _LISTENER.get()
    hook = getattr(target, "note", None)
    if callable(hook):
        hook(message)
    else:
        stage(target, message)
