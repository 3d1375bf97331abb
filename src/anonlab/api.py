"""The public entry points: open data once, ask diagnosis questions about it."""

from __future__ import annotations

import os
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from anonlab._optional import import_optional
from anonlab._progress import Progress, listening, stage
from anonlab._resources import memory_budget
from anonlab._validation import column_name, did_you_mean
from anonlab.algorithms import ALGORITHMS
from anonlab.algorithms.base import algorithm_families, partition_algorithm_names
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.schema import Schema
from anonlab.data.source import CsvOptions, FileSource
from anonlab.data.table import EncodedTable
from anonlab.datasets import ADULT_QUASI_IDENTIFIERS, adult_hierarchies, adult_path, load_adult
from anonlab.diagnosis import (
    QuasiIdentifierReport,
    RiskSummary,
    ask,
    discover_quasi_identifiers,
    risk_summary,
)
from anonlab.diagnosis.profile import TableProfile, profile_release, profile_table
from anonlab.diagnosis.questions import Answer
from anonlab.diagnosis.risk import identifying_columns as _identifying_columns
from anonlab.engines import ENGINES, Engine, get_engine
from anonlab.exceptions import AnonlabError, InputError, ParameterError, PrivacyRiskWarning
from anonlab.io import read_hierarchy, read_table
from anonlab.io.atomic import atomic_write, check_output
from anonlab.jobs import (
    AnonymizationResult,
    CheckReport,
    JobLike,
    anonymize,
    build_problem,
    check,
    input_files,
    load_job,
    validate_job,
)
from anonlab.metrics import METRICS
from anonlab.models.registry import MODELS
from anonlab.report.document import JobFigures, ReportData
from anonlab.report.html import render as render_html

__all__ = [
    "ADULT_QUASI_IDENTIFIERS",
    "AnonlabError",
    "AnonymizationResult",
    "InputError",
    "ParameterError",
    "PrivacyRiskWarning",
    "adult_hierarchies",
    "adult_path",
    "column_name",
    "did_you_mean",
    "load_adult",
    "memory_budget",
    "CheckReport",
    "anonymize",
    "check",
    "open_engine",
    "load_hierarchies",
    "diagnose",
    "risk",
    "identifying_columns",
    "find_quasi_identifiers",
    "job_choices",
    "help_lists",
    "engine_names",
    "job_input_files",
    "listening",
    "validate_job",
    "profile",
    "report",
    "report_data",
]

HierarchySpec = Mapping[str, "Hierarchy | str | os.PathLike[str]"]


def load_hierarchies(spec: HierarchySpec | None) -> dict[str, Hierarchy]:
    """Return hierarchies by attribute, reading the ones given as ARX-format file paths.

    Examples
    --------
    >>> from anonlab import Hierarchy
    >>> from anonlab.api import load_hierarchies
    >>> load_hierarchies({"sex": Hierarchy([["F", "*"], ["M", "*"]])})
    {'sex': Hierarchy(attribute='sex', values=2, height=1, e.g. 'F' -> '*')}
    """
    out: dict[str, Hierarchy] = {}
    for attr, h in (spec or {}).items():
        if isinstance(h, Hierarchy):
            out[attr] = h if h.attribute is not None else h.named(attr)
        else:
            out[attr] = read_hierarchy(h, attribute=attr)
    return out


