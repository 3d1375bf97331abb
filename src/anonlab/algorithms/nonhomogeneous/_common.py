"""What both non-homogeneous algorithms share: the problem's k, sorting, chunks, processes."""

from __future__ import annotations

import functools
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._resources import format_bytes, memory_budget
from anonlab._typing import IntArray
from anonlab.algorithms.nonhomogeneous.candidates import row_keys
from anonlab.exceptions import ParameterError
from anonlab.release.anonymity_graph import cover_problem
from anonlab.release.problem import Problem

__all__ = [
    "CoverSize",
    "check_cover_memory",
    "chunks_of_rings",
    "problem_k",
    "Task",
    "Workers",
    "sorted_order",
    "workers_of",
]


def problem_k(problem: Problem, owner: str) -> int:
    """The k of the problem's k-anonymity (at least 2); refuse every other model and metric."""
    k = cover_problem(problem, f"Algorithm {owner!r}")
    if k < 2:
        raise ParameterError(
            f"Algorithm {owner!r} needs k >= 2 (the 'k' of k_anonymity); with k = 1 every "
            "record already covers itself and nothing needs generalizing."
        )
    return k


@dataclass(frozen=True)
class CoverSize:
    """What a non-homogeneous search will hold, to estimate its memory before any work.

    Attributes
    ----------
    rows : int
        Records of the table (or block).
    k : int
    width : int
        Features of a released record's state (one per site; ``CoverCosts.width``).
    chunk_rows : int
        Records of the largest chunk of phases 1-2 (0: no such phases, ``wong_nh``).
    candidates : int
        Candidate edges per released record besides its ring (phase 1 and 2).
    additions : int
        Edges per released record that may enter it in phase 2 (0: no phase 2).
    workers : int
        Chunks solved at once (worker processes).

    Examples
    --------
    >>> size = CoverSize(5_000, 5_000, 6, chunk_rows=5_000, candidates=48, additions=8)
    >>> round(size.bytes() / 1e9, 1)  # gigabytes (k = n = 5,000 on 6 columns held 6 GB)
    7.6
    """

    rows: int
    k: int
    width: int
    chunk_rows: int = 0
    candidates: int = 0
    additions: int = 0
    workers: int = 1

    def whole_bytes(self) -> int:
        """The covers of every record (``rows x k``) and what building, measuring and
        verifying them holds at once: about six ``rows x k`` integer arrays (the ring
        windows, the verification's sorted copy and its edges) and the states of the
        ``rows x k`` covered records (``width`` features each)."""
        cells = self.rows * self.k
        return cells * (6 * 8 + 2 * 4 * self.width)

    def chunk_bytes(self) -> int:
        """One chunk's phases 1-2: its candidate edges (the ring's ``k`` per record and the
        nearest ``candidates``; at most every pair) with their states; phase 2's covered
        states with the prefix and suffix maxima (four ``chunk x k x width`` arrays) and
        its arcs (``additions x k`` per record, a dozen numbers each)."""
        c, k, w = self.chunk_rows, self.k, self.width
        if c == 0:
            return 0
        edges = min(c * c, c * (k + self.candidates))
        total = edges * (5 * 8 + 2 * 4 * w)
        if self.additions:
            free = min(max(edges - c * k, 0), self.additions * c)
            arcs = free * k
            total += c * k * (4 * 4 * w + 3 * 8) + arcs * (10 * 8 + 3 * 4 * w)
        return total

    def bytes(self) -> int:
        """The estimate: the whole table's covers and the chunks solved at once."""
        return self.whole_bytes() + max(self.workers, 1) * self.chunk_bytes()


def check_cover_memory(size: CoverSize, owner: str) -> int:
    """Refuse, before any work, a search whose estimate (:meth:`CoverSize.bytes`) is above
    :func:`anonlab._resources.memory_budget`; return the estimate.

    Raises
    ------
    ParameterError
        With the estimate, the budget and the ways out.

    Examples
    --------
    >>> check_cover_memory(CoverSize(1_000, 5, 8), "wong_nh")  # bytes
    560000
    """
    need = size.bytes()
    budget = memory_budget()
    if need > budget:
        fewer = " or fewer worker processes ('n_jobs')" if size.workers > 1 else ""
        raise ParameterError(
            f"Algorithm {owner!r} with k = {size.k:,} on {size.rows:,} records holds "
            f"{size.rows * size.k:,} covered records ({size.rows:,} x k) and their states: "
            f"about {format_bytes(need)} of memory, more than this machine can spare "
            f"({format_bytes(budget)}). Use a smaller k (with k close to the number of "
            f"records nearly every cell is hidden), blocks out of core (--engine duckdb "
            f"--block-rows){fewer}, or raise the budget with the environment variable "
            "ANONLAB_MEMORY_BUDGET (e.g. 32G). Nothing was written."
        )
    return need


