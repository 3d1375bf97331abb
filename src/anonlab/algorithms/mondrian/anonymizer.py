"""The registered Mondrian algorithm (``algorithm: mondrian``)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, ClassVar

from anonlab._progress import Progress, stage
from anonlab.algorithms.base import Anonymizer, Param, register
from anonlab.algorithms.mondrian.partition import dimensions, partition
from anonlab.exceptions import ParameterError
from anonlab.release.problem import Problem
from anonlab.release.regions import Regions
from anonlab.release.result import SearchStats, stat

__all__ = ["Mondrian", "MondrianStats"]


@dataclass
class MondrianStats(SearchStats):
    """What Mondrian did (``evaluated``: candidate cuts judged).

    Attributes
    ----------
    regions : int
        Regions of the partitioning (regions with equal summaries are one released class).
    rounds : int
        Rounds of cuts (every open region is cut once per round).
    partitioning : str
        ``strict`` or ``relaxed``.
    interval_attributes : list of str
        The attributes cut on their order and released as intervals.
    categorical : str
        How the other attributes are released (``hierarchy`` labels or ``set``).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"age": ["30", "32", "40", "41"]})
    >>> job = {"quasi_identifiers": {"age": {}}, "models": [{"k_anonymity": {"k": 2}}],
    ...        "metric": "gcp", "algorithm": "mondrian"}
    >>> search = anonlab.anonymize(t, job).search
    >>> type(search).__name__, search.regions, search.interval_attributes
    ('MondrianStats', 2, ['age'])
    """

    regions: int = stat("regions", 0)
    rounds: int = stat("rounds of cuts", 0)
    partitioning: str = stat("partitioning", "strict")
    interval_attributes: list[str] = stat("attributes released as intervals", [])
    categorical: str = stat("other attributes released as", "hierarchy")


@register
class Mondrian(Anonymizer):
    """Mondrian multidimensional k-anonymity: greedy median cuts of the quasi-identifier space.

    The table is cut top-down into regions (LeFevre, DeWitt & Ramakrishnan, section 4): each
    region on the dimension of widest normalized range, at the median on a numeric attribute
    and into the children of the region's lowest common label on a hierarchical one; a cut
    is made only if every part satisfies every class-judging model (k-anonymity,
    l-diversity, t-closeness, (alpha,k)-anonymity, ...). Every row is released as its
    region's summary: ``[lo,hi]`` on a numeric attribute (the value itself when the region
    holds one), the lowest common hierarchy label on the others
    (:class:`~anonlab.release.regions.Regions`, verified by the ``regions`` verifier). The
    loss is measured on the released labels with ``gcp`` or ``ncp``.

    Parameters
    ----------
    partitioning : str
        ``strict`` (regions do not overlap: cuts fall between distinct values; the paper's
        main algorithm) or ``relaxed`` (section 4.2: rows equal to the median may go to
        either side, so neighbouring intervals may share an end value; finer regions).
    intervals : list of str, optional
        The attributes cut on their order and released as intervals. Default: every
        quasi-identifier whose values are all numbers (no missing value) and whose
        hierarchy does not mask characters (a zip code's ``435*``).
    categorical : str
        How the other attributes are cut and released: ``hierarchy`` (into the children of
        the region's lowest common label, released as that label) or ``set`` (at the median
        of their hierarchy's order of values, siblings side by side, released as the set
        ``{a;b}`` of the region's values, a label that follows no hierarchy).

    References
    ----------
    .. [1] K. LeFevre, D. J. DeWitt and R. Ramakrishnan, "Mondrian multidimensional
       k-anonymity", ICDE 2006, sections 3 (strict and relaxed partitioning), 4 (the
       greedy algorithm, median cuts, the widest normalized range) and 6.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"age": ["30", "32", "40", "41"],
    ...                                        "sex": ["F", "F", "M", "M"]})
    >>> job = {"quasi_identifiers": {"age": {}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 2}}], "metric": "gcp", "algorithm": "mondrian"}
    >>> result = anonlab.anonymize(t, job)
    >>> result.columns["age"].tolist(), result.columns["sex"].tolist(), result.loss
    (['[30,32]', '[30,32]', '[40,41]', '[40,41]'], ['F', 'F', 'M', 'M'], 0.068181818182)
    >>> result.release.verification.k_after
    2
    """

    name: ClassVar[str] = "mondrian"
    family: ClassVar[str] = "Mondrian multidimensional partitioning"
    verifier: ClassVar[str] = "regions"
    conformance_job: ClassVar[dict[str, Any]] = {"metric": {"name": "gcp"}}
    #: Out of core, blocks of 250,000 rows: a region of a block draws on fewer rows than in
    #: memory, and smaller blocks cost more loss (benchmarks/README.md, bench_partitioned).
    block_rows: ClassVar[int | None] = 250_000
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "partitioning": Param(str, choices=("strict", "relaxed")),
        "intervals": Param(list, none=True),
        "categorical": Param(str, choices=("hierarchy", "set")),
    }

    def __init__(
        self,
        *,
        partitioning: str = "strict",
        intervals: list[str] | None = None,
        categorical: str = "hierarchy",
    ):
        self.partitioning = partitioning
        self.intervals = intervals
        self.categorical = categorical

    def accepts_partitions(self) -> bool:
        """True: out of core, each block of the sorted table is cut into regions on its own
        (regions of different blocks whose summaries read the same are one released class;
        :mod:`anonlab.release.partitioned`)."""
        return True

    def _check_problem(self, problem: Problem) -> None:
        """Refuse other metrics than ``gcp`` / ``ncp``, models that do not judge classes on
        their own, and attributes Mondrian cannot cut."""
        if problem.metric.name not in ("gcp", "ncp"):
            raise ParameterError(
                f"Algorithm 'mondrian' measures its release (intervals and hierarchy labels) "
                f"with 'gcp' or 'ncp'; the job asks for {problem.metric.name!r}. Set "
                "'metric: gcp'."
            )
        for m in problem.models:
            if m.sample_based or hasattr(m, "record_parameter"):
                what = (
                    "judges the whole release (a sample-based risk)"
                    if m.sample_based
                    else "judges each record against its own limit"
                )
                raise ParameterError(
                    f"Algorithm 'mondrian' cuts regions that each satisfy the models on their "
                    f"own; model {m.name!r} {what}, which it cannot honour. Use k_anonymity, "
                    "l-diversity, t-closeness or (alpha,k)-anonymity, or a full-domain algorithm "
                    "(optimal)."
                )
        dimensions(problem, self._intervals(), sets=self.categorical == "set")

    def _intervals(self) -> list[str] | None:
        return None if self.intervals is None else [str(a) for a in self.intervals]

    def _fit(self, problem: Problem, progress: Progress | None) -> None:
        t0 = time.perf_counter()
        stage(progress, "partitioning")
        dims = dimensions(problem, self._intervals(), sets=self.categorical == "set")
        found = partition(problem, dims, relaxed=self.partitioning == "relaxed")
        self.recoding_ = Regions(
            found.group,
            found.released,
            {d.name: d.kind for d in dims},
            partitioning=self.partitioning,
        )
        self.search_ = MondrianStats(
            elapsed_s=time.perf_counter() - t0,
            evaluated=found.cuts_tried,
            regions=int(found.group.max()) + 1 if found.group.size else 0,
            rounds=found.rounds,
            partitioning=self.partitioning,
            interval_attributes=[d.name for d in dims if d.kind == "interval"],
            categorical=self.categorical,
        )
