"""Anonymization jobs: build hierarchies, models and metric; search; verify; release.

The public entry points are :func:`anonlab.anonymize` and :func:`anonlab.check`. Every
released table is re-checked by the privacy models on classes recomputed from the released
labels by a fresh engine; if the check fails, :class:`~anonlab.exceptions.PrivacyCheckError`
is raised and nothing is written.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab._progress import Progress, stage
from anonlab._resources import format_bytes, memory_budget
from anonlab._validation import check_columns, check_int, did_you_mean
from anonlab.algorithms.global_recoding import (
    Lattice,
    LatticeEvaluator,
    NodeResult,
    incognito_search,
    optimal_search,
)
from anonlab.algorithms.global_recoding.privacyfrost2 import (
    PartialDomainResult,
    PreSampling,
    build_score,
    privacyfrost2,
)
from anonlab.data.builders import (
    date_hierarchy,
    flat_hierarchy,
    interval_hierarchy,
    masking_hierarchy,
)
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.labels import factorize, natural_order
from anonlab.data.schema import Schema
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedColumn, EncodedTable, LabelColumns
from anonlab.diagnosis.risk import warn_identifying_columns
from anonlab.engines import get_engine
from anonlab.exceptions import InputError, ParameterError, PrivacyCheckError
from anonlab.io import read_hierarchy, read_table
from anonlab.io.atomic import check_output, output_format
from anonlab.io.job import JobSpec, parse_job, read_job
from anonlab.io.writers import write_table
from anonlab.metrics import build_metric
from anonlab.metrics.base import Metric, MetricContext
from anonlab.models import build_model
from anonlab.models.base import PrivacyModel

__all__ = [
    "AnonymizationResult",
    "CheckReport",
    "Prepared",
    "anonymize",
    "build_evaluator",
    "check",
    "load_job",
    "prepare",
    "release",
]

ALGORITHMS = ("optimal", "incognito", "privacyfrost2")


def load_job(job: JobSpec | dict[str, Any] | str | os.PathLike[str]) -> JobSpec:
    """Return a :class:`~anonlab.io.job.JobSpec` from a spec, a mapping or a YAML file."""
    if isinstance(job, JobSpec):
        return job
    if isinstance(job, dict):
        return parse_job(job)
    return read_job(job)


@dataclass
class Prepared:
    """A job bound to its data: table, hierarchies, models, metric and lattice (see
    :func:`prepare`)."""

    job: JobSpec
    table: EncodedTable
    qis: tuple[str, ...]
    hierarchies: dict[str, Hierarchy]
    models: list[PrivacyModel]
    metric: Metric
    lattice: Lattice
    max_suppressed: int
    weights: dict[str, float]


def _hierarchy_for(spec: Any, table: EncodedTable) -> Hierarchy:
    if isinstance(spec.hierarchy, Hierarchy):
        return spec.hierarchy.named(spec.name)  # errors name the column it generalizes
    if spec.hierarchy is not None:
        return read_hierarchy(spec.hierarchy, attribute=spec.name)
    values = [v for v in table.column(spec.name).categories if v is not None]
    if spec.builder is None:
        return flat_hierarchy(values, attribute=spec.name)
    kind, params = spec.builder
    builders: dict[str, Callable[..., Hierarchy]] = {
        "mask": masking_hierarchy,
        "intervals": interval_hierarchy,
        "dates": date_hierarchy,
    }
    try:
        return builders[kind](values, attribute=spec.name, **params)
    except TypeError as exc:
        raise ParameterError(
            f"Bad '{kind}' options of quasi-identifier {spec.name!r}: {exc}."
        ) from None


def _models(job: JobSpec) -> list[PrivacyModel]:
    out = []
    for name, params in job.models:
        params = dict(params)
        if name == "hierarchical_t_closeness" and isinstance(params.get("hierarchy"), (str, Path)):
            params["hierarchy"] = read_hierarchy(
                job.base_dir / str(params["hierarchy"]), attribute=str(params.get("attribute"))
            )
        out.append(build_model(name, params))
    return out


def prepare(data: Any, job: JobSpec) -> Prepared:
    """Read the data and build everything the search needs; validate the job against it."""
    schema = Schema.from_lists(
        identifiers=job.identifiers,
        quasi_identifiers=[q.name for q in job.quasi_identifiers],
        sensitive=job.sensitive,
    )
    table = read_table(data, csv_options=job.csv)
    table.require([q.name for q in job.quasi_identifiers], what="quasi-identifier")
    table.require(job.sensitive, what="sensitive attribute")
    check_columns(job.identifiers, table.order, what="identifier")
    table = table.with_schema(schema)
    order = {c: i for i, c in enumerate(table.names)}
    specs = sorted(job.quasi_identifiers, key=lambda q: order[q.name])
    hierarchies = {q.name: _hierarchy_for(q, table) for q in specs}
    for q in specs:
        hierarchies[q.name].leaf_index(table.column(q.name).categories)  # covers every value
    models = _models(job)
    for m in models:
        for attr in m.sensitive_attributes:
            table.require([attr], what=f"attribute of model {m.name!r}")
        if m.min_class_size > table.n_rows:
            raise ParameterError(
                f"Model {m.name!r} needs classes of at least {m.min_class_size} rows, but the "
                f"table has only {table.n_rows} rows. Nothing was written."
            )
    metric_name, metric_params = job.metric
    metric = build_metric(metric_name, **metric_params)
    mins, maxs = [], []
    for q in specs:
        h = hierarchies[q.name]
        lo = 0 if q.min_level is None else q.min_level
        hi = h.height if q.max_level is None else q.max_level
        if not 0 <= lo <= hi <= h.height:
            raise ParameterError(
                f"Levels of quasi-identifier {q.name!r} must satisfy 0 <= min_level <= max_level "
                f"<= {h.height} (its hierarchy's height). Got min_level={lo}, max_level={hi}."
            )
        mins.append(lo)
        maxs.append(hi)
    if job.algorithm not in ALGORITHMS:
        raise ParameterError(
            f"Unknown algorithm {job.algorithm!r}.{did_you_mean(job.algorithm, ALGORITHMS)} "
            f"Valid algorithms: {', '.join(ALGORITHMS)}."
        )
    qis = tuple(q.name for q in specs)
    lattice = Lattice(qis, tuple(mins), tuple(maxs))
    if job.algorithm in ("optimal", "incognito"):
        _check_lattice(lattice, [hierarchies[q].height for q in qis], job.algorithm)
    return Prepared(
        job=job,
        table=table,
        qis=qis,
        hierarchies=hierarchies,
        models=models,
        metric=metric,
        lattice=lattice,
        max_suppressed=int(math.floor(job.suppression * table.n_rows + 1e-9)),
        weights={q.name: q.weight for q in specs},
    )


def _check_lattice(lattice: Lattice, heights: Sequence[int], algorithm: str) -> None:
    """Refuse, before any work, an exact search whose lattice this machine cannot hold."""
    need = lattice.memory_estimate(heights)
    budget = memory_budget()
    if need <= budget:
        return
    m = len(lattice.attributes)
    raise ParameterError(
        f"The '{algorithm}' search over {m} quasi-identifiers has a lattice of "
        f"{lattice.size:,} transformations: about {format_bytes(need)} of memory, more than "
        f"this machine can spare ({format_bytes(budget)}). Use 'algorithm: privacyfrost2' "
        "(made for many quasi-identifiers), fewer quasi-identifiers, or fewer levels "
        "('min_level'/'max_level' per quasi-identifier)."
    )


def _warn_identifiers(p: Prepared, action: str) -> None:
    """A :class:`~anonlab.exceptions.PrivacyRiskWarning` per undeclared identifying column."""
    declared = {*p.qis, *p.job.sensitive, *p.job.identifiers}
    declared.update(a for m in p.models for a in m.sensitive_attributes)
    warn_identifying_columns(
        get_engine("numpy", p.table),
        sorted(declared),
        action=f"{action} Declare it under 'identifiers:' (never released) or as a "
        "quasi-identifier.",
        stacklevel=3,
    )


def input_files(data: Any, job: JobSpec) -> tuple[Path, ...]:
    """The files a job reads: the data, the job file and every hierarchy file it names.

    An output must never be one of them (see :func:`anonlab.io.atomic.check_output`).
    """
    files: list[Path] = []
    if isinstance(data, (str, os.PathLike)):
        files.append(Path(data))
    if job.source is not None:
        files.append(Path(job.source))
    for q in job.quasi_identifiers:
        if isinstance(q.hierarchy, Path):
            files.append(q.hierarchy)
    for _, params in job.models:
        h = params.get("hierarchy")
        if isinstance(h, (str, os.PathLike)):
            files.append(job.base_dir / str(h))
    return tuple(files)


def build_evaluator(p: Prepared, *, with_rows: bool = False) -> LatticeEvaluator:
    """The lattice evaluator of a prepared job: base classes of the quasi-identifiers (with the
    sensitive histograms the models need), models, suppression limit and metric."""
    engine = get_engine("numpy", p.table, hierarchies=p.hierarchies)
    sensitive = sorted({a for m in p.models for a in m.sensitive_attributes})
    base = engine.class_stats(list(p.qis), sensitive=sensitive, with_rows=with_rows)
    context = MetricContext(p.qis, p.hierarchies, base, p.table.n_rows, p.weights)
    return LatticeEvaluator(base, p.hierarchies, p.models, p.max_suppressed, p.metric, context)


def _monotonic(p: Prepared) -> bool:
    if p.job.suppression > 0:
        return all(m.monotonic_generalization and m.monotonic_suppression for m in p.models)
    return all(m.monotonic_generalization for m in p.models)


@dataclass
class AnonymizationResult:
    """The outcome of :func:`anonymize`.

    Attributes
    ----------
    transformation : dict
        Hierarchy level per quasi-identifier.
    loss : float
        Information loss under the job's metric.
    metric : str
    suppressed_rows : int
    evaluated_nodes, lattice_size : int
    elapsed_s : float
    checks : dict
        Per model, whether it holds on the released table (always True: otherwise anonymize
        raises).
    columns : Mapping
        The released table: column name -> labels (a :class:`~anonlab.data.table.LabelColumns`,
        each column decoded when first read).
    algorithm : str
    output : str, optional
        Where the table was written.
    details : dict
        Algorithm-specific figures (PrivacyFrost2: score, tables checked and scored,
        pre-sampled rows, partial-domain groups).
    """

    transformation: dict[str, int]
    loss: float
    metric: str
    suppressed_rows: int
    evaluated_nodes: int
    lattice_size: int
    elapsed_s: float
    checks: dict[str, bool]
    columns: Mapping[str, npt.NDArray[np.object_]] = field(repr=False, default_factory=dict)
    algorithm: str = "optimal"
    output: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form printed by ``anonlab anonymize --json``."""
        out: dict[str, Any] = {
            "transformation": self.transformation,
            "loss": {"metric": self.metric, "value": self.loss},
            "suppressed_rows": self.suppressed_rows,
            "evaluated_nodes": self.evaluated_nodes,
            "lattice_size": self.lattice_size,
            "elapsed_s": self.elapsed_s,
            "checks": self.checks,
            "algorithm": self.algorithm,
        }
        if self.output is not None:
            out["output"] = self.output
        if self.details:
            out[self.algorithm] = self.details
        return out