def open_engine(
    data: Any,
    *,
    engine: str = "numpy",
    hierarchies: HierarchySpec | None = None,
    csv_options: CsvOptions | None = None,
    drop_missing: Sequence[str] | bool | None = None,
    schema: Schema | None = None,
    columns: Sequence[str] | None = None,
    **engine_options: Any,
) -> Engine:
    """Open ``data`` with an engine, ready for many questions (partitions are cached).

    Parameters
    ----------
    data : path, FileSource, EncodedTable, DataFrame, pyarrow Table or Engine
        The table. An Engine is returned as it is.
    engine : str
        ``"numpy"`` (in memory) or ``"duckdb"`` (files scanned out of core).
    hierarchies : Mapping[str, Hierarchy or path], optional
        Hierarchies of attributes that questions may generalize.
    csv_options : CsvOptions, optional
        How to parse CSV files.
    drop_missing : sequence of str or bool, optional
        Drop the rows with a null in any of these columns (True: in any column).
    schema : Schema, optional
        Attribute roles.
    columns : sequence of str, optional
        Read only these columns (the numpy engine; DuckDB reads what each query needs).
    **engine_options
        Passed to the engine (e.g. ``memory_limit`` for DuckDB).

    Returns
    -------
    Engine

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import open_engine
    >>> engine = open_engine(EncodedTable.from_columns({"sex": ["F", "M", "F"]}))
    >>> engine.n_rows, engine.class_sizes(["sex"]).tolist()
    (3, [2, 1])
    """
    if isinstance(data, Engine):
        return data
    hier = load_hierarchies(hierarchies)
    if engine in ("duckdb", "spark") and not isinstance(data, EncodedTable):
        if isinstance(data, (str, os.PathLike)) and "://" not in str(data):
            data = FileSource(Path(data), csv=csv_options or CsvOptions())
        return get_engine(
            engine,
            data,
            hierarchies=hier,
            csv_options=csv_options,
            drop_nulls=drop_missing or None,
            **engine_options,
        )
    table = read_table(data, csv_options=csv_options, schema=schema, columns=columns)
    if drop_missing:
        table = table.drop_nulls(None if drop_missing is True else list(drop_missing))
    return get_engine(engine, table, hierarchies=hier, **engine_options)


def _candidates(data: Any, engine: Engine) -> list[str]:
    table = getattr(engine, "table", None)
    if isinstance(table, EncodedTable):
        return table.candidate_attributes()
    return engine.attribute_columns


def diagnose(
    data: Any,
    *,
    quasi_identifiers: Sequence[str] | None = None,
    attributes: Sequence[str] | None = None,
    k: int | None = None,
    delta: float | None = None,
    find_delta: bool = False,
    max_k: int | None = None,
    levels: Mapping[str, int] | None = None,
    hierarchies: HierarchySpec | None = None,
    engine: str = "numpy",
    csv_options: CsvOptions | None = None,
    list_rows: bool = False,
    progress: Progress | None = None,
    max_size: int | None = None,
) -> Answer:
    """Answer the Diagnosis Centre question (Q1-Q12) decided by what is given.

    Parameters
    ----------
    data : path, EncodedTable, DataFrame, pyarrow Table or Engine
        The table (open it once with :func:`open_engine` to ask many questions fast).
    quasi_identifiers : sequence of str, optional
        The attribute set S (Q1, Q2, Q5, Q6, Q9, Q11).
    attributes : sequence of str, optional
        Candidates of subset questions (default: every column not marked identifier or
        sensitive).
    k : int, optional
        Required k.
    delta : float, optional
        Suppression threshold in [0, 1].
    find_delta : bool
        Ask for the smallest delta (Q9-Q12).
    max_k : int, optional
        Largest k of the tables of Q11 and Q12 (default 50).
    levels : Mapping[str, int], optional
        Ask at these hierarchy levels (needs ``hierarchies``).
    hierarchies : Mapping[str, Hierarchy or path], optional
        Hierarchies of the attributes.
    engine : str
        ``"numpy"`` or ``"duckdb"``.
    csv_options : CsvOptions, optional
        How to parse a CSV path.
    list_rows : bool
        With suppression, also return the positions of the suppressed rows.
    progress : callable, optional
        ``progress(advance, total)`` during subset searches.
    max_size : int, optional
        Subset questions: examine subsets of at most this many attributes.

    Returns
    -------
    SubsetAnswer, SearchAnswer or TableAnswer
        With ``to_dict()`` giving the JSON documented in the README.

    References
    ----------
    Zare Mirakabad, M. R., Jantan, A., Bressan, S. *k-anonymity Diagnosis Centre*.

    Examples
    --------
    >>> from anonlab import diagnose, load_adult
    >>> diagnose(load_adult(), quasi_identifiers=["age", "sex"]).k
    1
    """
    eng = open_engine(data, engine=engine, hierarchies=hierarchies, csv_options=csv_options)
    if quasi_identifiers is None and attributes is None:
        attributes = _candidates(data, eng)
    return ask(
        eng,
        quasi_identifiers=quasi_identifiers,
        attributes=attributes,
        k=k,
        delta=delta,
        find_delta=find_delta,
        max_k=max_k,
        levels=levels,
        list_rows=list_rows,
        progress=progress,
        max_size=max_size,
    )


