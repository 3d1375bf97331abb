"""The registered non-homogeneous algorithms: ``wong_nh`` and ``murakami_uno``."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress
from anonlab._typing import IntArray
from anonlab.algorithms.base import Anonymizer, Param, register
from anonlab.algorithms.nonhomogeneous._common import (
    CoverSize,
    Task,
    Workers,
    check_cover_memory,
    chunks_of_rings,
    problem_k,
    sorted_order,
    workers_of,
)
from anonlab.algorithms.nonhomogeneous._kernels import compile_before_workers
from anonlab.algorithms.nonhomogeneous.candidates import lower_bound
from anonlab.algorithms.nonhomogeneous.cover_model import CoverCosts, CoverModel
from anonlab.algorithms.nonhomogeneous.rings import pattern_rings, wong_rings
from anonlab.algorithms.nonhomogeneous.two_phase import BlockResult, solve_chunk
from anonlab.exceptions import ParameterError
from anonlab.release.problem import Problem
from anonlab.release.result import SearchStats, stat

__all__ = ["MurakamiUno", "MurakamiUnoStats", "WongNH", "WongStats"]


#: Rows of a chunk: phase 1's matchings and phase 2's cycle canceling work on chunks of whole
#: rings of about this many sorted records (memory stays bounded; chunks run in parallel).
CHUNK = 10_000
#: Chunks larger than this (one huge ring of identical records, say) skip phase 2.
MAX_CHUNK = 4 * CHUNK

_COMMON: dict[str, Param] = {
    "generalization": Param((str, dict)),
    "pseudo_qids": Param(list),
}


def _model(problem: Problem, owner: str, generalization: Any, pseudo: Any) -> CoverModel:
    return CoverModel.build(problem, generalization, [str(p) for p in pseudo], owner=owner)


def _gcp(costs: CoverCosts, state: npt.NDArray[np.int32], total_weight: float) -> float:
    """The GCP of released records in ``state`` (the states of a cover's records)."""
    n = state.shape[0]
    loss = float(costs.cost(state, np.arange(n)).sum())
    return loss / (n * total_weight) if n and total_weight else 0.0


@dataclass
class WongStats(SearchStats):
    """What Wong et al.'s baseline did.

    Attributes
    ----------
    k : int
    groups : int
        Groups of ``k`` to ``2k - 1`` records.
    gcp : float
        The GCP of the cover (the verification measures it again on the labels).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"],
    ...                                        "sex": ["F", "F", "M", "M"]})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 2}}], "metric": "gcp", "algorithm": "wong_nh"}
    >>> search = anonlab.anonymize(t, job).search
    >>> type(search).__name__, search.k, search.groups, search.gcp
    ('WongStats', 2, 2, 0.5)
    """

    k: int = stat("k", 0)
    groups: int = stat("groups", 0)
    gcp: float = stat("GCP of the cover", 0.0)


@register
class WongNH(Anonymizer):
    """Wong et al.'s non-homogeneous generalization: sorted groups, randomized rings.

    The records are sorted (quasi-identifiers by ascending cardinality, then
    lexicographically), cut into groups of ``k`` consecutive records (the last takes the
    rest, up to ``2k - 1``), and within each group a random order (``seed``) makes a ring:
    each record is released as the least generalization of itself and the next ``k - 1``
    records of its ring. Every record lies in ``k`` windows, so the release is k-anonymous
    under Definition 1. Fast and simple: the baseline of Murakami & Uno's Table 8.

    Parameters
    ----------
    seed : int
        Seed of the random ring orders.
    generalization : str or dict
        ``concealing`` (a value or ``*``, the paper's Definition 2), ``hierarchy``,
        ``interval`` or ``set``, or a mapping of attribute to one of them.
    pseudo_qids : list of str
        Attributes concealed character by character (a zip code's digits).

    References
    ----------
    .. [1] W. K. Wong, N. Mamoulis and D. W. Cheung, "Non-homogeneous generalization in
       privacy preserving data publishing", SIGMOD 2010 (as described by [2], section 1.1).
    .. [2] K. Murakami and T. Uno, "Optimization algorithm for k-anonymization of datasets
       with low information loss", Int. J. Inf. Secur. 17 (2018), sections 1.1 and 4.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"],
    ...                                        "sex": ["F", "F", "M", "M"]})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 2}}], "metric": "gcp", "algorithm": "wong_nh"}
    >>> result = anonlab.anonymize(t, job)
    >>> result.columns["zip"].tolist(), result.columns["sex"].tolist(), result.loss
    (['*', '*', '*', '*'], ['F', 'F', 'M', 'M'], 0.5)
    """

    name: ClassVar[str] = "wong_nh"
    family: ClassVar[str] = "non-homogeneous generalization"
    verifier: ClassVar[str] = "graph"  # a cell cover, on its anonymity graph
    conformance_job: ClassVar[dict[str, Any]] = {"metric": {"name": "gcp"}, "suppression": 0.0}
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "seed": Param(int, low=0),
        **_COMMON,
    }

    def __init__(
        self,
        *,
        seed: int = 0,
        generalization: str | Mapping[str, str] = "concealing",
        pseudo_qids: list[str] | None = None,
    ) -> None:
        self.seed = seed
        self.generalization = generalization
        self.pseudo_qids = [] if pseudo_qids is None else pseudo_qids

    def _check_problem(self, problem: Problem) -> None:
        k = problem_k(problem, self.name)
        model = _model(problem, self.name, self.generalization, self.pseudo_qids)
        check_cover_memory(CoverSize(problem.n_rows, k, model.width), self.name)

    def accepts_partitions(self) -> bool:
        """True: out of core, each block of the sorted table gets its own cover."""
        return True

    def suppresses_rows(self) -> bool:
        """False: the cover releases every record."""
        return False

    def _fit(self, problem: Problem, progress: Progress | None) -> None:
        del progress
        start = time.perf_counter()
        k = problem_k(problem, self.name)
        model = _model(problem, self.name, self.generalization, self.pseudo_qids)
        costs = model.costs()
        covers = wong_rings(sorted_order(costs.codes), k, self.seed)
        elapsed = time.perf_counter() - start
        state = costs.states(covers)
        self.recoding_ = model.recoding(covers, state)
        self.search_ = WongStats(
            elapsed,
            1,
            k,
            max(problem.n_rows // k, 1),
            _gcp(costs, state, model.total_weight),
        )


@dataclass
class MurakamiUnoStats(SearchStats):
    """What the two-phase algorithm did.

    Attributes
    ----------
    k : int
    initial : str
        ``pattern_rings`` (anonlab's start) or ``matchings`` (the paper's phase 1).
    gcp : float
        The GCP of the released cover (measured again on the labels by the verification).
    phase1_gcp : float
        The GCP after the first phase.
    lower_bound : float or None
        The lower bound of equations (7)-(9) as a GCP (concealing releases with equal
        weights).
    lb_gap : float or None
        ``(GCP - LB) / LB`` (the paper's LB_Gap, equation (11)).
    cycles : int
        Negative cycles reversed in phase 2.
    blocks, chunks : int
        Blocks of the partition (section 3.2.3) and chunks of phases 1-2.
    candidate_edges : int
        Candidate edges of phase 1 and 2.
    fallback_chunks : int
        Chunks where a round of matchings found no perfect matching (they took the ring of
        their order).
    lower_bound_s, phase1_s, phase2_s : float
        Seconds of each step. The lower bound is computed beside the chunks: its seconds
        are within theirs (``phase2_s``; ``phase1_s`` with ``initial="matchings"``).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"],
    ...                                        "sex": ["F", "F", "M", "M"]})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 2}}], "metric": "gcp", "algorithm": "murakami_uno"}
    >>> search = anonlab.anonymize(t, job).search
    >>> type(search).__name__, search.k, search.gcp, search.blocks
    ('MurakamiUnoStats', 2, 0.5, 1)
    """

    k: int = stat("k", 0)
    initial: str = stat("first phase", "pattern_rings")
    gcp: float = stat("GCP of the cover", 0.0)
    phase1_gcp: float = stat("GCP after the first phase", 0.0)
    lower_bound: float | None = stat("lower bound (eqs. 7-9)", None)
    lb_gap: float | None = stat("LB_Gap (eq. 11)", None)
    cycles: int = stat("negative cycles canceled", 0)
    blocks: int = stat("blocks", 0)
    chunks: int = stat("chunks", 0)
    candidate_edges: int = stat("candidate edges", 0)
    fallback_chunks: int = stat("chunks without a perfect matching", 0)
    lower_bound_s: float = stat("lower bound time (s)", 0.0)
    phase1_s: float = stat("first phase time (s)", 0.0)
    phase2_s: float = stat("phase 2 time (s)", 0.0)


@register
class MurakamiUno(Anonymizer):
    """Murakami & Uno's optimization algorithm for non-homogeneous k-anonymity.

    The records are sorted (quasi-identifiers by ascending cardinality, lexicographically)
    and cut into blocks of ``block_size`` (section 3.2.3). A first phase finds a k-regular
    cover of each block, then phase 2 cancels negative cycles (section 3.2.2) on chunks of
    about 10,000 records; the blocks, the chunks and the lower bound are tasks for parallel
    processes. The first phase is

    * ``initial="matchings"``: the paper's greedy algorithm (section 3.2.1): the identical
      perfect matching, then ``k - 1`` minimum-weight perfect matchings (scipy's LAPJVsp)
      over candidate edges found by multi-sorting within Hamming distance ``max_distance``,
      each weighing what its released record newly hides;
    * ``initial="pattern_rings"`` (default; anonlab's, not in the paper): rings of records
      that agree outside a hidden set, the cheapest hidden sets first (how it compares with
      the matchings and the paper's two-phase GCP: benchmarks/README.md).

    The lower bound of equations (7)-(9) and LB_Gap (equation (11)) are reported beside the
    GCP. Every release is verified on its anonymity graph before it is returned.

    Parameters
    ----------
    initial : {"pattern_rings", "matchings"}
        The first phase.
    phase2_rounds : int
        Rounds of negative-cycle canceling (the paper's ``p``; 0 skips phase 2).
    additions : int
        Phase 2: per released record, the cheapest candidate edges that may enter it.
    candidates : int
        Candidate edges per released record (the nearest by Hamming distance).
    max_distance : int
        The largest Hamming distance of a candidate edge.
    block_size : int
        Records per block of the partition (the paper's 100,000).
    lower_bound : bool
        Compute the lower bound of equations (7)-(9) (concealing, equal weights).
    n_jobs : int, optional
        Worker processes (default: every core).
    generalization : str or dict
        ``concealing`` (Definition 2, the paper's experiments), ``hierarchy`` (section
        3.2.4), ``interval`` or ``set``; or a mapping of attribute to one of them.
    pseudo_qids : list of str
        Attributes concealed character by character (section 1.1: a zip code's digits).

    References
    ----------
    .. [1] K. Murakami and T. Uno, "Optimization algorithm for k-anonymization of datasets
       with low information loss", Int. J. Inf. Secur. 17 (2018), sections 2-4.
    .. [2] T. Uno, "Multi-sorting algorithm for finding pairs of similar short substrings
       from large-scale string data", Knowl. Inf. Syst. 25 (2010).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"],
    ...                                        "sex": ["F", "F", "M", "M"]})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 2}}], "metric": "gcp", "algorithm": "murakami_uno"}
    >>> result = anonlab.anonymize(t, job)
    >>> result.columns["zip"].tolist(), result.columns["sex"].tolist(), result.loss
    (['*', '*', '*', '*'], ['F', 'F', 'M', 'M'], 0.5)
    >>> result.release.verification.k_after
    2
    """

    name: ClassVar[str] = "murakami_uno"
    family: ClassVar[str] = "non-homogeneous generalization"
    verifier: ClassVar[str] = "graph"  # a cell cover, on its anonymity graph
    conformance_job: ClassVar[dict[str, Any]] = {"metric": {"name": "gcp"}, "suppression": 0.0}
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "initial": Param(str, choices=("pattern_rings", "matchings")),
        "phase2_rounds": Param(int, low=0),
        "additions": Param(int, low=1),
        "candidates": Param(int, low=1),
        "max_distance": Param(int, low=1),
        "block_size": Param(int, low=2),
        "lower_bound": Param(bool),
        "n_jobs": Param(int, low=1, none=True),
        **_COMMON,
    }

    def __init__(
        self,
        *,
        initial: str = "pattern_rings",
        phase2_rounds: int = 4,
        additions: int = 8,
        candidates: int = 48,
        max_distance: int = 3,
        block_size: int = 100_000,
        lower_bound: bool = True,
        n_jobs: int | None = None,
        generalization: str | Mapping[str, str] = "concealing",
        pseudo_qids: list[str] | None = None,
    ) -> None:
        self.initial = initial
        self.phase2_rounds = phase2_rounds
        self.additions = additions
        self.candidates = candidates
        self.max_distance = max_distance
        self.block_size = block_size
        self.lower_bound = lower_bound
        self.n_jobs = n_jobs
        self.generalization = generalization
        self.pseudo_qids = [] if pseudo_qids is None else pseudo_qids

    def accepts_partitions(self) -> bool:
        """True: out of core, each block of the sorted table gets its own cover (the
        paper's own partitioning, section 3.2.3)."""
        return True

    def suppresses_rows(self) -> bool:
        """False: the cover releases every record."""
        return False

    def _check_problem(self, problem: Problem) -> None:
        k = problem_k(problem, self.name)
        if self.block_size < 2 * k:
            raise ParameterError(
                f"The 'block_size' parameter of {self.name} must be an int >= 2k = {2 * k}. "
                f"Got {self.block_size} instead."
            )
        model = _model(problem, self.name, self.generalization, self.pseudo_qids)
        n = problem.n_rows
        # a chunk: about CHUNK records (whole rings, or an even cut of a block); rings of a
        # large k make larger ones, phase 2 runs on those up to MAX_CHUNK records
        chunk = min(n, MAX_CHUNK) if k * 2 > CHUNK else min(n, CHUNK + CHUNK // 2)
        size = CoverSize(
            n,
            k,
            model.width,
            chunk_rows=chunk,
            candidates=self.candidates,
            additions=self.additions if self.phase2_rounds else 0,
            workers=workers_of(self.n_jobs, -(-n // CHUNK)),
        )
        check_cover_memory(size, self.name)

    def _initial(
        self,
        costs: CoverCosts,
        k: int,
        order: IntArray,
        weights: npt.NDArray[np.float64],
        blocks: int,
        workers: Workers,
    ) -> tuple[IntArray, IntArray, int]:
        """The start's covers (each of the ``blocks`` blocks of ``order``: its pattern rings,
        in the worker processes), each row's chunk (whole rings of about ``CHUNK`` records,
        or an even cut of its block) and the number of chunks."""
        n = costs.codes.shape[0]
        position = np.empty(n, dtype=np.int64)
        position[order] = np.arange(n)
        bounds = np.linspace(0, n, blocks + 1).astype(np.int64)
        covers = np.empty((n, k), dtype=np.int64)
        chunk = np.empty(n, dtype=np.int64)
        chunks = 0
        spans = list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))
        if self.initial == "pattern_rings":  # each block's rings (in parallel)
            rings = workers.start(
                [
                    Task(pattern_rings, (costs.codes[order[a:b]], k, weights), b - a)
                    for a, b in spans
                ]
            )
        for i, (a, b) in enumerate(spans):
            rows = order[a:b]
            if self.initial == "pattern_rings":
                block_covers, ring = rings[i]()
                covers[rows] = rows[block_covers]
                chunk[rows] = chunks + chunks_of_rings(position[rows] - a, ring, CHUNK)
            else:
                parts = max(1, round((b - a) / CHUNK))
                cut = np.linspace(0, b - a, parts + 1).astype(np.int64)
                chunk[rows] = chunks + np.searchsorted(cut, np.arange(b - a), side="right") - 1
            chunks = int(chunk[rows].max()) + 1
        return covers, chunk, chunks

    def _fit(self, problem: Problem, progress: Progress | None) -> None:
        k = problem_k(problem, self.name)
        model = _model(problem, self.name, self.generalization, self.pseudo_qids)
        costs = model.costs()
        n = problem.n_rows
        start = time.perf_counter()
        weights = np.array([s.weight for s in costs.sites], dtype=np.float64)
        equal = bool(np.allclose(weights, weights[0])) if weights.size else True
        bounded = self.lower_bound and equal and all(s.kind == "concealing" for s in costs.sites)
        if self.phase2_rounds or self.initial == "matchings":  # (then the chunks search)
            compile_before_workers()  # (the first run: once, before the workers start)
        with Workers(self.n_jobs, -(-n // CHUNK) + 1) as workers:
            # the lower bound (the longest task) runs beside the rings, then the chunks
            bound_of = workers.start([Task(_bound, (costs.codes, k), n)])[0] if bounded else None
            order = sorted_order(costs.codes)
            blocks = max(1, round(n / self.block_size))
            covers, chunk, chunks = self._initial(costs, k, order, weights, blocks, workers)
            initial_s = time.perf_counter() - start
            # each chunk's rows in sorted order; a chunk's covers stay inside it
            by_chunk = order[np.argsort(chunk[order], kind="stable")]
            ends = np.cumsum(np.bincount(chunk, minlength=chunks))
            members = np.split(by_chunk, ends[:-1])
            index = np.empty(n, dtype=np.int64)  # a row's place in its chunk
            tasks = []
            for rows in members:
                local: IntArray | None = None
                if self.initial == "pattern_rings":
                    index[rows] = np.arange(rows.size)
                    local = index[covers[rows]]
                rounds = self.phase2_rounds if rows.size <= MAX_CHUNK else 0
                params = {
                    "max_distance": self.max_distance,
                    "window": max(k + 2, 6),
                    "per_record": self.candidates,
                    "additions": self.additions,
                    "max_rounds": rounds,
                }
                tasks.append(Task(_solve, (costs.take(rows), k, local, params), rows.size))
            results: list[BlockResult] = [get() for get in workers.start(tasks)]
            bound = bound_of() if bound_of is not None else None
        state = np.empty((n, costs.width), dtype=np.int32)  # (the chunks' states, gathered)
        for rows, res in zip(members, results):
            covers[rows] = rows[res.covers]
            state[rows] = res.state
        elapsed_chunks = time.perf_counter() - start - initial_s
        first = sum(r.phase1_cost for r in results)
        total_weight = model.total_weight
        gcp = _gcp(costs, state, total_weight)
        lb_value: float | None = None
        lb_gap: float | None = None
        lb_s = 0.0
        if bound is not None:
            hidden, lb_s = bound
            lb_value = (
                hidden * float(weights[0]) / (n * total_weight) if n and total_weight else 0.0
            )
            lb_gap = (gcp - lb_value) / lb_value if lb_value > 0 else None
        phase1_s = initial_s if self.initial == "pattern_rings" else elapsed_chunks
        phase2_s = elapsed_chunks if self.initial == "pattern_rings" else 0.0
        elapsed = time.perf_counter() - start
        self.recoding_ = model.recoding(covers, state)
        self.search_ = MurakamiUnoStats(
            elapsed,
            chunks,
            k,
            self.initial,
            gcp,
            first / (n * total_weight) if n and total_weight else 0.0,
            lb_value,
            lb_gap,
            sum(r.cycles for r in results),
            blocks,
            chunks,
            sum(r.candidates for r in results),
            sum(1 for r in results if r.fallback),
            lb_s,
            phase1_s,
            phase2_s,
        )


def _solve(
    costs: CoverCosts, k: int, covers: IntArray | None, params: dict[str, int]
) -> BlockResult:
    """One chunk (a worker process's task)."""
    return solve_chunk(costs, k, covers, **params)


def _bound(codes: IntArray, k: int) -> tuple[float, float]:
    """The lower bound's hidden sites over all records (equations (7)-(9)) and the seconds
    it took (a worker process's task)."""
    start = time.perf_counter()
    hidden = float(lower_bound(codes, k).sum())
    return hidden, time.perf_counter() - start