def _model_key(m: PrivacyModel, seen: dict[str, int]) -> str:
    seen[m.name] = seen.get(m.name, 0) + 1
    return m.name if seen[m.name] == 1 else f"{m.name}#{seen[m.name]}"


def generalize_column(col: EncodedColumn, hierarchy: Hierarchy, level: int) -> EncodedColumn:
    """The column with every value replaced by its label at ``level`` of ``hierarchy``.

    The labels of the column's categories are encoded (a handful of values), then the row
    codes are mapped: the same column as encoding the generalized rows, without touching
    each row's label.
    """
    mapping, labels = hierarchy.generalization(col.categories, level)
    small_codes, categories = factorize(labels[mapping])
    return EncodedColumn(col.name, small_codes[col.codes], categories)


def release(
    p: Prepared, levels: dict[str, int], *, mask_suppressed: bool = False
) -> tuple[LabelColumns, int, dict[str, bool]]:
    """Generalize the table to ``levels``, suppress violating classes, and re-verify.

    The verification is independent of the search: the released labels are re-encoded, a
    fresh engine groups them, and every model judges the classes (the input distribution is
    the reference of distribution-based models, as in ARX: suppressed records stay in scope).

    Returns
    -------
    columns : LabelColumns
        Released labels per column (suppressed rows removed, or masked with ``*``), decoded
        when first read.
    suppressed_rows : int
    checks : dict
        Model name -> True.

    Raises
    ------
    PrivacyCheckError
        If any model fails on the released table or the suppression exceeds the limit.
    """
    table = p.table
    generalized = table.with_columns(
        {
            q: generalize_column(table.column(q), p.hierarchies[q], lv) if lv > 0 else table[q]
            for q, lv in levels.items()
        }
    )  # quasi-identifiers are released as labels, at level 0 too
    return verify_release(p, generalized, f"{levels}", mask_suppressed=mask_suppressed)


