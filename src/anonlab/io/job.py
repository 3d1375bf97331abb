"""Job files (YAML) of ``anonlab anonymize`` and ``anonlab check``.

A job says which columns are quasi-identifiers (with their hierarchies and levels), which are
sensitive, which privacy models must hold, how many rows may be suppressed, which metric to
minimise and which algorithm to use::

    separator: ";"
    quasi_identifiers:
      age: {hierarchy: hierarchies/age.csv, max_level: 3, weight: 2}
      zip: {mask: {width: 5}}
      born: {dates: {levels: [month, year]}}
      income: {intervals: {widths: [1000, 10000]}}
    sensitive: [occupation]
    identifiers: [name, fnlwgt]         # dropped from the release
    insensitive: [hours-per-week]       # released as it is, knowingly
    identifying_threshold: 0.01         # see below
    weight: instance weight             # sampling weights: never a quasi-identifier, dropped
    population: {file: population.csv}  # the table this one is a sample of (k_map, delta_presence)
    models:
      - k_anonymity: {k: 5}
      - recursive_cl_diversity: {attribute: occupation, c: 4, l: 3}
    suppression: 0.05
    metric: {name: entropy, monotonic: false}
    algorithm: optimal                  # or {name: privacyfrost2, score: log, ...}
    personalized: {limit_column: pleak, default_limit: 0.25}   # per-record leakage limits

Every other column of the table is released as it is. ``anonymize`` refuses a job that would
release, undeclared, a column that identifies people (unique on more than
``identifying_threshold`` of the records, alone or with another column; dependent on a
quasi-identifier; or named like an identifier: see
:func:`anonlab.diagnosis.risk.identifying_columns`) until it is declared: under
``identifiers`` (dropped), as a quasi-identifier (generalized) or under ``insensitive``
(released as it is, knowingly).

``weight`` names a column of sampling weights (the population records each record stands for),
as ``weight: COLUMN`` or ``weight: {column: COLUMN, release: true}``: it is never a
quasi-identifier, and it is dropped from the release like an identifier unless ``release:
true`` (then it is released as it is, knowingly, like an insensitive column).

``population`` names the population table the data is a sample of (ARX's research subset is
the data, the population its superset), as ``population: FILE`` or ``population: {file:
FILE}``, read with the job's CSV options: ``k_map`` without ``sampling_fraction`` and
``delta_presence`` judge every class against the population's records of it. A job given from
Python may name a data frame or an :class:`~anonlab.data.table.EncodedTable` instead of a file.

Paths are relative to the job file. A job given from Python as a mapping may also name a
:class:`~anonlab.data.hierarchy.Hierarchy` already in memory (``{"hierarchy": h}``): it is used
as it is, without reading a file. This module only parses and validates the shape; models and
metrics are built by the API from their registries.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from anonlab._optional import import_optional
from anonlab._validation import Param, column_name, did_you_mean
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.source import DEFAULT_NA_VALUES, CsvOptions
from anonlab.exceptions import InputError, ParameterError
from anonlab.io.atomic import check_input_file, check_local

__all__ = ["JobSpec", "PersonalizedSpec", "QuasiIdentifierSpec", "read_job", "parse_job"]

_TOP_KEYS = {
    "separator",
    "header",
    "quote",
    "encoding",
    "na_values",
    "strip",
    "names",
    "quasi_identifiers",
    "sensitive",
    "models",
    "suppression",
    "metric",
    "algorithm",
    "privacyfrost2",
    "output",
    "identifiers",
    "insensitive",
    "identifying_threshold",
    "personalized",
    "weight",
    "population",
}
_WEIGHT_KEYS = ("column", "release")
_POPULATION_KEYS = ("file",)
_OUTPUT_KEYS = ("suppressed",)
#: Top-level sections of the older job form, one per algorithm (``privacyfrost2: {...}``).
_ALGORITHM_SECTIONS = ("privacyfrost2",)
_QI_KEYS = {
    "hierarchy",
    "mask",
    "intervals",
    "dates",
    "auto",
    "min_level",
    "max_level",
    "weight",
    "priority",
}
_BUILDERS = ("hierarchy", "mask", "intervals", "dates", "auto")
#: The declared constraints of the job's own numeric keys (the wording of every parameter).
_KEY_PARAMS = {
    "suppression": Param(float, low=0, high=1),
    "identifying_threshold": Param(float, low=0, high=1),
}
#: A quasi-identifier's priority (PrivacyFrost2's ``v_i``; higher keeps finer): the one
#: constraint, checked on a job's ``priority`` here and on the search's ``priorities`` there.
PRIORITY = Param(int, low=1)
#: Of a quasi-identifier's numeric options.
_QI_PARAMS = {
    "min_level": Param(int),
    "max_level": Param(int),
    "priority": PRIORITY,
    "weight": Param(float, low=0),
}
#: Of ``personalized.default_limit`` (a leakage limit: a probability above 0).
_DEFAULT_LIMIT = Param(float, low=0, high=1, low_open=True)
_PERSONALIZED_KEYS = ("limit_column", "default_limit", "release_limits")


@dataclass
class QuasiIdentifierSpec:
    """One quasi-identifier of a job.

    Attributes
    ----------
    name : str
    hierarchy : Path or Hierarchy, optional
        An ARX-format hierarchy file, or a hierarchy in memory (a job given as a mapping).
    builder : tuple of (str, dict), optional
        ``("mask" | "intervals" | "dates", parameters)`` to build the hierarchy from the data.
        With neither, the hierarchy is ``value -> *``.
    min_level, max_level : int, optional
    weight : float
    priority : int, optional
        PrivacyFrost2's attribute priority.
    """

    name: str
    hierarchy: Path | Hierarchy | None = None
    builder: tuple[str, dict[str, Any]] | None = None
    min_level: int | None = None
    max_level: int | None = None
    weight: float = 1.0
    priority: int | None = None


@dataclass
class PersonalizedSpec:
    """Per-record leakage limits (``personalized:``): a column of the table, one default
    limit for every record, or both (a missing cell takes the default).

    Attributes
    ----------
    limit_column : str, optional
        The column holding each record's limit (a probability in (0, 1]).
    default_limit : float, optional
        The limit of every record without one of its own.
    release_limits : bool
        Release the limit column (default: it is never released).
    """

    limit_column: str | None = None
    default_limit: float | None = None
    release_limits: bool = False


@dataclass
class JobSpec:
    """A parsed job file (see the module docstring).

    ``insensitive`` are the columns released as they are knowingly; ``identifying_threshold``
    the share of the records an undeclared column (or pair) may make unique (None: the
    default of :func:`anonlab.diagnosis.risk.identifying_columns`).
    """

    quasi_identifiers: list[QuasiIdentifierSpec]
    models: list[tuple[str, dict[str, Any]]]
    csv: CsvOptions = field(default_factory=CsvOptions)
    sensitive: list[str] = field(default_factory=list)
    identifiers: list[str] = field(default_factory=list)
    insensitive: list[str] = field(default_factory=list)
    identifying_threshold: float | None = None
    suppression: float = 0.0
    metric: tuple[str, dict[str, Any]] = ("loss", {})
    algorithm: str = "optimal"
    algorithm_params: dict[str, Any] = field(default_factory=dict)
    output: dict[str, Any] = field(default_factory=dict)
    base_dir: Path = field(default_factory=Path.cwd)
    source: str | None = None
    personalized: PersonalizedSpec | None = None
    weight: str | None = None
    release_weight: bool = False
    population: Any = None
    #: The population table once read (by :func:`anonlab.jobs.problem.job_models`).
    population_table: Any = field(default=None, repr=False, compare=False)


def read_job(path: str | os.PathLike[str]) -> JobSpec:
    """Read and validate a YAML job file.

    Raises
    ------
    InputError
        If the file is missing, not YAML, or its content is not a valid job (the message
        names the key).
    """
    p = check_input_file(path, "job file")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"Job file {str(p)!r} is not valid utf-8 text.") from None
    except OSError as exc:
        raise InputError(f"The job file {str(p)!r} cannot be read: {exc.strerror}.") from None
    data = load_yaml(text, source=str(p))
    return parse_job(data, base_dir=p.parent, source=str(p))


def load_yaml(text: str, *, source: str = "<job>") -> Any:
    """Parse YAML text as a job file does: safe types only, a key given twice is an error.

    Raises
    ------
    InputError
        If the text is not valid YAML or a mapping repeats a key (the line is named).
    """
    yaml = import_optional("yaml", feature="job files")

    class _Loader(yaml.SafeLoader):  # type: ignore[misc, name-defined]
        pass

    def _mapping(loader: Any, node: Any, deep: bool = False) -> Any:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = loader.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if key in seen:
                raise InputError(
                    f"Key {key!r} is given twice in job file {source!r} (lines {seen[key]} "
                    f"and {line}); keep one."
                )
            seen[key] = line
        return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)

    _Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise InputError(f"Job file {source!r} is not valid YAML: {exc}") from None


def parse_job(data: Any, *, base_dir: Path | None = None, source: str | None = None) -> JobSpec:
    """Validate a job given as a mapping (the content of a YAML job file)."""
    where = f" in job file {source!r}" if source else ""
    if not isinstance(data, dict):
        raise InputError(f"A job must be a mapping of keys to values{where}.")
    for key in data:
        if key not in _TOP_KEYS:
            raise InputError(
                f"Unknown key {key!r}{where}.{did_you_mean(str(key), _TOP_KEYS)} "
                f"Valid keys: {', '.join(sorted(_TOP_KEYS))}."
            )
    base = base_dir or Path.cwd()
    qis_raw = data.get("quasi_identifiers")
    if isinstance(qis_raw, list):
        qis_raw = {str(q): {} for q in qis_raw}
    if not isinstance(qis_raw, dict) or not qis_raw:
        raise InputError(
            f"The job needs 'quasi_identifiers' (a mapping of column to options){where}."
        )
    qis = [_parse_qi(column_name(name), opts or {}, base, where) for name, opts in qis_raw.items()]
    models = _parse_models(data.get("models"), where)
    metric_raw = data.get("metric", "loss")
    metric: tuple[str, dict[str, Any]]
    if isinstance(metric_raw, str):
        metric = (metric_raw, {})
    elif isinstance(metric_raw, dict) and "name" in metric_raw:
        params = {k: v for k, v in metric_raw.items() if k != "name"}
        metric = (str(metric_raw["name"]), params)
    else:
        raise InputError(f"'metric' must be a name or a mapping with 'name'{where}.")
    sensitive = _names(data.get("sensitive", []), "sensitive", where)
    suppression = _KEY_PARAMS["suppression"].check(data.get("suppression", 0.0), "suppression")
    csv = CsvOptions(
        separator=_text(data, "separator", ",", where),
        header=_flag(data, "header", True, where),
        quote=_text(data, "quote", '"', where),
        encoding=_text(data, "encoding", "utf-8", where),
        na_values=tuple(
            _str_list(data.get("na_values", list(DEFAULT_NA_VALUES)), "na_values", where)
        ),
        strip=_flag(data, "strip", False, where),
        names=tuple(_names(data["names"], "names", where)) if "names" in data else None,
    )
    output = data.get("output", {}) or {}
    if not isinstance(output, dict):
        raise InputError(f"'output' must be a mapping{where}.")
    for key in output:
        if key not in _OUTPUT_KEYS:
            raise InputError(
                f"Unknown key {key!r} under 'output'{where}."
                f"{did_you_mean(str(key), _OUTPUT_KEYS)} Valid keys: {', '.join(_OUTPUT_KEYS)}."
            )
    suppressed = output.get("suppressed", "remove")
    if suppressed not in ("remove", "mask"):
        raise InputError(
            f"'output.suppressed' must be 'remove' or 'mask'. Got {suppressed!r}{where}."
        )
    algorithm, algorithm_params = _parse_algorithm(data, where)
    identifiers = _names(data.get("identifiers", []), "identifiers", where)
    personalized = _parse_personalized(data.get("personalized"), where)
    insensitive = _parse_insensitive(data, qis, sensitive, identifiers, personalized, where)
    weight, release_weight = _parse_weight(data.get("weight"), where)
    if weight is not None:
        _check_weight_role(weight, qis, sensitive, identifiers, insensitive, personalized, where)
        (insensitive if release_weight else identifiers).append(weight)
    threshold = data.get("identifying_threshold")
    if threshold is not None:
        threshold = _KEY_PARAMS["identifying_threshold"].check(threshold, "identifying_threshold")
    return JobSpec(
        quasi_identifiers=qis,
        models=models,
        csv=csv,
        sensitive=sensitive,
        identifiers=identifiers,
        insensitive=insensitive,
        identifying_threshold=threshold,
        suppression=suppression,
        metric=metric,
        algorithm=algorithm,
        algorithm_params=algorithm_params,
        output=dict(output),
        base_dir=base,
        source=source,
        personalized=personalized,
        weight=weight,
        release_weight=release_weight,
        population=_parse_population(data.get("population"), base, where),
    )


def _parse_population(raw: Any, base: Path, where: str) -> Any:
    """``population: FILE`` or ``population: {file: FILE}`` (a readable file, relative to the
    job), or a table in memory given from Python; None when absent."""
    if raw is None:
        return None
    if isinstance(raw, dict):
        for key in raw:
            if key not in _POPULATION_KEYS:
                raise InputError(
                    f"Unknown key {key!r} under 'population'{where}."
                    f"{did_you_mean(str(key), _POPULATION_KEYS)} Valid keys: "
                    f"{', '.join(_POPULATION_KEYS)}."
                )
        if "file" not in raw:
            raise InputError(f"'population' needs 'file' (the population table){where}.")
        raw = raw["file"]
    if isinstance(raw, (str, os.PathLike)):
        return check_input_file(base / raw, "population table")
    if isinstance(raw, (bool, int, float, list)):
        raise InputError(
            f"'population' must be a file (the population table) or {{file: FILE}}{where}; "
            f"got {raw!r}."
        )
    return raw  # a table in memory (a data frame, an EncodedTable, ...)


def _parse_weight(raw: Any, where: str) -> tuple[str | None, bool]:
    """``weight: COLUMN`` or ``weight: {column: COLUMN, release: false}``."""
    if raw is None:
        return None, False
    if isinstance(raw, (str, int, float)) and not isinstance(raw, bool):
        return column_name(raw), False
    if not isinstance(raw, dict) or "column" not in raw:
        raise InputError(
            f"'weight' must be a column name or {{column: NAME, release: false}}{where}; "
            f"got {raw!r}."
        )
    for key in raw:
        if key not in _WEIGHT_KEYS:
            raise InputError(
                f"Unknown key {key!r} under 'weight'{where}.{did_you_mean(str(key), _WEIGHT_KEYS)} "
                f"Valid keys: {', '.join(_WEIGHT_KEYS)}."
            )
    release = raw.get("release", False)
    if not isinstance(release, bool):
        raise InputError(f"'weight.release' must be true or false{where}; got {release!r}.")
    return column_name(raw["column"]), release


def _check_weight_role(
    weight: str,
    qis: list[QuasiIdentifierSpec],
    sensitive: list[str],
    identifiers: list[str],
    insensitive: list[str],
    personalized: PersonalizedSpec | None,
    where: str,
) -> None:
    """The weight column has no other role (a weight is never a quasi-identifier)."""
    roles = (
        ("a quasi-identifier", [q.name for q in qis]),
        ("a sensitive attribute", sensitive),
        ("an identifier", identifiers),
        ("insensitive", insensitive),
        ("the limit column of 'personalized'", [personalized.limit_column] if personalized else []),
    )
    for role, names in roles:
        if weight in names:
            raise InputError(
                f"Column {weight!r} is the weight column and is also {role}{where}; a sampling "
                "weight is never a quasi-identifier, and a column has one role."
            )


def _parse_insensitive(
    data: dict[str, Any],
    qis: list[QuasiIdentifierSpec],
    sensitive: list[str],
    identifiers: list[str],
    personalized: PersonalizedSpec | None,
    where: str,
) -> list[str]:
    """``insensitive: [column, ...]``: columns released as they are, knowingly; a column
    has one role."""
    insensitive = _names(data.get("insensitive", []), "insensitive", where)
    roles = (
        ("a quasi-identifier", [q.name for q in qis]),
        ("a sensitive attribute", sensitive),
        ("an identifier", identifiers),
        ("the limit column of 'personalized'", [personalized.limit_column] if personalized else []),
    )
    for column in insensitive:
        for role, names in roles:
            if column in names:
                raise InputError(
                    f"Column {column!r} is declared insensitive (released as it is) and is "
                    f"also {role}{where}; a column has one role."
                )
    return insensitive


def _parse_personalized(raw: Any, where: str) -> PersonalizedSpec | None:
    """``personalized: {limit_column: name, default_limit: 0.25, release_limits: false}``."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise InputError(
            f"'personalized' must be a mapping such as {{limit_column: pleak}} or "
            f"{{default_limit: 0.25}}{where}."
        )
    for key in raw:
        if key not in _PERSONALIZED_KEYS:
            raise InputError(
                f"Unknown key {key!r} under 'personalized'{where}."
                f"{did_you_mean(str(key), _PERSONALIZED_KEYS)} Valid keys: "
                f"{', '.join(_PERSONALIZED_KEYS)}."
            )
    column = raw.get("limit_column")
    if column is not None and (not isinstance(column, str) or not column):
        raise ParameterError(
            f"The 'limit_column' of 'personalized' must be a column name. Got {column!r} "
            f"instead{where}."
        )
    default = raw.get("default_limit")
    if default is not None:
        default = _DEFAULT_LIMIT.check(
            default, "default_limit", owner="'personalized' (a leakage limit)"
        )
    if column is None and default is None:
        raise InputError(
            f"'personalized' needs 'limit_column' (the column of each record's limit) or "
            f"'default_limit' (one limit for every record){where}."
        )
    release = raw.get("release_limits", False)
    if not isinstance(release, bool):
        raise InputError(
            f"'personalized.release_limits' must be true or false (without quotes). Got "
            f"{release!r}{where}."
        )
    return PersonalizedSpec(None if column is None else column_name(column), default, release)


