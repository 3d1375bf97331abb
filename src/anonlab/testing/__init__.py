"""The conformance suite every registered anonymization algorithm passes.

In the spirit of scikit-learn's ``check_estimator``: :func:`check_anonymizer` runs an
algorithm through the whole public path (job -> problem -> fit -> verify -> write) on small
tables and checks what every family must guarantee, whatever it does inside:

* the written file satisfies the models when it is read back and judged afresh, and
  ``anonlab check --release`` reads it back with its own job and verifies it;
* a bad value of each declared parameter raises the uniform :class:`ParameterError`;
* an unknown parameter names the valid ones;
* missing quasi-identifier values form classes of their own (or join the root);
* an empty table and a one-row table give clear errors;
* the same input gives the same output;
* a job with a suppression limit: the written release lacks at most that many rows (an
  algorithm that never suppresses refuses the limit);
* an l-diversity job: a family that forms equivalence classes releases classes of at least
  k rows and l sensitive values, counted afresh from the written file;
* risk-based jobs (average risk, sample and population uniqueness, estimated k-map): the
  written file satisfies them, or the family refuses them by name before any work;
* jobs with a population table (k-map with a population table, delta-presence): the written
  file's classes, with the population generalized to the release's levels and counted
  afresh, satisfy them, or the family refuses them by name before any work;
* :func:`check_engine`, on each engine (numpy, duckdb, spark): the job run from a file keeps
  the in-memory run's guarantees; out of core the algorithm runs on the frequency set (its
  release is the in-memory one) or block by block, or it is refused before any work.

A new family passes it by registering; its class may set ``conformance_job`` (a mapping of
job keys) when it needs other models than k-anonymity.
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from anonlab.algorithms import ALGORITHMS
from anonlab.algorithms.base import Anonymizer, Param
from anonlab.api import anonymize
from anonlab.api import check as check_table
from anonlab.data.population import Population
from anonlab.data.stats import count_population
from anonlab.data.table import EncodedTable
from anonlab.engines import engine_class, get_engine
from anonlab.exceptions import InputError, ParameterError
from anonlab.io import read_table
from anonlab.io.writers import write_table
from anonlab.models import build_model

__all__ = [
    "check_anonymizer",
    "check_engine",
    "check_population_models",
    "check_risk_models",
    "conformance_table",
    "CHECKS",
    "ENGINES",
    "POPULATION_JOBS",
    "RISK_JOBS",
]

#: The engines :func:`check_engine` runs a job on (``spark`` needs pyspark and Java 17+).
ENGINES = ("numpy", "duckdb", "spark")

_COLUMNS = ("age", "zip", "sex", "disease")


def conformance_table(n: int = 60, seed: int = 0, nulls: bool = False) -> EncodedTable:
    """A small table with three quasi-identifiers and a sensitive attribute.

    Parameters
    ----------
    n : int
        Rows.
    seed : int
        Random seed (the table is the same for the same seed).
    nulls : bool
        Put missing values in ``zip`` and ``sex``.

    Examples
    --------
    >>> t = conformance_table(n=8)
    >>> t.n_rows, t.names
    (8, ['age', 'zip', 'sex', 'disease'])
    """
    rng = np.random.default_rng(seed)
    ages = rng.integers(20, 70, size=n).astype(str).astype(object)
    zips = rng.choice(["4350", "4351", "4352", "4360", "4361"], size=n).astype(object)
    sexes = rng.choice(["F", "M"], size=n).astype(object)
    disease = rng.choice(["flu", "hiv", "cold", "cancer"], size=n).astype(object)
    if nulls:
        zips[rng.choice(n, size=max(n // 10, 1), replace=False)] = None
        sexes[0] = None
    return EncodedTable.from_columns({"age": ages, "zip": zips, "sex": sexes, "disease": disease})


def _outliers_table(seed: int = 0) -> EncodedTable:
    """60 rows: 54 in their thirties in two zip codes, and 6 outliers of other ages and zip
    codes (suppressing the outliers is the cheap release: a suppression limit must stop it)."""
    rng = np.random.default_rng(seed)
    ages = [str(a) for a in rng.integers(30, 40, size=54)] + ["21", "45", "52", "58", "63", "69"]
    zips = list(rng.choice(["4350", "4351"], size=54)) + ["4360", "4361"] * 3
    return EncodedTable.from_columns(
        {
            "age": np.array(ages, dtype=object),
            "zip": np.array(zips, dtype=object),
            "sex": rng.choice(["F", "M"], size=60).astype(object),
            "disease": rng.choice(["flu", "hiv", "cold", "cancer"], size=60).astype(object),
        }
    )


def _zip_disease_table(n: int = 60, seed: int = 0, nulls: bool = False) -> EncodedTable:
    """:func:`conformance_table` whose disease follows the zip code (one disease per zip
    code): a class that keeps one zip code holds one disease."""
    table = conformance_table(n, seed, nulls)
    zips = table.column("zip").labels()
    by_zip = {"4350": "flu", "4351": "hiv", "4352": "cold", "4360": "cancer", "4361": "flu"}
    disease = np.array([by_zip.get(z, "cold") for z in zips], dtype=object)
    columns = table.to_dict()
    columns["disease"] = disease
    return EncodedTable.from_columns(columns)


def _job(cls: type[Anonymizer], **extra: Any) -> dict[str, Any]:
    job: dict[str, Any] = {
        "quasi_identifiers": {
            "age": {"intervals": {"widths": [10, 20, 40]}},
            "zip": {"mask": {"width": 4}},
            "sex": {},
        },
        "sensitive": ["disease"],
        "models": [{"k_anonymity": {"k": 3}}],
        "suppression": 0.1,
        "metric": {"name": "loss"},
        "algorithm": cls.name,
    }
    job.update(dict(getattr(cls, "conformance_job", {})))
    job.update(extra)
    return job


def _holds(table: EncodedTable, job: Mapping[str, Any]) -> None:
    """Judge the released table afresh: its classes satisfy every model of the job."""
    qis = list(job["quasi_identifiers"])
    models = []
    for item in job["models"]:
        ((name, params),) = item.items()
        models.append(build_model(name, params))
    sensitive = sorted({a for m in models for a in m.sensitive_attributes})
    stats = get_engine("numpy", table).class_stats(qis, sensitive=sensitive)
    for m in models:
        ok = np.asarray(m.class_ok(stats), dtype=bool) & (stats.sizes >= m.min_class_size)
        assert bool(ok.all()), f"the written release fails {m.name} in {int((~ok).sum())} classes"


def check_written_release_holds(cls: type[Anonymizer]) -> None:
    """The file written by ``anonymize`` satisfies the models when read back and judged
    afresh, and ``anonlab check --release`` reads it back with its own job (missing values
    included) and finds it holds; the algorithm's declared verifier is its recoding's."""
    job = _job(cls)
    with tempfile.TemporaryDirectory() as tmp:
        for table in (conformance_table(), conformance_table(nulls=True, n=80)):
            out = Path(tmp) / "release.csv"
            result = anonymize(table, job, output=out)
            assert result.recoding is not None  # (in memory: the algorithm's recoding)
            verifier = result.recoding.verifier
            assert cls.verifier == verifier, (
                f"{cls.name} declares {cls.verifier!r}, not {verifier!r}"
            )
            if result.recoding.forms_classes:
                _holds(read_table(out), job)
            report = check_table(table, job, release=out)
            assert report.release is not None and report.release["holds"], report.release
            assert report.release["k_after"] == result.release.verification.k_after


def check_bad_parameters(cls: type[Anonymizer]) -> None:
    """A wrong value of each declared parameter, and an unknown one, raise ParameterError."""
    for name, rule in cls._parameter_constraints.items():
        bad = _bad_value(rule)
        job = _job(cls, algorithm={"name": cls.name, name: bad})
        try:
            anonymize(conformance_table(), job)
        except ParameterError as exc:
            text = str(exc)
            assert f"The {name!r} parameter of {cls.name} must be" in text, text
        else:  # pragma: no cover - the check's failure
            raise AssertionError(f"{cls.name}: {name}={bad!r} was accepted")
    job = _job(cls, algorithm={"name": cls.name, "no_such_parameter": 1})
    try:
        anonymize(conformance_table(), job)
    except ParameterError as exc:
        assert "Unknown parameter 'no_such_parameter'" in str(exc), str(exc)
    else:  # pragma: no cover
        raise AssertionError(f"{cls.name}: an unknown parameter was accepted")


def _bad_value(rule: Param) -> Any:
    if rule.choices is not None:
        return "no-such-choice"
    kinds = rule.kind if isinstance(rule.kind, tuple) else (rule.kind,)
    if bool in kinds:
        return "yes"  # a string where a boolean belongs
    if int in kinds or float in kinds:
        if rule.low is not None:
            return rule.low - 1
        if rule.high is not None:
            return rule.high + 1
        return "many"
    return 3.5


def check_nulls_form_classes_of_their_own(cls: type[Anonymizer]) -> None:
    """Rows with a missing quasi-identifier value are released as a null (a class of their
    own) or at the root, never as another row's value; rows with a value never become null."""
    # rows stay aligned with the input (masked, by an algorithm that suppresses rows)
    job = _job(cls, output={"suppressed": "mask" if cls().suppresses_rows() else "remove"})
    table = conformance_table(nulls=True, n=80)
    res = anonymize(table, job)
    for q, root in (("zip", {"****", "*"}), ("sex", {"*"})):
        was_null = table[q].codes == (table[q].null_code if table[q].null_code is not None else -1)
        released = np.asarray(res.columns[q], dtype=object)
        assert released.size == table.n_rows
        for value in released[was_null]:
            assert value is None or value in root, f"a null {q} was released as {value!r}"
        assert all(v is not None for v in released[~was_null]), f"a {q} value became null"


