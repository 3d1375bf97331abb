"""anonlab as a user installs it: ``python -m build``, then the wheel in a fresh virtualenv.

The other tests run from the checkout (an editable install, or ``PYTHONPATH=src``), so a data
file, a module or an optional import missing from the wheel would only show on a user's
machine. This test copies the checkout's files to a temporary folder, builds the sdist and,
from the sdist, the wheel there with ``python -m build`` (in a fresh virtualenv outside the
checkout), and checks that both hold every file of the package (the bundled Adult data, the
web app's pages, ``py.typed``), the sdist also the changelog, the example jobs and their
hierarchy files, the docs and the tests. It then installs the wheel without extras into that
virtualenv and, from a folder outside the checkout, with no ``PYTHONPATH``:

1. runs ``anonlab demo``, ``anonlab diagnose`` and ``anonlab anonymize`` on the bundled data
   (with the example job ``examples/adult_k5.yaml`` and the hierarchies the installed
   package builds, which must be the example's files byte for byte), and ``anonlab check``
   on the release;
2. asks each extra's feature (DuckDB, Spark, the report's figures, the web app, the
   classification utility, pandas and polars frames) and sees a one-line error naming the
   extra to install, exit code 2, nothing written;
3. installs every extra but ``dev``/``test`` and imports each extra's module, writes the
   report (with its figures), diagnoses through DuckDB, reads and returns pandas and polars
   frames, and serves the web app's home page.

The packages come from the package registry (or pip's cache). Without a reachable registry the
test is skipped, unless ``ANONLAB_REQUIRE_PEERS=1`` (CI sets it): then that is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
import urllib.request
import zipfile
from dataclasses import dataclass
from http.cookiejar import CookieJar
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.package]

ROOT = Path(__file__).resolve().parents[2]
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
#: Every extra a user may install, with the modules of anonlab it serves and the libraries
#: it brings (imported by the module when used).
EXTRAS = {
    "duckdb": (["anonlab.engines.duckdb_engine"], ["duckdb"]),
    "pandas": ([], ["pandas"]),
    "polars": ([], ["polars"]),
    "spark": (["anonlab.engines.spark_engine"], ["pyspark.sql"]),
    "report": (["anonlab.report._plots"], ["matplotlib"]),
    "utility": (["anonlab.diagnosis.utility"], ["sklearn.model_selection"]),
    "web": (["anonlab.web.app"], ["starlette", "uvicorn", "python_multipart"]),
}
#: The files besides the package a source distribution must hold.
SDIST_EXTRA = ["CHANGELOG.md", "LICENSE", "README.md", "pyproject.toml", "MANIFEST.in"]
SDIST_FOLDERS = ["examples", "docs", "tests"]


@dataclass
class Venv:
    """The fresh virtualenv, the folder the commands run in, the built files."""

    python: Path
    work: Path
    source: Path
    sdist: Path
    wheel: Path

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
        env["VIRTUAL_ENV"] = str(self.python.parent.parent)
        env["PATH"] = f"{self.python.parent}{os.pathsep}{env.get('PATH', '')}"
        env["COLUMNS"] = "200"
        return env

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """Run a program of the virtualenv (``anonlab``, ``python``) in the work folder."""
        program = str(self.python.parent / args[0])
        return subprocess.run(
            [program, *args[1:]],
            cwd=self.work,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )

    def ok(self, *args: str) -> str:
        """Run and return the standard output; fail with the command's output if it fails."""
        res = self.run(*args)
        assert res.returncode == 0, f"{' '.join(args)} exited {res.returncode}:\n{res.stderr}"
        return res.stdout

    def script(self, text: str) -> str:
        """Run Python ``text`` in the virtualenv and return what it printed."""
        return self.ok("python", "-c", text)

    def fetching(self, *args: str) -> None:
        """Run a command that fetches packages (pip, build's isolated environment): where it
        fails and no registry is reachable, the test is skipped (or fails, in CI)."""
        res = self.run(*args, timeout=900)
        if res.returncode != 0:
            if not _registry_reachable(self):
                _unavailable(
                    f"no package registry is reachable: {' '.join(args)} failed "
                    f"({_last_line(res.stderr)})"
                )
            pytest.fail(f"{' '.join(args)} failed:\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}")

    def pip_install(self, *requirements: str) -> None:
        pip = ["python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
        self.fetching(*pip, *requirements)


def _last_line(text: str) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1] if lines else "no message"


