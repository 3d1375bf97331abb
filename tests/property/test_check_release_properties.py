"""Properties of ``check --release`` (:func:`anonlab.release.audit.audit_release`) on random
tables, for a family of each kind of release:

* a release read back with the job that wrote it holds, whatever its missing values, and
  finds the suppressed rows, the classes and the k the verification found;
* a release with one cell of a column released as it is changed fails, naming that column
  and the row (from 1);
* a release with more rows removed than the job may suppress fails on its rows.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import assume, given
from hypothesis import strategies as st

from anonlab import anonymize, check
from anonlab.exceptions import InputError
from tests.support.profiles import costly

ALGORITHMS = ("optimal", "progressive", "personalized", "murakami_uno")
# costly: each example anonymizes and checks a release
SLOW = costly(30)

value = st.sampled_from(["x", "y", "z", "?"])  # '?': missing, as the job reads it
rows_st = st.lists(
    st.tuples(value, value, st.sampled_from(["flu", "hiv", "cold"]), st.sampled_from("0123?")),
    min_size=8,
    max_size=40,
)
DISEASE = "flu;viral;*\ncold;viral;*\nhiv;serious;*\n"


def _job(algorithm: str, folder: Path) -> dict[str, object]:
    job: dict[str, object] = {
        "na_values": ["?"],
        "quasi_identifiers": {"a": {}, "b": {}},
        "sensitive": ["disease"],
        # released as it is, knowingly: on a few records a visit count can single one out
        "insensitive": ["visits"],
        "models": [{"k_anonymity": {"k": 2}}],
        "suppression": 0.2,
        "metric": "loss",
        "algorithm": algorithm,
    }
    if algorithm == "murakami_uno":
        job.update(metric="gcp", suppression=0.0, algorithm={"name": algorithm, "n_jobs": 1})
    if algorithm == "personalized":
        tree = folder / "disease.csv"
        tree.write_text(DISEASE)
        job["models"] = [
            {"k_anonymity": {"k": 2}},
            {"personalized_leakage": {"attribute": "disease", "hierarchy": str(tree)}},
        ]
        job.update(personalized={"default_limit": 0.75}, metric="info_left", suppression=0.0)
    return job


def _release(rows, algorithm, folder: Path):
    data = folder / "data.csv"
    data.write_text("a,b,disease,visits\n" + "".join(f"{','.join(r)}\n" for r in rows))
    job = _job(algorithm, folder)
    out = folder / "release.csv"
    try:
        result = anonymize(data, job, output=out)
    except InputError:  # no release satisfies the models on this table
        assume(False)
    return data, job, out, result


@SLOW
@given(rows=rows_st, algorithm=st.sampled_from(ALGORITHMS))
def test_a_release_reads_back_and_holds(rows, algorithm):
    with tempfile.TemporaryDirectory() as tmp:
        data, job, out, result = _release(rows, algorithm, Path(tmp))
        report = check(data, job, release=out)
        assert report.holds, report.release["failures"]
        verification = result.release.verification
        assert report.release["k_after"] == verification.k_after
        assert report.release["suppressed_rows"] == verification.suppressed_rows
        assert report.release["classes"] == verification.classes


@SLOW
@given(rows=rows_st, algorithm=st.sampled_from(ALGORITHMS), data=st.data())
def test_a_changed_cell_is_found_naming_its_column_and_row(rows, algorithm, data):
    with tempfile.TemporaryDirectory() as tmp:
        path, job, out, _ = _release(rows, algorithm, Path(tmp))
        lines = out.read_text().splitlines()
        assume(len(lines) > 1)
        row = data.draw(st.integers(1, len(lines) - 1), label="row")
        cells = lines[row].split(",")
        cells[-1] = "changed"  # visits: released as it is
        lines[row] = ",".join(cells)
        out.write_text("\n".join(lines) + "\n")
        report = check(path, job, release=out)
        failed = [f["detail"] for f in report.release["verified"] if not f["ok"]]
        assert not report.holds
        assert any(
            d.startswith(f"column 'visits', row {row} of the release holds 'changed'")
            for d in failed
        ), failed


@SLOW
@given(rows=rows_st)
def test_rows_removed_beyond_the_limit_fail(rows):
    with tempfile.TemporaryDirectory() as tmp:
        path, job, out, result = _release(rows, "optimal", Path(tmp))
        limit = int(0.2 * len(rows) + 1e-9)
        lines = out.read_text().splitlines()
        cut = limit - result.suppressed_rows + 1  # one more than the job may suppress
        assume(len(lines) - 1 > cut)
        out.write_text("\n".join(lines[: 1 + (len(lines) - 1 - cut)]) + "\n")
        report = check(path, job, release=out)
        rows_line = next(f for f in report.release["verified"] if f["check"] == "rows")
        assert not rows_line["ok"] and "more than the" in rows_line["detail"]