def check_empty_and_one_row_tables(cls: type[Anonymizer]) -> None:
    """An empty table and a one-row table give clear errors (InputError), not tracebacks."""
    job = _job(cls)
    empty = conformance_table().take(np.zeros(0, dtype=np.int64))
    for table, words in ((empty, "empty"), (conformance_table().take([0]), "at least")):
        try:
            anonymize(table, job)
        except InputError as exc:
            assert words in str(exc), str(exc)
        else:  # pragma: no cover
            raise AssertionError(f"{cls.name}: a table of {table.n_rows} rows was accepted")


def check_deterministic(cls: type[Anonymizer]) -> None:
    """The same input gives the same output."""
    job = _job(cls)
    a = anonymize(conformance_table(seed=3), job)
    b = anonymize(conformance_table(seed=3), job)
    assert a.loss == b.loss
    for name in a.columns:
        assert list(a.columns[name]) == list(b.columns[name]), f"column {name} differs"


def _limit(job: Mapping[str, Any], n_rows: int) -> int:
    """The rows a job's suppression limit lets go (a fraction of the rows, rounded down)."""
    return math.floor(float(job.get("suppression", 0.0)) * n_rows + 1e-9)


def _refused(
    cls: type[Anonymizer], job: dict[str, Any], words: str, data: Any = None, **options: Any
) -> None:
    """The job is refused before any work with a ParameterError that says ``words``."""
    try:
        anonymize(conformance_table() if data is None else data, job, **options)
    except ParameterError as exc:
        assert words in str(exc), str(exc)
    else:  # pragma: no cover - the check's failure
        raise AssertionError(f"{cls.name}: the job {dict(job)} was accepted")


