"""The registered full-domain algorithms: ``optimal`` and ``incognito``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from anonlab._progress import Progress
from anonlab.algorithms._lattice import (
    Lattice,
    LatticeEvaluator,
    SearchResult,
    build_evaluator,
    check_lattice,
)
from anonlab.algorithms.base import Anonymizer, register
from anonlab.algorithms.full_domain.incognito import incognito_search
from anonlab.algorithms.full_domain.optimal import optimal_search
from anonlab.exceptions import InputError
from anonlab.release.problem import Problem
from anonlab.release.recoding import FullDomain
from anonlab.release.result import SearchStats, stat

__all__ = ["IncognitoSearch", "LatticeSearchStats", "OptimalSearch"]


@dataclass
class LatticeSearchStats(SearchStats):
    """What a full-domain lattice search did.

    Attributes
    ----------
    lattice_size : int
        Transformations in the lattice (``evaluated`` of them had their classes computed).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "height"}
    >>> search = anonlab.anonymize(t, job).search
    >>> type(search).__name__, search.lattice_size, search.evaluated
    ('LatticeSearchStats', 10, 4)
    """

    lattice_size: int = stat("lattice size")


class _LatticeSearch(Anonymizer):
    """The shared part of the full-domain searches: feasibility, the top node, the release."""

    family: ClassVar[str] = "full-domain generalization"
    judges_population: ClassVar[bool] = True

    def _check_problem(self, problem: Problem) -> None:
        check_lattice(problem, self.name)

    def accepts_frequency_set(self) -> bool:
        """True: the search judges class statistics only (see :class:`Anonymizer`)."""
        return True

    def _search(
        self,
        evaluator: LatticeEvaluator,
        lattice: Lattice,
        problem: Problem,
        progress: Progress | None,
    ) -> SearchResult:
        raise NotImplementedError

    def _fit(self, problem: Problem, progress: Progress | None) -> None:
        lattice = check_lattice(problem, self.name)
        evaluator = build_evaluator(problem)
        for m in problem.models:
            m.check_feasible(evaluator.base)
        top = evaluator.evaluate(lattice.top, with_loss=False)
        if not top.anonymous:
            raise InputError(
                "No transformation satisfies the models within the suppression limit, even "
                f"the most general one {dict(zip(problem.quasi_identifiers, lattice.top))}: "
                f"{top.suppressed_rows} rows would be suppressed, the limit is "
                f"{problem.max_suppressed} of {problem.n_records}. Raise 'suppression', relax "
                "the models or allow higher levels. Nothing was written."
            )
        evaluator.reset_evaluations()
        result = self._search(evaluator, lattice, problem, progress)
        if result.best is None:  # pragma: no cover - the top is anonymous
            raise InputError("No anonymous transformation was found. Nothing was written.")
        self.recoding_ = FullDomain(dict(zip(problem.quasi_identifiers, result.best.levels)))
        self.search_ = LatticeSearchStats(result.elapsed_s, result.evaluated_nodes, lattice.size)
        self.context_ = evaluator.context


@register
class OptimalSearch(_LatticeSearch):
    """The optimal full-domain generalization: a Flash-style search of the lattice.

    Predictive tagging of anonymity (monotonic models) and the metric's lower bounds find
    the anonymous transformation with the least loss; when pruning would be unsafe every
    candidate is evaluated, so the result is exact. Takes no parameters.

    References
    ----------
    .. [1] F. Kohlmayer, F. Prasser, C. Eckert, A. Kemper, K. A. Kuhn, "Flash: efficient,
       stable and optimal k-anonymity", PASSAT 2012.
    .. [2] R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymous data
       publishing", J. Intell. Inf. Syst. 33 (2009), section 3 (the properties used).

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "height", "algorithm": "optimal"}
    >>> result = anonlab.anonymize(t, job)
    >>> result.algorithm, result.transformation, result.loss, result.search.evaluated
    ('optimal', {'zip': 1, 'sex': 1}, 2.0, 4)
    """

    name: ClassVar[str] = "optimal"

    def __init__(self) -> None:
        pass

    def _search(
        self,
        evaluator: LatticeEvaluator,
        lattice: Lattice,
        problem: Problem,
        progress: Progress | None,
    ) -> SearchResult:
        return optimal_search(
            evaluator, lattice, monotonic_models=problem.monotonic, progress=progress
        )


@register
class IncognitoSearch(_LatticeSearch):
    """The extended Incognito of Wong et al.: a-priori over attribute subsets, then the
    anonymous full-set nodes ranked by the metric (exact). Takes no parameters.

    References
    ----------
    .. [1] R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymous data
       publishing", J. Intell. Inf. Syst. 33 (2009), section 3.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2,
    ...                                        "sex": ["F", "M"] * 4})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "height", "algorithm": "incognito"}
    >>> result = anonlab.anonymize(t, job)
    >>> result.algorithm, result.transformation, result.loss
    ('incognito', {'zip': 1, 'sex': 1}, 2.0)
    """

    name: ClassVar[str] = "incognito"

    def __init__(self) -> None:
        pass

    def _search(
        self,
        evaluator: LatticeEvaluator,
        lattice: Lattice,
        problem: Problem,
        progress: Progress | None,
    ) -> SearchResult:
        del progress
        return incognito_search(evaluator, lattice, monotonic_models=problem.monotonic)