def _parse_algorithm(data: dict[str, Any], where: str) -> tuple[str, dict[str, Any]]:
    """``algorithm: NAME`` or ``algorithm: {name: NAME, parameter: value, ...}``; the older
    form ``algorithm: privacyfrost2`` with a top-level ``privacyfrost2:`` section still works.
    """
    raw = data.get("algorithm", "optimal")
    if isinstance(raw, dict):
        if "name" not in raw or not isinstance(raw["name"], str):
            raise InputError(
                f"'algorithm' as a mapping needs 'name' (e.g. {{name: privacyfrost2, score: "
                f"log}}){where}."
            )
        name = raw["name"]
        params = {str(k): v for k, v in raw.items() if k != "name"}
    elif isinstance(raw, str):
        name, params = raw, {}
    else:
        raise InputError(f"'algorithm' must be the name of an algorithm. Got {raw!r}{where}.")
    for section in _ALGORITHM_SECTIONS:
        if section not in data:
            continue
        if name != section:
            raise InputError(
                f"The job has a {section!r} section but 'algorithm' is {name!r}{where}; "
                f"set 'algorithm: {section}' or remove the section."
            )
        extra = data[section] or {}
        if not isinstance(extra, dict):
            raise InputError(f"{section!r} must be a mapping{where}.")
        both = sorted(set(extra) & set(params))
        if both:
            raise InputError(
                f"Parameter {both[0]!r} of {name!r} is given twice (under 'algorithm' and "
                f"under {section!r}){where}."
            )
        params.update({str(k): v for k, v in extra.items()})
    return name, params