def _unavailable(why: str) -> None:
    if os.environ.get("ANONLAB_REQUIRE_PEERS") == "1":
        pytest.fail(f"{why}; ANONLAB_REQUIRE_PEERS=1: the package test may not skip")
    pytest.skip(why)


def _registry_reachable(venv: Venv) -> bool:
    """Whether pip can fetch a distribution at all (numpy, the first dependency)."""
    probe = venv.work / "probe"
    res = venv.run(
        "python", "-m", "pip", "download", "--quiet", "--no-deps", "--dest", str(probe), "numpy"
    )
    shutil.rmtree(probe, ignore_errors=True)
    return res.returncode == 0


def _source_files() -> list[str]:
    """The checkout's files, as a clone of it has them (untracked ones not ignored too)."""
    res = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "--cached", "--others", "--exclude-standard"],
        capture_output=True,
        text=True,
    )
    if res.returncode == 0 and res.stdout.strip():
        return [f for f in res.stdout.splitlines() if (ROOT / f).is_file()]
    skip = {".git", ".venv", "build", "dist", "site", "__pycache__", ".peer-venv", "data"}
    return [
        str(p.relative_to(ROOT))
        for p in ROOT.rglob("*")
        if p.is_file() and not skip & set(p.relative_to(ROOT).parts) and p.suffix != ".pyc"
    ]


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """A fresh virtualenv with ``build``; the sdist and the wheel built in it."""
    base = tmp_path_factory.mktemp("package")
    source = base / "source"
    for name in _source_files():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    subprocess.run([sys.executable, "-m", "venv", str(base / "venv")], check=True, timeout=120)
    work = base / "work"
    work.mkdir()
    made = Venv(base / "venv" / "bin" / "python", work, source, Path(), Path())
    made.pip_install("build")
    dist = base / "dist"
    # the sdist, then the wheel built from the unpacked sdist: what the sdist lacks, the
    # wheel lacks too
    made.fetching("python", "-m", "build", "--outdir", str(dist), str(source))
    (made.sdist,) = dist.glob("anonlab-*.tar.gz")
    (made.wheel,) = dist.glob("anonlab-*.whl")
    return made


