"""The registered local-recoding algorithms: ``progressive`` and ``top_down``."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress
from anonlab.algorithms.base import Anonymizer, register
from anonlab.algorithms.local_recoding._setup import (
    LocalProblem,
    LocalResult,
    check_requirement,
    describe,
)
from anonlab.algorithms.local_recoding.progressive import progressive
from anonlab.algorithms.local_recoding.top_down import top_down
from anonlab.release.problem import Problem
from anonlab.release.recoding import Levels
from anonlab.release.result import SearchStats, stat

__all__ = ["LocalRecodingStats", "Progressive", "ProgressiveStats", "TopDown", "TopDownStats"]


@dataclass
class LocalRecodingStats(SearchStats):
    """What a local-recoding search did (``evaluated``: the groupings of rows it judged).

    Attributes
    ----------
    requirement : str
        k and the alpha bounds, as the algorithm read them from the models.
    variant : str
        ``k-anonymity``, ``simple``, ``general`` or ``multi``.
    distortion_ratio : float
        Paper 002's distortion ratio of the release (section 2): the sum over cells of the
        height of the released value, over the same sum for the fully generalized table, with
        equal attribute weights; a row left to suppression counts as fully generalized.
    loop_bound : int
        Lemma 6's bound, the sum of the heights the quasi-identifiers may climb.
    rows_left : int
        Rows in classes that fail the models (left to the release's suppression: only when
        ``max_level`` bounds keep rows from the root).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "disease": ["flu", "hiv", "cold", "flu"] * 2})
    >>> model = {"attribute": "disease", "alpha": 0.5, "k": 2, "values": "hiv"}
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}}, "sensitive": ["disease"],
    ...        "models": [{"alpha_k_anonymity": model}], "metric": "distortion",
    ...        "algorithm": "top_down"}
    >>> search = anonlab.anonymize(t, job).search
    >>> isinstance(search, LocalRecodingStats), search.variant, search.distortion_ratio
    (True, 'simple', 0.125)
    """

    requirement: str = stat("requirement", "")
    variant: str = stat("(alpha,k) model", "")
    distortion_ratio: float = stat("distortion ratio (paper 002, section 2)", 0.0)
    loop_bound: int = stat("Lemma 6 bound (sum of heights)", 0)
    rows_left: int = stat("rows left to suppression", 0)


@dataclass
class ProgressiveStats(LocalRecodingStats):
    """What Algorithm 1 did (see :class:`~.progressive.ProgressiveResult`).

    ``rounds`` (JSON only) holds each pass of the loop: levels, rows, classes, trunk rows,
    Lemma 5's ``q_max``, rows further removed and given back, the attribute generalized.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "disease": ["flu", "hiv", "cold", "flu"] * 2})
    >>> model = {"attribute": "disease", "alpha": 0.5, "k": 2, "values": "hiv"}
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}}, "sensitive": ["disease"],
    ...        "models": [{"alpha_k_anonymity": model}], "metric": "distortion",
    ...        "algorithm": "progressive"}
    >>> search = anonlab.anonymize(t, job).search
    >>> type(search).__name__, search.loops, search.rows_left
    ('ProgressiveStats', 2, 0)
    """

    loops: int = stat("loops (generalization steps, Lemma 6)", 0)
    passes: int = stat("passes of the while loop", 0)
    trunks: int = stat("trunks removed", 0)
    trunk_rows: int = stat("rows removed in trunks", 0)
    further_removed: int = stat("rows removed by further removal (stubs)", 0)
    given_back: int = stat("rows given back to stay solvable", 0)
    rounds: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class TopDownStats(LocalRecodingStats):
    """What Algorithm 2 did (see :class:`~.top_down.TopDownResult`).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "disease": ["flu", "hiv", "cold", "flu"] * 2})
    >>> model = {"attribute": "disease", "alpha": 0.5, "k": 2, "values": "hiv"}
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}}, "sensitive": ["disease"],
    ...        "models": [{"alpha_k_anonymity": model}], "metric": "distortion",
    ...        "algorithm": "top_down"}
    >>> search = anonlab.anonymize(t, job).search
    >>> type(search).__name__, search.rounds, search.nodes
    ('TopDownStats', 5, 7)
    """

    rounds: int = stat("specialization rounds", 0)
    nodes: int = stat("nodes specialized", 0)
    pushed_back: int = stat("rows pushed back to the parent (line 8)", 0)
    unspecialized: int = stat("rows un-specialized for the parent (line 10)", 0)
    line10: dict[str, int] = stat("line 10 met by", {})


def _levels_recoding(levels: npt.NDArray[np.int64], lp: LocalProblem) -> Levels:
    """A :class:`~anonlab.release.Levels` recoding: one group per distinct level vector."""
    radix = lp.high + 1
    if float(np.prod(radix.astype(np.float64))) < 2.0**62:
        key = np.zeros(levels.shape[0], dtype=np.int64)
        for j in range(lp.m):
            key = key * radix[j] + levels[:, j]
        uniq, group = np.unique(key, return_inverse=True)
        vectors = np.empty((uniq.size, lp.m), dtype=np.int64)
        rest = uniq.copy()
        for j in range(lp.m - 1, -1, -1):
            rest, vectors[:, j] = np.divmod(rest, radix[j])
    else:  # pragma: no cover - thousands of levels
        vectors, group = np.unique(levels, axis=0, return_inverse=True)
    return Levels(vectors.astype(np.int64), np.asarray(group, dtype=np.int64).reshape(-1))


#: What an algorithm's run gives: its result, its statistics class and their own fields.
_Run = tuple[LocalResult, type[LocalRecodingStats], dict[str, Any]]


class _LocalRecoding(Anonymizer):
    """The shared part: validation before any work, the recoding, the common statistics.
    Neither algorithm takes parameters."""

    family: ClassVar[str] = "(alpha,k) local recoding"

    def __init__(self) -> None:
        pass

    def _check_problem(self, problem: Problem) -> None:
        check_requirement(problem, self.name)

    def accepts_partitions(self) -> bool:
        """True: out of core, blocks of the sorted table are recoded one by one."""
        return True

    def _run(self, lp: LocalProblem, progress: Progress | None) -> _Run:
        """Run the algorithm: its result, its statistics class and their own fields."""
        raise NotImplementedError

    def _fit(self, problem: Problem, progress: Progress | None) -> None:
        t0 = time.perf_counter()
        lp = LocalProblem.build(problem, self.name)
        res, stats, own = self._run(lp, progress)
        left, ratio = lp.finish(res.levels, self.name)
        self.recoding_ = _levels_recoding(res.levels, lp)
        self.search_ = stats(
            elapsed_s=time.perf_counter() - t0,
            requirement=describe(lp.requirement),
            variant=lp.requirement.variant,
            distortion_ratio=ratio,
            loop_bound=lp.lemma6_bound(),
            rows_left=left,
            **own,
        )


@register
class Progressive(_LocalRecoding):
    """Progressive local recoding for (alpha,k)-anonymity (Wong et al. 2009, Algorithm 1).

    Generalizes the rows still in processing one attribute one level at a time (the highest
    entropy first) and releases, at each level, the precisely alpha-deassociated trunks of
    the passing classes and, within Lemma 5's bound, further passing classes: rows reach
    different levels. Models: ``k_anonymity`` and ``alpha_k_anonymity`` (simple, several
    values combined, general, several sensitive attributes). Takes no parameters.

    References
    ----------
    .. [1] R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymous data
       publishing", J. Intell. Inf. Syst. 33 (2009), section 4.1 and section 6.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "disease": ["flu", "hiv", "cold", "flu"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}}, "sensitive": ["disease"],
    ...        "models": [{"alpha_k_anonymity": {"attribute": "disease", "alpha": 0.5, "k": 2,
    ...                                          "values": "hiv"}}],
    ...        "metric": "distortion", "algorithm": "progressive"}
    >>> result = anonlab.anonymize(t, job)
    >>> result.columns["zip"].tolist(), result.checks
    (['4350', '43**', '4360', '43**', '4350', '43**', '4360', '43**'], {'alpha_k_anonymity': True})
    """

    name: ClassVar[str] = "progressive"

    def _run(self, lp: LocalProblem, progress: Progress | None) -> _Run:
        res = progressive(lp, progress)
        own = {
            "evaluated": res.iterations,
            "loops": res.generalizations,
            "passes": res.iterations,
            "trunks": res.trunks,
            "trunk_rows": res.trunk_rows,
            "further_removed": res.further_removed,
            "given_back": res.given_back,
            "rounds": res.rounds,
        }
        return res, ProgressiveStats, own


@register
class TopDown(_LocalRecoding):
    """Top-down local recoding for (alpha,k)-anonymity (Wong et al. 2009, Algorithm 2).

    Starts from the fully generalized table and specializes nodes one attribute one level at
    a time (Criterion 1: the most rows specialized; Criterion 2: the fewest branches),
    keeping in the parent the rows of failing children and, when the parent would fail, the
    rows that could be specialized the least (lines 8-10). Models as :class:`Progressive`.
    Takes no parameters.

    References
    ----------
    .. [1] R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymous data
       publishing", J. Intell. Inf. Syst. 33 (2009), section 4.2 and section 6.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "disease": ["flu", "hiv", "cold", "flu"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}}, "sensitive": ["disease"],
    ...        "models": [{"alpha_k_anonymity": {"attribute": "disease", "alpha": 0.5, "k": 2,
    ...                                          "values": "hiv"}}],
    ...        "metric": "distortion", "algorithm": "top_down"}
    >>> result = anonlab.anonymize(t, job)
    >>> result.columns["zip"].tolist(), result.checks
    (['435*', '435*', '4360', '4361', '435*', '435*', '4360', '4361'], {'alpha_k_anonymity': True})
    """

    name: ClassVar[str] = "top_down"

    def _run(self, lp: LocalProblem, progress: Progress | None) -> _Run:
        res = top_down(lp, progress)
        s1, s2, s3 = res.line10_nodes
        own = {
            "evaluated": res.trials,
            "rounds": res.rounds,
            "nodes": res.nodes,
            "pushed_back": res.pushed_back,
            "unspecialized": res.unspecialized,
            "line10": {"spare rows": s1, "whole children": s2, "not specialized": s3},
        }
        return res, TopDownStats, own
