"""numba, imported here and nowhere else in anonlab (architecture rule 8), on first use.

Compiled kernels are plain Python functions for numba's nopython mode (loops over numpy
arrays, no Python objects) kept in the module that uses them; :func:`jit` compiles one on
its first call, its machine code cached on disk by numba (in :func:`cache_folder`) so that
later processes load it instead of compiling.

A compilation is announced before it starts (:func:`anonlab._progress.note`): what is
compiled and about how long it takes, once per family of kernels and process; when the
command (or the web app's job) that listens ends, a second note says how long the family's
compilation took. A process that loads the machine code from the cache compiles nothing and
says nothing.
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from anonlab._progress import at_end, listener, note

__all__ = ["Elsewhere", "cache_folder", "compile_elsewhere", "compiled", "jit", "numba"]

#: The folder of the anonlab package (numba caches beside the sources when it is writable).
_PACKAGE = Path(__file__).resolve().parent

#: Per family of kernels (the modules whose names start so): what the first compilation of
#: its kernels, and of a new judge alone (None: it has none), is called and about how many
#: seconds it takes (benchmarks/bench_compile.py measures them with an empty cache).
_FAMILIES: tuple[tuple[str, tuple[str, int], tuple[str, int] | None], ...] = (
    ("anonlab.algorithms.privacyfrost2", ("PrivacyFrost2's kernels", 6), None),
    ("anonlab.algorithms.microaggregation", ("MDAV's kernels", 9), None),
    ("anonlab.algorithms.nonhomogeneous", ("the non-homogeneous search's kernels", 8), None),
    ("anonlab.", ("anonlab's search kernels", 3), ("the judge of these models", 3)),
)
#: Qualified names of the kernels numba compiles per set of models (the judge).
_PER_MODELS = ("_judge_with.", "_chain.")

#: The numba module, the cache folder, the families announced (to whom: the id of the
#: listening callback), the seconds each has compiled for so far, and the compilation under
#: way (numba compiles one kernel at a time, those it calls within it).
_STATE: dict[str, Any] = {}


def cache_folder(
    package: Path | None = None, environ: Mapping[str, str] | None = None
) -> Path | None:
    """The folder numba caches anonlab's machine code in, None if no folder is writable.

    ``NUMBA_CACHE_DIR`` if it is set; else the package's own ``__pycache__`` (numba's
    default: one beside each module) if it is writable; else, for an installation that is
    read-only (a system's or a container's site-packages), the first writable of
    ``$XDG_CACHE_HOME/anonlab/numba`` (``~/.cache/anonlab/numba``) and
    ``<temporary folder>/anonlab-numba-<user id>``.

    Parameters
    ----------
    package : Path, optional
        The folder of the anonlab package (default: this one).
    environ : Mapping[str, str], optional
        The environment (default: ``os.environ``).

    Returns
    -------
    Path or None

    Examples
    --------
    >>> cache_folder(environ={"NUMBA_CACHE_DIR": "/srv/numba"})
    PosixPath('/srv/numba')
    """
    env = os.environ if environ is None else environ
    if env.get("NUMBA_CACHE_DIR"):
        return Path(env["NUMBA_CACHE_DIR"])
    home = env.get("XDG_CACHE_HOME") or (
        str(Path(env["HOME"]) / ".cache") if env.get("HOME") else ""
    )
    user = os.getuid() if hasattr(os, "getuid") else "user"
    candidates = [(package or _PACKAGE) / "__pycache__"]
    if home:
        candidates.append(Path(home) / "anonlab" / "numba")
    candidates.append(Path(env.get("TMPDIR") or tempfile.gettempdir()) / f"anonlab-numba-{user}")
    for folder in candidates:
        if _writable(folder):
            return folder
    return None


def _writable(folder: Path) -> bool:
    """Whether ``folder`` exists or can be made, and a file can be written in it."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