def check_suppression_limit(cls: type[Anonymizer]) -> None:
    """A job with a suppression limit (5 %, with outliers that are cheaper to suppress than
    to generalize: :func:`_outliers_table`): the written release lacks at most that many rows,
    counted from the file (the limit as the job states it, not as the algorithm read it),
    and the verification says how many it suppressed. An algorithm that never suppresses
    refuses the limit before any work."""
    if not cls().suppresses_rows():
        _refused(cls, _job(cls, suppression=0.1), "would do nothing")
        return
    job = _job(cls, models=[{"k_anonymity": {"k": 6}}], suppression=0.05)
    with tempfile.TemporaryDirectory() as tmp:
        for table in (_outliers_table(), conformance_table(n=80, seed=1, nulls=True)):
            out = Path(tmp) / "release.csv"
            result = anonymize(table, job, output=out)
            missing = table.n_rows - read_table(out).n_rows
            limit = _limit(job, table.n_rows)
            assert missing <= limit, (
                f"{cls.name}: {missing} rows are missing from the release, more than the "
                f"suppression limit of {limit}"
            )
            assert result.release.verification.suppressed_rows <= missing, (
                f"{cls.name} says it suppressed {result.release.verification.suppressed_rows} "
                f"rows; {missing} are missing from the file"
            )