def sorted_order(codes: npt.NDArray[np.integer]) -> IntArray:
    """The records sorted as section 3.2.3 says: sites by ascending cardinality, then the
    records lexicographically (so similar records sit together before partitioning)."""
    if codes.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    cardinality = codes.max(axis=0).astype(np.int64) + 1
    sites = np.argsort(cardinality, kind="stable")
    # one key per record in the sites' lexicographic order, ties in row order
    order: IntArray = np.argsort(row_keys(codes, sites.tolist()), kind="stable")
    return order.astype(np.int64, copy=False)


def chunks_of_rings(position: IntArray, ring: IntArray, size: int) -> IntArray:
    """Pack whole rings into chunks of about ``size`` records, in sorted order.

    Parameters
    ----------
    position : ndarray of int64
        Each record's position in the sorted order.
    ring : ndarray of int64
        Each record's ring (a ring's covers stay inside it).
    size : int

    Returns
    -------
    ndarray of int64
        Each record's chunk; a chunk holds whole rings, so its covers stay inside it.
    """
    rings = int(ring.max()) + 1 if ring.size else 0
    first = np.full(rings, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, ring, position)
    count = np.bincount(ring, minlength=rings)
    order = np.argsort(first, kind="stable")
    before = np.cumsum(count[order]) - count[order]
    chunk_of_ring = np.empty(rings, dtype=np.int64)
    chunk_of_ring[order] = before // max(size, 1)
    _, dense = np.unique(chunk_of_ring, return_inverse=True)
    out: IntArray = dense.reshape(-1)[ring].astype(np.int64)
    return out


def _context() -> Any:
    """Fork where the system has it: a worker then needs no import of the caller's script
    (a script without an ``if __name__ == "__main__"`` guard still works); spawn elsewhere."""
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def workers_of(n_jobs: int | None, tasks: int) -> int:
    """The worker processes :class:`Workers` starts for ``tasks`` tasks (``n_jobs`` None:
    every core).

    Examples
    --------
    >>> workers_of(4, 2), workers_of(1, 9)
    (2, 1)
    """
    workers = (os.cpu_count() or 1) if n_jobs is None else n_jobs
    return max(1, min(workers, tasks))


@dataclass(frozen=True)
class Task:
    """One call for :class:`Workers`: ``func(*args)``; ``size`` (records) orders the calls.

    Examples
    --------
    >>> with Workers(1, 2) as workers:
    ...     [get() for get in workers.start([Task(max, (1, 2), 1), Task(min, (3, 4), 2)])]
    [2, 3]
    """

    func: Callable[..., Any]
    args: tuple[Any, ...]
    size: int


class Workers:
    """Worker processes that run :class:`Task` calls, started once for several rounds of
    tasks (a round may start while another's tasks still run); with one worker the calls
    run in this process, each when its result is asked for.

    The processes start with the first round (forked where the system has it: they have
    what this process has loaded by then).

    Parameters
    ----------
    n_jobs : int or None
        The most processes (None: every core).
    tasks : int
        The most tasks that will run at once (no more processes than that).

    Examples
    --------
    >>> with Workers(1, 2) as workers:
    ...     first = workers.start([Task(max, (1, 2), 1)])
    ...     [get() for get in workers.start([Task(min, (3, 4), 1)])] + [first[0]()]
    [3, 2]
    """

    def __init__(self, n_jobs: int | None, tasks: int) -> None:
        self.count = workers_of(n_jobs, tasks)
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> Workers:
        if self.count > 1:
            self._pool = ProcessPoolExecutor(max_workers=self.count, mp_context=_context())
        return self

    def __exit__(self, *exc: object) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def start(self, tasks: Sequence[Task]) -> list[Callable[[], Any]]:
        """Start every task, the largest first; returns, in the order of ``tasks``, a
        function that waits for the task's result and returns it."""
        if self._pool is None:
            return [functools.partial(task.func, *task.args) for task in tasks]
        order = sorted(range(len(tasks)), key=lambda i: -tasks[i].size)
        futures = {i: self._pool.submit(tasks[i].func, *tasks[i].args) for i in order}
        return [futures[i].result for i in range(len(tasks))]