def numba() -> ModuleType:
    """The numba module, imported on the first call with its cache folder set
    (:func:`cache_folder`) and compilations announced."""
    if "numba" not in _STATE:
        folder = cache_folder()
        if folder is not None and folder != _PACKAGE / "__pycache__":
            os.environ["NUMBA_CACHE_DIR"] = str(folder)  # (numba reloads its config from it)
        import numba as nb
        from numba.core import event

        config: Any = nb.config
        if folder is not None and folder != _PACKAGE / "__pycache__":
            config.CACHE_DIR = str(folder)  # numba was perhaps imported before
        _STATE["folder"] = folder
        _STATE["announced"] = set()
        events: Any = event
        events.register("numba:compile", _announcer(event))
        _STATE["numba"] = nb
    module: ModuleType = _STATE["numba"]
    return module


def _announcer(event: Any) -> Any:
    """A numba event listener that announces the first compilation of each family."""

    class Announcer(event.Listener):  # type: ignore[misc]
        def on_start(self, ev: Any) -> None:
            fn = getattr(ev.data.get("dispatcher"), "py_func", None)
            module = getattr(fn, "__module__", None) or ""  # (None: a function made by exec)
            key = _family(module)
            outer = _STATE.setdefault("under_way", [])
            if not outer:  # its own compilation, not one within another's
                outer.append((key, time.perf_counter()))
            else:
                outer.append((None, 0.0))
            if fn is not None:
                announce(module, fn.__qualname__)

        def on_end(self, ev: Any) -> None:
            del ev
            outer = _STATE.get("under_way")
            if not outer:
                return
            key, started = outer.pop()
            if key is not None:
                spent = _STATE.setdefault("spent", {})
                spent[key] = spent.get(key, 0.0) + time.perf_counter() - started

    return Announcer()


def _family(module: str) -> tuple[str, int] | None:
    """The family of a kernel of ``module`` and who listens, or None (not anonlab's)."""
    for prefix, _kernels, _per_models in _FAMILIES:
        if module.startswith(prefix):
            return prefix, id(listener())
    return None


def announce(module: str, qualname: str) -> str | None:
    """Tell the user (:func:`anonlab._progress.note`) that numba starts compiling the kernel
    ``module.qualname``, if its family's compilation was not announced yet to the one who
    listens (:func:`anonlab._progress.listening`: one command, one job of the web app).

    Returns
    -------
    str or None
        The message, or None if nothing was said (not one of anonlab's kernels, or its
        family already announced).

    Examples
    --------
    >>> announce("numpy.core", "sum") is None
    True
    """
    for prefix, kernels, per_models in _FAMILIES:
        if not module.startswith(prefix):
            continue
        announced = _STATE.setdefault("announced", set())
        key = (prefix, id(listener()))
        if key in announced:
            return None
        announced.add(key)
        models = per_models is not None and qualname.startswith(_PER_MODELS)
        what, seconds = per_models if per_models is not None and models else kernels
        if "folder" in _STATE and _STATE["folder"] is None:
            when = (
                f"about {seconds} s; no writable folder keeps them for the next run: set "
                "NUMBA_CACHE_DIR to one"
            )
        else:
            when = f"first run{' with them' if models else ''} only, about {seconds} s"
        message = f"compiling {what} ({when})"
        note(message)
        at_end(functools.partial(_took, key, what))
        return message
    return None


def _took(key: tuple[str, int], what: str) -> None:
    """Say how long the compilation of a family announced as ``what`` took."""
    seconds = _STATE.get("spent", {}).pop(key, 0.0)
    note(f"compiled {what} in {seconds:.1f} s")