def _class_figures(
    table: EncodedTable, qis: list[str], sensitive: str
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Each class's rows and distinct sensitive values, counted with numpy alone (the
    released labels as text, a missing value as its own label)."""

    def text(name: str) -> npt.NDArray[np.str_]:
        labels = table.column(name).labels()
        return np.array(["\x00" if v is None else str(v) for v in labels], dtype=str)

    keys = np.stack([text(q) for q in qis], axis=1)
    _, row_class = np.unique(keys, axis=0, return_inverse=True)
    row_class = row_class.reshape(-1)
    sizes = np.bincount(row_class)
    pairs = np.unique(np.stack([row_class.astype(str), text(sensitive)], axis=1), axis=0)
    distinct = np.bincount(pairs[:, 0].astype(np.int64), minlength=sizes.size)
    return sizes.astype(np.int64), distinct.astype(np.int64)


def check_l_diversity(cls: type[Anonymizer]) -> None:
    """An l-diversity job (k = 3, distinct l = 2 on a disease that follows the zip code,
    :func:`_zip_disease_table`): a family that
    forms equivalence classes writes classes of at least k rows holding at least l
    sensitive values, counted afresh from the file, and ``anonlab check --release`` agrees;
    a family whose models exclude l-diversity refuses the job before any work, naming it."""
    k, diversity = 3, 2
    job = _job(
        cls,
        models=[
            {"k_anonymity": {"k": k}},
            {"distinct_l_diversity": {"attribute": "disease", "l": diversity}},
        ],
    )
    with tempfile.TemporaryDirectory() as tmp:
        for table in (_zip_disease_table(), _zip_disease_table(n=80, seed=1, nulls=True)):
            out = Path(tmp) / "release.csv"
            try:
                anonymize(table, job, output=out)
            except ParameterError as exc:
                assert "distinct_l_diversity" in str(exc), str(exc)
                assert not out.exists(), f"{cls.name} refused the job but wrote {out}"
                return
            if cls.verifier == "classes":
                sizes, distinct = _class_figures(
                    read_table(out), list(job["quasi_identifiers"]), "disease"
                )
                assert int(sizes.min(initial=k)) >= k, f"{cls.name}: a class of {sizes.min()} rows"
                assert int(distinct.min(initial=diversity)) >= diversity, (
                    f"{cls.name}: a released class holds {distinct.min()} sensitive value(s), "
                    f"fewer than l = {diversity}"
                )
            report = check_table(table, job, release=out)
            assert report.release is not None and report.release["holds"], report.release


#: The risk-based jobs of :func:`check_risk_models`: ARX's sample-based criteria together,
#: and k-map estimated with a Poisson population model.
RISK_JOBS: tuple[list[dict[str, Any]], ...] = (
    [{"average_risk": {"threshold": 0.25}}, {"sample_uniqueness": {"threshold": 0.05}}],
    [{"k_map": {"k": 40, "sampling_fraction": 0.1}}],
    [
        {
            "population_uniqueness": {
                "threshold": 0.05,
                "population_size": 200,
                "estimator": "zayatz",
            }
        }
    ],
)


def check_risk_models(cls: type[Anonymizer]) -> None:
    """Risk-based jobs (:data:`RISK_JOBS`: average re-identification risk with sample
    uniqueness, estimated k-map, population uniqueness): a family that judges classes
    writes a release whose classes, read back and judged afresh, satisfy each model (a
    sample-based model judges the whole file), and ``anonlab check --release`` agrees; a
    family whose models exclude one refuses the job before any work, naming it.

    Examples
    --------
    >>> from anonlab.algorithms import ALGORITHMS
    >>> check_risk_models(ALGORITHMS["incognito"])  # returns None: the releases hold
    >>> check_risk_models(ALGORITHMS["wong_nh"])  # refuses each job by the model's name
    """
    with tempfile.TemporaryDirectory() as tmp:
        for models in RISK_JOBS:
            job = _job(cls, models=models)
            names = [next(iter(m)) for m in models]
            table = conformance_table(n=80, seed=2)
            out = Path(tmp) / "release.csv"
            try:
                anonymize(table, job, output=out)
            except ParameterError as exc:
                assert any(name in str(exc) for name in names), str(exc)
                assert not out.exists(), f"{cls.name} refused the job but wrote {out}"
                continue
            _holds(read_table(out), job)
            report = check_table(table, job, release=out)
            assert report.release is not None and report.release["holds"], report.release
            out.unlink()


#: The jobs of :func:`check_population_models`: k-map counted in the population table, and
#: delta-presence (with k-anonymity, and alone with a lower bound).
POPULATION_JOBS: tuple[list[dict[str, Any]], ...] = (
    [{"k_map": {"k": 6}}],
    [{"k_anonymity": {"k": 2}}, {"delta_presence": {"dmin": 0.0, "dmax": 0.5}}],
    [{"delta_presence": {"dmin": 0.05, "dmax": 0.6}}],
)


def check_population_models(cls: type[Anonymizer]) -> None:
    """Jobs with a population table (:data:`POPULATION_JOBS`; the table released is 80 rows
    of a 240-row population): a family that judges them writes a release whose classes,
    read back, with the population generalized to the release's levels by a fresh engine
    and counted afresh (:func:`~anonlab.data.stats.count_population`), satisfy each model;
    a family that does not refuses the job before any work, naming the model.

    Examples
    --------
    >>> from anonlab.algorithms import ALGORITHMS
    >>> check_population_models(ALGORITHMS["optimal"])  # returns None: the releases hold
    >>> check_population_models(ALGORITHMS["top_down"])  # refuses each job by the model's name
    """
    population = conformance_table(n=240, seed=3)
    sample = EncodedTable.from_columns(
        {name: population.column(name).labels()[:80] for name in population.names}
    )
    with tempfile.TemporaryDirectory() as tmp:
        for models in POPULATION_JOBS:
            job = _job(cls, models=models, population=population)
            names = [next(iter(m)) for m in models]
            out = Path(tmp) / "release.csv"
            try:
                result = anonymize(sample, job, output=out)
            except ParameterError as exc:
                assert any(name in str(exc) for name in names), str(exc)
                assert not out.exists(), f"{cls.name} refused the job but wrote {out}"
                continue
            qis = list(job["quasi_identifiers"])
            levels = result.transformation
            assert levels is not None, f"{cls.name} judged a population without levels"
            released = get_engine("numpy", read_table(out)).class_stats(qis)
            counted = get_engine(
                "numpy", population, hierarchies=dict(result.problem.hierarchies)
            ).class_stats(qis, levels)
            stats = count_population(released, counted, name="the population")
            judged = Population(population, "the population")
            for item in models:
                ((name, params),) = item.items()
                extra = {"population": judged} if name != "k_anonymity" else {}
                m = build_model(name, {**params, **extra})
                ok = np.asarray(m.class_ok(stats), dtype=bool) & (stats.sizes >= m.min_class_size)
                assert bool(ok.all()), (
                    f"{cls.name}: the release fails {name} in {int((~ok).sum())} classes"
                )
            out.unlink()


def _rows(path: Path) -> list[tuple[Any, ...]]:
    """The rows of a written release, sorted (a release out of core keeps no row order)."""
    columns = read_table(path).to_dict()
    return sorted(zip(*columns.values()), key=repr)


def check_engine(
    cls: type[Anonymizer], engine: str, engine_options: Mapping[str, Any] | None = None
) -> None:
    """The job run from a CSV file on ``engine`` keeps the in-memory run's guarantees.

    On ``"numpy"`` the table is read in memory; out of core (``"duckdb"``, ``"spark"``) an
    algorithm that searches the frequency set writes the in-memory release row for row, one
    that places individual rows runs block by block (blocks of 30 rows) and its written
    release satisfies the models, lacks at most the suppression limit's rows and is verified
    by ``anonlab check --release``; any other algorithm is refused before any work.

    Parameters
    ----------
    cls : Anonymizer subclass
    engine : str
        One of :data:`ENGINES`.
    engine_options : mapping, optional
        The engine's options (``{"spark": session}``).

    Raises
    ------
    AssertionError
        What the run on ``engine`` breaks.

    Examples
    --------
    >>> from anonlab.algorithms import ALGORITHMS
    >>> check_engine(ALGORITHMS["optimal"], "numpy")  # returns None: the guarantees hold
    """
    algorithm = cls()
    frequency_set = algorithm.accepts_frequency_set()
    blocks = not frequency_set and algorithm.accepts_partitions()
    job = _job(cls)
    options: dict[str, Any] = {"engine": engine, "engine_options": engine_options}
    out_of_core = not engine_class(engine).in_memory
    if out_of_core and blocks:
        options["block_rows"] = 30
    table = conformance_table(n=90, seed=2)
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "input.csv"
        write_table(table.to_dict(), source)
        if out_of_core and not (frequency_set or blocks):
            _refused(cls, job, "--engine numpy", str(source), **options)
            return
        out, whole = Path(tmp) / "release.csv", Path(tmp) / "in-memory.csv"
        result = anonymize(str(source), job, output=out, **options)
        anonymize(str(source), job, output=whole, engine="numpy")
        written = read_table(out)
        missing = table.n_rows - written.n_rows
        assert missing <= _limit(job, table.n_rows), (
            f"{cls.name} on {engine}: {missing} rows missing, over the suppression limit"
        )
        if cls.verifier == "classes":
            _holds(written, job)
        if frequency_set:
            assert _rows(out) == _rows(whole), (
                f"{cls.name} on {engine}: the release differs from the in-memory release"
            )
        report = check_table(str(source), job, release=out)
        assert report.release is not None and report.release["holds"], report.release
        said = result.release.verification.k_after  # (None: a block run states none)
        assert report.release["k_after"] == (report.release["k_after"] if said is None else said), (
            f"{cls.name} on {engine}: the release says k = {said}, the check finds "
            f"{report.release['k_after']}"
        )


#: The checks, in the order they run.
CHECKS: tuple[Callable[[type[Anonymizer]], None], ...] = (
    check_written_release_holds,
    check_bad_parameters,
    check_nulls_form_classes_of_their_own,
    check_empty_and_one_row_tables,
    check_deterministic,
    check_suppression_limit,
    check_l_diversity,
    check_risk_models,
    check_population_models,
)


def check_anonymizer(
    algorithm: str | type[Anonymizer], engines: tuple[str, ...] = ("numpy", "duckdb")
) -> None:
    """Run every conformance check on a registered algorithm.

    Parameters
    ----------
    algorithm : str or Anonymizer subclass
        The algorithm's registered name, or its class.
    engines : tuple of str
        The engines :func:`check_engine` runs the algorithm on (DuckDB needs the ``duckdb``
        extra; Spark, which needs pyspark and Java 17+, is left out by default).

    Raises
    ------
    AssertionError
        The first check that fails, with what went wrong.

    Examples
    --------
    >>> check_anonymizer("optimal")  # passes every check: returns None
    """
    cls = ALGORITHMS[algorithm] if isinstance(algorithm, str) else algorithm
    for check in CHECKS:
        check(cls)
    for engine in engines:
        check_engine(cls, engine)