def verify_release(
    p: Prepared, generalized: EncodedTable, what: str, *, mask_suppressed: bool = False
) -> tuple[LabelColumns, int, dict[str, bool]]:
    """Independently re-check a generalized table and return its released columns.

    The released labels are grouped by a fresh engine and every model judges the classes;
    classes that fail are suppressed, which must stay within the suppression limit. Used by
    every algorithm before anything is returned or written.

    Parameters
    ----------
    p : Prepared
        The job.
    generalized : EncodedTable
        The table with its quasi-identifiers generalized (rows removed by an algorithm, such
        as PrivacyFrost2's pre-sampling, already dropped).
    what : str
        How the table was made (named in the error).
    mask_suppressed : bool
        Mask the quasi-identifiers of suppressed rows with ``*`` instead of removing them.

    Raises
    ------
    PrivacyCheckError
        If a model fails on a released class or the suppression exceeds the limit.
    """
    engine = get_engine("numpy", generalized)
    sensitive = sorted({a for m in p.models for a in m.sensitive_attributes})
    stats = engine.class_stats(list(p.qis), sensitive=sensitive, with_rows=True, with_keys=False)
    mcs = max([m.min_class_size for m in p.models] + [1])
    ok = stats.sizes >= mcs
    checks: dict[str, bool] = {}
    per_model = []
    for m in p.models:
        passed = m.class_ok(stats)
        per_model.append((m, passed))
        ok &= passed
    suppressed = int(stats.sizes[~ok].sum())
    if suppressed > p.max_suppressed:
        raise PrivacyCheckError(
            f"Re-check failed: {suppressed} rows violate the models at {what}, more than the "
            f"suppression limit of {p.max_suppressed}. Nothing was released."
        )
    assert stats.row_class is not None
    keep = ok[stats.row_class]
    kept_sizes = stats.sizes[ok]
    if kept_sizes.size and kept_sizes.min() < mcs:  # pragma: no cover - defensive
        raise PrivacyCheckError("Re-check failed: a released class is smaller than required.")
    seen: dict[str, int] = {}
    for m, passed in per_model:
        checks[_model_key(m, seen)] = bool(np.all(passed[ok]))
    if not all(checks.values()):
        bad = [k for k, v in checks.items() if not v]
        raise PrivacyCheckError(f"Re-check failed for {', '.join(bad)}. Nothing was released.")
    ident = set(p.job.identifiers)
    kept_rows = None if mask_suppressed or bool(keep.all()) else np.flatnonzero(keep)
    columns = LabelColumns(
        [col for col in generalized.columns if col.name not in ident],  # never released
        kept_rows,
        masked=p.qis,
        keep=keep if mask_suppressed else None,  # None: nothing masked
        typed={n: a for n, a in generalized.typed.items() if n not in ident},
        order=[n for n in generalized.order if n not in ident],
    )  # labels decoded when read
    return columns, suppressed, checks


