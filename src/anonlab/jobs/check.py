"""``check``: which models a table satisfies as it is, or what a release of it holds.

:func:`check` judges the classes of the table at level 0 of every quasi-identifier (in
memory, or from an out-of-core engine's frequency set); with ``release`` it verifies a
release beside its original (:func:`~anonlab.release.audit.audit_release`), including the
identifying columns it keeps, judged by the rule :func:`anonlab.jobs.run.anonymize` applies.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from anonlab._html import html_card
from anonlab._optional import import_optional
from anonlab._progress import note
from anonlab._validation import Param
from anonlab.algorithms import build_anonymizer
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.stats import ClassStats
from anonlab.data.table import EncodedTable
from anonlab.diagnosis.disclosure import AttributeDisclosure, disclosures
from anonlab.diagnosis.risk import IDENTIFYING_THRESHOLD, identifying_columns
from anonlab.engines import get_engine
from anonlab.exceptions import ParameterError
from anonlab.io import read_table
from anonlab.io.job import JobSpec
from anonlab.io.readers import read_arrow
from anonlab.io.writers import json_text
from anonlab.jobs.engines import engine_choice, open_engine
from anonlab.jobs.identifying import declared_columns, identifying, warn_identifiers
from anonlab.jobs.problem import JobLike, build_problem, load_job
from anonlab.models.per_record import RecordModel
from anonlab.release import Problem, metric_context, model_keys
from anonlab.release.anonymity_graph import cover_problem
from anonlab.release.audit import audit_release
from anonlab.release.audit import check_columns as check_release_columns
from anonlab.release.verify import with_population

__all__ = ["CheckReport", "check"]


def _plain(value: Any) -> Any:
    """A parameter as JSON can hold it: a hierarchy as its file (or a summary)."""
    if isinstance(value, Hierarchy):
        if value.source is not None:
            return value.source
        return f"<hierarchy of {value.attribute or 'an attribute'}, height {value.height}>"
    return value


@dataclass
class CheckReport:
    """Privacy models and the metric of a table as it is, or what a release of it holds
    (``anonlab check``, ``anonlab check --release``).

    Attributes
    ----------
    n_rows : int
        Rows of the table checked (of the release, with ``--release``).
    n_classes : int
        Its classes (a cell cover: its distinct released rows).
    models : list of dict
        Per model: ``model``, ``params``, ``holds``, ``violating_classes`` and
        ``violating_rows`` (a per-record model: the records over their own limit, and
        ``violating_records``, their row positions from 0); where the model does not hold,
        ``violation`` says what violates it.
    metric : str
    loss : float or None
        The metric on the table as it is; on a cell cover, read from its labels; None for a
        release that forms classes (``anonymize`` measures it).
    release : dict, optional
        What was verified of the release (:meth:`anonlab.release.audit.ReleaseAudit.to_dict`).
    disclosure : list of AttributeDisclosure
        Per sensitive attribute of the job, the classes whose records share one value (or
        where one value is above the share asked for), whatever the models: the table's
        classes, or the release's (none for a cell cover, judged on its anonymity graph).

    Examples
    --------
    >>> report = CheckReport(10, 2, [{"model": "k_anonymity", "holds": True}], "loss", 0.0)
    >>> report.holds, report.to_dict()["loss"]
    (True, {'metric': 'loss', 'value': 0.0})
    """

    n_rows: int
    n_classes: int
    models: list[dict[str, Any]]
    metric: str
    loss: float | None
    release: dict[str, Any] | None = None
    disclosure: list[AttributeDisclosure] = dataclasses.field(default_factory=list)

    @property
    def holds(self) -> bool:
        """Whether every model holds (and, with a release, everything verified of it)."""
        if self.release is not None:
            return bool(self.release["holds"])
        return all(m["holds"] for m in self.models)

    def _repr_html_(self) -> str:
        """The check as tables: each model, whether it holds and what violates it (Jupyter's
        rich display).

        Examples
        --------
        >>> report = CheckReport(10, 2, [{"model": "k_anonymity", "holds": False}], "loss", 0.0)
        >>> "does not hold: k_anonymity" in report._repr_html_()
        True
        """
        failing = [str(m["model"]) for m in self.models if not m["holds"]]
        what = "the release" if self.release is not None else "the table as it is"
        if self.holds:
            headline = (
                f"Everything holds on {what} ({self.n_rows:,} rows, {self.n_classes:,} classes)."
            )
        elif failing:
            headline = f"On {what}, does not hold: {', '.join(failing)}."
        else:
            headline = "The release does not verify: see the release's figures below."
        exposed = " ".join(d.sentence() for d in self.disclosure if d.exposed)
        headline += f" {exposed}" if exposed else ""
        return html_card("Check", self.to_dict(), headline=headline, skip=("k_meaning",))

    def to_dict(self) -> dict[str, Any]:
        """The JSON form."""
        out = {
            "n_rows": self.n_rows,
            "n_classes": self.n_classes,
            "models": self.models,
            "loss": {"metric": self.metric, "value": self.loss},
        }
        if self.release is not None:
            out["release"] = self.release
        out["attribute_disclosure"] = [d.to_dict() for d in self.disclosure]
        return out


def check(
    data: Any,
    job: JobLike,
    *,
    release: Any | None = None,
    engine: str = "auto",
    engine_options: Mapping[str, Any] | None = None,
    disclosure_share: float | None = None,
) -> CheckReport:
    """Report which models a table satisfies as it is, and the classes and rows violating each;
    or verify a release of it.

    The table is taken at level 0 of every quasi-identifier (its values as they are). With
    ``release`` (a table the job released from ``data``, by any algorithm), the release is
    verified against ``data`` and the job (:func:`anonlab.release.audit.audit_release`):
    its columns, its rows and their order, every cell, the identifying columns it keeps, and
    the models on the release itself (classes of its labels, or a cell cover's anonymity
    graph). The release is read as anonlab writes it: a header row, UTF-8, ``"`` quotes, the
    job's separator, and an empty field (as the job's missing-value markers) a missing value.

    Parameters
    ----------
    data : path, DataFrame, pyarrow Table or EncodedTable
        The table.
    job : JobSpec, mapping or path
        The job: quasi-identifiers, hierarchies, models, metric (and, for a release, the
        algorithm and the output options it was released with).
    release : path or table, optional
        A release of ``data`` by ``job`` (in memory only).
    engine : str
        ``"numpy"``, ``"duckdb"`` (the classes from one ``GROUP BY`` over the file) or
        ``"auto"`` (by size, see :func:`choose_engine`), or ``"spark"``.
    engine_options : mapping, optional
        Options of an out-of-core engine (as in :func:`anonymize`).
    disclosure_share : float in (0, 1], optional
        Besides the classes whose records share one sensitive value, list those where one
        value's share is above this (:func:`~anonlab.diagnosis.disclosure.attribute_disclosure`).

    Returns
    -------
    CheckReport

    Raises
    ------
    InputError
        With ``release``: a release whose columns are not those the job releases, or whose
        rows cannot be the data's (naming them).

    Examples
    --------
    >>> from anonlab import EncodedTable, anonymize, check
    >>> t = EncodedTable.from_columns({"sex": ["F", "M"] * 5, "visits": list("12231") * 2})
    >>> job = {"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 5}}]}
    >>> check(t, job).models[0]["holds"]
    True
    >>> report = check(t, job, release=dict(anonymize(t, job).columns))
    >>> report.holds, report.release["k_after"]
    (True, 5)
    """
    spec = load_job(job)
    _SHARE.check(disclosure_share, "disclosure_share", owner="check")
    choice = engine_choice(data, engine)
    if choice.note:
        note(choice.note)
    if not choice.in_memory:
        if release is not None:
            raise ParameterError(
                "A release is checked beside its original in memory: use --engine numpy "
                "(engine='numpy') with --release."
            )
        eng = open_engine(data, spec, choice.name, engine_options)
        try:
            problem = build_problem(None, spec, engine=eng)
            warn_identifiers(problem, spec, "a release that keeps it re-identifies people.", eng)
        finally:
            eng.close()
        return _check_classes(problem, _sensitive(problem, spec), disclosure_share)
    problem = build_problem(data, spec)
    warn_identifiers(problem, spec, "a release that keeps it re-identifies people.")
    if release is not None:
        return _check_release(problem, spec, release, disclosure_share)
    return _check_classes(problem, _sensitive(problem, spec), disclosure_share)


#: The disclosure share's constraint.
_SHARE = Param(float, low=0, high=1, low_open=True, none=True)


def _sensitive(problem: Problem, spec: JobSpec) -> list[str]:
    """The job's sensitive attributes the problem's table holds (a frequency set holds only
    those its models read)."""
    return [
        s for s in dict.fromkeys([*spec.sensitive, *problem.sensitive]) if s in problem.table.names
    ]


def _check_classes(problem: Problem, sensitive: list[str], share: float | None) -> CheckReport:
    """``check`` of the classes of the problem's table (a frequency set, or the rows)."""
    engine = get_engine("numpy", problem.table)
    per_record = any(isinstance(m, RecordModel) for m in problem.models)
    stats: ClassStats = engine.class_stats(
        list(problem.quasi_identifiers),
        sensitive=list(dict.fromkeys([*problem.sensitive, *sensitive])),
        with_rows=per_record,
    )
    # the population's records of each class, at level 0 (the values as they are)
    stats = with_population(problem, stats, {q: 0 for q in problem.quasi_identifiers})
    sizes = np.asarray(stats.sizes, dtype=np.int64)
    models = []
    for key, m in zip(model_keys(problem.models), problem.models):
        records: dict[str, Any] = {}
        if isinstance(m, RecordModel):  # each record against its own limit
            assert stats.row_class is not None
            row_class = np.asarray(stats.row_class, dtype=np.int64)
            column = problem.table[m.attribute]
            limits = problem.record_parameters[m.record_parameter]
            verdict = m.judge_records(row_class, column, column, limits)
            passed = verdict.class_ok & (sizes >= m.min_class_size)
            records = verdict.report(m.measure)
            bad_rows = int(np.count_nonzero(~verdict.ok | (sizes[row_class] < m.min_class_size)))
            what = f"{bad_rows:,} records are over their own limit"
        else:
            passed = m.class_ok(stats) & (sizes >= m.min_class_size)
            bad_rows = int(sizes[~passed].sum())
            what = f"{bad_rows:,} rows are in classes that do not satisfy it"
        bad = int(np.count_nonzero(~passed))
        entry: dict[str, Any] = {
            "model": key,
            "params": {k: _plain(v) for k, v in m.params().items()},
            "holds": bool(passed.all()),
            "violating_classes": bad,
            "violating_rows": bad_rows,
            **records,
        }
        if not entry["holds"]:
            entry["violation"] = f"{what} ({bad:,} of the {stats.n_classes:,} classes)"
        models.append(entry)
    violating = np.zeros(stats.n_classes, dtype=bool)
    loss = float(problem.metric.loss(stats, violating, metric_context(problem)))
    found = disclosures(stats, sensitive, share=share)
    return CheckReport(
        problem.n_records, stats.n_classes, models, problem.metric.name, loss, None, found
    )


def _check_release(
    problem: Problem, spec: JobSpec, release: Any, share: float | None
) -> CheckReport:
    """``check`` of a release beside its original (:func:`~anonlab.release.audit.audit_release`)."""
    reader = next((m for m in problem.models if m.population_table is not None), None)
    if reader is not None:
        raise ParameterError(
            f"anonlab check --release cannot judge model {reader.name!r} against the "
            "population table yet (the release does not say the levels to generalize the "
            "population to); anonymize re-checks it against the population before it writes "
            "the release. Nothing was checked."
        )
    algorithm = build_anonymizer(spec.algorithm, spec.algorithm_params)
    graph = type(algorithm).verifier == "graph"
    if graph:  # judged on its anonymity graph: k-anonymity only
        cover_problem(problem, f"The job's algorithm {algorithm.name!r}")
    # anonlab writes a release with a header row, UTF-8, '"' quotes and a missing value
    # as an empty field (on every engine: the same bytes)
    options = dataclasses.replace(
        spec.csv,
        header=True,
        names=None,
        quote='"',
        encoding="utf-8",
        na_values=tuple(dict.fromkeys((*spec.csv.na_values, ""))),
    )
    released = _nested_as_text(read_table(release, csv_options=options))
    table = _nested_as_text(problem.table)
    if table is not problem.table:
        problem = dataclasses.replace(problem, table=table)
    check_release_columns(problem, released)
    found = _kept_identifying(problem, spec, released)
    params = spec.algorithm_params
    audit = audit_release(
        problem,
        released,
        graph=graph,
        mask_suppressed=spec.output.get("suppressed", "remove") == "mask",
        removed=algorithm.removed_rows(problem),
        identifying=found,
        pseudo=tuple(params.get("pseudo_qids") or ()),
        plain=_plain,
        blanks=type(algorithm).verifier == "blanks",
        centroids=(
            str(getattr(algorithm, "aggregate", "mean"))
            if type(algorithm).verifier == "centroids"
            else None
        ),
        regions=type(algorithm).verifier == "regions",
    )
    metric, loss = problem.metric.name, None
    if audit.cells is not None:  # a cell cover: its loss read from its labels
        metric = metric if metric in ("gcp", "ncp") else "gcp"
        loss = audit.cells.ncp if metric == "ncp" else audit.cells.gcp
    elif audit.loss is not None:  # Mondrian's regions: read from their labels
        loss = audit.loss
    disclosed: list[AttributeDisclosure] = []
    sensitive = [s for s in _sensitive(problem, spec) if s in released.names]
    if not graph and sensitive and released.n_rows:  # the classes of its labels
        stats = get_engine("numpy", released).class_stats(
            list(problem.quasi_identifiers), sensitive=sensitive
        )
        disclosed = disclosures(stats, sensitive, share=share)
    return CheckReport(
        audit.rows, audit.classes, audit.models, metric, loss, audit.to_dict(), disclosed
    )


def _kept_identifying(
    problem: Problem, spec: JobSpec, released: EncodedTable
) -> list[tuple[str, str]]:
    """The identifying columns a release keeps, with their reasons."""
    # the release itself, by the rule anonymize applies (its values may not be the data's:
    # the audit blames such cells), and its columns' dependencies on the quasi-identifiers'
    # original values, which only the data shows
    threshold = spec.identifying_threshold
    found = dict(
        identifying_columns(
            get_engine("numpy", released),
            declared_columns(problem, spec),
            threshold=IDENTIFYING_THRESHOLD if threshold is None else threshold,
            insensitive=spec.insensitive,
        )
    )
    for column, reason in identifying(problem, spec):
        if column in released.names:
            found.setdefault(column, reason)
    return list(found.items())


def _nested_as_text(table: EncodedTable) -> EncodedTable:
    """``table`` with its list, map and struct columns as the JSON text a CSV release holds
    (:func:`~anonlab.io.writers.json_text`), encoded like any column."""
    nested = table.nested
    if not nested:
        return table
    pa = import_optional("pyarrow")
    text = read_arrow(pa.table({c: json_text(pa, table.typed[c]) for c in nested}))
    columns = (*table.columns, *(text[c] for c in nested))
    typed = {n: a for n, a in table.typed.items() if n not in nested}
    return EncodedTable(
        columns, table.schema, table.source, typed, table.order, weights=table.weights
    )
