"""The PrivacyFrost2 search (Kiyomoto & Miyake, CD-ARES 2014, sections 3-5 and Fig. 3).

PrivacyFrost2 climbs the generalization lattice towards the table with the highest *score*
(section 6) of the user's requirements, not the least loss: optional pre-sampling (5.1,
:mod:`.presampling`), pre-computation of the initial table ``T^I`` (5.2), top-down
generalization (5.3), the optimization steps (5.4) and an optional partial-domain step (5.4,
step 4, :mod:`.partial`). ``restarts`` (an anonlab extension, 0 = the paper's procedure)
revisits the choices of the greedy search. Levels are anonlab's (0 = original values);
:func:`~anonlab.algorithms.privacyfrost2.to_paper_levels` gives the paper's.

The steps, the readings of the paper where Fig. 3 is ambiguous, and the restarts are
described in ``docs/concepts/privacyfrost2.md``.
"""

from __future__ import annotations

import dataclasses
import time
from collections import OrderedDict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress
from anonlab._typing import IntArray
from anonlab._validation import Param
from anonlab.algorithms._lattice.judge import class_hists
from anonlab.algorithms._lattice.lattice import Lattice, LatticeEvaluator
from anonlab.algorithms.privacyfrost2._common import per_attribute, to_paper_levels
from anonlab.algorithms.privacyfrost2.partial import (
    PartialDomainResult,
    partial_domain_degeneralization,
)
from anonlab.algorithms.privacyfrost2.presampling import (
    PreSample,
    PreSampling,
    presample,
    restrict_evaluator,
)
from anonlab.data.stats import check_dense_counts
from anonlab.exceptions import InputError, ParameterError
from anonlab.io.job import PRIORITY
from anonlab.metrics.scores import Score, build_score

__all__ = ["PrivacyFrost2Result", "privacyfrost2"]

Node = tuple[int, ...]
OWNER = "privacyfrost2"
#: Restarts by default without the partial-domain step (0 = the paper's procedure); how
#: this default was chosen: benchmarks/README.md, "Measurements behind choices in the code".
DEFAULT_RESTARTS = 8

#: Memory for the classes of tables that passed the check (their one-level-finer
#: neighbours are checked by splitting these classes instead of grouping every base class).
CLASS_CACHE_BYTES = 64 * 2**20


