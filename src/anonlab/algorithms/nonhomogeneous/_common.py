"""What both non-homogeneous algorithms share: the problem's k, sorting, chunks, processes."""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from anonlab._typing import IntArray
from anonlab.exceptions import ParameterError
from anonlab.release.anonymity_graph import cover_problem
from anonlab.release.problem import Problem

__all__ = ["chunks_of_rings", "problem_k", "run_tasks", "sorted_order"]

_T = TypeVar("_T")


def problem_k(problem: Problem, owner: str) -> int:
    """The k of the problem's k-anonymity (at least 2); refuse every other model and metric."""
    k = cover_problem(problem, f"Algorithm {owner!r}")
    if k < 2:
        raise ParameterError(
            f"Algorithm {owner!r} needs k >= 2 (the 'k' of k_anonymity); with k = 1 every "
            "record already covers itself and nothing needs generalizing."
        )
    return k


def sorted_order(codes: npt.NDArray[np.integer]) -> IntArray:
    """The records sorted as section 3.2.3 says: sites by ascending cardinality, then the
    records lexicographically (so similar records sit together before partitioning)."""
    if codes.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    cardinality = codes.max(axis=0).astype(np.int64) + 1
    sites = np.argsort(cardinality, kind="stable")
    order: IntArray = np.lexsort(codes[:, sites[::-1]].T).astype(np.int64)
    return order


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


def run_tasks(
    func: Callable[..., _T], tasks: Sequence[tuple[Any, ...]], n_jobs: int | None
) -> list[_T]:
    """``func(*task)`` for every task, in worker processes when there are several.

    The results come back in the order of ``tasks`` and do not depend on the number of
    processes. ``n_jobs`` None uses every core.
    """
    workers = (os.cpu_count() or 1) if n_jobs is None else n_jobs
    workers = max(1, min(workers, len(tasks)))
    if workers == 1:
        return [func(*task) for task in tasks]
    sizes = [getattr(t[0], "codes", np.zeros(0)).shape[0] for t in tasks]
    order = sorted(range(len(tasks)), key=lambda i: -sizes[i])  # the largest first
    out: list[Any] = [None] * len(tasks)
    with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
        futures = {i: pool.submit(func, *tasks[i]) for i in order}
        for i, future in futures.items():
            out[i] = future.result()
    return out
