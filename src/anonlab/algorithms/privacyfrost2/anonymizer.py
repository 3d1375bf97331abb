"""The registered PrivacyFrost2 algorithm (``algorithm: privacyfrost2``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress
from anonlab.algorithms._lattice import build_evaluator, lattice_of
from anonlab.algorithms.base import Anonymizer, Param, register
from anonlab.algorithms.privacyfrost2.presampling import PreSampling, presample
from anonlab.algorithms.privacyfrost2.search import search
from anonlab.exceptions import ParameterError
from anonlab.io.job import PRIORITY
from anonlab.metrics.scores import SCORES, build_score
from anonlab.release.problem import Problem
from anonlab.release.recoding import FullDomain, Levels, Recoding
from anonlab.release.result import SearchStats, stat

__all__ = ["PrivacyFrost2", "PrivacyFrost2Stats"]


@dataclass
class PrivacyFrost2Stats(SearchStats):
    """What PrivacyFrost2 did, each field labelled as reports print it.

    ``evaluated`` counts the tables checked by both steps; ``score`` is the released table's.
    ``full_domain_*`` describe ``T^G``, the full-domain table of the search (the released
    table's loss is the result's); ``paper_*`` the paper's own search, before anonlab's
    restarts; ``presampled_rows`` the records pre-sampling removed (section 5.1);
    ``partial_*`` the partial-domain step (section 5.4), None when it did not run.

    Examples
    --------
    >>> stats = PrivacyFrost2Stats(elapsed_s=0.1, evaluated=6, lattice_size=12, score=0.75)
    >>> stats.to_dict()["score"], stats.score_function
    (0.75, 'basic')
    """

    lattice_size: int = stat("lattice size")
    score_function: str = stat("score function", "basic")
    score: float = stat("score", 0.0)
    full_domain_levels: dict[str, int] = stat("full-domain table T^G", {})
    full_domain_score: float = stat("full-domain score", 0.0)
    full_domain_loss: float = stat("loss of T^G", 0.0)
    paper_score: float = stat("score of the paper's search", 0.0)
    paper_levels: dict[str, int] = stat("levels of the paper's search", {})
    restarts_allowed: int = stat("restarts allowed", 0)
    restarts_run: int = stat("restarts run", 0)
    tables_scored: int = stat("tables scored", 0)
    skipped_by_bound: int = stat("skipped by the score bound", 0)
    presampled_rows: int = stat("rows removed by pre-sampling", 0)
    presampling_s: float = stat("pre-sampling time (s)", 0.0)
    partial_classes: int | None = stat("partial-domain classes", None)
    partial_splits: int | None = stat("partial-domain group splits", None)
    partial_tables_checked: int | None = stat("partial-domain tables checked", None)


#: The constraint of ``presampling``'s ``k`` (the paper's ``k'``).
_PRESAMPLING_K = Param(int, low=1)


@register
class PrivacyFrost2(Anonymizer):
    """PrivacyFrost2: requirement-driven full- and partial-domain generalization.

    The user ranks the quasi-identifiers (``priority`` beside each, higher keeps finer) and
    bounds how far each may go (``max_level``: the paper's minimum level ``w^M``); the search
    returns the table with the best score that satisfies every model, then optionally
    de-generalizes it group by group (partial domain).

    Parameters
    ----------
    score : {"basic", "eta", "log"}
        The scoring function of section 6.
    d : int, optional
        The ``d`` of the eta score (only with ``score="eta"``).
    p : int
        The system parameter of the pre-computation: each attribute alone is first made
        ``(k + p)``-anonymous.
    restarts : int, optional
        anonlab's restarts of the search (0: exactly the paper's; default 8, or 0 with
        ``partial_domain``).
    partial_domain : bool
        Run the partial-domain de-generalization (section 5.4).
    presampling : dict, optional
        ``{levels: {attribute: level} or one level, k: int}``: remove the records isolated
        at those levels first (section 5.1, the paper's ``u`` and ``k'``).

    References
    ----------
    .. [1] S. Kiyomoto, Y. Miyake, "PrivacyFrost2: A Efficient Data Anonymization Tool
       Based on Scoring Functions", CD-ARES 2014, sections 3-6 and Fig. 3.

    Examples
    --------
    >>> from anonlab.algorithms import ALGORITHMS
    >>> ALGORITHMS["privacyfrost2"] is PrivacyFrost2
    True
    >>> PrivacyFrost2(score="eta", d=3, partial_domain=True)
    PrivacyFrost2(score='eta', d=3, p=0, restarts=None, partial_domain=True, presampling=None)
    """

    name: ClassVar[str] = "privacyfrost2"
    family: ClassVar[str] = "full-domain generalization"
    frequency_set_condition: ClassVar[str] = "without partial_domain and presampling"
    _parameter_constraints: ClassVar[dict[str, Param]] = {
        "score": Param(str, choices=tuple(sorted(SCORES))),
        "d": Param(int, low=1, none=True),
        "p": Param(int, low=0),
        "restarts": Param(int, low=0, none=True),
        "partial_domain": Param(bool),
        "presampling": Param(dict, none=True),
    }

    def __init__(
        self,
        *,
        score: str = "basic",
        d: int | None = None,
        p: int = 0,
        restarts: int | None = None,
        partial_domain: bool = False,
        presampling: dict[str, Any] | None = None,
    ) -> None:
        self.score = score
        self.d = d
        self.p = p
        self.restarts = restarts
        self.partial_domain = partial_domain
        self.presampling = presampling

    def accepts_frequency_set(self) -> bool:
        """Whether the search runs on class counts alone: its full-domain part does; the
        partial-domain step and pre-sampling release per class or drop rows, so they need
        the table's rows (see :class:`~anonlab.algorithms.base.Anonymizer`)."""
        return not self.partial_domain and self.presampling is None

    def _check_problem(self, problem: Problem) -> None:
        """Everything :meth:`_fit` relies on, checked once (the search does not again)."""
        if self.d is not None and self.score != "eta":
            raise ParameterError(f"'d' belongs to the 'eta' score only, not to {self.score!r}.")
        self._check_presampling()
        for q, v in problem.priorities.items():  # a job's were checked as it was read
            PRIORITY.check(v, "priority", subject=f"The 'priority' of quasi-identifier {q!r}")

    def _check_presampling(self) -> None:
        raw = self.presampling
        if raw is None:
            return
        if set(raw) - {"levels", "k"} or "k" not in raw:
            raise ParameterError(
                "The 'presampling' parameter of privacyfrost2 must be a mapping {levels: "
                "{attribute: level} or one level for all, k: int >= 1}. "
                f"Got {raw!r} instead."
            )
        _PRESAMPLING_K.check(raw["k"], "privacyfrost2.presampling.k", owner=self.name)

    def _presampling(self, problem: Problem) -> PreSampling | None:
        """The checked ``presampling`` parameter as the search takes it."""
        raw = self.presampling
        if raw is None:
            return None
        k = raw["k"]
        levels = raw.get("levels", 0)
        if isinstance(levels, int) and not isinstance(levels, bool):
            thresholds: Any = {
                q: min(int(levels), problem.hierarchies[q].height)
                for q in problem.quasi_identifiers
            }
        else:
            thresholds = levels
        return PreSampling(thresholds, k)

    def removed_rows(self, problem: Problem) -> npt.NDArray[np.bool_] | None:
        """The rows pre-sampling removes (section 5.1): those of groups with fewer than
        ``k'`` records at the threshold levels; None without pre-sampling.

        Examples
        --------
        >>> from anonlab.algorithms import build_anonymizer
        >>> build_anonymizer("privacyfrost2").removed_rows(None) is None
        True
        """
        if self.presampling is None:
            return None
        self._check_presampling()  # (a release is read without a job's check first)
        presampling = self._presampling(problem)
        if presampling is None:
            return None
        evaluator = build_evaluator(problem, with_rows=True)
        keep = presample(evaluator, presampling).keep
        row_class = evaluator.base.row_class
        assert row_class is not None
        removed: npt.NDArray[np.bool_] = ~keep[np.asarray(row_class, dtype=np.int64)]
        return removed

    def _fit(self, problem: Problem, progress: Progress | None) -> None:
        evaluator = build_evaluator(problem, with_rows=True)
        lattice = lattice_of(problem)
        score = build_score(self.score, **({"d": self.d} if self.d is not None else {}))
        res = search(  # on the parameters check() validated
            evaluator,
            lattice,
            priorities=[int(problem.priorities.get(q, 1)) for q in problem.quasi_identifiers],
            score=score,
            p=self.p,
            restarts=self.restarts,
            partial_domain=self.partial_domain,
            presampling=self._presampling(problem),
            progress=progress,
        )
        base = evaluator.base
        assert base.row_class is not None
        row_class = np.asarray(base.row_class, dtype=np.int64)
        rows = None
        if res.kept is not None:
            keep_rows = res.kept[row_class]
            rows = None if bool(keep_rows.all()) else np.flatnonzero(keep_rows)
        recoding: Recoding
        qis = problem.quasi_identifiers
        if res.partial is not None and res.partial.splits:  # (no split: the release is T^G)
            recoding = Levels(res.partial.base_levels, row_class, rows)
        else:
            recoding = FullDomain(dict(zip(qis, res.levels)), rows)
        part = res.partial
        self.recoding_ = recoding
        self.search_ = PrivacyFrost2Stats(
            elapsed_s=res.elapsed_s,
            evaluated=res.tables_checked + (0 if part is None else part.tables_checked),
            lattice_size=lattice.size,
            score_function=res.score_name,
            score=res.score,
            full_domain_levels=dict(zip(qis, map(int, res.levels))),
            full_domain_score=res.full_domain_score,
            full_domain_loss=res.full_domain_loss,
            paper_score=res.score_before_restarts,
            paper_levels=dict(zip(qis, map(int, res.levels_before_restarts))),
            restarts_allowed=res.restarts,
            restarts_run=res.restarts_run,
            tables_scored=res.tables_scored,
            skipped_by_bound=res.skipped_by_bound,
            presampled_rows=0 if rows is None else problem.n_rows - int(rows.size),
            presampling_s=res.presampling_s,
            partial_classes=None if part is None else part.n_classes,
            partial_splits=None if part is None else part.splits,
            partial_tables_checked=None if part is None else part.tables_checked,
        )
        self.context_ = evaluator.context if rows is None else None