@dataclass(frozen=True)
class PrivacyFrost2Result:
    """The outcome of :func:`privacyfrost2` (levels are anonlab's, 0 = original values).

    Attributes
    ----------
    attributes : tuple of str
        The quasi-identifiers, in table order.
    levels, levels_from_root : tuple of int
        The full-domain table ``T^G``, and its levels counted from the root as the paper
        does (``w = height - level``).
    score, full_domain_score : float
        The score ``s`` of the returned table (the partial-domain table if that step ran),
        and of ``T^G``.
    value_counts, base_value_counts : tuple of int
        ``e`` (distinct values of each attribute in ``T^G``) and ``e^b`` (original values).
    priorities : tuple of int
        ``v`` per attribute.
    order : tuple of str
        The attributes by ascending priority (the paper's ``Sort``; ties keep the later
        column first, so an earlier column wins a tie).
    single_attribute_levels, initial_levels : tuple of int
        After pre-computation step 1 (each attribute ``(k+p)``-anonymous alone) and step 2
        (the initial table ``T^I``).
    suppressed_rows : int
        Records of ``T^G`` in classes that violate a model (suppressed, within the limit).
    tables_checked, tables_scored : int
        Distinct whole tables checked and scored by the full-domain search (restarts
        included).
    skipped_by_bound : int
        De-generalizations skipped by the score bound of section 5.3.
    score_name : str
    presample : PreSample or None
        The pre-sampling outcome (``keep`` is a mask over the evaluator's base classes).
    partial : PartialDomainResult or None
        The partial-domain table, indexed by the evaluator's base classes.
    elapsed_s, presampling_s : float
        Wall time of the whole search, and of the pre-sampling step alone (which the
        paper's Table 1 reports; 0 without it).
    restarts, restarts_run : int
        The restart budget asked for (0 = the paper's procedure) and the restarts made.
    levels_before_restarts, score_before_restarts
        ``T^G`` and its score as the paper's procedure returns them, before any restart.
    full_domain_loss : float
        The evaluator's metric on ``T^G`` (of the records pre-sampling kept).
    """

    attributes: tuple[str, ...]
    levels: tuple[int, ...]
    levels_from_root: tuple[int, ...]
    score: float
    full_domain_score: float
    value_counts: tuple[int, ...]
    base_value_counts: tuple[int, ...]
    priorities: tuple[int, ...]
    order: tuple[str, ...]
    single_attribute_levels: tuple[int, ...]
    initial_levels: tuple[int, ...]
    suppressed_rows: int
    tables_checked: int
    tables_scored: int
    skipped_by_bound: int
    score_name: str
    presample: PreSample | None = None
    partial: PartialDomainResult | None = field(default=None, repr=False)
    elapsed_s: float = 0.0
    presampling_s: float = 0.0
    restarts: int = 0
    restarts_run: int = 0
    levels_before_restarts: tuple[int, ...] = ()
    score_before_restarts: float = 0.0
    full_domain_loss: float = float("nan")

    @property
    def transformation(self) -> dict[str, int]:
        """The full-domain levels by attribute name (anonlab convention)."""
        return dict(zip(self.attributes, self.levels))

    @property
    def kept(self) -> npt.NDArray[np.bool_] | None:
        """Per base class, whether pre-sampling kept its records (None without it)."""
        return None if self.presample is None else self.presample.keep


