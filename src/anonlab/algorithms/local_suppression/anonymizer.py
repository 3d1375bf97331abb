"""The registered local-suppression algorithm (``algorithm: local_suppression``)."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from anonlab._progress import Progress
from anonlab._validation import did_you_mean
from anonlab.algorithms.base import ALGORITHMS, Anonymizer, Param, register
from anonlab.algorithms.local_suppression.search import suppress
from anonlab.data.grouping import group_rows
from anonlab.exceptions import ParameterError
from anonlab.models.base import PrivacyModel
from anonlab.release.blanks import BLANK, Blanks, blank_problem
from anonlab.release.problem import Problem
from anonlab.release.recoding import FullDomain, generalize_column
from anonlab.release.result import SearchStats, stat

__all__ = ["LocalSuppression", "LocalSuppressionStats"]

#: No limit on an attribute's blank cells.
_UNLIMITED = 2**62


@dataclass
class LocalSuppressionStats(SearchStats):
    """What local suppression did (``evaluated``: rounds of counting).

    Attributes
    ----------
    levels : dict
        The full-domain level of each quasi-identifier, applied before blanking.
    unsafe_before : int
        Records with fewer than ``k`` compatible records at those levels, before any blank.
    blanked_cells : int
        Cells released blank.
    records_with_blanks : int
        Records with at least one blank cell.
    blanked_per_attribute : dict
        Blank cells per quasi-identifier.
    importance : list of str
        The quasi-identifiers from the most to the least important (blanked first).
    generalization_s, suppression_s : float
        Time of the full-domain step (the ``optimal`` search, if asked) and of blanking.

    Examples
    --------
    >>> s = LocalSuppressionStats(elapsed_s=0.1, evaluated=2, blanked_cells=3)
    >>> dict(s.rows())["cells blanked"]
    3
    """

    levels: dict[str, int] = stat("full-domain levels before blanking", None)
    unsafe_before: int = stat("records below k before blanking", 0)
    blanked_cells: int = stat("cells blanked", 0)
    records_with_blanks: int = stat("records with a blank cell", 0)
    blanked_per_attribute: dict[str, int] = stat("cells blanked per attribute", None)
    importance: list[str] = stat("importance (most important first)", None)
    generalization_s: float = stat("full-domain step time (s)", 0.0)
    suppression_s: float = stat("blanking time (s)", 0.0)


@register
class LocalSuppression(Anonymizer):
    """Local suppression: blank the fewest cells so that every record is k-anonymous.

    sdcMicro's ``localSuppression`` (Templ, Kowarik & Meindl 2015, section 5.2): key values
    are blanked (released as ``*``) record by record until every record has at least ``k``
    compatible records, where a blank matches any value (wildcard semantics, as sdcMicro's
    ``freqCalc`` counts a missing value and ARX's wildcard risk model does; see
    :mod:`anonlab.release.blanks`). The least important attribute is blanked first
    (``importance``); each attribute may lose at most ``limits[q]`` cells. The greedy rounds
    are those of :mod:`anonlab.algorithms.local_suppression.search`.

    Stewards combine it with generalization: a full-domain level first, then blanks for
    the records still below ``k`` (``generalize``). By default (``generalize: optimal``)
    the job's ``optimal`` search chooses the levels under the job's suppression limit (the
    rows it would suppress are instead blanked cell by cell, so the release blanks at most
    as many cells as that release suppresses rows times attributes), with ``search_k`` for
    a looser k in the search; with a mapping, the given levels; with ``none``, none.

    Only k-anonymity can be met: a record with a blank belongs to no single class, so class
    models (l-diversity, t-closeness, risk models) are refused.

    Parameters
    ----------
    importance : list of str, optional
        Quasi-identifiers from the most to the least important; those not named are less
        important than those named, and among themselves the one with more distinct values
        is less important (sdcMicro's default, used for all when not given).
    limits : dict, optional
        The most cells each named quasi-identifier may lose (an int >= 0).
    generalize : "optimal", "none" or dict
        The full-domain level applied before blanking: ``"optimal"`` (the default: the
        ``optimal`` search on the job, under its suppression limit), ``"none"`` (the lowest
        allowed levels: sdcMicro's plain local suppression), or a level per quasi-identifier
        (those not named at their lowest allowed level).
    search_k : int, optional
        The k of the ``optimal`` search of ``generalize: optimal`` (default: the job's k).

    References
    ----------
    .. [1] M. Templ, A. Kowarik and B. Meindl, "Statistical disclosure control for micro-data
       using the R package sdcMicro", Journal of Statistical Software 67(4), 2015,
       section 5.2.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({
    ...     "sex": ["F", "F", "F", "M", "M", "M"],
    ...     "zip": ["4350", "4350", "4360", "4360", "4360", "4350"]})
    >>> job = {"quasi_identifiers": {"sex": {}, "zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 2}}], "metric": "gcp",
    ...        "algorithm": {"name": "local_suppression", "importance": ["sex", "zip"],
    ...                      "generalize": "none"}}
    >>> r = anonlab.anonymize(t, job)
    >>> r.columns["sex"].tolist(), r.columns["zip"].tolist()
    (['F', 'F', 'F', 'M', 'M', 'M'], ['4350', '4350', '*', '4360', '4360', '*'])
    >>> r.release.verification.k_after, r.loss  # (F, *) matches the three F records
    (3, 0.16666666666666666)
    """

    name: ClassVar[str] = "local_suppression"
    family: ClassVar[str] = "local suppression, cells blanked under wildcard matching"
    verifier: ClassVar[str] = "blanks"
    conformance_job: ClassVar[dict[str, Any]] = {"metric": {"name": "gcp"}}
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "importance": Param(list, none=True),
        "limits": Param(dict, none=True),
        "generalize": Param(
            (str, dict), text="'optimal', 'none' or a level per quasi-identifier (a dict)"
        ),
        "search_k": Param(int, low=2, none=True),
    }

    def __init__(
        self,
        *,
        importance: list[str] | None = None,
        limits: dict[str, int] | None = None,
        generalize: str | dict[str, int] = "optimal",
        search_k: int | None = None,
    ) -> None:
        self.importance = importance
        self.limits = limits
        self.generalize = generalize
        self.search_k = search_k

    # ------------------------------------------------------------------ checks
    def accepts_partitions(self) -> bool:
        """Whether it runs out of core block by block: without ``limits`` (a most number of
        blank cells per attribute counts the whole table's cells, which blocks anonymized
        one by one cannot share). Each block is blanked on its own, its levels chosen on it
        (``generalize: optimal``: the search on the block, under its share of the
        suppression limit); a blank matches any value, so a record's compatible records
        only grow in the union (:mod:`anonlab.release.partitioned`)."""
        return self.limits is None

    def suppresses_rows(self) -> bool:
        """Whether the job's suppression limit means something: only with
        ``generalize: optimal``, whose search chooses its levels under it (the rows it would
        suppress are blanked instead; no row is removed)."""
        return not (self.generalize == "none" or isinstance(self.generalize, dict))

    def _check_problem(self, problem: Problem) -> None:
        """Refuse, before any work, models, names and levels the algorithm cannot use."""
        blank_problem(problem, "Algorithm 'local_suppression'")
        qis = problem.quasi_identifiers
        for i, q in enumerate(self.importance or []):
            self._known(q, qis, "importance")
            if q in (self.importance or [])[:i]:
                raise ParameterError(
                    f"The importance list of 'local_suppression' names {q!r} twice."
                )
        for q, limit in (self.limits or {}).items():
            self._known(q, qis, "limits")
            Param(int, low=0).check(limit, f"limits[{q!r}]", owner=self.name)
        if isinstance(self.generalize, str) and self.generalize not in ("optimal", "none"):
            raise ParameterError(
                f"The 'generalize' parameter of {self.name} must be 'optimal', 'none' or a "
                f"level per quasi-identifier (a dict). Got {self.generalize!r} instead."
            )
        if isinstance(self.generalize, dict):
            for q, level in self.generalize.items():
                self._known(q, qis, "generalize")
                low, high = problem.level_bounds[q] if q in problem.level_bounds else (0, 0)
                Param(int, low=low, high=high).check(level, f"generalize[{q!r}]", owner=self.name)
        if self.search_k is not None and self.generalize != "optimal":
            raise ParameterError(
                "The 'search_k' parameter of local_suppression would do nothing: it is the k "
                "of the search of 'generalize: optimal'. Drop it, or add 'generalize: optimal'."
            )

    def _known(self, q: Any, qis: tuple[str, ...], what: str) -> None:
        if q not in qis:
            raise ParameterError(
                f"The {what} of 'local_suppression' names {q!r}, which is not a "
                f"quasi-identifier.{did_you_mean(str(q), list(qis))} Quasi-identifiers: "
                f"{', '.join(qis)}. Nothing was written."
            )

    # ------------------------------------------------------------------ fit
    def _levels(self, problem: Problem) -> tuple[dict[str, int], float]:
        """The full-domain levels applied before blanking, and the time to find them."""
        qis = problem.quasi_identifiers
        levels = dict(zip(qis, problem.min_levels))
        if isinstance(self.generalize, dict):
            levels.update({str(q): int(v) for q, v in self.generalize.items()})
            return levels, 0.0
        if self.generalize != "optimal":
            return levels, 0.0
        start = time.perf_counter()
        search = problem
        if self.search_k is not None:
            search = dataclasses.replace(
                problem, models=tuple(_with_k(m, self.search_k) for m in problem.models)
            )
        optimal = ALGORITHMS.lookup("optimal")()
        optimal.fit(search)
        found = optimal.recoding_
        if not isinstance(found, FullDomain):  # pragma: no cover - optimal's contract
            raise ParameterError("The optimal search returned no full-domain level.")
        return dict(found.levels), time.perf_counter() - start

    def _rank(self, problem: Problem, cardinalities: list[int]) -> np.ndarray:
        """Importance rank per quasi-identifier (0: the most important)."""
        qis = problem.quasi_identifiers
        named = [q for q in (self.importance or []) if q in qis]
        rest = sorted(
            (q for q in qis if q not in named),
            key=lambda q: (cardinalities[qis.index(q)], qis.index(q)),
        )
        order = named + rest
        return np.array([order.index(q) for q in qis], dtype=np.int64)

    def _fit(self, problem: Problem, progress: Progress | None) -> None:
        del progress
        start = time.perf_counter()
        k = blank_problem(problem, "Algorithm 'local_suppression'")
        levels, search_s = self._levels(problem)
        qis = problem.quasi_identifiers
        columns = []
        for q in qis:
            col = problem.table[q]
            if levels[q]:
                col = generalize_column(col, problem.hierarchies[q], levels[q])
            if col.cardinality > 1 and bool(np.any(col.categories == BLANK)):
                raise ParameterError(
                    f"Quasi-identifier {q!r} holds the label {BLANK!r} beside other values at "
                    f"level {levels[q]}; local suppression releases a blank cell as {BLANK!r}, "
                    "so the two could not be told apart. Recode that value first."
                )
            columns.append(col)
        blank_start = time.perf_counter()
        cards = [c.cardinality for c in columns]
        ids, n_tuples = group_rows([c.codes for c in columns], cards)
        first = np.full(n_tuples, problem.n_rows, dtype=np.int64)
        np.minimum.at(first, ids, np.arange(problem.n_rows, dtype=np.int64))
        codes = np.stack([c.codes[first] for c in columns], axis=1).astype(np.int64)
        weights = np.bincount(ids, minlength=n_tuples).astype(np.int64)
        budget = np.array(
            [
                int((self.limits or {}).get(q, _UNLIMITED))
                if problem.max_levels[j] == problem.heights[j]
                else 0  # a blank is above the job's highest level for q
                for j, q in enumerate(qis)
            ],
            dtype=np.int64,
        )
        rank = self._rank(problem, [int(c.cardinality) for c in columns])
        outcome = suppress(codes, weights, k, rank, budget, qis)
        blank = outcome.blank[ids]
        self.recoding_ = Blanks(levels, blank)
        per = np.count_nonzero(blank, axis=0)
        now = time.perf_counter()
        order = sorted(qis, key=lambda q: int(rank[qis.index(q)]))
        self.search_ = LocalSuppressionStats(
            elapsed_s=now - start,
            evaluated=outcome.rounds,
            levels={q: int(levels[q]) for q in qis},
            unsafe_before=outcome.unsafe_before,
            blanked_cells=int(per.sum()),
            records_with_blanks=int(np.count_nonzero(blank.any(axis=1))),
            blanked_per_attribute={q: int(c) for q, c in zip(qis, per)},
            importance=order,
            generalization_s=search_s,
            suppression_s=now - blank_start,
        )


def _with_k(model: PrivacyModel, k: int) -> PrivacyModel:
    """The k-anonymity model ``model`` with another ``k`` (of its own class: the families
    judge through the model interface and never import a concrete model)."""
    make: Any = type(model)
    out: PrivacyModel = make(k)
    return out