def anonymize(
    data: Any,
    job: JobSpec | dict[str, Any] | str | os.PathLike[str],
    *,
    output: str | os.PathLike[str] | None = None,
    progress: Progress | None = None,
) -> AnonymizationResult:
    """Anonymize ``data`` by optimal full-domain generalization as the job says.

    Parameters
    ----------
    data : path, DataFrame, pyarrow Table or EncodedTable
        The table.
    job : JobSpec, mapping or path
        The job (see :mod:`anonlab.io.job` and the README).
    output : path, optional
        Write the released table here (CSV, or Parquet by suffix), atomically, after the
        re-check. The input is never overwritten.
    progress : callable, optional
        ``progress(advance, total)`` per lattice node visited.

    Returns
    -------
    AnonymizationResult

    Raises
    ------
    InputError
        Bad job or data, or no transformation satisfies the models within the suppression
        limit, even at the top of the lattice.
    PrivacyCheckError
        The released table failed the independent re-check (never expected).

    References
    ----------
    Wong, Li, Fu & Wang, *(alpha,k)-anonymous data publishing*, section 3 (global recoding,
    generalization and subset properties); Kohlmayer et al., Flash (2012).
    """
    spec = load_job(job)
    protect = input_files(data, spec)
    if output is not None:  # before any work: a bad output path costs nothing
        output_format(output)
        check_output(output, protect=protect)
    stage(
        progress,
        f"reading {Path(data).name}" if isinstance(data, (str, os.PathLike)) else "reading",
    )
    p = prepare(data, spec)
    _warn_identifiers(p, "it is released as it is.")
    stage(progress, "searching")
    if spec.algorithm == "privacyfrost2":
        return _anonymize_privacyfrost2(p, output=output, progress=progress, protect=protect)
    evaluator = build_evaluator(p)
    for m in p.models:
        m.check_feasible(evaluator.base)
    top = evaluator.evaluate(p.lattice.top, with_loss=False)
    if not top.anonymous:
        raise InputError(
            "No transformation satisfies the models within the suppression limit, even the "
            f"most general one {dict(zip(p.qis, p.lattice.top))}: {top.suppressed_rows} rows "
            f"would be suppressed, the limit is {p.max_suppressed} "
            f"({spec.suppression:g} of {p.table.n_rows}). Raise 'suppression', relax the "
            "models or allow higher levels. Nothing was written."
        )
    evaluator.reset_evaluations()
    if spec.algorithm == "incognito":
        result = incognito_search(evaluator, p.lattice, monotonic_models=_monotonic(p))
    else:
        result = optimal_search(
            evaluator, p.lattice, monotonic_models=_monotonic(p), progress=progress
        )
    best: NodeResult | None = result.best
    if best is None or best.loss is None:  # pragma: no cover - the top is anonymous
        raise InputError("No anonymous transformation was found. Nothing was written.")
    levels = dict(zip(p.qis, best.levels))
    mask = spec.output.get("suppressed", "remove") == "mask"
    columns, suppressed, checks = release(p, levels, mask_suppressed=mask)
    out_path = None
    if output is not None:
        write_table(
            columns,
            output,
            separator=spec.csv.separator,
            protect=protect,
            status=lambda m: stage(progress, m),
        )
        out_path = str(output)
    return AnonymizationResult(
        transformation=levels,
        loss=float(best.loss),
        metric=p.metric.name,
        suppressed_rows=suppressed,
        evaluated_nodes=result.evaluated_nodes,
        lattice_size=result.lattice_size,
        elapsed_s=result.elapsed_s,
        checks=checks,
        columns=columns,
        algorithm=result.algorithm,
        output=out_path,
    )


