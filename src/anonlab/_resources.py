"""What this machine can hold: memory estimates checked before large work (stdlib only)."""

from __future__ import annotations

import os

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

    The environment variable ``ANONLAB_MEMORY_BUDGET`` (bytes, or with a ``K``/``M``/``G``
    suffix) overrides it.
    """
    env = os.environ.get("ANONLAB_MEMORY_BUDGET", "").strip().upper()
    if env:
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(env[-1], 1)
        digits = env[:-1] if env[-1] in "KMG" else env
        try:
            return int(float(digits) * scale)
        except ValueError:
            pass
    return int(available_memory() * fraction)


def format_bytes(n: float) -> str:
    """``n`` bytes in a unit a person reads (``12.7 GB``)."""
    for unit in ("bytes", "KB", "MB", "GB", "TB", "PB"):
        if abs(n) < 1000 or unit == "PB":
            return f"{n:,.0f} {unit}" if unit == "bytes" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:.3g} EB"  # pragma: no cover