def risk(
    data: Any,
    quasi_identifiers: Sequence[str],
    *,
    threshold: int = 5,
    levels: Mapping[str, int] | None = None,
    hierarchies: HierarchySpec | None = None,
    engine: str = "numpy",
    csv_options: CsvOptions | None = None,
    sampling_fraction: float | None = None,
    population_size: int | None = None,
    weight: str | None = None,
    population: Any = None,
) -> RiskSummary:
    """Summarise the re-identification risk under ``quasi_identifiers``.

    The prosecutor, journalist and marketer models; told the population the table was
    sampled from (one of ``sampling_fraction``, ``population_size``, ``weight`` - a column of
    sampling weights - or ``population``, the population table as a path or data), also the
    estimated population uniqueness (Pitman, Zayatz, SNB, Dankar) and, with weights, the
    Benedetti-Franconi risk. See :func:`anonlab.diagnosis.risk_summary`.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import risk
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"], "sex": ["F", "F", "M"]})
    >>> summary = risk(t, ["zip", "sex"], threshold=2)
    >>> summary.k, summary.unique_records, summary.highest_risk
    (1, 1, 1.0)
    >>> d = risk(t, ["zip"], sampling_fraction=0.1).to_dict()
    >>> d["population_size"], d["population_uniqueness"]["dankar_choice"]
    (30, 'zayatz')
    """
    eng = open_engine(data, engine=engine, hierarchies=hierarchies, csv_options=csv_options)
    pop = None
    if population is not None:
        used = {a: h for a, h in (hierarchies or {}).items() if a in quasi_identifiers}
        pop = open_engine(population, engine=engine, hierarchies=used, csv_options=csv_options)
    return risk_summary(
        eng,
        quasi_identifiers,
        threshold=threshold,
        levels=levels,
        sampling_fraction=sampling_fraction,
        population_size=population_size,
        weight=weight,
        population=pop,
    )


def identifying_columns(
    data: Any,
    exclude: Sequence[str] = (),
    *,
    engine: str = "numpy",
    csv_options: CsvOptions | None = None,
) -> list[tuple[str, str]]:
    """The columns that identify a row on their own, and why (no warning is issued).

    See :func:`anonlab.diagnosis.risk.identifying_columns`.

    Parameters
    ----------
    data : path, EncodedTable, DataFrame, pyarrow Table or Engine
        The table.
    exclude : sequence of str
        Columns not to look at (those already declared).
    engine : str
        ``"numpy"`` or ``"duckdb"``.
    csv_options : CsvOptions, optional
        How to parse a CSV path.

    Returns
    -------
    list of (column, reason)

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import identifying_columns
    >>> t = EncodedTable.from_rows([("a1", "F"), ("a2", "F")], ["patient_id", "sex"])
    >>> [c for c, _ in identifying_columns(t)]
    ['patient_id']
    """
    eng = open_engine(data, engine=engine, csv_options=csv_options)
    return _identifying_columns(eng, exclude)


def find_quasi_identifiers(
    data: Any,
    attributes: Sequence[str] | None = None,
    *,
    threshold: int = 2,
    max_size: int | None = None,
    levels: Mapping[str, int] | None = None,
    hierarchies: HierarchySpec | None = None,
    engine: str = "numpy",
    csv_options: CsvOptions | None = None,
    progress: Progress | None = None,
) -> QuasiIdentifierReport:
    """Find the minimal attribute subsets that single out records (QI discovery).

    See :func:`anonlab.diagnosis.discover_quasi_identifiers`.

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import find_quasi_identifiers
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351", "4351"],
    ...                                "sex": ["F", "M", "F", "F"]})
    >>> find_quasi_identifiers(t, ["zip", "sex"]).subsets[0]["attributes"]
    ['sex']
    """
    eng = open_engine(data, engine=engine, hierarchies=hierarchies, csv_options=csv_options)
    attrs = attributes if attributes is not None else _candidates(data, eng)
    return discover_quasi_identifiers(
        eng, attrs, threshold=threshold, max_size=max_size, levels=levels, progress=progress
    )


