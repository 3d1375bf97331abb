"""The one independent re-check of every release, before anything is returned or written.

:func:`verify` applies a recoding to the problem's table and judges the result without
trusting the algorithm that made it: the released labels are grouped again by a fresh engine
and every privacy model judges those classes; classes that fail are suppressed, within the
problem's limit, or :class:`~anonlab.exceptions.PrivacyCheckError` is raised and nothing is
released. Then the loss is measured on the released table.

How a release is verified depends on its recoding (``Recoding.verifier``): ``"classes"``
(every family whose release forms equivalence classes) is here; a cell cover (a record
covering several records, non-homogeneous generalization) is verified on its anonymity graph
by max-flow, in a verifier registered in :data:`VERIFIERS`. Per-record models
(:class:`~anonlab.models.per_record.RecordModel`) judge each released record against its own
parameter (``Problem.record_parameters``); a class fails when one of its records does.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._registry import Registry
from anonlab.data.stats import ClassStats, count_population
from anonlab.data.table import EncodedTable, LabelColumns
from anonlab.engines import get_engine
from anonlab.exceptions import PrivacyCheckError
from anonlab.metrics.base import MetricContext
from anonlab.models.base import PrivacyModel, population_of
from anonlab.models.per_record import RecordModel
from anonlab.release.measure import measure
from anonlab.release.problem import Problem
from anonlab.release.recoding import FullDomain, LevelRecoding, Recoding

__all__ = [
    "CLASSES_K",
    "JudgedClasses",
    "Release",
    "Verification",
    "VERIFIERS",
    "judge_classes",
    "model_keys",
    "recheck_written",
    "verify",
]

#: What the k of a release that forms classes is (:attr:`Verification.k_meaning`).
CLASSES_K = "the smallest released class"


@dataclass
class Verification:
    """How a release was re-checked and what the check found.

    Attributes
    ----------
    checks : dict
        Per model (``name``, ``name#2`` for a second one), whether it holds on the release
        (always True: otherwise :func:`verify` raises).
    suppressed_rows : int
        Rows suppressed because their class fails a model.
    removed_rows : int
        Rows the algorithm removed before the release (PrivacyFrost2's pre-sampling).
    classes : int
        Released classes (not suppressed).
    method : str
        How the release was verified.
    k_after : int or None
        The k the release has: the smallest released class of a release that forms
        classes; the largest k of Definition 1 on the anonymity graph of a cell cover
        (Murakami & Uno); None where the verification did not find it (a release made
        block by block whose blocks are cell covers).
    k_meaning : str
        What ``k_after`` is, in words.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> v = anonlab.anonymize(t, job).release.verification
    >>> v.checks, v.k_after, v.k_meaning, v.suppressed_rows
    ({'k_anonymity': True}, 4, 'the smallest released class', 0)
    """

    checks: dict[str, bool]
    suppressed_rows: int
    removed_rows: int
    classes: int
    method: str = "the models judged the classes of the released labels"
    k_after: int | None = None
    k_meaning: str = CLASSES_K

    def to_dict(self) -> dict[str, Any]:
        """The JSON form.

        Examples
        --------
        >>> v = Verification({"k_anonymity": True}, suppressed_rows=0, removed_rows=0, classes=2,
        ...                  k_after=4)
        >>> v.to_dict()["checks"], v.to_dict()["k_meaning"]
        ({'k_anonymity': True}, 'the smallest released class')
        """
        return {
            "checks": self.checks,
            "suppressed_rows": self.suppressed_rows,
            "removed_rows": self.removed_rows,
            "classes": self.classes,
            "k_after": self.k_after,
            "k_meaning": self.k_meaning,
            "method": self.method,
        }


@dataclass
class Release:
    """A verified release: the table to publish, how it was verified, and its loss.

    Attributes
    ----------
    columns : LabelColumns
        The released table (suppressed rows removed, or their quasi-identifiers masked with
        ``*``; identifiers never released), decoded when first read.
    verification : Verification
    loss : float
        The problem's metric measured on the released table.
    metric : str
        The metric's name.
    classes : ClassStats
        The classes of the released labels (before suppression); with their keys for a
        full-domain release only.
    suppressed : ndarray of bool
        Per class, whether it is suppressed.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "height"}
    >>> release = anonlab.anonymize(t, job).release
    >>> release.metric, release.loss, release.classes.sizes.tolist(), int(release.suppressed.sum())
    ('height', 1.0, [4, 4], 0)
    """

    columns: LabelColumns
    verification: Verification
    loss: float
    metric: str
    classes: ClassStats = field(repr=False)
    suppressed: npt.NDArray[np.bool_] = field(repr=False)


def model_keys(models: tuple[PrivacyModel, ...] | list[PrivacyModel]) -> list[str]:
    """Names of the models as results report them: ``name``, ``name#2`` for a repeat.

    Examples
    --------
    >>> from anonlab.models import KAnonymity
    >>> model_keys([KAnonymity(2), KAnonymity(5)])
    ['k_anonymity', 'k_anonymity#2']
    """
    seen: dict[str, int] = {}
    keys = []
    for m in models:
        seen[m.name] = seen.get(m.name, 0) + 1
        keys.append(m.name if seen[m.name] == 1 else f"{m.name}#{seen[m.name]}")
    return keys


@dataclass
class JudgedClasses:
    """The classes of a released table judged by every model, failing ones suppressed.

    What :func:`judge_classes` returns to a verifier of a release that forms classes.

    Attributes
    ----------
    stats : ClassStats
        The classes of the released labels (before suppression), with each row's class.
    ok : ndarray of bool
        Per class, whether it is released (every model holds on it).
    checks : dict
        Per model (:func:`model_keys`), whether it holds on the released classes.
    suppressed_rows : int
        Rows suppressed because their class fails a model.
    columns : LabelColumns
        The table to publish (suppressed rows removed or masked, identifiers dropped).
    k_after : int
        The smallest released class.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> r = anonlab.anonymize(t, job)
    >>> judged = judge_classes(r.problem, r.recoding, r.recoding.apply(r.problem))
    >>> judged.checks, judged.k_after, judged.ok.tolist()
    ({'k_anonymity': True}, 4, [True, True])
    """

    stats: ClassStats
    ok: npt.NDArray[np.bool_]
    checks: dict[str, bool]
    suppressed_rows: int
    columns: LabelColumns
    k_after: int


def judge_classes(
    problem: Problem,
    recoding: Recoding,
    released: EncodedTable,
    *,
    mask_suppressed: bool = False,
    with_keys: bool = False,
) -> JudgedClasses:
    """Group the released labels afresh, judge every class by every model, suppress the
    failing classes within the problem's limit.

    Parameters
    ----------
    problem : Problem
    recoding : Recoding
        The recoding that made ``released`` (its kept rows, for per-record models).
    released : EncodedTable
        The released table (:meth:`Recoding.apply`).
    mask_suppressed : bool
        Mask the quasi-identifiers of suppressed rows instead of removing them.
    with_keys : bool
        Keep the classes' keys (a full-domain release is measured from them).

    Returns
    -------
    JudgedClasses

    Raises
    ------
    PrivacyCheckError
        More rows fail than the suppression limit allows: nothing may be released.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> r = anonlab.anonymize(t, job)
    >>> judge_classes(r.problem, r.recoding, r.recoding.apply(r.problem)).suppressed_rows
    0
    """
    engine = get_engine("numpy", released)
    qis = list(problem.quasi_identifiers)
    stats = engine.class_stats(
        qis, sensitive=list(problem.sensitive), with_rows=True, with_keys=with_keys
    )
    if _population(problem) is not None:
        if not isinstance(recoding, FullDomain):
            raise PrivacyCheckError(
                f"A {type(recoding).__name__} release cannot be judged against a population "
                "table (only a full-domain generalization applies to it). Nothing was released."
            )
        stats = with_population(problem, stats, recoding.levels)
    mcs = max([m.min_class_size for m in problem.models] + [1])
    ok = stats.sizes >= mcs
    verdicts: list[npt.NDArray[np.bool_]] = []
    for m in problem.models:  # the class-based models, then the sample-based ones on the rest
        passed = (
            np.ones_like(ok) if m.sample_based else _judge(m, problem, recoding, released, stats)
        )
        verdicts.append(passed)
        ok &= passed
    for i, m in enumerate(problem.models):
        if m.sample_based:
            verdicts[i] = ~(m.enforce(stats, ~ok) & ok)
            ok &= verdicts[i]
    suppressed_rows = int(stats.sizes[~ok].sum())
    what = f"the release of {type(recoding).__name__}"
    if suppressed_rows > problem.max_suppressed:
        raise PrivacyCheckError(
            f"Re-check failed: {suppressed_rows} rows violate the models in {what}, more than "
            f"the suppression limit of {problem.max_suppressed}. Nothing was released."
        )
    kept_sizes = stats.sizes[ok]
    if kept_sizes.size and int(kept_sizes.min()) < mcs:  # pragma: no cover - defensive
        raise PrivacyCheckError("Re-check failed: a released class is smaller than required.")
    # a sample-based model judged afresh on the classes released, of a table of n_rows
    kept = ClassStats(stats.columns, stats.levels, stats.sizes[ok], stats.n_rows)
    checks = {
        key: bool(np.all(passed[ok])) and (not m.sample_based or m.holds(kept))
        for key, m, passed in zip(model_keys(problem.models), problem.models, verdicts)
    }
    if not all(checks.values()):  # pragma: no cover - defensive: failing classes are suppressed
        bad = [k for k, v in checks.items() if not v]
        raise PrivacyCheckError(f"Re-check failed for {', '.join(bad)}. Nothing was released.")
    assert stats.row_class is not None
    keep = ok[stats.row_class]
    kept_rows = None if mask_suppressed or bool(keep.all()) else np.flatnonzero(keep)
    hidden = set(problem.identifiers)  # never released
    columns = LabelColumns(
        [col for col in released.columns if col.name not in hidden],
        kept_rows,
        masked=problem.quasi_identifiers,
        keep=keep if mask_suppressed else None,
        typed={n: a for n, a in released.typed.items() if n not in hidden},
        order=[n for n in released.order if n not in hidden],
    )
    kept_k = int(kept_sizes.min()) if kept_sizes.size else 0
    return JudgedClasses(stats, ok, checks, suppressed_rows, columns, kept_k)


def _verify_classes(
    problem: Problem,
    recoding: Recoding,
    *,
    mask_suppressed: bool,
    context: MetricContext | None,
) -> Release:
    """Group the released labels, judge every class by every model, suppress within the
    limit; measure the loss on the release (a release of cells at hierarchy levels)."""
    if not isinstance(recoding, LevelRecoding):  # pragma: no cover - declared by the recoding
        raise PrivacyCheckError(
            f"A {type(recoding).__name__} release is not made of labels at hierarchy levels; "
            "its classes cannot be verified. Nothing was released."
        )
    released = recoding.apply(problem)
    # (a full-domain release is measured from its classes' keys; other releases from cells)
    judged = judge_classes(
        problem, recoding, released, mask_suppressed=mask_suppressed, with_keys=recoding.uniform
    )
    ok = judged.ok
    loss = measure(problem, recoding, judged.stats, ~ok, context)
    removed = 0 if recoding.rows is None else problem.n_rows - int(recoding.rows.size)
    verification = Verification(
        judged.checks,
        judged.suppressed_rows,
        removed,
        int(np.count_nonzero(ok)),
        k_after=judged.k_after,
    )
    return Release(judged.columns, verification, loss, problem.metric.name, judged.stats, ~ok)


def _population(problem: Problem) -> PrivacyModel | None:
    """The first model that reads a population table, or None."""
    return next((m for m in problem.models if m.population_table is not None), None)


def with_population(
    problem: Problem, stats: ClassStats, levels: Mapping[str, int], *, check: bool = True
) -> ClassStats:
    """The released classes ``stats`` with their population records: the models' population
    table generalized to ``levels`` by a fresh engine and its classes matched to the
    released labels (:func:`~anonlab.data.stats.count_population`); ``stats`` itself when
    no model reads a population table.

    Raises
    ------
    ParameterError
        If the models read different population tables.
    """
    population = population_of(problem.models)
    if population is None:
        return stats
    qis = list(problem.quasi_identifiers)
    population.require(qis)
    engine = get_engine("numpy", population.table, hierarchies=dict(problem.hierarchies))
    classes = engine.class_stats(qis, {q: int(levels[q]) for q in qis})
    return count_population(stats, classes, name=population.name, check=check)


def _judge(
    model: PrivacyModel,
    problem: Problem,
    recoding: Recoding,
    released: EncodedTable,
    stats: ClassStats,
) -> npt.NDArray[np.bool_]:
    """A model's verdict on each released class; a per-record model judges every record
    against its own parameter and fails the classes that hold a record over it."""
    if not isinstance(model, RecordModel):
        return np.asarray(model.class_ok(stats), dtype=bool)
    bounds = problem.record_parameters.get(model.record_parameter)
    if bounds is None:
        raise PrivacyCheckError(
            f"Model {model.name!r} judges each record against its own "
            f"{model.record_parameter!r}, which the problem does not give. Nothing was released."
        )
    kept = bounds if recoding.rows is None else np.asarray(bounds)[recoding.rows]
    assert stats.row_class is not None
    original = recoding.kept(problem)[model.attribute]
    verdict = model.judge_records(stats.row_class, original, released[model.attribute], kept)
    return verdict.class_ok


Verifier = Callable[..., Release]

#: How each kind of release is verified (``Recoding.verifier``); a family whose releases are
#: judged otherwise than by their classes registers its verifier here.
VERIFIERS: Registry[Verifier] = Registry("verifier")
VERIFIERS.register("classes", _verify_classes)


def verify(
    problem: Problem,
    recoding: Recoding,
    *,
    mask_suppressed: bool = False,
    context: MetricContext | None = None,
) -> Release:
    """Apply ``recoding`` to the problem's table, re-check it independently, measure it.

    Parameters
    ----------
    problem : Problem
    recoding : Recoding
        What the algorithm returned.
    mask_suppressed : bool
        Mask the quasi-identifiers of suppressed rows with ``*`` instead of removing them.
    context : MetricContext, optional
        The metric context of the rows the recoding keeps, if the algorithm has one (saves
        grouping the original table again); the privacy check never uses it.

    Returns
    -------
    Release

    Raises
    ------
    PrivacyCheckError
        If a model fails beyond the suppression limit: nothing may be released.

    Examples
    --------
    >>> import anonlab
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}], "metric": "height"}
    >>> r = anonlab.anonymize(t, job)
    >>> release = verify(r.problem, r.recoding)
    >>> release.columns["zip"].tolist(), release.verification.checks, release.loss
    (['435*', '435*', '436*', '436*', '435*', '435*', '436*', '436*'], {'k_anonymity': True}, 1.0)
    """
    verifier = VERIFIERS.get(recoding.verifier)
    if verifier is None:  # pragma: no cover - a family registers its verifier with its recoding
        raise PrivacyCheckError(
            f"No verifier for releases of kind {recoding.verifier!r}; nothing was released."
        )
    return verifier(problem, recoding, mask_suppressed=mask_suppressed, context=context)


def recheck_written(
    problem: Problem,
    written: ClassStats,
    verification: Verification,
    *,
    mask_suppressed: bool = False,
    levels: Mapping[str, int] | None = None,
) -> None:
    """Judge a release written out of core, from the classes of the written file.

    The second, independent check of a release an engine streamed to a file
    (:meth:`~anonlab.engines.base.Engine.write_release`): the file's labels grouped again
    (:meth:`~anonlab.engines.base.Engine.release_stats`), every model judges every class,
    and the file must hold what :func:`verify` decided on the frequency set: no failing
    class (suppressed rows are gone, or masked to ``*`` in every quasi-identifier: that
    one class may fail), as many rows and as many classes.

    Parameters
    ----------
    problem : Problem
        The problem (its models and suppression limit).
    written : ClassStats
        The classes of the written file (with keys and the sensitive histograms).
    verification : Verification
        What :func:`verify` found on the frequency set.
    mask_suppressed : bool
        Whether suppressed rows were masked instead of removed.
    levels : Mapping[str, int], optional
        The level of each quasi-identifier in the file (a full-domain release): the models
        that read a population table need it, to generalize the population the same way.

    Raises
    ------
    PrivacyCheckError
        If a class fails a model, or the file's rows or classes are not those verified:
        the caller must not release the file.

    Examples
    --------
    >>> import anonlab
    >>> from anonlab.api import open_engine
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 2})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}},
    ...        "models": [{"k_anonymity": {"k": 4}}]}
    >>> r = anonlab.anonymize(t, job)
    >>> written = open_engine(anonlab.EncodedTable.from_columns(dict(r.columns))).class_stats(["zip"])
    >>> recheck_written(r.problem, written, r.release.verification)  # passes: returns None
    >>> recheck_written(r.problem, open_engine(t).class_stats(["zip"]), r.release.verification)
    Traceback (most recent call last):
    ...
    anonlab.exceptions.PrivacyCheckError: Re-check of the written release failed: 4 classes (8 rows) fail the models; it holds 4 classes, not the 2 verified. Nothing was released.
    """
    for m in problem.models:
        if isinstance(m, RecordModel):
            raise PrivacyCheckError(
                f"Model {m.name!r} judges each record, which a written release cannot be "
                "re-checked for. Nothing was released."
            )
    reader = _population(problem)
    if reader is not None:
        if levels is None:
            raise PrivacyCheckError(
                f"Model {reader.name!r} judges classes against a population table, which a "
                "written release cannot be re-checked for without its levels. Nothing was "
                "released."
            )
        written = with_population(problem, written, levels, check=False)
        if verification.suppressed_rows:  # the population of the classes suppressed is in
            # no written class, yet not outside the sample: the verification judged it
            written = dataclasses.replace(written, population_rows=None)
    mcs = max([m.min_class_size for m in problem.models] + [1])
    ok = written.sizes >= mcs
    for m in problem.models:
        ok &= np.asarray(m.class_ok(written), dtype=bool)
    masked = np.zeros(written.n_classes, dtype=bool)
    if mask_suppressed and verification.suppressed_rows and written.n_classes:
        labels = written.key_labels()
        masked = np.array([all(x == "*" for x in key) for key in labels], dtype=bool)
    failing = ~ok & ~masked
    rows = int(written.sizes.sum())
    expected = problem.n_records - (0 if mask_suppressed else verification.suppressed_rows)
    problems = []
    if failing.any():
        problems.append(
            f"{int(failing.sum())} classes ({int(written.sizes[failing].sum())} rows) fail "
            "the models"
        )
    if rows != expected:
        problems.append(f"it holds {rows} rows, not the {expected} verified")
    if not mask_suppressed and written.n_classes != verification.classes:
        problems.append(
            f"it holds {written.n_classes} classes, not the {verification.classes} verified"
        )
    if mask_suppressed and verification.suppressed_rows:
        in_masked = int(written.sizes[masked].sum())
        if in_masked < verification.suppressed_rows:
            problems.append(
                f"{in_masked} rows are masked, fewer than the {verification.suppressed_rows} "
                "suppressed"
            )
    if problems:
        raise PrivacyCheckError(
            "Re-check of the written release failed: " + "; ".join(problems) + ". Nothing "
            "was released."
        )
