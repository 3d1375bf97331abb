"""What this machine can hold: memory estimates checked before large work."""

from __future__ import annotations

import math
import os

from anonlab.exceptions import ParameterError

__all__ = ["available_memory", "memory_budget", "format_bytes"]


def available_memory() -> int:
    """Bytes of memory available to this process now (Linux ``MemAvailable``; else total).

    The value is capped by a cgroup memory limit when one is set.
    """
    avail = 0
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except OSError:
        pass
    if not avail:
        try:
            avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            avail = 8 << 30
    for limit_file in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            with open(limit_file, encoding="ascii") as fh:
                text = fh.read().strip()
        except OSError:
            continue
        if text.isdigit():
            avail = min(avail, int(text))
    return avail


def memory_budget(fraction: float = 0.5) -> int:
    """The bytes one step may plan to use: ``fraction`` of :func:`available_memory`.

    The environment variable ``ANONLAB_MEMORY_BUDGET`` (bytes, or a number with a ``K``,
    ``M``, ``G`` or ``T`` suffix, binary: ``8G`` is 8 GiB) overrides it.

    Raises
    ------
    ParameterError
        ``ANONLAB_MEMORY_BUDGET`` is set but is not a positive size (``abc``, ``-1``, ``0``).

    Examples
    --------
    >>> import os
    >>> os.environ["ANONLAB_MEMORY_BUDGET"] = "2G"
    >>> memory_budget()
    2147483648
    >>> os.environ["ANONLAB_MEMORY_BUDGET"] = "-1"
    >>> memory_budget()
    Traceback (most recent call last):
    ...
    anonlab.exceptions.ParameterError: ANONLAB_MEMORY_BUDGET='-1' is not a memory size: give a positive number of bytes, or one with K, M, G or T (e.g. 8G), or unset it (the budget is then half the available memory).
    >>> del os.environ["ANONLAB_MEMORY_BUDGET"]
    """
    raw = os.environ.get("ANONLAB_MEMORY_BUDGET", "")
    env = raw.strip().upper().removesuffix("IB").removesuffix("B")
    if env:
        scale = _SCALE.get(env[-1], 1)
        digits = env[:-1] if env[-1] in _SCALE else env
        try:
            value = float(digits) * scale
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value >= 1):
            raise ParameterError(
                f"ANONLAB_MEMORY_BUDGET={raw!r} is not a memory size: give a positive number "
                "of bytes, or one with K, M, G or T (e.g. 8G), or unset it (the budget is then "
                "half the available memory)."
            )
        return int(value)
    return int(available_memory() * fraction)


#: The suffixes of ``ANONLAB_MEMORY_BUDGET``.
_SCALE = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def format_bytes(n: float) -> str:
    """``n`` bytes in a unit a person reads (``12.7 GB``)."""
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:.3g} EB"  # pragma: no cover