def profile(
    data: Any,
    *,
    csv_options: CsvOptions | None = None,
    schema: Schema | None = None,
) -> TableProfile:
    """Profile a table: rows, columns, roles, missing and distinct values per column.

    Parameters
    ----------
    data : path, EncodedTable, DataFrame or pyarrow Table
        The table.
    csv_options : CsvOptions, optional
        How to parse a CSV path.
    schema : Schema, optional
        Attribute roles (default: the table's own).

    Returns
    -------
    TableProfile

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import profile
    >>> p = profile(EncodedTable.from_columns({"sex": ["F", "M", None]}))
    >>> p.n_rows, p.columns[0].distinct, p.columns[0].missing
    (3, 2, 1)
    """
    return profile_table(read_table(data, csv_options=csv_options, schema=schema))


def job_choices() -> dict[str, list[str]]:
    """The names a job may use: ``models``, ``metrics`` and ``algorithms``, sorted.

    Returns
    -------
    dict of str to list of str

    Examples
    --------
    >>> from anonlab.api import job_choices
    >>> sorted(job_choices())
    ['algorithms', 'metrics', 'models']
    >>> "k_anonymity" in job_choices()["models"]
    True
    """
    return {
        "models": sorted(MODELS),
        "metrics": sorted(METRICS),
        "algorithms": sorted(ALGORITHMS),
    }


def engine_names() -> list[str]:
    """The engines a command may name, from the engine registry.

    Examples
    --------
    >>> engine_names()
    ['numpy', 'duckdb', 'spark']
    """
    return list(ENGINES)


def help_lists() -> dict[str, str]:
    """The lists of names the command line's help texts show, made from the registries.

    Returns
    -------
    dict of str to str
        ``algorithms``: every algorithm by family (``optimal, incognito or privacyfrost2
        (full-domain generalization); ...``); ``partition_algorithms``: the algorithms that
        run out of core block by block (``progressive, top_down, ...``); ``models``: every
        privacy model's job-file name (``alpha_k_anonymity, average_risk, ...``).

    Examples
    --------
    >>> help_lists()["partition_algorithms"]
    'progressive, top_down, wong_nh, murakami_uno, personalized'
    """
    return {
        "algorithms": algorithm_families(),
        "partition_algorithms": ", ".join(partition_algorithm_names()),
        "models": ", ".join(MODELS.names()),
    }


def job_input_files(job: JobLike) -> list[Path]:
    """The files a job reads besides the data: the job file and every hierarchy file.

    Parameters
    ----------
    job : JobSpec, mapping or path

    Returns
    -------
    list of Path

    Examples
    --------
    >>> from anonlab.api import job_input_files
    >>> job_input_files({"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 2}}]})
    []
    """
    return list(input_files(None, load_job(job)))


#: The largest set S a report diagnoses (its Q4 lattice has 2^12 - 1 subsets).
MAX_REPORT_ATTRIBUTES = 12
#: The k of the report's subset search (Q3) when neither ``k`` nor a k-anonymity model gives one.
DEFAULT_REPORT_K = 5


def _report_attributes(
    table: EncodedTable, quasi_identifiers: Sequence[str] | None, spec: Any
) -> list[str]:
    if quasi_identifiers is not None:
        qi = list(dict.fromkeys(quasi_identifiers))
        if not qi:
            raise ParameterError("The set of quasi-identifiers S is empty.")
    elif spec is not None:
        qi = [q.name for q in spec.quasi_identifiers]
    else:
        qi = [n for n in table.names if table.schema.role(n).value == "quasi-identifier"]
        qi = qi or table.candidate_attributes()
        if len(qi) > MAX_REPORT_ATTRIBUTES:
            raise ParameterError(
                f"The table has {len(qi)} candidate attributes; a report diagnoses at most "
                f"{MAX_REPORT_ATTRIBUTES}. Name the quasi-identifiers (--qi a,b,c)."
            )
    table.require(qi, what="quasi-identifier")
    if len(qi) > MAX_REPORT_ATTRIBUTES:
        raise ParameterError(
            f"A report diagnoses at most {MAX_REPORT_ATTRIBUTES} quasi-identifiers (its lattice "
            f"of subsets); {len(qi)} were given."
        )
    return qi


