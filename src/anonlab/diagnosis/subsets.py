"""Level-wise (a-priori) searches over attribute subsets.

Implements find-largest-k-anonymous-subsets (Algorithm 2, and its delta-suppression variant of
question Q7) and find-k-anonymity-all-subsets (Algorithm 3) of Zare Mirakabad, Jantan &
Bressan, *k-anonymity Diagnosis Centre*, sections 4.3-4.5. Both rest on Lemma 1
(monotonicity): adding attributes never raises k, with or without delta-suppression.

Subsets are tuples of attribute names in the order of the candidate list.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import numpy.typing as npt

from anonlab.engines.base import Engine, Levels

__all__ = ["SubsetEvaluator", "apriori_levels", "largest_subsets", "all_subsets", "minimal_failing"]

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
    """

    engine: Engine
    levels: Levels | None = None
    progress: Progress | None = None
    total: int | None = None
    evaluations: int = 0

    def sizes(self, subset: Subset) -> npt.NDArray[np.int64]:
        """Return the class sizes of ``subset`` and count one evaluation."""
        lv = {a: self.levels[a] for a in subset if self.levels and a in self.levels}
        out = self.engine.class_sizes(list(subset), lv)
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


def apriori_levels(
    attributes: Sequence[str],
    passes: Callable[[Subset], bool],
) -> Iterator[tuple[int, list[Subset], list[Subset]]]:
    """Walk the subset lattice level by level, expanding only subsets that pass.

    Parameters
    ----------
    attributes : sequence of str
        Candidate attributes.
    passes : callable
        Evaluates a subset (this is where evaluations are counted).

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
    while candidates:
        passing = [c for c in candidates if passes(c)]
        yield size, candidates, passing
        candidates = list(_join(passing, order))
        size += 1


def largest_subsets(
    evaluator: SubsetEvaluator,
    attributes: Sequence[str],
    accept: Callable[[npt.NDArray[np.int64]], bool],
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

    Returns
    -------
    list of tuple
        The largest accepted subsets (none of them contains another), by size then order.
    """
    result: list[Subset] = []
    previous: list[Subset] = []
    for _, _, passing in apriori_levels(attributes, lambda s: accept(evaluator.sizes(s))):
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
    """
    failing: list[tuple[Subset, npt.NDArray[np.int64]]] = []

    def passes(s: Subset) -> bool:
        sizes = evaluator.sizes(s)
        ok = accept(sizes)
        if not ok:
            failing.append((s, sizes))
        return ok

    for size, _, _ in apriori_levels(attributes, passes):
        if max_size is not None and size >= max_size:
            break
    return failing


def all_subsets(attributes: Sequence[str]) -> Iterator[Subset]:
    """All non-empty subsets, level by level, in candidate order (prefixes come first)."""
    for r in range(1, len(attributes) + 1):
        yield from combinations(attributes, r)