def _flag(data: dict[str, Any], key: str, default: bool, where: str) -> bool:
    value = data.get(key, default)
    if not isinstance(value, bool):
        raise InputError(f"'{key}' must be true or false (without quotes). Got {value!r}{where}.")
    return value


def _text(data: dict[str, Any], key: str, default: str, where: str) -> str:
    value = data.get(key, default)
    if not isinstance(value, str):
        raise InputError(f"'{key}' must be text. Got {value!r}{where}.")
    return value


def _names(value: Any, key: str, where: str) -> list[str]:
    """A list of column names, in Unicode NFC as every name is compared."""
    return [column_name(v) for v in _str_list(value, key, where)]


def _str_list(value: Any, key: str, where: str) -> list[str]:
    if isinstance(value, str):
        return [value]
    if not isinstance(value, list) or not all(isinstance(v, (str, int, float)) for v in value):
        raise InputError(f"'{key}' must be a list of names{where}.")
    return [str(v) for v in value]


def _parse_qi(name: str, opts: Any, base: Path, where: str) -> QuasiIdentifierSpec:
    if not isinstance(opts, dict):
        raise InputError(f"Options of quasi-identifier {name!r} must be a mapping{where}.")
    for key in opts:
        if key not in _QI_KEYS:
            raise InputError(
                f"Unknown option {key!r} of quasi-identifier {name!r}{where}."
                f"{did_you_mean(str(key), _QI_KEYS)} Valid options: {', '.join(sorted(_QI_KEYS))}."
            )
    given = [b for b in _BUILDERS if b in opts]
    if len(given) > 1:
        raise InputError(
            f"Quasi-identifier {name!r} has two hierarchies ({', '.join(given)}){where}."
        )
    spec = QuasiIdentifierSpec(name)
    if isinstance(opts.get("hierarchy"), Hierarchy):
        spec.hierarchy = opts["hierarchy"]
    elif opts.get("hierarchy") == "auto":  # inferred from the column (anonlab.data.auto)
        spec.builder = ("auto", {})
    elif "hierarchy" in opts:
        check_local(str(opts["hierarchy"]), "hierarchy file")
        spec.hierarchy = (base / str(opts["hierarchy"])).resolve()
    elif given:
        params = opts[given[0]] or {}
        if not isinstance(params, dict):
            raise InputError(f"'{given[0]}' of quasi-identifier {name!r} must be a mapping{where}.")
        spec.builder = (given[0], dict(params))
    for key, rule in _QI_PARAMS.items():
        if key in opts:
            subject = f"The {key!r} of quasi-identifier {name!r}"
            setattr(spec, key, rule.check(opts[key], key, subject=subject))
    return spec


def _parse_models(raw: Any, where: str) -> list[tuple[str, dict[str, Any]]]:
    if raw is None:
        raise InputError(
            f"The job needs 'models' (a list such as '- k_anonymity: {{k: 5}}'){where}."
        )
    if isinstance(raw, dict):
        raw = [{k: v} for k, v in raw.items()]
    if not isinstance(raw, list) or not raw:
        raise InputError(f"'models' must be a non-empty list{where}.")
    out: list[tuple[str, dict[str, Any]]] = []
    for item in raw:
        if isinstance(item, str):
            out.append((item, {}))
        elif isinstance(item, dict) and len(item) == 1:
            ((name, params),) = item.items()
            if params is not None and not isinstance(params, dict):
                raise InputError(f"Parameters of model {name!r} must be a mapping{where}.")
            params = dict(params or {})
            if isinstance(params.get("attribute"), str):
                params["attribute"] = column_name(params["attribute"])
            out.append((str(name), params))
        else:
            raise InputError(f"Each model is '- name: {{parameters}}'. Got {item!r}{where}.")
    return out