def _job_text(job: Any, spec: Any) -> str:
    if spec.source is not None:
        return Path(spec.source).read_text(encoding="utf-8-sig")
    if isinstance(job, Mapping):
        yaml = import_optional("yaml", feature="job files")

        def plain(value: Any) -> Any:
            if isinstance(value, Hierarchy):
                return f"<hierarchy of {value.attribute}, height {value.height}>"
            if isinstance(value, Mapping):
                return {str(k): plain(v) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [plain(v) for v in value]
            return value

        return str(yaml.safe_dump(plain(job), sort_keys=False, allow_unicode=True))
    return "(a job given from Python)"


def _k_of(spec: Any) -> int | None:
    for name, params in spec.models if spec is not None else []:
        if name == "k_anonymity" and isinstance(params.get("k"), int):
            return int(params["k"])
    return None


def report_data(
    data: Any,
    *,
    quasi_identifiers: Sequence[str] | None = None,
    sensitive: Sequence[str] | None = None,
    job: JobLike | None = None,
    k: int | None = None,
    max_k: int | None = None,
    drop_missing: bool = False,
    csv_options: CsvOptions | None = None,
    title: str | None = None,
    progress: Progress | None = None,
) -> ReportData:
    """Ask every question a report shows, through this API, and gather the answers.

    The diagnosis of S: the table's profile, k (Q2), prosecutor risk and class sizes, the
    smallest delta for k = 1..max_k (Q11), k of every subset of S (Q4), the largest
    k-anonymous subsets (Q3) and the minimal attribute sets that single people out. With a
    job: the models before (:func:`check`) and after, the release (:func:`anonymize`), its
    classes, sensitive distributions and loss per attribute.

    Parameters
    ----------
    data : path, EncodedTable, DataFrame or pyarrow Table
        The table.
    quasi_identifiers : sequence of str, optional
        The set S (default: the job's quasi-identifiers, else the columns the table marks as
        quasi-identifiers, else every candidate column, at most 12).
    sensitive : sequence of str, optional
        Sensitive attributes (default: the job's, else the table's).
    job : JobSpec, mapping or path, optional
        An anonymization job to run and report.
    k : int, optional
        The k of the subset search Q3 (default: the job's k-anonymity, else 5).
    max_k : int, optional
        The largest k of Q11 (default 50).
    drop_missing : bool
        Drop the rows with a missing value in S, the sensitive attributes or the job's
        quasi-identifiers (the command line's ``--drop-missing``).
    csv_options : CsvOptions, optional
        How to parse a CSV path (default: the job's).
    title : str, optional
        The report's title.
    progress : callable, optional
        Told the stages and the job's search progress.

    Returns
    -------
    ReportData

    Raises
    ------
    InputError
        Unknown columns, an empty table, a bad job (nothing is computed then).

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.api import report_data
    >>> t = EncodedTable.from_columns({"zip": ["4350", "4350", "4351"], "sex": ["F", "F", "M"]})
    >>> data = report_data(t, quasi_identifiers=["zip", "sex"])
    >>> data.profile.n_rows, data.risk.k
    (3, 1)
    """
    spec = load_job(job) if job is not None else None
    stage(progress, "reading")
    table = read_table(data, csv_options=csv_options or (spec.csv if spec is not None else None))
    qi = _report_attributes(table, quasi_identifiers, spec)
    if sensitive is not None:
        sens = list(dict.fromkeys(sensitive))
    elif spec is not None:
        sens = list(spec.sensitive)
    else:
        sens = [n for n in table.names if table.schema.role(n).value == "sensitive"]
    table.require(sens, what="sensitive attribute")
    job_qis = [q.name for q in spec.quasi_identifiers] if spec is not None else []
    both = sorted(set(qi + job_qis) & set(sens))
    if both:
        raise ParameterError(
            f"Column {both[0]!r} is both a quasi-identifier and a sensitive attribute; give it "
            "one role."
        )
    table = table.with_schema(
        Schema.from_lists(
            identifiers=[i for i in (spec.identifiers if spec is not None else [])],
            quasi_identifiers=list(dict.fromkeys(qi + job_qis)),
            sensitive=sens,
        )
    )
    if drop_missing:
        table = table.drop_nulls(list(dict.fromkeys(qi + job_qis + sens)))
    eng = open_engine(table)
    n = eng.n_rows
    kk = min(k if k is not None else (_k_of(spec) or DEFAULT_REPORT_K), max(n, 1))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyRiskWarning)
        stage(progress, "diagnosing")
        summary = risk(eng, qi)
        answers = {
            "q2": diagnose(eng, quasi_identifiers=qi),
            "q11": diagnose(eng, quasi_identifiers=qi, find_delta=True, max_k=max_k),
            "q4": diagnose(eng, attributes=qi),
            "q3": diagnose(eng, attributes=qi, k=kk),
        }
        singling_out = find_quasi_identifiers(eng, qi)
        figures = None
        if spec is not None:
            before = check(table, spec)
            before_risk = risk_summary(eng, job_qis)
            result = anonymize(table, spec, progress=progress)
            stage(progress, "measuring the release")
            release = profile_release(build_problem(table, spec), result, sens)
            figures = JobFigures(
                _job_text(job, spec), spec.source, before, before_risk, result, release
            )
    notes = list(dict.fromkeys(str(w.message) for w in caught))
    for w in caught:  # the caller's handlers see them too (the command line prints them)
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    source = str(data) if isinstance(data, (str, os.PathLike)) else None
    return ReportData(
        title=title or f"Privacy diagnosis of {Path(source).name if source else 'a table'}",
        data_argument=source,
        options=["--drop-missing"] if drop_missing else [],
        profile=profile_table(table),
        quasi_identifiers=qi,
        k=kk,
        q2=answers["q2"],  # type: ignore[arg-type]
        risk=summary,
        q11=answers["q11"],  # type: ignore[arg-type]
        q4=answers["q4"],  # type: ignore[arg-type]
        q3=answers["q3"],  # type: ignore[arg-type]
        singling_out=singling_out,
        job=figures,
        warnings=notes,
        version=_version(),
    )


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("anonlab")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "(source)"


