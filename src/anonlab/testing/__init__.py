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
* the same input gives the same output.

A new family passes it by registering; its class may set ``conformance_job`` (a mapping of
job keys) when it needs other models than k-anonymity.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from anonlab.algorithms import ALGORITHMS
from anonlab.algorithms.base import Anonymizer, Param
from anonlab.data.table import EncodedTable
from anonlab.engines import get_engine
from anonlab.exceptions import InputError, ParameterError
from anonlab.io import read_table
from anonlab.jobs import anonymize
from anonlab.jobs import check as check_table
from anonlab.models import build_model

__all__ = ["check_anonymizer", "conformance_table", "CHECKS"]

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


#: The checks, in the order they run.
CHECKS: tuple[Callable[[type[Anonymizer]], None], ...] = (
    check_written_release_holds,
    check_bad_parameters,
    check_nulls_form_classes_of_their_own,
    check_empty_and_one_row_tables,
    check_deterministic,
)


def check_anonymizer(algorithm: str | type[Anonymizer]) -> None:
    """Run every conformance check on a registered algorithm.

    Parameters
    ----------
    algorithm : str or Anonymizer subclass
        The algorithm's registered name, or its class.

    Raises
    ------
    AssertionError
        The first check that fails, with what went wrong.
    """
    cls = ALGORITHMS[algorithm] if isinstance(algorithm, str) else algorithm
    for check in CHECKS:
        check(cls)