#: Keys of a job's ``privacyfrost2:`` section (``restarts`` is anonlab's extension of the
#: paper's search; 0 = the paper's procedure).
PF2_KEYS = ("score", "d", "p", "partial_domain", "presampling", "restarts")


def _pf2_options(p: Prepared) -> dict[str, Any]:
    """Validate the ``privacyfrost2:`` section of a job (before any work)."""
    opts = dict(p.job.algorithm_params)
    unknown = [k for k in opts if k not in PF2_KEYS]
    if unknown:
        raise ParameterError(
            f"Unknown key {unknown[0]!r} under 'privacyfrost2'."
            f"{did_you_mean(str(unknown[0]), PF2_KEYS)} Valid keys: {', '.join(PF2_KEYS)}."
        )
    name = str(opts.get("score", "basic"))
    params = {"d": opts["d"]} if "d" in opts else {}
    if name != "eta" and params:
        raise ParameterError(f"'d' belongs to the 'eta' score only, not to {name!r}.")
    score = build_score(name, **params)
    pf2_p = opts.get("p", 0)
    if isinstance(pf2_p, bool) or not isinstance(pf2_p, int) or pf2_p < 0:
        raise ParameterError(f"'privacyfrost2.p' must be an integer >= 0. Got {pf2_p!r}.")
    restarts = opts.get("restarts")  # None: the default, which depends on partial_domain
    if restarts is not None and (
        isinstance(restarts, bool) or not isinstance(restarts, int) or restarts < 0
    ):
        raise ParameterError(
            "'privacyfrost2.restarts' must be an integer >= 0 (0 = the paper's search). "
            f"Got {restarts!r}."
        )
    partial = opts.get("partial_domain", False)
    if not isinstance(partial, bool):
        raise ParameterError(
            f"'privacyfrost2.partial_domain' must be true or false. Got {partial!r}."
        )
    presampling = None
    raw = opts.get("presampling")
    if raw is not None:
        if not isinstance(raw, dict) or set(raw) - {"levels", "k"} or "k" not in raw:
            raise ParameterError(
                "'privacyfrost2.presampling' must be a mapping {levels: {attribute: level} or "
                f"one level for all, k: int >= 1}}. Got {raw!r}."
            )
        levels = raw.get("levels", 0)
        if isinstance(levels, int) and not isinstance(levels, bool):
            thresholds: dict[str, int] | Any = {
                q: min(int(levels), p.hierarchies[q].height) for q in p.qis
            }
        else:
            thresholds = levels
        k_prime = check_int(raw["k"], "privacyfrost2.presampling.k", low=1)  # the paper's k'
        presampling = PreSampling(thresholds, k_prime)
    priorities = {}
    for q in p.job.quasi_identifiers:
        v = 1 if q.priority is None else q.priority
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise ParameterError(
                f"The priority of quasi-identifier {q.name!r} must be a positive integer. "
                f"Got {v!r}."
            )
        priorities[q.name] = v
    return {
        "score": score,
        "p": pf2_p,
        "restarts": restarts,
        "partial_domain": partial,
        "presampling": presampling,
        "priorities": priorities,
    }