def report(data: Any, *, output: str | os.PathLike[str] | None = None, **options: Any) -> str:
    """Diagnose ``data`` (and run ``job``) and render one self-contained HTML report.

    The report works offline: its style and figures (inline SVG) are inside the file, and
    it fetches nothing. Its figures are the answers of :func:`report_data`; each has its
    numbers beside it and the command that reproduces it. Needs the ``report`` extra
    (matplotlib): ``pip install 'anonlab[report]'``. ``anonlab.report(...)`` calls this.

    Parameters
    ----------
    data : path, EncodedTable, DataFrame or pyarrow Table
        The table.
    output : path, optional
        Write the report here (``.html``), atomically; the data and the job's files are
        never overwritten.
    **options
        ``quasi_identifiers``, ``sensitive``, ``job``, ``k``, ``max_k``, ``drop_missing``,
        ``csv_options``, ``title``, ``progress``: as for :func:`report_data`.

    Returns
    -------
    str
        The HTML document.

    Examples
    --------
    >>> import anonlab
    >>> html = anonlab.report(anonlab.load_adult(), quasi_identifiers=["age", "sex"])
    >>> html.startswith("<!doctype html>")
    True
    """
    protect: list[Path] = []
    if output is not None:  # before any work: a bad output costs nothing
        if not str(output).lower().endswith((".html", ".htm")):
            raise InputError(
                f"Cannot tell the report's format from {str(output)!r}; end it with .html."
            )
        if isinstance(data, (str, os.PathLike)):
            protect.append(Path(data))
        if options.get("job") is not None:
            protect.extend(job_input_files(options["job"]))
        check_output(output, protect=protect)
    gathered = report_data(data, **options)
    stage(options.get("progress"), "drawing the figures")
    text = render_html(gathered)
    if output is not None:
        with atomic_write(output, protect=protect) as tmp:
            tmp.write_text(text, encoding="utf-8")
    return text