def _package_files(source: Path) -> set[str]:
    """The files of the package in the source tree (paths from ``src/``)."""
    top = source / "src"
    return {
        str(p.relative_to(top))
        for p in (top / "anonlab").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def check_the_distributions(venv: Venv) -> None:
    """The wheel and the sdist hold every file of the package; the sdist also the rest."""
    assert venv.wheel.name == f"anonlab-{VERSION}-py3-none-any.whl"
    assert venv.sdist.name == f"anonlab-{VERSION}.tar.gz"
    package = _package_files(venv.source)
    assert {"anonlab/datasets/adult.csv.gz", "anonlab/py.typed", "anonlab/web/pages.py"} <= package
    with zipfile.ZipFile(venv.wheel) as wheel:
        in_wheel = set(wheel.namelist())
    missing = sorted(package - in_wheel)
    assert not missing, f"files of the package missing from the wheel: {missing}"
    prefix = f"anonlab-{VERSION}/"
    with tarfile.open(venv.sdist) as sdist:
        in_sdist = {n.removeprefix(prefix) for n in sdist.getnames()}
    wanted = {f"src/{f}" for f in package} | set(SDIST_EXTRA)
    for folder in SDIST_FOLDERS:
        wanted |= {
            str(p.relative_to(venv.source))
            for p in (venv.source / folder).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts
        }
    assert "examples/hierarchies/adult_age.csv" in wanted
    missing = sorted(wanted - in_sdist)
    assert not missing, f"files missing from the sdist: {missing[:20]}"


def check_the_core(venv: Venv) -> Path:
    """The wheel without extras: its version, the commands on the bundled data."""
    venv.pip_install(str(venv.wheel))
    where, version = json.loads(
        venv.script(
            "import anonlab, json; print(json.dumps([anonlab.__file__, anonlab.__version__]))"
        )
    )
    site = venv.python.parent.parent
    assert Path(where).is_relative_to(site), f"anonlab imported from {where}, not the venv"
    assert version == VERSION
    assert VERSION in venv.ok("anonlab", "--version")
    adult = Path(venv.script("import anonlab.api as a; print(a.adult_path())").strip())
    assert adult.is_relative_to(site) and adult.stat().st_size > 100_000

    demo = json.loads(venv.ok("anonlab", "demo", "--json"))
    q2 = next(a for a in demo if a.get("question") == "Q2")
    assert (q2["n_rows"], q2["k"], len(q2["quasi_identifiers"])) == (30162, 1, 8)

    asked = ["diagnose", str(adult), "--qi", "age,sex,race", "--k", "5", "--json"]
    answer = json.loads(venv.ok("anonlab", *asked))
    assert (answer["question"], answer["n_rows"], answer["answer"]) == ("Q1", 32561, False)

    # the hierarchies the package builds are the example job's files
    venv.script(
        "import anonlab, pathlib; pathlib.Path('hierarchies').mkdir()\n"
        "for name, h in anonlab.adult_hierarchies().items():\n"
        "    anonlab.write_hierarchy(h, f'hierarchies/adult_{name}.csv')"
    )
    examples = sorted((venv.source / "examples" / "hierarchies").glob("adult_*.csv"))
    assert len(examples) == 8
    for path in examples:
        built = venv.work / "hierarchies" / path.name
        assert built.read_bytes() == path.read_bytes(), f"{path.name} differs from the package's"
    shutil.copy(venv.source / "examples" / "adult_k5.yaml", venv.work / "adult_k5.yaml")

    job = ["--job", "adult_k5.yaml"]
    result = json.loads(
        venv.ok("anonlab", "anonymize", str(adult), *job, "--output", "release.csv", "--json")
    )
    assert result["checks"] == {"k_anonymity": True}
    assert result["verification"]["k_after"] >= 5
    assert (venv.work / "release.csv").stat().st_size > 100_000
    venv.ok("anonlab", "check", str(adult), *job, "--release", "release.csv")
    return adult


def check_the_missing_extras(venv: Venv, adult: Path) -> None:
    """Each extra's feature without the extra: one line naming it, exit code 2, no file."""
    data, job = str(adult), ["--job", "adult_k5.yaml"]
    commands = {
        "duckdb": ["anonlab", "diagnose", data, "--qi", "age,sex", "--engine", "duckdb"],
        "spark": ["anonlab", "anonymize", data, *job, "-o", "out.csv", "--engine", "spark"],
        "report": ["anonlab", "report", data, *job, "-o", "out.html"],
        "utility": ["anonlab", "report", data, *job, "-o", "out.html", "--classify", "income"],
        "web": ["anonlab", "serve", "--port", "0"],
    }
    for extra, command in commands.items():
        res = venv.run(*command)
        errors = [ln for ln in res.stderr.splitlines() if ln.strip() and not ln.startswith("note:")]
        assert res.returncode == 2, f"{extra}: exit code {res.returncode}\n{res.stderr}"
        assert len(errors) == 1, f"{extra}: not one line of error:\n{res.stderr}"
        assert f"pip install 'anonlab[{extra}]'" in errors[0], errors[0]
        assert not list(venv.work.glob("out.*")), f"{extra}: a file was written"
    # pandas and polars from Python: the release as a frame
    printed = venv.script(
        "import anonlab\n"
        "t = anonlab.EncodedTable.from_columns({'sex': ['F', 'M'] * 5})\n"
        "r = anonlab.anonymize(t, {'quasi_identifiers': {'sex': {}},\n"
        "                          'models': [{'k_anonymity': {'k': 5}}]})\n"
        "for method in (r.to_pandas, r.to_polars):\n"
        "    try:\n"
        "        method()\n"
        "    except anonlab.AnonlabError as error:\n"
        "        print(error)\n"
    )
    lines = printed.splitlines()
    assert len(lines) == 2, printed
    for line, extra in zip(lines, ("pandas", "polars"), strict=True):
        assert f"pip install 'anonlab[{extra}]'" in line, line


def check_the_extras(venv: Venv, adult: Path) -> None:
    """Every extra installed: its modules import, and each feature runs."""
    extras = ",".join(EXTRAS)
    venv.pip_install(f"{venv.wheel}[{extras}]")
    imported = json.loads(
        venv.script(
            "import importlib, json\n"
            "from anonlab._optional import import_optional\n"
            f"extras = {json.dumps(EXTRAS)}\n"
            "done = {}\n"
            "for extra, (modules, libraries) in extras.items():\n"
            "    for name in modules: importlib.import_module(name)\n"
            "    done[extra] = [import_optional(name).__name__ for name in libraries]\n"
            "print(json.dumps(done))"
        )
    )
    assert imported == {extra: libraries for extra, (_, libraries) in EXTRAS.items()}

    venv.ok("anonlab", "report", str(adult), "--job", "adult_k5.yaml", "-o", "report.html")
    page = (venv.work / "report.html").read_text()
    assert page.count("<svg") >= 3, "the report has no figures"

    asked = ["diagnose", str(adult), "--qi", "age,sex,race", "--k", "5", "--json"]
    by_duckdb = json.loads(venv.ok("anonlab", *asked, "--engine", "duckdb"))
    assert (by_duckdb["k"], by_duckdb["n_rows"]) == (1, 32561)

    frames = json.loads(
        venv.script(
            "import json, anonlab, pandas as pd, polars as pl\n"
            f"frame = pd.read_csv({str(adult)!r}, na_values='?').dropna()\n"
            "job = {'quasi_identifiers': {'age': {'intervals': {'widths': [10, 20]}},\n"
            "                             'sex': {}, 'race': {}},\n"
            "       'identifiers': ['fnlwgt', 'education-num', 'relationship',\n"
            "                       'capital-gain', 'capital-loss'],\n"
            "       'insensitive': ['workclass', 'education', 'marital-status', 'occupation',\n"
            "                       'hours-per-week', 'native-country', 'income'],\n"
            "       'models': [{'k_anonymity': {'k': 5}}], 'suppression': 0.02}\n"
            "out = {}\n"
            "for name, data in (('pandas', frame), ('polars', pl.from_pandas(frame))):\n"
            "    result = anonlab.anonymize(data, job)\n"
            "    released = result.to_pandas() if name == 'pandas' else result.to_polars()\n"
            "    k = anonlab.diagnose(released, quasi_identifiers=['age', 'sex', 'race']).k\n"
            "    out[name] = [type(released).__module__.split('.')[0], len(released), k,\n"
            "                 str(released['hours-per-week'].dtype)]\n"
            "print(json.dumps(out))"
        )
    )
    for name, (module, rows, k, hours) in frames.items():
        assert module == name and rows > 29_000 and k >= 5, frames
        assert "int" in hours.lower(), f"{name}: hours-per-week released as {hours}"

    serve_home_page(venv)


def serve_home_page(venv: Venv) -> None:
    """``anonlab serve`` answers its home page (the app's pages and style in the wheel)."""
    token = "package-test-token-0123456789"
    server = subprocess.Popen(
        [str(venv.python.parent / "anonlab"), "serve", "--port", "0"],
        cwd=venv.work,
        env={**venv.env, "ANONLAB_TOKEN": token},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()  # "anonlab: serving ... at http://...?token=..."
        address = next((w for w in line.split() if w.startswith("http://")), None)
        assert address, f"serve printed no address: {line!r}"
        # the token in the address is exchanged for a cookie, then a redirect
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
        for attempt in range(50):
            try:
                with browser.open(address, timeout=10) as response:
                    page = response.read().decode()
                    break
            except OSError:
                if attempt == 49:
                    raise
                time.sleep(0.2)
        assert "anonlab Diagnosis Centre" in page and 'id="open-adult"' in page
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_the_wheel_installs_and_runs_in_a_fresh_virtualenv(venv: Venv) -> None:
    check_the_distributions(venv)
    adult = check_the_core(venv)
    check_the_missing_extras(venv, adult)
    check_the_extras(venv, adult)
