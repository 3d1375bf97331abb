"""The public entry points: open data once, ask diagnosis questions about it."""

from __future__ import annotations

import dataclasses
import os
import time
import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from anonlab._optional import import_optional
from anonlab._progress import Progress, listening, stage
from anonlab._resources import memory_budget
from anonlab._validation import Param, column_name, did_you_mean
from anonlab.algorithms import ALGORITHMS, build_anonymizer
from anonlab.algorithms.base import algorithm_families, partition_algorithm_names
from anonlab.data.auto import AutoHierarchy, infer_hierarchy
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
from anonlab.diagnosis.disclosure import AttributeDisclosure, disclosures
from anonlab.diagnosis.profile import TableProfile, profile_release, profile_table
from anonlab.diagnosis.questions import Answer
from anonlab.diagnosis.risk import identifying_columns as _identifying_columns
from anonlab.diagnosis.suda import suda2
from anonlab.diagnosis.utility import check_target, classification_utility, utility_profile
from anonlab.engines import ENGINES, Engine, get_engine
from anonlab.exceptions import AnonlabError, InputError, ParameterError, PrivacyRiskWarning
from anonlab.io import read_hierarchy, read_table, write_hierarchy
from anonlab.io.atomic import atomic_write, check_output
from anonlab.io.writers import write_table
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
from anonlab.report.document import Candidate, ExploreData, JobFigures, ReportData
from anonlab.report.html import render as render_html
from anonlab.report.html import render_explore

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
    "infer_hierarchies",
    "write_hierarchies",
    "report",
    "report_data",
    "explore",
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
        With ``to_dict()`` giving the JSON documented in docs/guide/diagnose.md.

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
    declared: Sequence[str] = (),
    released_as_is: Sequence[str] = (),
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
        declared=declared,
        released_as_is=released_as_is,
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


def infer_hierarchies(
    data: Any,
    quasi_identifiers: Sequence[str],
    *,
    grouping: str = "frequency",
    engine: str = "numpy",
    csv_options: CsvOptions | None = None,
) -> dict[str, AutoHierarchy]:
    """Infer a hierarchy for each quasi-identifier from its values and their counts.

    See :mod:`anonlab.data.auto` for the rules (intervals, dates, masking, grouping); a job
    gets the same hierarchy with ``hierarchy: auto``.

    Parameters
    ----------
    data : path, EncodedTable, DataFrame, pyarrow Table or Engine
        The table.
    quasi_identifiers : sequence of str
        The columns.
    grouping : {"frequency", "none"}
        For a categorical column: its rare values grouped first (the default), or only
        ``value -> *``.
    engine : str
        The engine that counts the values (``"duckdb"`` for a file larger than memory).
    csv_options : CsvOptions, optional
        How to parse a CSV path.

    Returns
    -------
    dict of str to AutoHierarchy
        Each column's hierarchy, its kind and its levels in words.

    Examples
    --------
    >>> from anonlab.api import adult_path, infer_hierarchies
    >>> found = infer_hierarchies(adult_path(), ["age", "sex"])
    >>> found["age"].kind, found["sex"].kind
    ('intervals', 'flat')
    >>> found["age"].hierarchy.generalize(["37"], 2).tolist()
    ['[30, 40)']
    """
    eng = open_engine(data, engine=engine, csv_options=csv_options)
    try:
        eng.validate(list(quasi_identifiers), None)
        out = {}
        for q in quasi_identifiers:
            stats = eng.class_stats([q])
            assert stats.keys is not None and stats.domains is not None
            values = stats.domains[0][stats.keys[:, 0]]
            out[q] = infer_hierarchy(values, stats.sizes, attribute=q, grouping=grouping)
        return out
    finally:
        if eng is not data:
            eng.close()


