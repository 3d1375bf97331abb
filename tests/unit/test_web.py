"""The web app without a browser: flows, the same numbers as the CLI and the API, and safety."""

from __future__ import annotations

import html
import json
import re
import subprocess
import sys
import time
import warnings
from pathlib import Path

import pytest

import anonlab
from anonlab import api
from tests.support.web import adult_k5_job

pytest.importorskip("starlette")
pytest.importorskip("matplotlib")
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

with warnings.catch_warnings():  # Starlette 1.x suggests another HTTP client for its tests
    warnings.simplefilter("ignore")
    from starlette.testclient import TestClient  # noqa: E402

from anonlab.web import create_app, is_loopback  # noqa: E402

QI = list(api.ADULT_QUASI_IDENTIFIERS)


def errors(page: str) -> list[str]:
    """The error lines of a page."""
    return [html.unescape(e) for e in re.findall(r'class="error"[^>]*>([^<]*)', page)]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "people.csv").write_text(
        "age,sex,zip,disease\n30,F,1000,flu\n30,F,1000,cold\n40,M,2000,flu\n40,M,2000,flu\n"
    )
    return tmp_path


@pytest.fixture
def client(root: Path):
    with TestClient(create_app(root, max_upload=2000)) as c:
        yield c


def open_adult(client: TestClient) -> str:
    r = client.post("/open", data={"source": "adult"}, follow_redirects=False)
    assert r.status_code == 303
    return str(r.headers["location"])


def wait(client: TestClient, location: str) -> str:
    for _ in range(200):
        page = client.get(location).text
        if 'data-status="running"' not in page:
            return page
        time.sleep(0.1)
    raise AssertionError("the job did not finish")