def _anonymize_privacyfrost2(
    p: Prepared,
    *,
    output: str | os.PathLike[str] | None,
    progress: Progress | None,
    protect: tuple[Path, ...],
) -> AnonymizationResult:
    """PrivacyFrost2 (Kiyomoto & Miyake 2014) as an algorithm of :func:`anonymize`.

    The minimum level ``w^M`` of the paper is each quasi-identifier's ``max_level``; the
    released table (full-domain ``T^G`` or its partial-domain refinement, without the
    records removed by pre-sampling) is re-checked by :func:`verify_release`.
    """
    opts = _pf2_options(p)
    evaluator = build_evaluator(p, with_rows=True)  # privacyfrost2 checks the models' feasibility
    t0 = time.perf_counter()
    res = privacyfrost2(
        evaluator,
        p.lattice,
        priorities=opts["priorities"],
        score=opts["score"],
        p=opts["p"],
        restarts=opts["restarts"],
        partial_domain=opts["partial_domain"],
        presampling=opts["presampling"],
        progress=progress,
        recheck=False,  # the released table is re-checked below by an independent engine
    )
    elapsed = time.perf_counter() - t0
    base = evaluator.base
    assert base.row_class is not None
    row_class = base.row_class
    table = p.table
    keep_rows = np.ones(table.n_rows, dtype=bool) if res.kept is None else res.kept[row_class]
    rows = np.flatnonzero(keep_rows)
    every_row = rows.size == table.n_rows
    kept = table if every_row else table.take(rows)

    generalized_qis: dict[str, EncodedColumn] = {}
    if res.partial is not None:
        part = res.partial
        # the labels of the classes, gathered per row through its class (every class has
        # a record that is released, so each class's label is used); a native index:
        # numpy converts a narrower one again for every column it gathers
        assert part.class_codes is not None and part.label_values is not None
        row_base = row_class if every_row else row_class[rows]
        at = np.asarray(part.class_of_base[row_base], dtype=np.intp)
        for q, codes, cats in zip(p.qis, part.class_codes, part.label_values):
            used = np.zeros(cats.size, dtype=bool)  # drop the labels no record carries
            used[codes] = True
            used_at = np.flatnonzero(used)
            labels = cats[used_at]
            order = natural_order(labels)  # the labels released, naturally ordered
            remap = np.full(cats.size, -1, dtype=np.int32)
            remap[used_at[order]] = np.arange(order.size, dtype=np.int32)
            generalized_qis[q] = EncodedColumn(q, remap[codes][at], labels[order])
        what = "the partial-domain table"
    else:
        for q, lv in zip(p.qis, res.levels):
            generalized_qis[q] = generalize_column(kept.column(q), p.hierarchies[q], lv)
        what = f"{res.transformation}"
    generalized = kept.with_columns(generalized_qis)
    mask = p.job.output.get("suppressed", "remove") == "mask"
    columns, suppressed, checks = verify_release(p, generalized, what, mask_suppressed=mask)
    out_path = None
    if output is not None:
        write_table(
            columns,
            output,
            separator=p.job.csv.separator,
            protect=protect,
            status=lambda m: stage(progress, m),
        )
        out_path = str(output)
    if res.full_domain_classes is not None:  # T^G's classes, as the search grouped them
        ids = np.asarray(res.full_domain_classes[0], dtype=np.int64)
        n_cls = res.full_domain_classes[1]
        sizes = np.bincount(ids, weights=base.sizes, minlength=n_cls).astype(np.int64)
        full = evaluator.evaluate_classes(res.levels, ids, sizes, with_loss=True)
    else:
        full = evaluator.evaluate(res.levels, with_loss=True)
    details: dict[str, Any] = {
        "score": {"function": res.score_name, "value": res.score},
        "full_domain_score": res.full_domain_score,
        "priorities": dict(zip(p.qis, res.priorities)),
        "tables_checked": res.tables_checked,
        "tables_scored": res.tables_scored,
        "skipped_by_bound": res.skipped_by_bound,
        "restarts": {
            "allowed": res.restarts,
            "run": res.restarts_run,
            "paper_score": res.score_before_restarts,
            "paper_levels": dict(zip(p.qis, map(int, res.levels_before_restarts))),
        },
        "presampled_rows": int(table.n_rows - rows.size),
        "presampling_s": res.presampling_s,
    }
    if res.partial is not None:
        details["partial_domain"] = {
            "classes": res.partial.n_classes,
            "splits": res.partial.splits,
            "tables_checked": res.partial.tables_checked,
            **_level_summary(res.partial, p.qis),
        }
    checked = res.tables_checked + (0 if res.partial is None else res.partial.tables_checked)
    return AnonymizationResult(
        transformation=res.transformation,
        loss=float(full.loss) if full.loss is not None else float("nan"),
        metric=p.metric.name,
        suppressed_rows=suppressed,
        evaluated_nodes=checked,
        lattice_size=p.lattice.size,
        elapsed_s=elapsed,
        checks=checks,
        columns=columns,
        algorithm="privacyfrost2",
        output=out_path,
        details=details,
    )