def jit(
    f: Callable[..., Any], *, inline: bool = False, parallel: bool = False, entry: bool = True
) -> Any:
    """``f`` compiled in nopython mode on its first call, cached on disk, releasing the GIL.

    Parameters
    ----------
    f : callable
        A plain-Python kernel.
    inline : bool
        Inline it into the compiled functions that call it (small helpers).
    parallel : bool
        Compile its ``numba.prange`` loops to run on numba's threads.
    entry : bool
        Whether Python calls it. A kernel only other kernels call is compiled without the
        code that converts Python's arguments and results (less to compile). No kernel gets
        a C-callable wrapper (numba's ``cfunc``: anonlab never passes a kernel as a value).
    """
    nb = numba()
    how: Any = "always" if inline else "never"
    cache = _STATE["folder"] is not None
    return nb.njit(
        cache=cache,
        nogil=True,
        inline=how,
        parallel=parallel,
        no_cpython_wrapper=not entry,
        no_cfunc_wrapper=True,
    )(f)


def compiled(kernel: Any, args: tuple[Any, ...]) -> bool:
    """Whether the machine code of ``kernel`` (a :func:`jit` kernel) for the types of
    ``args`` is at hand: compiled in this process or in the disk cache (or nothing is ever
    compiled: ``NUMBA_DISABLE_JIT`` set).

    Examples
    --------
    >>> import numpy as np
    >>> from anonlab.algorithms.privacyfrost2._kernels import kernels
    >>> order_of = kernels().order_of
    >>> order_of(np.array([2, 0, 1]), 3)
    array([1, 2, 0])
    >>> compiled(order_of, (np.array([2, 0, 1]), 3))
    True
    """
    if not hasattr(kernel, "overloads"):  # numba's compilation turned off (NUMBA_DISABLE_JIT)
        return True
    signature = tuple(kernel.typeof_pyval(a) for a in args)
    if signature in kernel.overloads:
        return True
    return kernel._cache.load_overload(signature, kernel.targetctx) is not None


class Elsewhere:
    """A kernel compiled by another process of this interpreter into the disk cache
    (:func:`compile_elsewhere`), while this one goes on: numba compiles one kernel at a time
    per process, so the second core compiles one family of kernels while the first compiles
    another. :meth:`wait` before the kernel's first call, which then loads its machine code
    from the cache; :meth:`stop` if it is not called after all.

    Parameters
    ----------
    process : subprocess.Popen
    module : str
        The module of the kernels compiled: the time :meth:`wait` waits counts as its
        family's compilation (the note said when the command ends).
    """

    def __init__(self, process: subprocess.Popen[bytes], module: str) -> None:
        self.process = process
        self.module = module

    def wait(self) -> None:
        """Wait until the compilation is done (or failed: the kernel is then compiled here,
        on its first call, as if nothing had been compiled elsewhere)."""
        started = time.perf_counter()
        self.process.wait()
        key = _family(self.module)
        if key is not None:
            spent = _STATE.setdefault("spent", {})
            spent[key] = spent.get(key, 0.0) + time.perf_counter() - started

    def stop(self) -> None:
        """End the compilation if it is still under way (what it cached stays valid:
        numba replaces its index files whole)."""
        if self.process.poll() is None:
            self.process.terminate()
        self.process.wait()


def compile_elsewhere(target: str, *params: str) -> Elsewhere | None:
    """Start ``target(*params)`` (``"module:function"``, a function that compiles kernels) in
    a new process of this interpreter, with this process's anonlab and cache folder; None
    when there is no cache folder to hand the machine code over, or no process can be
    started (the kernels are then compiled here, on their first call).

    Parameters
    ----------
    target : str
        ``"package.module:function"``.
    *params : str
        Its arguments.

    Returns
    -------
    Elsewhere or None

    Examples
    --------
    >>> job = compile_elsewhere("anonlab._compiled:cache_folder")
    >>> job is None or job.wait() is None
    True
    """
    numba()
    folder = _STATE["folder"]
    if folder is None:
        return None
    module, function = target.split(":")
    here = str(_PACKAGE.parent)  # this anonlab's folder, first unless the child has it already
    code = (
        f"import sys; sys.path[:0] = [] if {here!r} in sys.path else [{here!r}]; "
        f"import {module} as m; m.{function}(*{params!r})"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(folder))
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", code],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    except OSError:  # no process to be had (a sandbox, a frozen interpreter): compile here
        return None
    return Elsewhere(process, module)