def write_hierarchies(
    data: Any,
    quasi_identifiers: Sequence[str],
    output_dir: str | os.PathLike[str],
    *,
    grouping: str = "frequency",
    engine: str = "numpy",
    csv_options: CsvOptions | None = None,
) -> dict[str, tuple[AutoHierarchy, Path]]:
    """Infer each quasi-identifier's hierarchy and write it in ARX's format to
    ``output_dir/<column>.csv`` (the folder is made if it is missing; its parent must exist).

    Every hierarchy is inferred and every output checked before the first file is written;
    each file is written atomically, and never onto the data file.

    Parameters
    ----------
    data, quasi_identifiers, grouping, engine, csv_options
        As :func:`infer_hierarchies` takes them.
    output_dir : path-like
        The folder of the hierarchy files.

    Returns
    -------
    dict of str to (AutoHierarchy, Path)

    Raises
    ------
    InputError
        ``output_dir`` is a file, or its parent folder does not exist; an output that
        cannot be written (see :func:`anonlab.io.atomic.check_output`).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> from anonlab.api import adult_path, write_hierarchies
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     written = write_hierarchies(adult_path(), ["age"], Path(folder) / "hierarchies")
    ...     print(written["age"][1].read_text().splitlines()[0])
    17;[15, 20);<20;<20;<40;*
    """
    folder = Path(output_dir)
    if folder.exists() and not folder.is_dir():
        raise InputError(f"The output folder {str(folder)!r} is not a folder; give a folder.")
    if not folder.parent.is_dir():
        raise InputError(f"The output folder's parent {str(folder.parent)!r} does not exist.")
    found = infer_hierarchies(
        data, quasi_identifiers, grouping=grouping, engine=engine, csv_options=csv_options
    )
    folder.mkdir(mode=0o755, exist_ok=True)
    paths = {q: folder / f"{q}.csv" for q in found}
    protect = [data] if isinstance(data, (str, os.PathLike)) else []
    for path in paths.values():
        check_output(path, protect=protect)
    for q, auto in found.items():
        write_hierarchy(auto.hierarchy, paths[q])
    return {q: (found[q], paths[q]) for q in found}


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
        privacy model's job-file name (``alpha_k_anonymity, average_risk, ...``); ``engines``:
        the engines, as a choice (``numpy|duckdb|spark``).

    Examples
    --------
    >>> help_lists()["partition_algorithms"]
    'progressive, top_down, local_suppression, microaggregation, mondrian, wong_nh, murakami_uno, personalized'
    """
    return {
        "algorithms": algorithm_families(),
        "partition_algorithms": ", ".join(partition_algorithm_names()),
        "models": ", ".join(MODELS.names()),
        "engines": "|".join(engine_names()),
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
    disclosure_share: float | None = None,
    contingency: Sequence[str] | None = None,
    classify: str | None = None,
    sampling_fraction: float | None = None,
    population_size: int | None = None,
    weight: str | None = None,
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
    disclosure_share : float in (0, 1], optional
        Besides the classes whose records share one sensitive value, those where one value
        holds more than this share (under S; with a job, before and after it).
    contingency : sequence of two str, optional
        With a job: two attributes whose contingency table the report shows before and after.
    classify : str, optional
        With a job: an attribute released as it is, which classifiers learn from the data and
        from the release (:func:`~anonlab.diagnosis.utility.classification_utility`; the
        ``utility`` extra).
    sampling_fraction, population_size, weight : optional
        The population the table was sampled from (at most one; ``weight`` defaults to the
        job's): the risk sections then show the journalist and marketer models, the
        population-uniqueness estimates and, with weights, the Benedetti-Franconi risk,
        before and after anonymization.

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
    if weight is None and spec is not None:
        weight = spec.weight
    sample: dict[str, Any] = {
        "sampling_fraction": sampling_fraction,
        "population_size": population_size,
        "weight": weight,
        # the columns the job or --sensitive gives a role are not "undeclared"; the ones it
        # releases as they are (insensitive) are still listed when they identify
        "declared": [*sens, *(spec.identifiers if spec is not None else [])],
        "released_as_is": list(spec.insensitive) if spec is not None else [],
    }
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PrivacyRiskWarning)
        stage(progress, "diagnosing")
        summary = risk(eng, qi, **sample)
        suda = suda2(eng, qi, max_size=min(len(qi), SUDA_MAX_SIZE))
        answers = {
            "q2": diagnose(eng, quasi_identifiers=qi),
            "q11": diagnose(eng, quasi_identifiers=qi, find_delta=True, max_k=max_k),
            "q4": diagnose(eng, attributes=qi),
            "q3": diagnose(eng, attributes=qi, k=kk),
        }
        singling_out = find_quasi_identifiers(eng, qi)
        exposed = []
        if sens:  # the sensitive attributes under S, with a job or without
            classes = eng.class_stats(qi, sensitive=sens)
            exposed = disclosures(classes, sens, share=disclosure_share)
        figures = None
        if spec is not None:
            before = check(table, spec, disclosure_share=disclosure_share)
            before_risk = risk_summary(eng, job_qis, **sample)
            result = anonymize(table, spec, progress=progress)
            stage(progress, "measuring the release")
            release = profile_release(build_problem(table, spec), result, sens)
            after_risk = risk_summary(
                open_engine(_released_keys(table, result, job_qis, weight)), job_qis, **sample
            )
            figures = JobFigures(
                _job_text(job, spec),
                spec.source,
                before,
                before_risk,
                result,
                release,
                after_risk,
                after_disclosure=_release_disclosure(result, sens, disclosure_share),
                utility=utility_profile(table, result, sens, pair=contingency)
                if result.recoding is not None
                else None,
                classification=classification_utility(table, result, classify)
                if classify is not None
                else None,
            )
    notes = list(dict.fromkeys(str(w.message) for w in caught))
    said: set[str] = set()
    for w in caught:  # the caller's handlers see them too (the command line prints them), once
        if str(w.message) not in said:
            said.add(str(w.message))
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
        suda=suda,
        disclosure=exposed,
        population_options=[
            f"--{k.replace('_', '-')}={v}" for k, v in sample.items() if v is not None
        ],
        job=figures,
        warnings=notes,
        version=_version(),
    )


def _release_disclosure(
    result: AnonymizationResult, sensitive: Sequence[str], share: float | None
) -> list[AttributeDisclosure]:
    """The classes of a release's labels that give a sensitive value away (none for a cell
    cover, whose records are not grouped by their labels)."""
    if not result.forms_classes or not sensitive:
        return []
    qis = list(result.problem.quasi_identifiers)
    labels = EncodedTable.from_columns({c: result.columns[c] for c in [*qis, *sensitive]})
    stats = get_engine("numpy", labels).class_stats(qis, sensitive=list(sensitive))
    return disclosures(stats, sensitive, share=share)


#: The largest attribute sets SUDA2 looks for in a report (sdcMicro's default is the same).
SUDA_MAX_SIZE = 4


def _released_keys(
    table: EncodedTable, result: AnonymizationResult, qis: Sequence[str], weight: str | None
) -> EncodedTable:
    """The release's quasi-identifier labels (and the data's weights of the released rows)."""
    columns = {q: result.columns[q] for q in qis}
    if weight is not None:
        kept = np.arange(table.n_rows)
        if result.recoding is not None and result.recoding.rows is not None:
            kept = kept[result.recoding.rows]  # rows an algorithm removed before the release
        if result.columns.rows is not None:
            kept = kept[result.columns.rows]  # rows suppressed by the verification
        columns[weight] = table[weight].labels()[kept]
    return EncodedTable.from_columns(columns)


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


#: The k's and algorithms :func:`explore` tries unless told otherwise.
EXPLORE_KS = (2, 3, 5, 10, 20)
EXPLORE_ALGORITHMS = ("optimal",)
#: The most candidates :func:`explore` runs at once.
EXPLORE_MAX_CANDIDATES = 200
#: The common measure of every candidate's loss.
EXPLORE_METRIC = "gcp"


def explore(
    data: Any,
    job: JobLike,
    *,
    ks: Sequence[int] = EXPLORE_KS,
    algorithms: Sequence[str] = EXPLORE_ALGORITHMS,
    output: str | os.PathLike[str] | None = None,
    sampling_fraction: float | None = None,
    classify: str | None = None,
    csv_options: CsvOptions | None = None,
    progress: Progress | None = None,
) -> ExploreData:
    """Run a job as candidate releases, one per k and algorithm, and compare their risk and
    utility on one scale.

    Each candidate is the job with its k-anonymity's k set to one of ``ks`` (added when the
    job has none), run by one of ``algorithms`` and measured by one common loss, GCP (0: every
    value kept; 1: every quasi-identifier cell generalized to the root or suppressed); its
    risk is that of its released labels (prosecutor highest and average, and with
    ``sampling_fraction`` the population uniqueness). The candidates that no other beats on
    both loss and average risk form the frontier. A candidate an algorithm refuses (a model
    it does not support) is listed with the reason.

    Parameters
    ----------
    data : path, DataFrame, pyarrow Table or EncodedTable
        The table.
    job : JobSpec, mapping or path
        The job the candidates vary.
    ks : sequence of int
        The k's.
    algorithms : sequence of str
        The algorithms (registered names).
    output : path, optional
        An ``.html`` page to write; each candidate's release (CSV), job (YAML) and report are
        written into a new folder beside it, ``<name>_files/``, and linked from the page.
    sampling_fraction : float, optional
        The share of the population the table holds: adds the population estimates.
    classify : str, optional
        An attribute released as it is: each candidate's classifiers are trained on the data
        and on its release (the ``utility`` extra).
    csv_options : CsvOptions, optional
        How to read a CSV path, in place of the job's (each candidate's job file says so).
    progress : callable, optional
        Told each candidate as it starts.

    Returns
    -------
    ExploreData

    Raises
    ------
    ParameterError
        An unknown algorithm, a k below 1, no k or algorithm.
    InputError
        A bad job or output (nothing is written).

    Examples
    --------
    >>> import anonlab
    >>> from anonlab.api import explore
    >>> t = anonlab.EncodedTable.from_columns({"zip": ["4350", "4351", "4360", "4361"] * 5,
    ...                                        "sex": ["F", "M"] * 10})
    >>> job = {"quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    ...        "models": [{"k_anonymity": {"k": 2}}]}
    >>> found = explore(t, job, ks=[5, 10], algorithms=["optimal", "top_down"])
    >>> [(c.k, c.algorithm, round(c.loss, 3), c.frontier) for c in found.candidates]
    [(5, 'optimal', 0.0, True), (5, 'top_down', 0.0, True), (10, 'optimal', 0.5, True), (10, 'top_down', 0.667, False)]
    """
    spec = load_job(job)
    if csv_options is not None:  # the command line's CSV options, in place of the job's
        spec = dataclasses.replace(spec, csv=csv_options)
    ks = [int(Param(int, low=1).check(k, "k", owner="explore")) for k in ks]
    if not ks or not algorithms:
        raise ParameterError("explore needs at least one k and one algorithm.")
    if len(ks) * len(algorithms) > EXPLORE_MAX_CANDIDATES:
        raise ParameterError(
            f"{len(ks)} k's x {len(algorithms)} algorithms = {len(ks) * len(algorithms)} "
            f"candidates, more than {EXPLORE_MAX_CANDIDATES}: give fewer."
        )
    for name in algorithms:
        ALGORITHMS.lookup(name)  # an unknown name: the registry's one line
    table = read_table(data, csv_options=spec.csv)
    validate_job(table, spec)  # the job's columns and hierarchies, before anything is written
    raw = _raw_job(job, spec)
    if csv_options is not None:
        raw.update(_csv_keys(csv_options))
    if classify is not None:
        check_target(table, [q.name for q in spec.quasi_identifiers], classify)
    files = None
    if output is not None:
        files = _explore_folder(output, data, job)
    qis = [q.name for q in spec.quasi_identifiers]
    candidates = []
    for k in ks:
        for name in algorithms:
            stage(progress, f"k = {k}, {name}")
            cand = _candidate_job(raw, spec, k, name)
            started = time.perf_counter()
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", PrivacyRiskWarning)  # (said once, below)
                    result = anonymize(table, cand)
            except AnlabRefusal as exc:
                line = str(exc).splitlines()[0]
                candidates.append(Candidate(k, name, None, 0, None, 0.0, refused=line))
                continue
            seconds = time.perf_counter() - started
            risk = risk_summary(
                open_engine(_released_keys(table, result, qis, None)),
                qis,
                sampling_fraction=sampling_fraction,
            )
            verified = result.release.verification
            candidate = Candidate(
                k,
                name,
                float(result.loss),
                result.suppressed_rows,
                risk,
                seconds,
                k_after=risk.k if verified.k_after is None else verified.k_after,
                cover=not result.forms_classes,
                accuracy=classification_utility(table, result, classify).accuracy
                if classify is not None
                else None,
            )
            if files is not None:
                candidate = _write_candidate(candidate, result, cand, table, files, spec)
            candidates.append(candidate)
    _mark_frontier(candidates)
    found = ExploreData(
        str(data) if isinstance(data, (str, os.PathLike)) else None,
        spec.source,
        candidates,
        sampling_fraction,
        version=_version(),
    )
    if output is not None:
        with atomic_write(output) as tmp:
            tmp.write_text(render_explore(found), encoding="utf-8")
    return found


#: What :func:`explore` records as a refused candidate instead of stopping.
AnlabRefusal = (ParameterError, InputError)


def _explore_folder(output: str | os.PathLike[str], data: Any, job: Any) -> Path:
    """Check the page and its files' folder before any work; make the folder."""
    if not str(output).lower().endswith((".html", ".htm")):
        raise InputError(f"Cannot tell the page's format from {str(output)!r}; end it with .html.")
    protect = [Path(data)] if isinstance(data, (str, os.PathLike)) else []
    protect += job_input_files(job)
    check_output(output, protect=protect)
    path = Path(output)
    folder = path.with_name(f"{path.stem}_files")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise InputError(
            f"The candidates' folder {str(folder)!r} exists and is not an empty folder; "
            "remove it or choose another --output."
        )
    folder.mkdir(exist_ok=True)
    return folder


def _raw_job(job: Any, spec: Any) -> dict[str, Any]:
    """The job as a mapping, its hierarchy files as absolute paths (a candidate's job file
    is written elsewhere)."""
    if isinstance(job, Mapping):
        raw = dict(job)
    elif spec.source is not None:
        yaml = import_optional("yaml", feature="job files")
        raw = dict(yaml.safe_load(Path(spec.source).read_text(encoding="utf-8-sig")))
    else:
        raise InputError("explore takes a job as a file or a mapping.")
    qis = {}
    for name, opts in (raw.get("quasi_identifiers") or {}).items():
        opts = dict(opts or {})
        where = opts.get("hierarchy")
        if isinstance(where, (str, os.PathLike)) and where != "auto":
            opts["hierarchy"] = str((spec.base_dir / str(where)).resolve())
        qis[name] = opts
    raw["quasi_identifiers"] = qis
    return raw


def _csv_keys(options: CsvOptions) -> dict[str, Any]:
    """CSV options as a job file's keys."""
    keys: dict[str, Any] = {
        "separator": options.separator,
        "header": options.header,
        "quote": options.quote,
        "encoding": options.encoding,
        "na_values": list(options.na_values),
        "strip": options.strip,
    }
    if options.names is not None:
        keys["names"] = list(options.names)
    return keys


def _candidate_job(raw: dict[str, Any], spec: Any, k: int, algorithm: str) -> dict[str, Any]:
    """The job with k-anonymity's k set to ``k``, run by ``algorithm``, measured by GCP."""
    models = []
    found = False
    for item in raw.get("models") or []:
        ((name, params),) = item.items() if isinstance(item, Mapping) else [(item, {})]
        if name == "k_anonymity":
            params, found = {**(params or {}), "k": k}, True
        models.append({name: params or {}})
    if not found:
        models.insert(0, {"k_anonymity": {"k": k}})
    cand = {**raw, "models": models, "algorithm": algorithm, "metric": EXPLORE_METRIC}
    cand.pop("privacyfrost2", None)  # an algorithm's own section belongs to that algorithm
    if algorithm != spec.algorithm:
        cand["algorithm"] = algorithm
    elif spec.algorithm_params:
        cand["algorithm"] = {"name": algorithm, **spec.algorithm_params}
    if not build_anonymizer(algorithm).suppresses_rows():
        cand.pop("suppression", None)
        cand.pop("output", None)
    return cand


def _write_candidate(
    candidate: Candidate,
    result: AnonymizationResult,
    job: dict[str, Any],
    table: EncodedTable,
    folder: Path,
    spec: Any,
) -> Candidate:
    """Write a candidate's release, job and report into ``folder``; their relative paths."""
    yaml = import_optional("yaml", feature="job files")
    stem = f"k{candidate.k}_{candidate.algorithm}"
    release, job_file, page = (folder / f"{stem}{e}" for e in (".csv", ".yaml", ".html"))
    write_table(result.columns, release, separator=spec.csv.separator)
    job_file.write_text(yaml.safe_dump(job, sort_keys=False, allow_unicode=True), encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyRiskWarning)
        page.write_text(render_html(report_data(table, job=job)), encoding="utf-8")
    rel = folder.name
    return dataclasses.replace(
        candidate,
        release=f"{rel}/{release.name}",
        job=f"{rel}/{job_file.name}",
        report=f"{rel}/{page.name}",
    )


def _mark_frontier(candidates: list[Candidate]) -> None:
    """Mark the candidates no other beats on both loss and average risk."""
    ran = [c for c in candidates if c.loss is not None and c.risk is not None]
    for c in ran:
        assert c.loss is not None and c.risk is not None
        c.frontier = not any(
            o.loss <= c.loss
            and o.risk.average_risk <= c.risk.average_risk
            and (o.loss < c.loss or o.risk.average_risk < c.risk.average_risk)
            for o in ran
            if o is not c and o.loss is not None and o.risk is not None
        )