def _level_summary(part: PartialDomainResult, qis: Sequence[str]) -> dict[str, Any]:
    """The group-wise levels of a partial-domain table in brief: the number of distinct
    level vectors of its classes, and per quasi-identifier the rows on each level
    (the full vectors, one per class, are in :class:`PartialDomainResult`)."""
    lv, sizes = part.class_levels, part.class_sizes
    width = int(lv.max()) + 2 if lv.size else 1  # levels -1..max: slots 0..max+1
    # one count of (attribute, level) over every class
    slot = lv + (1 + width * np.arange(lv.shape[1], dtype=np.int64))
    rows = np.bincount(
        slot.reshape(-1),
        weights=np.repeat(sizes.astype(np.float64), lv.shape[1]),  # row by row, as slot
        minlength=width * lv.shape[1],
    ).astype(np.int64)
    levels: dict[str, dict[int, int]] = {}
    for j, q in enumerate(qis):
        per = rows[width * j + 1 : width * (j + 1)]  # levels 0..max (-1: no level)
        levels[q] = {int(x): int(per[x]) for x in np.flatnonzero(per)}
    return {"level_vectors": part.n_level_vectors(), "rows_per_level": levels}


def _plain(value: Any) -> Any:
    """A parameter as JSON can hold it: a hierarchy as its file (or a summary)."""
    if isinstance(value, Hierarchy):
        if value.source is not None:
            return value.source
        return f"<hierarchy of {value.attribute or 'an attribute'}, height {value.height}>"
    return value