def cli_json(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "anonlab", "diagnose", str(api.adult_path()), *args, "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(out.stdout)


def test_cli_api_and_app_give_the_same_numbers(client):
    where = open_adult(client)
    eng = anonlab.open_engine(anonlab.load_adult())
    # Q2
    page = client.get(f"{where}/ask", params={"attr": QI, "scope": "set"}).text
    shown = re.search(r"<tr><th>k</th><td>([^<]*)</td>", page).group(1)
    via_cli = cli_json("--qi", ",".join(QI), "--drop-missing")
    via_api = anonlab.diagnose(eng, quasi_identifiers=QI)
    assert shown == str(via_api.k) == str(via_cli["k"])
    # Q11: the delta of every k
    page = client.get(f"{where}/ask", params={"attr": QI, "find_delta": "on"}).text
    via_cli = cli_json("--qi", ",".join(QI), "--find-delta", "--drop-missing")
    via_api = anonlab.diagnose(eng, quasi_identifiers=QI, find_delta=True)
    table = page.split('data-figure="k-delta"', 1)[1]
    cells = re.findall(r'<tr><td class="num">(\d+)</td><td class="num">([0-9.]+)</td>', table)
    assert [(int(k), float(d)) for k, d in cells] == [
        (r["k"], round(r["delta"], 4)) for r in via_cli["rows"]
    ]
    assert [r.delta for r in via_api.rows] == [r["delta"] for r in via_cli["rows"]]
    # Q4: k of every subset
    page = client.get(f"{where}/ask", params={"attr": QI, "scope": "subsets"}).text
    via_api = anonlab.diagnose(eng, attributes=QI)
    body = page.split('data-section="Q4: k for every subset"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr><td>([^<]*)</td><td class=\"num\">([^<]*)</td>", body)
    assert [(a, int(k.replace(",", ""))) for a, k in rows] == [
        (", ".join(r.attributes), r.k) for r in via_api.rows
    ]


def test_a_job_runs_and_its_files_are_the_release(client, root):
    where = open_adult(client)
    form = {
        "qi": QI,
        "sensitive": ["income"],
        "k": "5",
        "suppression": "0.05",
        "metric": "loss",
        "algorithm": "optimal",
    }
    r = client.post(f"{where}/job", data=form, follow_redirects=False)
    assert r.status_code == 303, errors(r.text)
    page = wait(client, r.headers["location"])
    assert 'data-status="done"' in page
    table = anonlab.load_adult()
    job = adult_k5_job(table)
    reference = anonlab.anonymize(table, job)
    assert f'data-card="suppressed" data-value="{reference.suppressed_rows}"' in page
    assert f'data-value="{round(reference.loss, 6)}"' in page
    release = client.get(r.headers["location"] + "/files/release")
    assert release.status_code == 200
    lines = release.text.strip().splitlines()
    assert len(lines) - 1 == table.n_rows - reference.suppressed_rows
    job_file = client.get(r.headers["location"] + "/files/job").text
    report = client.get(r.headers["location"] + "/files/report").text
    assert "k_anonymity" in job_file and report.startswith("<!doctype html>")
    # the job file reproduces the release on the command line
    folder = next((root / "anonlab-output").iterdir())
    assert sorted(p.name for p in folder.iterdir()) == [
        "hierarchies",
        "job.yaml",
        "released.csv",
        "report.html",
    ]
    again = anonlab.anonymize(table, folder / "job.yaml")
    assert again.loss == reference.loss and again.suppressed_rows == reference.suppressed_rows


def test_bad_questions_and_jobs_are_one_line_and_write_nothing(client, root):
    where = open_adult(client)
    page = client.get(f"{where}/ask", params={"attr": QI, "k": "x"})
    assert page.status_code == 400 and errors(page.text) == [
        "error: k must be an integer; got 'x'."
    ]
    page = client.get(f"{where}/ask", params={"attr": QI, "k": "0"})
    assert errors(page.text)[0].startswith("error: The 'k' parameter")
    page = client.get(f"{where}/ask", params={"attr": QI, "k": "3", "what": "risk"})
    assert errors(page.text) == ["error: k does not apply to this question; clear it."]
    page = client.post(f"{where}/job", data={"qi": QI, "k": "5", "yaml": "models: [\n"})
    assert page.status_code == 400 and "is not valid YAML" in errors(page.text)[0]
    page = client.post(
        f"{where}/job",
        data={"yaml": "quasi_identifiers: {age: {hierarchy: /etc/passwd}}\nmodels: [k_anonymity]"},
    )
    assert errors(page.text)[0] == (
        "error: The job reads '/etc/passwd', outside the served folder; it cannot be read."
    )
    # what anonymize refuses before its search is refused in the form, before any job runs
    refused = {
        "Unknown quasi-identifier 'nope'": {"qi": ["nope"], "k": "5"},
        "The 'k' parameter of KAnonymity must be an int >= 1. Got -1": {"qi": QI, "k": "-1"},
        "Algorithm 'murakami_uno' measures its release with 'gcp' or 'ncp'": {
            "qi": QI,
            "k": "5",
            "algorithm": "murakami_uno",
        },
        "Unknown metric 'nope'": {"qi": QI, "k": "5", "metric": "nope"},
    }
    for message, form in refused.items():
        page = client.post(f"{where}/job", data=form, follow_redirects=False)
        assert page.status_code == 400 and errors(page.text)[0].startswith(f"error: {message}")
    # a job that fails in its search: one line on its page
    text = (
        "quasi_identifiers: {age: {}, sex: {}}\nmodels: [{k_anonymity: {k: 2}}]\n"
        "identifiers: [fnlwgt, education-num, capital-gain, hours-per-week]\n"
        "algorithm: {name: privacyfrost2, partial_domain: true, "
        "presampling: {levels: 0, k: 100000}}"
    )
    r = client.post(f"{where}/job", data={"yaml": text}, follow_redirects=False)
    page = wait(client, r.headers["location"])
    assert 'data-status="failed"' in page
    assert errors(page)[0].startswith("error: Pre-sampling removed every record")
    assert "Traceback" not in page
    assert not (root / "anonlab-output").exists() or not any((root / "anonlab-output").iterdir())


def test_the_form_drops_the_other_columns_and_a_job_file_must_declare_them(client):
    """A job from the form releases its quasi-identifiers and sensitive attributes only (the
    page says so); a job file that would release an identifying column undeclared is refused
    on the form, with the figures."""
    where = open_adult(client)
    assert "The other columns are dropped from the release" in client.get(f"{where}/job").text
    form = {"qi": ["age", "sex"], "sensitive": ["income"], "k": "2", "suppression": "0"}
    r = client.post(f"{where}/job", data=form, follow_redirects=False)
    assert r.status_code == 303, errors(r.text)
    page = wait(client, r.headers["location"])
    assert 'data-status="done"' in page, errors(page)
    release = client.get(r.headers["location"] + "/files/release").text
    assert release.splitlines()[0] == "age,sex,income"
    assert "identifiers:" in client.get(r.headers["location"] + "/files/job").text
    text = "quasi_identifiers: {age: {}, sex: {}}\nmodels: [{k_anonymity: {k: 2}}]"
    r = client.post(f"{where}/job", data={"yaml": text}, follow_redirects=False)
    assert r.status_code == 400
    assert errors(r.text)[0].startswith("error: 3 undeclared columns would be released")
    assert "'fnlwgt': 47.9 % of the 30,162 records (14,439) are unique" in errors(r.text)[0]


def test_a_job_written_in_the_page_runs_with_its_hierarchy_files_in_the_served_folder(
    client, root, monkeypatch, tmp_path_factory
):
    # every job written in the page was refused, "The job reads 'the job in the page',
    # outside the served folder", unless the server ran from inside the folder
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    (root / "hier").mkdir()
    (root / "hier" / "sex.csv").write_text("Male;*\nFemale;*\n")
    where = open_adult(client)
    text = (
        "quasi_identifiers: {age: {}, sex: {hierarchy: hier/sex.csv}}\n"
        "identifiers: [fnlwgt, education-num, capital-gain, hours-per-week]\n"
        "models: [{k_anonymity: {k: 5}}]"
    )
    r = client.post(f"{where}/job", data={"yaml": text}, follow_redirects=False)
    assert r.status_code == 303, errors(r.text)
    page = wait(client, r.headers["location"])
    assert 'data-status="done"' in page, errors(page)
    report = html.unescape(client.get(r.headers["location"] + "/files/report").text)
    assert text in report and text in client.get(r.headers["location"] + "/files/job").text


def test_files_outside_the_served_folder_are_refused(client, root, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside") / "secret.csv"
    outside.write_text("a\n1\n")
    for path in ("../" + outside.parent.name + "/secret.csv", str(outside), "data/../../x.csv"):
        r = client.post("/open", data={"source": "path", "path": path})
        assert r.status_code == 400
        assert "served folder" in errors(r.text)[0], errors(r.text)
    (root / "link.csv").symlink_to(outside)
    r = client.post("/open", data={"source": "path", "path": "link.csv"})
    assert "outside the served folder" in errors(r.text)[0]
    r = client.post(
        "/open", data={"source": "path", "path": "data/people.csv"}, follow_redirects=False
    )
    assert r.status_code == 303
    page = client.get(r.headers["location"]).text
    assert "disease" in page


def test_uploads_are_bounded_checked_and_never_overwrite(client, root):
    before = sorted(p.name for p in root.iterdir())
    r = client.post("/upload", files={"file": ("x.csv", b"")})
    assert errors(r.text) == ["error: The upload 'x.csv' is empty."]
    r = client.post("/upload", files={"file": ("x.csv", b"a,b\n1,2\n3\n")})
    assert errors(r.text)[0].startswith("error: Cannot parse CSV file 'x.csv'")
    r = client.post("/upload", files={"file": ("x.txt", b"a\n1\n")})
    assert "is not one" in errors(r.text)[0]
    r = client.post("/upload", files={"file": ("big.csv", b"a\n" + b"1\n" * 5000)})
    assert r.status_code == 413 and "larger than the limit" in errors(r.text)[0]
    assert sorted(p.name for p in root.iterdir()) == before  # nothing written
    good = b"a,b\n1,2\n3,4\n"
    for _ in range(2):
        r = client.post("/upload", files={"file": ("t.csv", good)}, follow_redirects=False)
        assert r.status_code == 303
    kept = sorted(p.name for p in (root / "anonlab-uploads").iterdir())
    assert kept == ["t-2.csv", "t.csv"]


def test_requests_from_elsewhere_are_refused_and_errors_have_no_traceback(root):
    app = create_app(root)
    with TestClient(app, base_url="http://evil.example") as c:
        r = c.get("/")
        assert r.status_code == 400
    with TestClient(app) as c:
        r = c.post("/open", data={"source": "adult"}, headers={"origin": "http://evil.example"})
        assert r.status_code == 403
        r = c.get("/jobs/nope")
        assert r.status_code == 404 and "Traceback" not in r.text
        r = c.get("/")
        assert "default-src 'none'" in r.headers["content-security-policy"]


def test_serve_warns_beyond_loopback():
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.0.2.1")
    out = subprocess.run(
        [sys.executable, "-m", "anonlab", "serve", "--root", "/nonexistent-folder"],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 2 and out.stderr.startswith("error: The folder to serve")
