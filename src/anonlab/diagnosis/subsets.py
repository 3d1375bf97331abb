"""Level-wise (a-priori) searches over attribute subsets.

Implements find-largest-k-anonymous-subsets (Algorithm 2, and its delta-suppression variant of
question Q7) and find-k-anonymity-all-subsets (Algorithm 3) of Zare Mirakabad, Jantan &
Bressan, *k-anonymity Diagnosis Centre*, sections 4.3-4.5. Both rest on Lemma 1
(monotonicity): adding attributes never raises k, with or without delta-suppression.

Subsets are tuples of attribute names in the order of the candidate list.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import combinations, islice

import numpy as np
import numpy.typing as npt

from anonlab.engines.base import AttributeLevels, Engine
from anonlab.exceptions import ParameterError

__all__ = [
    "MAX_LEVEL_CANDIDATES",
    "MAX_LISTED_SUBSETS",
    "SubsetEvaluator",
    "all_subsets",
    "apriori_levels",
    "check_subset_space",
    "count_subsets",
    "largest_subsets",
    "minimal_failing",
]

Subset = tuple[str, ...]
from anonlab._progress import Progress  # noqa: E402,F401  re-exported


@dataclass
class SubsetEvaluator:
    """Class sizes of attribute subsets from an engine, counting evaluations.

    Parameters
    ----------
    engine : Engine
        Where class statistics come from.
    levels : Mapping[str, int], optional
        Hierarchy level per attribute (questions at chosen generalization levels).
    progress : callable, optional
        Called as ``progress(1, total)`` after each evaluation.
    total : int, optional
        Expected number of evaluations, for progress bars.

    Attributes
    ----------
    evaluations : int
        Subsets whose classes were computed.
    constant : list of str
        The attributes evaluated on their own, on their original values, that hold one value
        in every row (of a table of more than one row): they tell no one apart.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"], "sex": ["F", "M", "F"]})
    >>> evaluator = SubsetEvaluator(open_engine(t))
    >>> evaluator.sizes(("zip",)).tolist(), evaluator.evaluations
    ([2, 1], 1)
    """

    engine: Engine
    levels: AttributeLevels | None = None
    progress: Progress | None = None
    total: int | None = None
    evaluations: int = 0
    constant: list[str] = field(default_factory=list)

    def sizes(self, subset: Subset) -> npt.NDArray[np.int64]:
        """Return the class sizes of ``subset`` and count one evaluation.

        Examples
        --------
        >>> from anonlab import EncodedTable
        >>> from anonlab.api import open_engine
        >>> evaluator = SubsetEvaluator(open_engine(EncodedTable.from_columns({"sex": ["F", "M", "F"]})))
        >>> evaluator.sizes(("sex",)).tolist(), evaluator.evaluations
        ([2, 1], 1)
        """
        lv = {a: self.levels[a] for a in subset if self.levels and a in self.levels}
        out = self.engine.class_sizes(list(subset), lv)
        if len(subset) == 1 and not lv and out.size == 1 and out[0] > 1:
            self.constant.append(subset[0])
        self.evaluations += 1
        if self.progress is not None:
            self.progress(1, self.total)
        return out


def _join(level: Sequence[Subset], order: dict[str, int]) -> Iterator[Subset]:
    """A-priori candidate generation: unions of two sets that share all but their last item,
    kept only if every subset one smaller is in ``level``."""
    present = set(level)
    by_prefix: dict[Subset, list[Subset]] = {}
    for s in level:
        by_prefix.setdefault(s[:-1], []).append(s)
    for group in by_prefix.values():
        group.sort(key=lambda s: order[s[-1]])
        for i, a in enumerate(group):
            for b in group[i + 1 :]:
                cand = a + (b[-1],)
                if all(cand[:j] + cand[j + 1 :] in present for j in range(len(cand) - 2)):
                    yield cand


#: The most subsets a table question (Q4, Q8, Q10, Q12) lists: every subset of 20 attributes.
MAX_LISTED_SUBSETS = 2**20
#: The most candidates one level of an a-priori search (Q3, Q7, QI discovery) evaluates.
MAX_LEVEL_CANDIDATES = 100_000


def count_subsets(n: int, max_size: int | None = None) -> int:
    """Number of non-empty subsets of ``n`` attributes with at most ``max_size`` of them."""
    top = n if max_size is None else min(n, max_size)
    return sum(math.comb(n, r) for r in range(1, top + 1))


def check_subset_space(question: str, n: int, max_size: int | None, *, per_subset: int = 1) -> int:
    """Return the number of subsets a table question lists, or raise if it is too many.

    Raises
    ------
    ParameterError
        If more than :data:`MAX_LISTED_SUBSETS` rows would be listed; the message names the
        numbers and the ways out (fewer attributes, a size bound).
    """
    total = count_subsets(n, max_size)
    if total * per_subset > MAX_LISTED_SUBSETS:
        bound = "" if max_size is None else f" of at most {max_size} attributes"
        raise ParameterError(
            f"{question} lists every subset{bound} of {n} attributes: {_big(total)} subsets"
            f"{f' x {per_subset} values of k' if per_subset > 1 else ''}, more than the "
            f"{MAX_LISTED_SUBSETS:,} anonlab lists. Choose fewer candidates with --attributes "
            "(attributes=), or bound the subset size with --max-size (max_size=)."
        )
    return total


def _big(x: int) -> str:
    return f"{x:,}" if x < 10**15 else f"{float(x):.3g}"


def apriori_levels(
    attributes: Sequence[str],
    passes: Callable[[Subset], bool],
    *,
    max_size: int | None = None,
) -> Iterator[tuple[int, list[Subset], list[Subset]]]:
    """Walk the subset lattice level by level, expanding only subsets that pass.

    A level with more than :data:`MAX_LEVEL_CANDIDATES` candidates is not evaluated: the
    search stops with an error that names the numbers before it builds them all.

    Parameters
    ----------
    attributes : sequence of str
        Candidate attributes.
    passes : callable
        Evaluates a subset (this is where evaluations are counted).
    max_size : int, optional
        Largest subset size to evaluate.

    Yields
    ------
    size : int
        Subset size of the level.
    candidates : list of tuple
        Subsets evaluated on this level.
    passing : list of tuple
        Those that passed.
    """
    order = {a: i for i, a in enumerate(attributes)}
    candidates: list[Subset] = [(a,) for a in attributes]
    size = 1
    while candidates and (max_size is None or size <= max_size):
        if len(candidates) > MAX_LEVEL_CANDIDATES:
            raise _too_many(size, len(candidates), len(attributes))
        passing = [c for c in candidates if passes(c)]
        yield size, candidates, passing
        candidates = list(islice(_join(passing, order), MAX_LEVEL_CANDIDATES + 1))
        size += 1


def _too_many(size: int, count: int, n: int) -> ParameterError:
    more = "more than " if count > MAX_LEVEL_CANDIDATES else ""
    return ParameterError(
        f"The subset search over {n} attributes would evaluate {more}{MAX_LEVEL_CANDIDATES:,} "
        f"candidate subsets of size {size} (at most {MAX_LEVEL_CANDIDATES:,} per size). Choose "
        "fewer candidates with --attributes (attributes=), or stop at a smaller size with "
        "--max-size (max_size=)."
    )


def largest_subsets(
    evaluator: SubsetEvaluator,
    attributes: Sequence[str],
    accept: Callable[[npt.NDArray[np.int64]], bool],
    max_size: int | None = None,
) -> list[Subset]:
    """Return the maximal subsets whose class sizes are accepted (Algorithm 2 / Q7).

    A subset is evaluated only if every subset one smaller was accepted (Lemma 1), so the
    number of evaluations equals the paper's calls to compute-k.

    Parameters
    ----------
    evaluator : SubsetEvaluator
        Computes and counts class sizes.
    attributes : sequence of str
        Candidate attributes.
    accept : callable
        Monotone test on class sizes, e.g. ``k >= 3`` after delta-suppression.
    max_size : int, optional
        Largest subset size examined (the largest accepted subsets up to that size).

    Returns
    -------
    list of tuple
        The largest accepted subsets (none of them contains another), by size then order.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351", "4351"],
    ...                                "sex": ["F", "M", "F", "M"],
    ...                                "age": ["30", "30", "30", "40"]})
    >>> evaluator = SubsetEvaluator(open_engine(t))
    >>> largest_subsets(evaluator, ["zip", "sex", "age"], lambda sizes: sizes.min() >= 2)
    [('zip',), ('sex',)]
    """
    result: list[Subset] = []
    previous: list[Subset] = []
    levels = apriori_levels(attributes, lambda s: accept(evaluator.sizes(s)), max_size=max_size)
    for _, _, passing in levels:
        covered = {p[:j] + p[j + 1 :] for p in passing for j in range(len(p))}
        result.extend(s for s in previous if s not in covered)
        previous = passing
    result.extend(previous)
    return sorted(result, key=lambda s: (-len(s), [attributes.index(a) for a in s]))


def minimal_failing(
    evaluator: SubsetEvaluator,
    attributes: Sequence[str],
    accept: Callable[[npt.NDArray[np.int64]], bool],
    max_size: int | None = None,
) -> list[tuple[Subset, npt.NDArray[np.int64]]]:
    """Return the minimal subsets that fail ``accept`` (the a-priori negative border).

    With ``accept = k >= 2`` these are the minimal attribute combinations under which some
    record is unique: the outside information that would single people out.

    Returns
    -------
    list of (subset, class sizes)

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351", "4351"],
    ...                                "sex": ["F", "M", "F", "M"]})
    >>> evaluator = SubsetEvaluator(open_engine(t))
    >>> [(subset, sizes.tolist()) for subset, sizes in
    ...  minimal_failing(evaluator, ["zip", "sex"], lambda sizes: sizes.min() >= 2)]
    [(('zip', 'sex'), [1, 1, 1, 1])]
    """
    failing: list[tuple[Subset, npt.NDArray[np.int64]]] = []

    def passes(s: Subset) -> bool:
        sizes = evaluator.sizes(s)
        ok = accept(sizes)
        if not ok:
            failing.append((s, sizes))
        return ok

    for _ in apriori_levels(attributes, passes, max_size=max_size):
        pass
    return failing


def all_subsets(attributes: Sequence[str], max_size: int | None = None) -> Iterator[Subset]:
    """All non-empty subsets (of at most ``max_size`` attributes), level by level, in
    candidate order (prefixes come first)."""
    top = len(attributes) if max_size is None else min(len(attributes), max_size)
    for r in range(1, top + 1):
        yield from combinations(attributes, r)