@dataclass
class CheckReport:
    """Privacy models and the metric of a table as it is (``anonlab check``)."""

    n_rows: int
    n_classes: int
    models: list[dict[str, Any]]
    metric: str
    loss: float

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        return {
            "n_rows": self.n_rows,
            "n_classes": self.n_classes,
            "models": self.models,
            "loss": {"metric": self.metric, "value": self.loss},
        }


def check(data: Any, job: JobSpec | dict[str, Any] | str | os.PathLike[str]) -> CheckReport:
    """Report which models a table satisfies as it is, and the classes and rows violating each.

    The table is taken at level 0 of every quasi-identifier (its values as they are).
    """
    spec = load_job(job)
    p = prepare(data, spec)
    _warn_identifiers(p, "a release that keeps it re-identifies people.")
    evaluator = build_evaluator(p)
    stats: ClassStats = evaluator.stats(tuple(0 for _ in p.qis))
    seen: dict[str, int] = {}
    models = []
    for m in p.models:
        passed = m.class_ok(stats) & (stats.sizes >= m.min_class_size)
        bad = ~passed
        models.append(
            {
                "model": _model_key(m, seen),
                "params": {k: _plain(v) for k, v in m.params().items()},
                "holds": bool(passed.all()),
                "violating_classes": int(bad.sum()),
                "violating_rows": int(stats.sizes[bad].sum()),
            }
        )
    violating = np.zeros(stats.n_classes, dtype=bool)
    loss = float(p.metric.loss(stats, violating, evaluator.context))
    return CheckReport(p.table.n_rows, stats.n_classes, models, p.metric.name, loss)