class _Search:
    """Full-domain PrivacyFrost2 (Fig. 3 up to the partial-domain step)."""

    def __init__(
        self,
        evaluator: LatticeEvaluator,
        lattice: Lattice,
        priorities: Sequence[int],
        score: Score,
        p: int,
        progress: Progress | None,
        *,
        keep_runner_ups: bool = False,
    ) -> None:
        self.ev = evaluator
        self.m = len(lattice.attributes)
        self.lo = list(lattice.min_levels)
        self.hi = list(lattice.max_levels)
        self.heights = list(evaluator.heights())
        self.v = np.asarray(priorities, dtype=np.float64)
        self.score_fn = score
        self.k = int(evaluator.mcs)
        self.kp = self.k + int(p)
        self.limit = int(evaluator.max_suppressed)
        self.progress = progress
        # Sort(T, v): ascending priority; ties: later column first (earlier column wins)
        self.order = sorted(range(self.m), key=lambda j: (priorities[j], -j))
        self._checked: dict[Node, tuple[bool, int]] = {}
        # classes of tables that passed, for their one-level-finer neighbours (LRU)
        self._class_ids: OrderedDict[Node, tuple[npt.NDArray[np.integer], int]] = OrderedDict()
        self._scored: dict[Node, float] = {}
        self.skipped = 0
        # restarts (not in the paper): the runner-ups in the order met, as (table, s of the
        # table it came from), kept only when restarts are asked for; the tables stood on
        self.keep_runner_ups = keep_runner_ups
        self._runner_ups: deque[tuple[Node, float]] = deque()
        self._visited: set[Node] = set()
        # the sensitive counts side by side: the compiled judge reads them whole, models
        # that judge themselves per attribute (a slice of columns each)
        self._columns = evaluator.sensitive_columns()
        self._judge = evaluator.compiled_judge()
        # per attribute and level: e (distinct values) and the single-attribute class sizes
        self.counts: list[IntArray] = []
        self.single: list[list[IntArray]] = []
        self.nodes: list[IntArray] = []  # b_w: hierarchy labels per level (+1 for a null)
        for j, height in enumerate(self.heights):
            sizes = [evaluator.attribute_sizes(j, lv) for lv in range(height + 1)]
            self.single.append(sizes)
            self.counts.append(np.array([s.size for s in sizes], dtype=np.int64))
            # the hierarchy's labels on each level, and a null of its own if the data has one
            self.nodes.append(
                np.array([evaluator.level_size(j, lv) for lv in range(height + 1)], np.int64)
            )
        self.base_counts = np.array([c[0] for c in self.counts], dtype=np.int64)

    # ------------------------------------------------------------------ primitives
    def e(self, node: Node) -> IntArray:
        """``e`` of the full-domain table ``node``."""
        return np.array([self.counts[j][lv] for j, lv in enumerate(node)], dtype=np.int64)

    def score(self, node: Node) -> float:
        """Score(T) (memoized; every distinct table counts once)."""
        hit = self._scored.get(node)
        if hit is None:
            hit = self.score_fn.score(self.e(node), self.v, self.base_counts)
            self._scored[node] = hit
        return hit

    def evaluate(self, node: Node) -> tuple[bool, int]:
        """Check_{k,l,c,t}(T) and the suppressed records (memoized).

        A table one level finer than a table that passed (a top-down step) gets its classes
        by splitting that table's classes by the attribute that changed
        (:meth:`LatticeEvaluator.refine`); others are grouped from the base classes. Models
        with rules are judged by the compiled judge (the same verdicts as their ``class_ok``).
        """
        hit = self._checked.get(node)
        if hit is None:
            ids, sizes = self._classes(node)
            g = int(sizes.size)
            check_dense_counts(g, self._columns.n_columns)  # a clear error, not gigabytes
            hist = class_hists(ids, g, self._columns)
            if self._judge is not None:  # models with rules, compiled
                bad = np.empty(g, dtype=np.bool_)
                rows = self._judge.judge(sizes, hist, g, self.k, self._judge.rules, bad)
                hit = (int(rows) <= self.limit, int(rows))
                self.ev.count_evaluation(node)
            else:
                hists = {n: hist[:, o : o + w] for n, (o, w) in self._columns.layout.items()}
                res = self.ev.evaluate_classes(node, ids, sizes, hists or None)
                hit = (bool(res.anonymous), int(res.suppressed_rows))
            self._checked[node] = hit
            if hit[0]:
                self._keep_classes(node, ids, sizes.size)
            if self.progress is not None:
                self.progress(1, None)
        return hit

    def _classes(self, node: Node) -> tuple[npt.NDArray[np.integer], IntArray]:
        """The classes of ``node``: refined from a kept coarser neighbour, if any."""
        for j, lv in enumerate(node):
            if lv < self.hi[j]:
                kept = self._class_ids.get(self._with(node, j, lv + 1))
                if kept is not None:
                    self._class_ids.move_to_end(self._with(node, j, lv + 1))
                    return self.ev.refine(kept[0], kept[1], j, lv)
        return self.ev.classes(node)

    def _keep_classes(self, node: Node, ids: npt.NDArray[np.integer], n_classes: int) -> None:
        """Keep the classes of a table that passed (the tables top-down starts from), the
        most recently used within :data:`CLASS_CACHE_BYTES`."""
        small = ids.astype(np.int32, copy=False) if n_classes < 2**31 else ids
        self._class_ids[node] = (small, n_classes)
        self._class_ids.move_to_end(node)
        while len(self._class_ids) > max(CLASS_CACHE_BYTES // max(small.nbytes, 1), 1):
            self._class_ids.popitem(last=False)

    def kept_classes(self, node: Node) -> tuple[npt.NDArray[np.integer], int] | None:
        """The classes of ``node`` (class per base class, number of classes) if they are
        still kept (a table that passed, recently used), else None."""
        return self._class_ids.get(node)

    def check(self, node: Node) -> bool:
        """Check_{k,l,c,t}(T)."""
        return self.evaluate(node)[0]

    def _small_rows(self, j: int, level: int, k: int) -> int:
        sizes = self.single[j][level]
        return int(sizes[sizes < k].sum())

    @staticmethod
    def _with(node: Node, j: int, level: int) -> Node:
        return node[:j] + (level,) + node[j + 1 :]

    def _keep(self, candidates: Sequence[Node], taken: Node, s: float) -> None:
        """Queue the de-generalizations of a round that were not taken (for restarts)."""
        if self.keep_runner_ups:
            self._runner_ups.extend((cand, s) for cand in candidates if cand != taken)

    # ------------------------------------------------------------------ 5.2
    def precompute(self, attributes: Sequence[str]) -> tuple[Node, Node]:
        """Pre-computation (section 5.2): ``(T^single, T^I)``."""
        levels = list(self.lo)
        for j in range(self.m):  # step 1: each attribute (k+p)-anonymous on its own
            while levels[j] < self.hi[j] and self._small_rows(j, levels[j], self.kp) > self.limit:
                levels[j] += 1
        single = tuple(levels)
        node = single
        while not self.check(node) and any(lv < h for lv, h in zip(node, self.hi)):
            node = tuple(min(lv + 1, h) for lv, h in zip(node, self.hi))  # step 2
        if not self.check(node):
            self._fail(node, attributes)
        return single, node

    def _fail(self, node: Node, attributes: Sequence[str]) -> None:
        suppressed = self.evaluate(node)[1]
        alone = [
            attributes[j]
            for j in range(self.m)
            if self._small_rows(j, self.hi[j], self.k) > self.limit
        ]
        if alone:
            why = (
                f"{', '.join(map(repr, alone))} cannot be made {self.k}-anonymous even on "
                f"{'its' if len(alone) == 1 else 'their'} own at the most general level allowed"
            )
        else:
            capped = [attributes[j] for j in range(self.m) if self.hi[j] < self.heights[j]]
            if capped:
                why = (
                    "the models fail on the combination of the attributes; "
                    f"{', '.join(map(repr, capped))} "
                    f"{'is' if len(capped) == 1 else 'are'} held below the root by max_level"
                )
            else:
                why = (
                    "the models fail even with every attribute at its root (records the "
                    "hierarchies never merge, such as nulls, or a model the whole table fails)"
                )
        raise InputError(
            "PrivacyFrost2 found no table that satisfies the privacy models within the "
            f"minimum levels (anonlab max_level): even the most general allowed table "
            f"{dict(zip(attributes, node))} has {suppressed} records violating them (the "
            f"suppression limit is {self.limit}). Binding: {why}. Raise the maximum levels "
            "(the paper's minimum levels), the suppression limit, or relax the models."
        )

    # ------------------------------------------------------------------ 5.3
    def top_down(self, node: Node, s: float) -> tuple[Node, float]:
        """Top-down generalization from an anonymous table (section 5.3, Fig. 3)."""
        while True:
            self._visited.add(node)
            best: Node | None = None
            best_s = s
            e = self.e(node)
            met: list[Node] = []  # scored (or bounded) above s: runner-ups for restarts
            for j in reversed(self.order):  # i = n .. 1: top priority first
                if node[j] <= self.lo[j]:
                    continue
                bound = self.score_fn.upper_bound(
                    e, self.v, self.base_counts, j, int(self.nodes[j][node[j] - 1])
                )
                cand = self._with(node, j, node[j] - 1)
                if bound <= best_s:  # the paper's "s > s' + delta_s": skip
                    self.skipped += 1
                    if bound > s:
                        met.append(cand)
                    continue
                sc = self.score(cand)
                if sc > s:
                    met.append(cand)
                if sc > best_s and self.check(cand):
                    best, best_s = cand, sc
            if best is None:
                return node, s
            self._keep(met, best, s)
            node, s = best, best_s

    # ------------------------------------------------------------------ 5.4
    def optimize(self, node: Node, s: float) -> tuple[Node, float]:
        """Top-down, then second top-down and bottom-up, until the score stops improving."""
        while True:
            node, s = self.top_down(node, s)
            # 2nd top-down: the best-scoring de-generalization T^T (it fails the check, or
            # top-down would have taken it)
            target: Node | None = None
            target_s = s
            met: list[Node] = []
            for j in reversed(self.order):
                if node[j] <= self.lo[j]:
                    continue
                cand = self._with(node, j, node[j] - 1)
                sc = self.score(cand)
                if sc > s:
                    met.append(cand)
                if sc > target_s:
                    target, target_s = cand, sc
            if target is None:
                return node, s
            self._keep(met, target, s)
            found = self.bottom_up(target, s)
            if found is None:
                return node, s
            node, s = found

    def bottom_up(self, target: Node, s: float) -> tuple[Node, float] | None:
        """Bottom-up generalization from ``T^T`` (section 5.4, step 2).

        Among the one-level generalizations of ``T^T`` (lowest priority first), the
        best-scoring one that passes the check with a score above ``s`` is returned; if
        none passes, the search moves to the best-scoring generalization whose score is
        still above ``s`` and repeats; it gives up when no generalization scores above ``s``.
        """
        while True:
            best: Node | None = None
            best_s = s
            climb: Node | None = None
            climb_s = s
            for j in self.order:  # i = 1 .. n
                if target[j] >= self.hi[j]:
                    continue
                cand = self._with(target, j, target[j] + 1)
                sc = self.score(cand)
                if sc <= s:
                    continue
                if self.check(cand):
                    if sc > best_s:
                        best, best_s = cand, sc
                elif sc > climb_s:
                    climb, climb_s = cand, sc
            if best is not None:
                return best, best_s
            if climb is None:
                return None
            target = climb

    # ------------------------------------------------------------------ restarts (anonlab)
    def restart(self, node: Node, s: float, restarts: int) -> tuple[Node, float, int]:
        """Restart the optimization steps from up to ``restarts`` runner-ups (not in the paper).

        Returns the best table that passes the check (``node`` unless a restart found a
        strictly higher score), its score, and the number of restarts made (fewer than
        ``restarts`` when the queue runs out).
        """
        best, best_s = node, s
        runs = 0
        while runs < restarts:
            start = self._next_runner_up()
            if start is None:
                break
            runs += 1
            cand, parent_s = start
            found: tuple[Node, float] | None
            if self.check(cand):
                found = (cand, self.score(cand))
            else:  # a T^T: the bottom-up step looks for a table above its parent's s
                found = self.bottom_up(cand, parent_s)
            if found is None:
                continue
            found = self.optimize(*found)
            if found[1] > best_s:
                best, best_s = found
        return best, best_s, runs

    def _next_runner_up(self) -> tuple[Node, float] | None:
        """The oldest queued runner-up not stood on yet, with the ``s`` of its round."""
        while self._runner_ups:
            cand, parent_s = self._runner_ups.popleft()
            if cand not in self._visited:
                self._visited.add(cand)
                return cand, parent_s
        return None


def _validate(evaluator: LatticeEvaluator, lattice: Lattice) -> tuple[str, ...]:
    if not isinstance(evaluator, LatticeEvaluator):
        raise ParameterError(
            f"The 'evaluator' parameter of {OWNER} must be a LatticeEvaluator. "
            f"Got {type(evaluator).__name__} instead."
        )
    if not isinstance(lattice, Lattice):
        raise ParameterError(
            f"The 'lattice' parameter of {OWNER} must be a Lattice. "
            f"Got {type(lattice).__name__} instead."
        )
    attrs = tuple(evaluator.base.columns)
    if tuple(lattice.attributes) != attrs:
        raise ParameterError(
            f"The lattice's attributes {list(lattice.attributes)} differ from the evaluator's "
            f"quasi-identifiers {list(attrs)} (same names, same order needed)."
        )
    for a, lo, hi, h in zip(attrs, lattice.min_levels, lattice.max_levels, evaluator.heights()):
        if not 0 <= lo <= hi <= h:
            raise ParameterError(
                f"Levels of quasi-identifier {a!r} must satisfy 0 <= min_level <= max_level "
                f"<= {h} (its hierarchy's height). Got min_level={lo}, max_level={hi}. "
                "(max_level is the paper's minimum level w^M, counted from the original "
                f"values: paper level {h - hi} = anonlab level {hi}.)"
            )
    return attrs


#: The declared constraints of :func:`privacyfrost2`'s own arguments (a job's parameters are
#: the registered algorithm's ``_parameter_constraints``, checked once before the search).
_ARGUMENTS = {
    "score": Param((str, Score), text="a Score or a score name"),
    "p": Param(int, low=0),
    "restarts": Param(int, low=0),
    "partial_domain": Param(bool),
    "presampling": Param(PreSampling, none=True, text="a PreSampling or None"),
}


def privacyfrost2(
    evaluator: LatticeEvaluator,
    lattice: Lattice,
    *,
    priorities: Mapping[str, int] | Sequence[int],
    score: Score | str = "basic",
    p: int = 0,
    restarts: int | None = None,
    partial_domain: bool = False,
    presampling: PreSampling | None = None,
    progress: Progress | None = None,
) -> PrivacyFrost2Result:
    """Anonymize by PrivacyFrost2: the full-domain table with the best score, then optionally
    partial-domain de-generalization (Kiyomoto & Miyake 2014, sections 3-6, Fig. 3).

    Parameters
    ----------
    evaluator : LatticeEvaluator
        The table's base classes, the privacy models (the paper's ``Check_{k,l,c,t}`` is
        "all models hold on every class that is not suppressed, and the suppressed records
        fit ``max_suppressed``"), and the hierarchies (read from its metric context).
    lattice : Lattice
        The levels allowed: ``min_levels`` is the paper's lowest level ``w^L`` and
        ``max_levels`` the paper's *minimum level* ``w^M`` (the most general level the user
        allows), both in anonlab levels (0 = original values); they are never crossed.
    priorities : Mapping[str, int] or sequence of int
        ``v``: a positive int per quasi-identifier (larger = keep more detail). A mapping may
        omit attributes (priority 1); a sequence follows the table order.
    score : Score or {"basic", "log"}, default "basic"
        The scoring function (section 6); ``"eta"`` needs ``d``: pass
        ``build_score("eta", d=...)``.
    p : int, default 0
        The system parameter ``p`` of the pre-computation: each attribute alone is first
        generalized until it is ``(k + p)``-anonymous, with ``k`` the largest minimal class
        size of the models (k of k-anonymity, ceil(l) of l-diversity, ...).
    restarts : int, optional
        Restarts of the optimization steps (sections 5.3-5.4) from the runner-ups after the
        paper's procedure (an anonlab extension, module notes; 0 = exactly the paper's
        procedure, Fig. 3). Default: :data:`DEFAULT_RESTARTS` (8) without
        ``partial_domain``, 0 with it: the partial-domain step refines a coarser ``T^G``
        further (why 0: ``benchmarks/README.md``, "Measurements behind choices in the
        code").
    partial_domain : bool, default False
        Run the partial-domain de-generalization (section 5.4, step 4).
    presampling : PreSampling, optional
        Remove isolated records first (section 5.1). The search runs on the remaining
        records (:func:`restrict_evaluator`); ``result.presample.keep`` says which base
        classes stay.
    progress : callable, optional
        ``progress(1, None)`` per table checked.

    Returns
    -------
    PrivacyFrost2Result

    Raises
    ------
    ParameterError
        Bad priorities (not positive ints), ``p < 0``, ``restarts`` not an int >= 0, unknown
        score, levels outside the hierarchies, a lattice that does not match the evaluator,
        bad pre-sampling parameters -- all before any work.
    InputError
        If no table within the levels allowed satisfies the models (the message names the
        binding attributes), or pre-sampling removes every record.
        A model no generalization can satisfy (``l`` above the distinct sensitive values,
        ...) raises the model's ParameterError.
    PrivacyCheckError
        If ``T^G`` fails its check before the partial-domain step (never expected). The
        release layer re-checks the released table independently
        (:func:`anonlab.release.verify`).

    Notes
    -----
    How the search scores, checks and restarts: ``docs/concepts/privacyfrost2.md``.

    References
    ----------
    S. Kiyomoto and Y. Miyake, "PrivacyFrost2: A Efficient Data Anonymization Tool Based on
    Scoring Functions", CD-ARES 2014, LNCS 8708, pp. 211-225: sections 3 (requirements),
    4.3 (functions), 5.1-5.4 (algorithm), 6 (scores), Appendix A Fig. 3.

    W. D. Harvey and M. L. Ginsberg, "Limited Discrepancy Search", IJCAI 1995, pp. 607-613
    (the restarts: revisit the greedy choices, earliest first; not in the paper).
    """
    t0 = time.perf_counter()
    attrs = _validate(evaluator, lattice)
    prio = per_attribute(priorities, attrs, "priorities", param=PRIORITY, default=1)
    _ARGUMENTS["score"].check(score, "score", owner=OWNER)
    score_fn = build_score(score) if isinstance(score, str) else score
    p = _ARGUMENTS["p"].check(p, "p", owner=OWNER)
    if restarts is not None:  # (None: the default, decided by partial_domain)
        restarts = _ARGUMENTS["restarts"].check(restarts, "restarts", owner=OWNER)
    _ARGUMENTS["partial_domain"].check(partial_domain, "partial_domain", owner=OWNER)
    _ARGUMENTS["presampling"].check(presampling, "presampling", owner=OWNER)
    return _run(
        evaluator,
        lattice,
        attrs,
        prio=prio,
        score_fn=score_fn,
        p=p,
        restarts=restarts,
        partial_domain=partial_domain,
        presampling=presampling,
        progress=progress,
        t0=t0,
    )


def search(
    evaluator: LatticeEvaluator,
    lattice: Lattice,
    *,
    priorities: Sequence[int],
    score: Score,
    p: int,
    restarts: int | None,
    partial_domain: bool,
    presampling: PreSampling | None,
    progress: Progress | None = None,
) -> PrivacyFrost2Result:
    """:func:`privacyfrost2` on parameters already validated, once: by :func:`privacyfrost2`
    itself, or by :meth:`PrivacyFrost2.check <anonlab.algorithms.base.Anonymizer.check>`
    (their declared constraints) for a job.

    Parameters
    ----------
    evaluator, lattice
        As :func:`privacyfrost2` takes them (their agreement is checked here).
    priorities : sequence of int
        One priority ``v >= 1`` per quasi-identifier, in the table's order.
    score : Score
    p : int
    restarts : int or None
        None: the default of :func:`privacyfrost2`.
    partial_domain : bool
    presampling : PreSampling or None
        Its levels are checked against the hierarchies here, before any work.
    progress : callable, optional

    Returns
    -------
    PrivacyFrost2Result
    """
    t0 = time.perf_counter()
    attrs = _validate(evaluator, lattice)
    return _run(
        evaluator,
        lattice,
        attrs,
        prio=list(priorities),
        score_fn=score,
        p=p,
        restarts=restarts,
        partial_domain=partial_domain,
        presampling=presampling,
        progress=progress,
        t0=t0,
    )


def _run(
    evaluator: LatticeEvaluator,
    lattice: Lattice,
    attrs: tuple[str, ...],
    *,
    prio: list[int],
    score_fn: Score,
    p: int,
    restarts: int | None,
    partial_domain: bool,
    presampling: PreSampling | None,
    progress: Progress | None,
    t0: float,
) -> PrivacyFrost2Result:
    """The search of :func:`privacyfrost2` on validated parameters (see :func:`search`)."""
    if restarts is None:
        restarts = 0 if partial_domain else DEFAULT_RESTARTS
    if presampling is not None:
        presampling.levels(evaluator)  # validate before any work

    pre: PreSample | None = None
    work = evaluator
    presampling_s = 0.0
    if evaluator.base.n_rows:  # (no records at all: said below)
        for model in evaluator.models:
            model.check_feasible(evaluator.base)  # what no generalization can repair
    if presampling is not None:
        t_pre = time.perf_counter()
        pre = presample(evaluator, presampling)
        if pre.removed_rows:
            work = restrict_evaluator(evaluator, pre.keep)
        presampling_s = time.perf_counter() - t_pre
    if work.base.n_rows == 0:
        raise InputError("The table has no records to anonymize.")
    if work is not evaluator:  # the records pre-sampling kept may be fewer kinds
        for model in work.models:
            model.check_feasible(work.base)

    search = _Search(work, lattice, prio, score_fn, p, progress, keep_runner_ups=restarts > 0)
    single, initial = search.precompute(attrs)
    paper_node, paper_s = search.optimize(initial, search.score(initial))
    node, s, restarts_run = search.restart(paper_node, paper_s, restarts)

    suppressed = search.evaluate(node)[1]

    partial: PartialDomainResult | None = None
    final_score = s
    if partial_domain:
        order = list(reversed(search.order))
        partial = partial_domain_degeneralization(
            work,
            node,
            min_levels=lattice.min_levels,
            order=order,
            score=score_fn,
            priorities=search.v,
            base_counts=search.base_counts,
            progress=progress,
            classes=search.kept_classes(node),
        )
        if partial.score < s:  # pragma: no cover - the step only keeps non-decreasing changes
            raise AssertionError("The partial-domain step lowered the score.")
        final_score = partial.score
        if pre is not None and pre.removed_rows:
            partial = _expand(partial, pre.keep)

    return PrivacyFrost2Result(
        attributes=attrs,
        levels=node,
        levels_from_root=to_paper_levels(node, search.heights),
        score=final_score,
        full_domain_score=s,
        value_counts=tuple(int(x) for x in search.e(node)),
        base_value_counts=tuple(int(x) for x in search.base_counts),
        priorities=tuple(prio),
        order=tuple(attrs[j] for j in search.order),
        single_attribute_levels=single,
        initial_levels=initial,
        suppressed_rows=suppressed,
        tables_checked=len(search._checked),
        tables_scored=len(search._scored),
        skipped_by_bound=search.skipped,
        score_name=score_fn.name or type(score_fn).__name__,
        presample=pre,
        partial=partial,
        elapsed_s=time.perf_counter() - t0,
        presampling_s=presampling_s,
        restarts=restarts,
        restarts_run=restarts_run,
        levels_before_restarts=paper_node,
        score_before_restarts=paper_s,
        full_domain_loss=_loss(work, node, search.kept_classes(node)),
    )


def _expand(partial: PartialDomainResult, keep: npt.NDArray[np.bool_]) -> PartialDomainResult:
    """Index a partial-domain result by the base classes before pre-sampling."""
    levels = np.full((keep.size, partial.base_levels.shape[1]), -1, partial.base_levels.dtype)
    levels[keep] = partial.base_levels
    cls = np.full(keep.size, -1, dtype=np.int64)
    cls[keep] = partial.class_of_base
    return dataclasses.replace(partial, base_levels=levels, class_of_base=cls)


def _loss(
    evaluator: LatticeEvaluator, node: Node, classes: tuple[npt.NDArray[np.integer], int] | None
) -> float:
    """The evaluator's metric on ``node``, from its classes when the search kept them."""
    if classes is None:
        res = evaluator.evaluate(node, with_loss=True)
    else:
        ids = np.asarray(classes[0], dtype=np.int64)
        sizes = np.bincount(ids, weights=evaluator.base.sizes, minlength=classes[1])
        res = evaluator.evaluate_classes(node, ids, sizes.astype(np.int64), with_loss=True)
    return float("nan") if res.loss is None else float(res.loss)
