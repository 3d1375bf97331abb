"""Hardening (issue 27): every entry point is safe and explicit, run through the CLI.

Each bad input ends in one line, exit code 2 and nothing written; outputs never damage
anything; options and job keys that do not apply are errors, never silently ignored.
"""

from __future__ import annotations

import csv
import ctypes
import gzip
import json
import os
import re
import socket
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

import anonlab
import anonlab.exceptions
import anonlab.io.atomic
from anonlab.cli import app
from anonlab.exceptions import ParameterError, PrivacyRiskWarning
from anonlab.models import build_model

runner = CliRunner()
ANONLAB = str(Path(sys.executable).with_name("anonlab"))

from tests.unit.test_anonymize import COLS, ROWS  # noqa: E402


def run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def one_line_error(res, message: str) -> None:
    """Exit code 2, the message, no traceback, and the error is one line (wrapping aside)."""
    text = " ".join(res.output.split())
    assert res.exit_code == 2, res.output
    assert message in text, res.output
    assert "Traceback" not in res.output
    errors = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, res.output


def listing(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


@pytest.fixture
def work(tmp_path: Path) -> Path:
    """A data file, a hierarchy file and a job file naming it, in one folder."""
    with (tmp_path / "data.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(COLS)
        w.writerows(ROWS)
    (tmp_path / "sex.csv").write_text("F;*\nM;*\n")
    write_job(tmp_path / "job.yaml")
    return tmp_path


def write_job(path: Path, **overrides) -> Path:
    job = {
        "quasi_identifiers": {
            "age": {"intervals": {"widths": [5, 10, 20]}},
            "zip": {"mask": {"width": 4}},
            "sex": {"hierarchy": "sex.csv"},
        },
        "sensitive": ["disease"],
        "models": [{"k_anonymity": {"k": 3}}],
    }
    job.update(overrides)
    path.write_text(yaml.safe_dump(job, sort_keys=False))
    return path


def anonymize(work: Path, output, *extra: str, job: str = "job.yaml"):
    return run("anonymize", work / "data.csv", "--job", work / job, "--output", output, *extra)


# ------------------------------------------------------------- 1. outputs never damage


def test_a_directory_as_output_is_refused(work):
    before = listing(work)
    one_line_error(anonymize(work, work / "."), "Cannot tell the output format")
    (work / "out.csv").mkdir()
    one_line_error(anonymize(work, work / "out.csv"), "is a directory")
    assert listing(work) == before | {"out.csv"}
    assert not any((work / "out.csv").iterdir())


def test_a_fifo_is_refused_and_dev_null_is_written_directly(work):
    fifo = work / "pipe.csv"
    os.mkfifo(fifo)
    one_line_error(anonymize(work, fifo), "is a named pipe (FIFO)")
    assert stat.S_ISFIFO(fifo.stat().st_mode)
    res = anonymize(work, "/dev/null")
    assert res.exit_code == 0, res.output
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)  # still the device, not a file


@pytest.mark.parametrize("which", ["data.csv", "job.yaml", "sex.csv"])
def test_the_jobs_inputs_are_never_overwritten_whatever_path_names_them(work, which):
    target = work / which
    before = target.read_bytes()
    alias = work / f"alias-{which}.csv"
    os.link(target, alias)  # same inode, another name (and a valid output suffix)
    for output in (target if which.endswith(".csv") else None, alias):
        if output is None:
            continue
        one_line_error(anonymize(work, output), "Refusing to overwrite the input file")
    assert target.read_bytes() == before


def test_the_format_follows_the_suffix(work):
    one_line_error(anonymize(work, work / "out.txt"), ".csv, .csv.gz, .parquet")
    assert anonymize(work, work / "out.csv.gz").exit_code == 0
    with gzip.open(work / "out.csv.gz", "rt") as fh:
        rows = list(csv.reader(fh))
    assert rows[0] == COLS and len(rows) == 13
    assert anonymize(work, work / "out.parquet").exit_code == 0
    pq = pytest.importorskip("pyarrow.parquet")
    assert pq.read_table(work / "out.parquet").column_names == COLS


@pytest.mark.slow
def test_new_files_get_the_umask_and_replaced_files_keep_their_mode(work):
    code = (
        "import os, sys; os.umask(int(sys.argv[1], 8));"
        "from anonlab.cli import app; sys.argv = ['anonlab'] + sys.argv[2:]; app()"
    )
    for umask, mode in (("022", 0o644), ("002", 0o664), ("077", 0o600)):
        out = work / f"u{umask}.csv"
        args = ["anonymize", work / "data.csv", "--job", work / "job.yaml", "--output", out]
        res = subprocess.run([sys.executable, "-c", code, umask, *map(str, args)], check=False)
        assert res.returncode == 0
        assert stat.S_IMODE(out.stat().st_mode) == mode
    keep = work / "u022.csv"
    keep.chmod(0o640)
    assert anonymize(work, keep).exit_code == 0
    assert stat.S_IMODE(keep.stat().st_mode) == 0o640


def test_stale_temporaries_are_recognisable_and_cleaned(work):
    host = socket.gethostname()
    child = subprocess.Popen(["true"])  # a process that has ended
    child.wait()
    dead = work / f".out.csv.anonlab-tmp.{host}.{child.pid}.deadbeef"
    live = work / f".out.csv.anonlab-tmp.{host}.{os.getpid()}.cafe0001"
    other = work / ".out.csv.anonlab-tmp.otherhost.4194303.deadbeef"
    for p in (dead, live, other):
        p.write_text("partial")
    assert not dead.name.endswith((".csv", ".csv.gz", ".parquet"))  # never an output's name
    assert anonymize(work, work / "out.csv").exit_code == 0
    assert not dead.exists()  # its process is gone
    assert live.exists() and other.exists()  # a running process, another host: left alone
    assert not [p for p in work.iterdir() if ".anonlab-tmp." in p.name and p not in (live, other)]


def test_a_killed_run_leaves_the_target_as_it_was(work):
    target = work / "out.csv"
    target.write_text("previous release\n")
    with pytest.raises(RuntimeError):
        with anonlab.io.atomic_write(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("killed")
    assert target.read_text() == "previous release\n"
    assert listing(work) == {"data.csv", "sex.csv", "job.yaml", "out.csv"}


def test_a_dataset_folder_output_is_new_complete_or_absent(work):
    """An output ending with '/' (a Parquet dataset folder, which the spark engine writes):
    refused by the other engines and when the path exists; written into a temporary folder
    and renamed into place only when complete; stale temporary folders cleaned."""
    before = listing(work)
    for engine in ("numpy", "duckdb"):
        res = anonymize(work, f"{work / 'rel'}/", "--engine", engine)
        one_line_error(res, "a Parquet dataset folder, which the spark engine writes")
    assert listing(work) == before
    (work / "taken").mkdir()
    with pytest.raises(anonlab.exceptions.InputError, match="exists"):
        anonlab.io.atomic.check_output(f"{work / 'taken'}/")
    with pytest.raises(anonlab.exceptions.InputError, match="does not exist"):
        anonlab.io.atomic.check_output(f"{work / 'no' / 'rel'}/")
    with pytest.raises(RuntimeError):
        with anonlab.io.atomic.atomic_folder(f"{work / 'rel'}/") as staged:
            staged.mkdir()
            (staged / "part-00000.parquet").write_text("half")
            raise RuntimeError("killed")
    assert listing(work) == before | {"taken"}
    child = subprocess.Popen(["true"])  # a process that has ended
    child.wait()
    stale = work / f".rel.anonlab-tmp.{socket.gethostname()}.{child.pid}.deadbeef"
    (stale / "release").mkdir(parents=True)
    with anonlab.io.atomic.atomic_folder(f"{work / 'rel'}/") as staged:
        assert not stale.exists()
        staged.mkdir()
        (staged / "part-00000.parquet").write_text("rows")
        assert not (work / "rel").exists()
    assert (work / "rel" / "part-00000.parquet").read_text() == "rows"
    assert listing(work) == before | {"taken", "rel"}


# ------------------------------------------------------------------ 2. no tracebacks


def test_directories_as_data_job_or_output(work):
    before = listing(work)
    one_line_error(anonymize(work, work / "o.csv", job="."), "is a directory")
    res = run("anonymize", work, "--job", work / "job.yaml", "--output", work / "o.csv")
    one_line_error(res, "The data file")
    one_line_error(run("check", work, "--job", work / "job.yaml"), "is a directory")
    one_line_error(run("diagnose", work, "--qi", "age"), "is a directory")
    assert listing(work) == before


def test_a_fifo_as_data_is_refused_not_waited_on(work):
    fifo = work / "pipe.csv"
    os.mkfifo(fifo)
    before = listing(work)
    for engine in ("numpy", "duckdb"):
        res = run("anonymize", fifo, "--job", work / "job.yaml", "-o", work / "o.csv",
                  "--engine", engine)  # fmt: skip
        one_line_error(res, "is a named pipe (FIFO); give a regular file")
        res = run("check", fifo, "--job", work / "job.yaml", "--engine", engine)
        one_line_error(res, "is a named pipe (FIFO)")
    one_line_error(run("diagnose", fifo, "--qi", "age"), "is a named pipe (FIFO)")
    assert listing(work) == before


@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
def test_an_empty_table_says_so(work, engine):
    (work / "empty.csv").write_text(",".join(COLS) + "\n", encoding="utf-8")
    for command in ("anonymize", "check"):
        out = ["-o", work / "o.csv"] if command == "anonymize" else []
        res = run(command, work / "empty.csv", "--job", work / "job.yaml", *out,
                  "--engine", engine)  # fmt: skip
        one_line_error(res, "empty.csv' is empty: it has no rows. Nothing was written.")
    assert not (work / "o.csv").exists()
    # the diagnosis names the file too (DuckDB said only "The table is empty")
    one_line_error(
        run("diagnose", work / "empty.csv", "--qi", "age", "--engine", engine),
        "empty.csv' is empty: it has no rows",
    )


def _drop_file_capabilities() -> None:  # pragma: no cover - runs in the child
    """Let root be refused like anyone else: drop CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):
        if libc.prctl(24, cap, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def run_unprivileged(*args) -> subprocess.CompletedProcess[str]:
    """The CLI in a child process whose file permissions are checked, also as root."""
    pre = _drop_file_capabilities if os.geteuid() == 0 else None
    return subprocess.run(
        [ANONLAB, *map(str, args)],
        capture_output=True,
        text=True,
        preexec_fn=pre,  # noqa: PLW1509 - no threads in the child before exec
        check=False,
    )


def child_error(res: subprocess.CompletedProcess[str], message: str) -> None:
    assert res.returncode == 2, res.stderr
    text = " ".join(res.stderr.split())
    assert message in text, res.stderr
    assert "Traceback" not in res.stderr


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["numpy", "duckdb"])
@pytest.mark.parametrize("which", ["data.csv", "job.yaml", "sex.csv"])
def test_unreadable_data_job_or_hierarchy(work, which, engine):
    (work / which).chmod(0)
    try:
        res = run_unprivileged(
            "anonymize", work / "data.csv", "--job", work / "job.yaml", "--output", work / "o.csv",
            "--engine", engine,
        )  # fmt: skip
    finally:
        (work / which).chmod(0o644)
    child_error(res, "permission denied")
    assert which in res.stderr
    assert not (work / "o.csv").exists()


@pytest.mark.slow
def test_unwritable_output_folder(work):
    folder = work / "ro"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        res = run_unprivileged(
            "anonymize", work / "data.csv", "--job", work / "job.yaml", "--output", folder / "o.csv"
        )
    finally:
        folder.chmod(0o755)
    child_error(res, "Cannot write into the output folder")
    assert listing(folder) == set()


def test_corrupt_and_truncated_gzip(work):
    good = gzip.compress((work / "data.csv").read_bytes() * 50)
    (work / "trunc.csv.gz").write_bytes(good[: len(good) // 2])
    (work / "corrupt.csv.gz").write_bytes(good[:20] + b"\x00garbage" * 40)
    (work / "notgz.csv.gz").write_bytes(b"age,zip\n1,2\n")
    for name in ("trunc.csv.gz", "corrupt.csv.gz", "notgz.csv.gz"):
        res = run("diagnose", work / name, "--qi", "age")
        one_line_error(res, "gzip")
        res = run("anonymize", work / name, "--job", work / "job.yaml", "--output", work / "o.csv")
        one_line_error(res, "gzip")
    assert not (work / "o.csv").exists()


def test_parquet_with_list_and_struct_columns(work):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    n = len(ROWS)
    table = pa.table(
        {
            **{c: [r[j] for r in ROWS] for j, c in enumerate(COLS)},
            "visits": [[i, i + 1] for i in range(n)],
            "address": [{"city": "X", "no": i} for i in range(n)],
            "weight": [70.5 + i for i in range(n)],
        }
    )
    pq.write_table(table, work / "data.parquet")
    # unused nested columns do not matter: carried through (Parquet) or as JSON text (CSV);
    # each differs in every row, so each is released knowingly
    write_job(work / "nested.yaml", insensitive=["visits", "address", "weight"])
    for out in ("o.parquet", "o.csv"):
        res = run(
            "anonymize", work / "data.parquet", "--job", work / "nested.yaml", "--output",
            work / out,
        )  # fmt: skip
        assert res.exit_code == 0, res.output
    back = pq.read_table(work / "o.parquet")
    assert back.column_names == [*COLS, "visits", "address", "weight"]
    assert pa.types.is_list(back.schema.field("visits").type)
    assert pa.types.is_floating(back.schema.field("weight").type)  # numbers stay numbers
    assert pa.types.is_string(back.schema.field("age").type)  # generalized: labels
    with (work / "o.csv").open() as fh:
        first = next(csv.DictReader(fh))
    assert json.loads(first["visits"]) == [0, 1]
    # a used one gets a clear error
    write_job(work / "bad.yaml", sensitive=["visits"])
    res = run("check", work / "data.parquet", "--job", work / "bad.yaml")
    one_line_error(res, "'visits' is a column of type list<")


def test_optimal_with_more_than_32_quasi_identifiers(tmp_path):
    cols = [f"q{i}" for i in range(34)]
    rng = np.random.default_rng(1)
    with (tmp_path / "wide.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(cols)
        w.writerows(rng.integers(0, 3, size=(50, len(cols))).tolist())
    job = {"quasi_identifiers": {c: {} for c in cols}, "models": [{"k_anonymity": {"k": 2}}]}

    def anonymize_wide():
        (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
        job_file, output = tmp_path / "job.yaml", tmp_path / "o.csv"
        return run("anonymize", tmp_path / "wide.csv", "--job", job_file, "--output", output)

    res = anonymize_wide()
    one_line_error(res, "lattice of 17,179,869,184 transformations")
    assert "privacyfrost2" in res.output
    assert not (tmp_path / "o.csv").exists()
    # few levels are fine, however many quasi-identifiers
    job["quasi_identifiers"] = {c: {"max_level": 0} for c in cols}
    job["quasi_identifiers"]["q0"] = {}
    job["suppression"] = 1.0
    res = anonymize_wide()
    assert res.exit_code == 0, res.output


# ---------------------------------------------------- 3. bounded memory, said up front


def test_subset_questions_over_many_columns_are_refused_with_the_numbers(tmp_path):
    cols = [f"c{i}" for i in range(500)]
    data = tmp_path / "wide.csv"
    data.write_text(",".join(cols) + "\n" + ",".join("1" for _ in cols) + "\n" * 1)
    res = run("diagnose", data)
    one_line_error(res, "Q4 lists every subset of 500 attributes: 3.27e+150 subsets")
    assert "--max-size" in res.output and "--attributes" in res.output
    res = run("diagnose", data, "--max-size", "1", "--json")
    assert res.exit_code == 0, res.output
    assert len(json.loads(res.stdout)["rows"]) == 500


def test_a_masking_hierarchy_too_large_for_memory_is_refused(work):
    write_job(
        work / "wide.yaml",
        quasi_identifiers={"zip": {"mask": {"width": 100_000}}, "age": {}},
    )
    res = anonymize(work, work / "o.csv", job="wide.yaml")
    one_line_error(res, "levels of 12 labels up to 100,000 characters long")
    assert "'steps'" in res.output


def test_labels_are_not_stored_at_the_width_of_the_longest(tmp_path):
    from anonlab.data.labels import factorize

    values = np.array(["x" * 200_000] + [str(i) for i in range(20_000)], dtype=object)
    codes, cats = factorize(values)  # astype(str) would allocate 16 GB here
    assert cats.dtype == object and codes.size == 20_001
    assert cats[codes[0]] == "x" * 200_000


# -------------------------------------------------------------- 4. no silent mistakes


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"output": {"supressed": "mask"}}, "Unknown key 'supressed' under 'output'"),
        ({"models": [{"k_anonymity": {"k": 3, "kk": 2}}]}, "Unknown parameter 'kk'"),
        ({"header": "false"}, "'header' must be true or false (without quotes)"),
        ({"strip": 1}, "'strip' must be true or false"),
        ({"privacyfrost2": {"score": "log"}}, "has a 'privacyfrost2' section but"),
        (
            {"algorithm": "privacyfrost2", "privacyfrost2": {"scores": "log"}},
            "Unknown parameter 'scores' of algorithm 'privacyfrost2'. Did you mean 'score'?",
        ),
        ({"algorithm": "optimall"}, "Did you mean 'optimal'?"),
        ({"metric": {"name": "entropyy"}}, "entropy"),
    ],
)
def test_job_keys_that_do_not_apply_are_errors(work, overrides, message):
    write_job(work / "bad.yaml", **overrides)
    before = listing(work)
    one_line_error(anonymize(work, work / "o.csv", job="bad.yaml"), message)
    assert listing(work) == before


def test_duplicate_yaml_keys_are_errors(work):
    text = (work / "job.yaml").read_text() + "models:\n- k_anonymity: {k: 2}\n"
    (work / "dup.yaml").write_text(text)
    one_line_error(anonymize(work, work / "o.csv", job="dup.yaml"), "Key 'models' is given twice")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--qi", "age", "--risk", "--list-rows"], "--list-rows does not apply to --risk"),
        (["--qi", "age", "--list-rows"], "--list-rows lists the rows that suppression removes"),
        (["--qi", "age", "--max-k", "5"], "--max-k sets the largest k"),
        (["--find-qis", "--k", "2"], "--k does not apply to --find-qis"),
        (["--qi", "age", "--qi-threshold", "3"], "--qi-threshold does not apply"),
        (["--qi", "age", "--max-size", "2"], "--max-size bounds subset searches"),
        (["--risk"], "--risk needs --qi"),
        (["--qi", ""], "--qi is empty: no quasi-identifier was given"),
        (["--qi", "age", "--hierarchy", "agee=x.csv"], "--hierarchy agee=...: unknown column"),
        (["--qi", "age", "--level", "zipp=1", "--hierarchy", "zipp=x.csv"], "unknown column"),
    ],
)
def test_options_that_do_not_apply_are_errors(work, args, message):
    one_line_error(run("diagnose", work / "data.csv", *args), message)


def test_a_utf8_byte_order_mark_is_stripped(work):
    data = work / "bom.csv"
    data.write_bytes(b"\xef\xbb\xbf" + (work / "data.csv").read_bytes())
    res = run("diagnose", data, "--qi", "age,sex", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["quasi_identifiers"] == ["age", "sex"]
    (work / "bomjob.yaml").write_bytes(b"\xef\xbb\xbf" + (work / "job.yaml").read_bytes())
    res = run("anonymize", data, "--job", work / "bomjob.yaml", "--output", work / "o.csv")
    assert res.exit_code == 0, res.output
    (work / "bomh.csv").write_bytes(b"\xef\xbb\xbfF;*\nM;*\n")
    res = run("diagnose", data, "--qi", "sex", "--hierarchy", f"sex={work / 'bomh.csv'}",
              "--level", "sex=1", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output


# ---------------------------------------------------------- 5. privacy guard rails


@pytest.fixture
def with_ids(work: Path) -> Path:
    with (work / "ids.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["PatientID", "record", *COLS])
        w.writerows([f"p{i}", f"r{i}", *r] for i, r in enumerate(ROWS))
    return work / "ids.csv"


def test_identifying_columns_are_warned_about_and_stop_anonymize(work, with_ids):
    res = run("check", with_ids, "--job", work / "job.yaml")
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert (
        "warning: Column 'PatientID' may identify people (it holds a different value in each "
        "of the 12 records) and is not declared" in text
    )
    assert "warning: Column 'record' may identify people" in text
    res = run("anonymize", with_ids, "--job", work / "job.yaml", "--output", work / "o.csv")
    assert res.exit_code == 2 and not (work / "o.csv").exists()
    text = " ".join(res.output.split())
    assert "error: 2 undeclared columns would be released as they are" in text
    assert "'PatientID': it holds a different value in each of the 12 records" in text
    assert "'record': it holds a different value" in text and "Nothing was written." in text
    res = run("diagnose", with_ids, "--qi", "age,sex", "--risk")
    assert res.exit_code == 0 and "'PatientID' may identify people" in res.output
    # declared: no warning, and never released
    write_job(work / "ids.yaml", identifiers=["PatientID", "record"])
    res = run("anonymize", with_ids, "--job", work / "ids.yaml", "--output", work / "o.csv")
    assert res.exit_code == 0 and "warning" not in res.output
    with (work / "o.csv").open() as fh:
        assert next(csv.reader(fh)) == COLS
    with pytest.warns(PrivacyRiskWarning) as caught:
        anonlab.check(with_ids, work / "job.yaml")
    assert sorted(str(w.message).split("'")[1] for w in caught) == ["PatientID", "record"]


# ------------------------------------------------------------- 6. small defects


def test_check_json_with_hierarchical_t_closeness(work):
    (work / "disease.csv").write_text("flu;resp;*\ncold;resp;*\nhiv;blood;*\n")
    write_job(
        work / "t.yaml",
        models=[
            {"k_anonymity": {"k": 2}},
            {"hierarchical_t_closeness": {"attribute": "disease", "t": 0.5,
                                          "hierarchy": "disease.csv"}},
        ],
    )  # fmt: skip
    res = run("check", work / "data.csv", "--job", work / "t.yaml", "--json")
    assert res.exit_code == 0, res.output
    params = json.loads(res.stdout)["models"][1]["params"]
    assert params["hierarchy"].endswith("disease.csv") and params["t"] == 0.5


def test_entropy_l_diversity_value_is_exact():
    table = anonlab.EncodedTable.from_rows([("a", "x")] * 3 + [("b", "x"), ("b", "y")], ["q", "s"])
    stats = anonlab.open_engine(table).class_stats(["q"], sensitive=["s"])
    model = build_model("entropy_l_diversity", {"attribute": "s", "l": 1})
    assert model.value(stats) == 1.0
    assert list(model.class_values(stats)) == [1.0, 2.0]


def test_a_rare_null_generalizes_at_the_root(work):
    rows = list(ROWS)
    rows[0] = ("34", "4350", "", "flu")  # one null sex: a class of its own below the root
    with (work / "nulls.csv").open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(COLS)
        w.writerows(rows)
    res = run("anonymize", work / "nulls.csv", "--job", work / "job.yaml", "--output",
              work / "o.csv", "--json")  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["transformation"]["sex"] == 1
    with (work / "o.csv").open() as fh:
        assert {r["sex"] for r in csv.DictReader(fh)} == {"*"}


def test_anonymize_help_documents_the_job_file():
    res = run("anonymize", "--help")
    text = " ".join(res.output.split())
    assert res.exit_code == 0
    for key in ("quasi_identifiers", "models", "suppression", "metric", "algorithm", "job-file.md"):
        assert key in text


def test_progress_is_told_each_step(work):
    steps: list[str] = []

    class Recorder:
        def __call__(self, advance, total):
            pass

        def stage(self, message):
            steps.append(message)

    anonlab.anonymize(
        work / "data.csv", work / "job.yaml", output=work / "o.csv", progress=Recorder()
    )
    assert steps[0].startswith("engine auto chose numpy (in memory): data.csv needs about")
    assert steps[1:] == ["reading data.csv", "searching", "verifying", "writing o.csv"]


def test_memory_budget_override(monkeypatch):
    from anonlab._resources import memory_budget

    monkeypatch.setenv("ANONLAB_MEMORY_BUDGET", "2G")
    assert memory_budget() == 2 << 30
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        monkeypatch.setenv("ANONLAB_MEMORY_BUDGET", "100")
        with pytest.raises(ParameterError, match="lattice of"):
            anonlab.anonymize(
                anonlab.EncodedTable.from_rows(ROWS, COLS),
                {
                    "quasi_identifiers": ["age", "zip"],
                    "identifiers": ["sex", "disease"],
                    "models": [{"k_anonymity": {"k": 2}}],
                },
            )


# ------------------------------------------- 7. what a new user hits (issue 51, item 7)


def write_rows(path: Path, header, rows, delimiter: str = ",") -> Path:
    with path.open("w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, delimiter=delimiter)
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.mark.parametrize("separator", ["\\t", "tab", "TAB"])
def test_a_tab_separator_is_given_by_name(work, separator):
    data = write_rows(work / "data.tsv", COLS, ROWS, delimiter="\t")
    res = run("diagnose", data, "-s", separator, "--qi", "age,sex", "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["quasi_identifiers"] == ["age", "sex"]
    # a job's separator too (YAML '\t' in single quotes is a backslash and a t)
    write_job(work / "tsv.yaml", separator=separator)
    res = run("anonymize", data, "--job", work / "tsv.yaml", "-o", work / "o.csv")
    assert res.exit_code == 0, res.output
    assert (work / "o.csv").read_text().splitlines()[0] == "age\tzip\tsex\tdisease"


def test_a_tsv_read_with_commas_hints_at_the_separator(work):
    data = write_rows(work / "data.tsv", COLS, ROWS, delimiter="\t")
    for engine in ("numpy", "duckdb"):
        res = run("diagnose", data, "--qi", "age", "--engine", engine)
        one_line_error(res, "The header reads as one column holding tabs")
        assert "--separator tab" in res.output
    res = run("anonymize", data, "--job", work / "job.yaml", "-o", work / "o.csv")
    one_line_error(res, "is the file separated by them?")


def test_a_typo_in_a_builders_options_lists_the_valid_ones(work):
    write_job(work / "typo.yaml", quasi_identifiers={"age": {"intervals": {"width": [5, 10]}}})
    res = anonymize(work, work / "o.csv", job="typo.yaml")
    one_line_error(
        res,
        "Unknown option 'width' of the 'intervals' hierarchy of attribute 'age'. Did you mean "
        "'widths'? Valid options: widths, cuts, start.",
    )
    assert "unexpected keyword" not in res.output
    write_job(work / "typo.yaml", quasi_identifiers={"zip": {"mask": {"widht": 4}}})
    one_line_error(anonymize(work, work / "o.csv", job="typo.yaml"), "width, steps, mask_char")


def test_a_long_value_is_shown_cut(work):
    long = "%Y-%m" + "x" * 100_000
    write_job(work / "long.yaml", quasi_identifiers={"zip": {"dates": {"format": long}}})
    res = anonymize(work, work / "o.csv", job="long.yaml")
    one_line_error(res, "is not a date in format '%Y-%mxxx")
    assert "(100,005 characters)" in res.output
    assert len(res.output) < 1_000
    # a format strptime cannot compile is named as such (it was a traceback)
    write_job(work / "bad.yaml", quasi_identifiers={"zip": {"dates": {"format": "%Y%Y"}}})
    one_line_error(anonymize(work, work / "o.csv", job="bad.yaml"), "is not a strptime format")


def test_q4_marks_what_it_did_not_evaluate_and_shows_only_what_varies(work):
    res = run("diagnose", work / "data.csv")
    assert res.exit_code == 0, res.output
    header = next(ln for ln in res.output.splitlines() if "attributes" in ln)
    assert [c.strip() for c in header.split("┃")[1:-1]] == ["attributes", "k", "evaluated"]
    cells = [ln.split("│")[1:-1] for ln in res.output.splitlines() if ln.startswith("│")]
    marked = [c[0].strip() for c in cells if c[2].strip() == "no *"]
    assert len(marked) == 10  # age and zip are unique: the 10 subsets holding one are inferred
    assert "sex, disease" not in marked and "age, sex" in marked
    assert "* not evaluated (10 rows): the subset contains one that already has k = 1" in (
        " ".join(res.output.split())
    )
    rows = json.loads(run("diagnose", work / "data.csv", "--json").stdout)["rows"]
    assert sum(not r["evaluated"] for r in rows) == 10
    assert all(r["evaluated"] for r in rows if len(r["attributes"]) == 1)
    res = run("diagnose", work / "data.csv", "--delta", "0.2", "--attributes", "sex,disease")
    header = next(ln for ln in res.output.splitlines() if "attributes" in ln)
    assert "suppressed rows" in header and "delta" not in header  # Q8: delta is in the title


def test_q6_says_why_suppression_did_nothing(work):
    def q6(qi: str, delta: str) -> tuple[str, dict]:
        res = run("diagnose", work / "data.csv", "--qi", qi, "--delta", delta)
        assert res.exit_code == 0, res.output
        data = run("diagnose", work / "data.csv", "--qi", qi, "--delta", delta, "--json")
        return " ".join(res.output.split()), json.loads(data.stdout)

    text, data = q6("sex,disease", "0.1")  # one row may go; the two unique classes hold 2
    assert data["suppressed_rows"] == 0
    assert (data["suppression_budget"], data["smallest_class_rows"]) == (1, 2)
    assert "Nothing was suppressed: the classes of size 1 hold 2 rows, more than the 1" in text
    text, _ = q6("sex,disease", "0.05")
    assert "delta x rows = 0.05 x 12 = 0.6, less than one row" in text
    text, _ = q6("age", "0.5")
    assert "every class has 1 rows" in text
    text, data = q6("sex,disease", "0.2")  # it did something: nothing to explain
    assert data["suppressed_rows"] == 2 and "Nothing was suppressed" not in text


def test_find_qis_lists_the_records_it_exposes(work):
    res = run("diagnose", work / "data.csv", "--find-qis", "--json")
    assert res.exit_code == 0, res.output
    by_set = {tuple(s["attributes"]): s for s in json.loads(res.stdout)["subsets"]}
    # (45, M, hiv) and (46, F, cold) are the only rows with their sex and disease
    assert by_set[("sex", "disease")]["exposed_row_positions"] == [5, 6]
    assert by_set[("age",)]["exposed_row_positions"] == list(range(12))
    res = run("diagnose", work / "data.csv", "--find-qis", "--engine", "duckdb")
    assert res.exit_code == 0, res.output
    line = next(ln for ln in res.output.splitlines() if "sex, disease" in ln)
    assert line.split("│")[-2].strip() == "5, 6"
    assert "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 ... (+2)" in res.output


def test_a_constant_column_is_flagged(work):
    data = write_rows(work / "const.csv", [*COLS, "country"], [(*r, "NZ") for r in ROWS])
    res = run("diagnose", data)
    assert res.exit_code == 0, res.output
    assert "'country' holds one value in every row: it tells no one apart" in (
        " ".join(res.output.split())
    )
    for args in ([], ["--k", "2"], ["--find-qis"]):
        res = run("diagnose", data, *args, "--json")
        assert json.loads(res.stdout)["constant_columns"] == ["country"], args
    res = run("diagnose", work / "data.csv", "--json")
    assert "constant_columns" not in json.loads(res.stdout)
    # a column at its top level is one class by design: not flagged
    res = run("diagnose", work / "data.csv", "--attributes", "sex,age", "--hierarchy",
              f"sex={work / 'sex.csv'}", "--level", "sex=1", "--json")  # fmt: skip
    assert res.exit_code == 0 and "constant_columns" not in json.loads(res.stdout)


def test_a_list_or_struct_column_as_the_only_qi_is_named(work):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    table = pa.table(
        {
            **{c: [r[j] for r in ROWS] for j, c in enumerate(COLS)},
            "visits": [[i, i + 1] for i in range(len(ROWS))],
        }
    )
    pq.write_table(table, work / "nested.parquet")
    for args in (
        ["--qi", "visits"],
        ["--qi", "visits", "--engine", "duckdb"],
        ["--qi", "visits", "--risk"],
        ["--find-qis", "--attributes", "visits,age"],
    ):
        res = run("diagnose", work / "nested.parquet", *args)
        one_line_error(res, "The column 'visits' is a column of type ")
        assert "empty" not in res.output and "Unknown column" not in res.output


def test_a_dangling_output_symlink_is_named(work):
    for target in (work / "gone.csv", work / "no" / "such" / "folder" / "o.csv"):
        link = work / "out.csv"
        link.unlink(missing_ok=True)
        link.symlink_to(target)
        before = listing(work)
        one_line_error(
            anonymize(work, link),
            f"The output '{link}' is a symbolic link to '{target}', which does not exist",
        )
        assert listing(work) == before and link.is_symlink() and not target.exists()


def test_column_names_are_compared_in_nfc(work):
    import unicodedata

    nfc, nfd = "\u00e2ge", unicodedata.normalize("NFD", "\u00e2ge")
    assert nfc != nfd
    data = write_rows(work / "nfd.csv", [nfd, *COLS[1:]], ROWS)  # as macOS writes it
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    pq.write_table(pa.table({nfd: [r[0] for r in ROWS], "sex": [r[2] for r in ROWS]}),
                   work / "nfd.parquet")  # fmt: skip
    for source in (data, work / "nfd.parquet"):
        for engine in ("numpy", "duckdb"):
            res = run("diagnose", source, "--qi", f"{nfc},sex", "--engine", engine, "--json")
            assert res.exit_code == 0, (source, engine, res.output)
            assert json.loads(res.stdout)["quasi_identifiers"] == [nfc, "sex"]
    # a job written with the other form finds the column, and the release is named in NFC
    write_job(work / "nfd.yaml", quasi_identifiers={nfd: {"intervals": {"widths": [10]}}},
              sensitive=[], insensitive=["zip", "sex", "disease"],
              models=[{"k_anonymity": {"k": 2}}])  # fmt: skip
    nfc_data = write_rows(work / "nfc.csv", [nfc, *COLS[1:]], ROWS)
    for source in (nfc_data, data):
        res = run("anonymize", source, "--job", work / "nfd.yaml", "-o", work / "o.csv")
        assert res.exit_code == 0, res.output
        assert (work / "o.csv").read_text(encoding="utf-8").startswith(f"{nfc},zip")


@pytest.mark.parametrize("value", ["abc", "-1", "0", "inf", "8X"])
def test_a_memory_budget_that_is_not_a_size_is_refused(work, monkeypatch, value):
    monkeypatch.setenv("ANONLAB_MEMORY_BUDGET", value)
    message = f"ANONLAB_MEMORY_BUDGET='{value}' is not a memory size"
    one_line_error(run("diagnose", work / "data.csv", "--qi", "age"), message)
    one_line_error(anonymize(work, work / "o.csv"), message)
    assert not (work / "o.csv").exists()
    monkeypatch.setenv("ANONLAB_MEMORY_BUDGET", "1.5G")
    assert anonymize(work, work / "o.csv").exit_code == 0


@pytest.mark.parametrize("address", ["hdfs://namenode/data.csv", "s3://bucket/data.csv",
                                     "http://example.org/data.csv"])  # fmt: skip
def test_remote_paths_are_refused_as_such(work, address):
    said = f"'{address}' is a remote address ({address.split(':')[0]}://)"
    one_line_error(run("diagnose", address, "--qi", "age"), f"The data file {said}")
    one_line_error(anonymize(work, address), f"The output {said}")
    res = run("anonymize", work / "data.csv", "--job", address, "-o", work / "o.csv")
    one_line_error(res, f"The job file {said}")
    res = run("report", work / "data.csv", "--qi", "age", "-o", address.replace(".csv", ".html"))
    one_line_error(res, "is a remote address")
    res = run("diagnose", work / "data.csv", "--qi", "sex", "--hierarchy", f"sex={address}",
              "--level", "sex=1")  # fmt: skip
    one_line_error(res, f"The hierarchy file {said}")
    assert not (work / "o.csv").exists()


def test_a_read_only_output_is_not_replaced(work):
    out = work / "o.csv"
    out.write_text("the release of last week\n")
    out.chmod(0o444)
    try:
        res = anonymize(work, out)
        one_line_error(res, f"The output '{out}' is read-only (-r--r--r--): it is not replaced")
        assert out.read_text() == "the release of last week\n"
        out.chmod(0o644)
        assert anonymize(work, out).exit_code == 0
        assert out.read_text().startswith("age,zip")
    finally:
        out.chmod(0o644)


def test_the_summary_shows_labels_of_the_levels(work):
    res = anonymize(work, work / "o.csv")
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "age=2, zip=1, sex=1" in text
    assert "age at level 2 │ [30, 40), [40, 50), [50, 60)" in text
    assert "zip at level 1 │ 435*, 436*, 437*" in text
    write_job(work / "local.yaml", algorithm={"name": "top_down"})
    res = anonymize(work, work / "o.csv", job="local.yaml")
    assert res.exit_code == 0, res.output
    assert "age at level" in res.output and "[30, 40)" in res.output


def test_a_hierarchys_repr_shows_a_few_labels():
    h = anonlab.masking_hierarchy(["4350", "4361"], attribute="zip")
    assert repr(h) == (
        "Hierarchy(attribute='zip', values=2, height=4, e.g. '4350' -> '435*' -> '43**' -> "
        "'4***' -> '****')"
    )
    deep = anonlab.interval_hierarchy(range(100), widths=[2, 4, 8, 16, 32, 64], attribute="a")
    assert repr(deep).endswith("e.g. '0' -> '[0, 2)' -> '[0, 4)' -> ... -> '[0, 64)' -> '*')")
    assert len(repr(anonlab.Hierarchy([["x" * 100_000, "*"]]))) < 200


def test_the_progress_eta_grows_while_a_step_stalls():
    """The time left counts the time since the last advance (Rich's own estimate stands
    still); a new step starts its count afresh; a step message inside a counted loop (the
    blocks of a partitioned run) carries the count on."""
    import importlib
    import io

    from rich.console import Console
    from rich.progress import Progress

    cli = importlib.import_module("anonlab.cli.app")
    now = [0.0]
    columns = cli._columns()
    bar = Progress(*columns, console=Console(file=io.StringIO()), get_time=lambda: now[0],
                   auto_refresh=False)  # fmt: skip
    progress = cli._Bar(bar, "nodes")

    def shown() -> list[str]:
        task = next(t for t in bar.tasks if t.id == progress._task)
        return [task.description] + [str(c.render(task)) for c in columns[2:]]

    for _ in range(10):
        now[0] += 1
        progress(1, 100)
    assert shown() == ["nodes", "10/100", "0:00:10", "0:01:30 left"]
    now[0] += 30  # a long step: the pace so far is 10 in 40 s
    assert shown() == ["nodes", "10/100", "0:00:40", "0:06:00 left"]
    progress.stage("verifying")  # counts nothing: no count, no time left
    now[0] += 5
    assert shown() == ["verifying", "", "0:00:45", ""]
    progress.stage("block 1 of about 4 done")
    progress(1, 4)
    now[0] += 2
    assert shown() == ["block 1 of about 4 done", "1/4", "0:00:47", "0:00:06 left"]
    progress.stage("block 2 of about 4 done")
    progress(1, 4)
    now[0] += 2
    assert shown() == ["block 2 of about 4 done", "2/4", "0:00:49", "0:00:04 left"]


def test_the_docs_document_what_a_new_user_asks():
    root = Path(__file__).parents[2]
    readme = (root / "README.md").read_text(encoding="utf-8")
    guide = [
        (root / "docs" / "guide" / p).read_text(encoding="utf-8")
        for p in ("hierarchies.md", "jobs.md")
    ]
    text = " ".join(" ".join(guide).split())
    assert "`dates` takes `levels`" in text and "`format`, the `strptime` format" in text
    assert "A CSV release is written with the job's `separator`" in text
    assert re.search(r"\./scripts/test`? takes about \d+ minutes", readme)
