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
TOKEN = "test-token-0123456789"
HERE = "http://127.0.0.1"


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


def signed_in(app, **options) -> TestClient:
    """A client of ``app`` that opened the start address: it holds the token's cookie."""
    c = TestClient(app, base_url=HERE, **options)
    r = c.get(f"/?token={TOKEN}", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/"
    return c


@pytest.fixture
def client(root: Path):
    with signed_in(create_app(root, token=TOKEN, max_upload=2000)) as c:
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


@pytest.mark.slow
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


@pytest.mark.slow
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
    assert errors(page.text)[0] == (  # a path of the server is never shown whole
        "error: The job reads '…/passwd', outside the served folder; it cannot be read."
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


@pytest.mark.slow
def test_the_form_drops_the_other_columns_and_a_job_file_must_declare_them(client):
    """A job from the form releases its quasi-identifiers and sensitive attributes only (the
    page says so); a job file that would release an identifying column undeclared is refused
    on the form, with the figures."""
    where = open_adult(client)
    assert "The other columns are dropped from the" in client.get(f"{where}/job").text
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
    app = create_app(root, token=TOKEN)
    with TestClient(app, base_url="http://evil.example") as c:
        r = c.get("/")
        assert r.status_code == 400
    with signed_in(app) as c:
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


# ---------------------------------------------------------------- safe on a shared server
def write_csv(path: Path, header: list[str], rows: list[list[object]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [",".join(header), *(",".join(str(v) for v in r) for r in rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def open_path(client: TestClient, path: str) -> str:
    r = client.post("/open", data={"source": "path", "path": path}, follow_redirects=False)
    assert r.status_code == 303, errors(r.text)
    return str(r.headers["location"])


def mode(path: Path) -> int:
    return path.stat().st_mode & 0o777


def test_every_request_needs_the_access_token(root):
    with TestClient(create_app(root, token=TOKEN), base_url=HERE) as c:
        for path in ("/", "/d/1abc", "/jobs/1abc", "/jobs/1abc/files/release"):
            r = c.get(path, follow_redirects=False)
            assert r.status_code == 403, path
            assert errors(r.text)[0].startswith("error: This app needs its access token")
        assert c.get("/?token=wrong-token-0123456789").status_code == 403
        # the token is taken from an address only, and only to open a page
        r = c.post(f"/open?token={TOKEN}", data={"source": "adult"}, follow_redirects=False)
        assert r.status_code == 403
        r = c.get(f"/d/1abc?x=1&token={TOKEN}", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/d/1abc?x=1"
        cookie = r.headers["set-cookie"]
        assert cookie.startswith(f"anonlab-token-80={TOKEN};")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/" in cookie
        assert c.get("/").status_code == 200  # the cookie carries it from now on
        assert TOKEN not in c.get("/").text
    # a redirect never leads elsewhere, whatever the path
    with TestClient(create_app(root, token=TOKEN), base_url=HERE) as c:
        r = c.get(f"{HERE}//evil.example/x?token={TOKEN}", follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/evil.example/x"


def test_the_host_check_is_always_on_and_takes_the_names_added(root):
    app = create_app(root, token=TOKEN, host="0.0.0.0", allow_hosts=["Tables.Example.org"])
    for base in ("http://evil.example", "http://testserver", "http://192.0.2.7"):
        with TestClient(app, base_url=base) as c:
            assert c.get(f"/?token={TOKEN}").status_code == 400, base
    for base in ("http://tables.example.org:8000", "http://localhost", "http://[::1]:80"):
        with TestClient(app, base_url=base) as c:
            r = c.get(f"/?token={TOKEN}", follow_redirects=False)
            assert r.status_code == 303, base
    with TestClient(create_app(root, token=TOKEN)) as c:  # Starlette's test host is no exception
        assert c.get(f"/?token={TOKEN}").status_code == 400
    for bad in ("*", "*.example.org", "http://x.org", "x.org:80", ""):
        with pytest.raises(api.ParameterError, match="An allowed host"):
            create_app(root, token=TOKEN, allow_hosts=[bad])


def test_no_token_on_loopback_only_and_a_given_token_must_be_hard_to_guess(root):
    for host in ("0.0.0.0", "::", "192.0.2.7", "tables.example.org"):
        with pytest.raises(api.ParameterError, match="without an access token"):
            create_app(root, token=None, host=host)
    for weak in ("", "short", "has a space 0123456789", "semi;colon-0123456789"):
        with pytest.raises(api.ParameterError, match="at least 16 characters"):
            create_app(root, token=weak)
    with TestClient(create_app(root, token=None), base_url=HERE) as c:
        assert c.get("/").status_code == 200


def test_the_apps_own_folders_may_not_lead_outside_the_served_folder(root, tmp_path_factory):
    outside = tmp_path_factory.mktemp("elsewhere")
    (root / "anonlab-output").symlink_to(outside, target_is_directory=True)
    with pytest.raises(api.InputError, match="anonlab-output/ in the served folder leads outside"):
        create_app(root, token=TOKEN)
    (root / "anonlab-output").unlink()
    with signed_in(create_app(root, token=TOKEN)) as c:
        # links made while the app runs are refused when it writes
        (root / "anonlab-uploads").symlink_to(outside, target_is_directory=True)
        r = c.post("/upload", files={"file": ("t.csv", b"a,b\n1,2\n3,4\n")})
        assert r.status_code == 400
        assert errors(r.text) == [
            "error: anonlab-uploads/ in the served folder leads outside it (a link to "
            "elsewhere); nothing is written there. Remove the link or serve another folder."
        ]
        (root / "anonlab-output").symlink_to(outside, target_is_directory=True)
        where = open_path(c, "data/people.csv")
        r = c.post(f"{where}/job", data={"qi": ["age", "sex"], "k": "2"}, follow_redirects=False)
        page = wait(c, r.headers["location"])
        assert 'data-status="failed"' in page
        assert "anonlab-output/ in the served folder leads outside it" in errors(page)[0]
    assert list(outside.iterdir()) == []


def test_compressed_uploads_are_bounded_once_decompressed(client, root):
    import gzip
    import io

    import pyarrow as pa
    import pyarrow.parquet as pq

    before = sorted(p.name for p in root.iterdir())
    bomb = gzip.compress(b"a\n" + b"1\n" * 5000)  # 10,002 bytes in 50: the limit is 2,000
    assert len(bomb) < 2000
    for name in ("bomb.csv.gz", "bomb.csv"):  # gzip is recognized by its content
        r = client.post("/upload", files={"file": (name, bomb)})
        assert r.status_code == 400
        assert errors(r.text) == [
            f"error: The upload {name!r} holds more than the limit of 2,000 bytes once "
            "decompressed; upload a smaller file."
        ]
    buffer = io.BytesIO()
    pq.write_table(pa.table({"a": [1] * 5000}), buffer)  # 5,000 cells in a few hundred bytes
    assert len(buffer.getvalue()) < 2000
    r = client.post("/upload", files={"file": ("many.parquet", buffer.getvalue())})
    assert errors(r.text) == [
        "error: The upload 'many.parquet' holds more than the limit of 2,000 bytes once "
        "decompressed (5,000 cells, more than a CSV file of the limit holds); upload a "
        "smaller file."
    ]
    r = client.post("/upload", files={"file": ("cut.csv.gz", bomb[:30])})
    assert errors(r.text)[0].startswith("error: The upload 'cut.csv.gz' is not a complete gzip")
    assert sorted(p.name for p in root.iterdir()) == before  # nothing written
    small = gzip.compress(b"a,b\n1,2\n3,4\n")
    r = client.post("/upload", files={"file": ("small.csv.gz", small)}, follow_redirects=False)
    assert r.status_code == 303


def test_questions_about_every_subset_are_bounded_as_the_report_is(root):
    names = [f"c{i}" for i in range(13)]
    write_csv(root / "wide.csv", names, [[(r * (i + 1)) % 7 for i in range(13)] for r in range(60)])
    with signed_in(create_app(root, token=TOKEN)) as c:
        where = open_path(c, "wide.csv")
        asked = {
            "every subset (Q4)": {"attr": names, "scope": "subsets"},
            "the largest k-anonymous subsets (Q3)": {"attr": names, "scope": "subsets", "k": "2"},
            "the sets that single people out": {"attr": names, "what": "qis"},
        }
        for what, params in asked.items():
            r = c.get(f"{where}/ask", params=params)
            assert r.status_code == 400, what
            assert errors(r.text) == [
                "error: This question goes through every subset of 13 attributes: 8,191 "
                "subsets. The app lists at most 4,095, as many as the report's lattice of 12 "
                "attributes. Choose fewer attributes, or ask on the command line (anonlab "
                "diagnose --attributes ...)."
            ], what
        assert c.get(f"{where}/ask", params={"attr": names[:12], "scope": "subsets"}).is_success
        # Q12 lists each subset once for every k: 127 subsets x 50 values of k is too many
        q12 = {"attr": names[:7], "scope": "subsets", "find_delta": "on"}
        r = c.get(f"{where}/ask", params=q12)
        assert "127 subsets × 50 values of k" in errors(r.text)[0]
        r = c.get(f"{where}/ask", params={**q12, "max_k": "30"})  # 3,810 rows
        assert r.is_success and 'data-question="Q12"' in r.text


@pytest.mark.slow
def test_uploads_and_outputs_are_private_and_removed_when_the_app_stops(root):
    for keep in (False, True):
        with signed_in(create_app(root, token=TOKEN, keep_outputs=keep)) as c:
            r = c.post("/upload", files={"file": ("t.csv", b"a,b\n1,2\n1,2\n")})
            assert r.is_success, errors(r.text)
            upload = root / "anonlab-uploads" / "t.csv"
            assert mode(upload) == 0o600 and mode(upload.parent) == 0o700
            where = open_path(c, "data/people.csv")
            r = c.post(f"{where}/job", data={"qi": ["age", "sex"], "k": "2"})
            page = wait(c, str(r.url))
            assert 'data-status="done"' in page, errors(page)
            (folder,) = (root / "anonlab-output").iterdir()
            assert mode(root / "anonlab-output") == 0o700 and mode(folder) == 0o700
            written = [p for p in folder.rglob("*") if p.is_file()]
            assert len(written) == 3 and all(mode(p) == 0o600 for p in written)
            assert ("removed when the app stops" in page) is not keep
        left = sorted(p.name for p in root.iterdir())
        if keep:
            assert left == ["anonlab-output", "anonlab-uploads", "data"]
            assert upload.exists() and all(p.exists() for p in written)
        else:
            assert left == ["data"]  # what the app wrote went with it
    # what was there before the app started stays
    with signed_in(create_app(root, token=TOKEN)) as c:
        c.post("/upload", files={"file": ("t.csv", b"a,b\n1,2\n1,2\n")})
        assert (root / "anonlab-uploads" / "t-2.csv").exists()
    assert sorted(p.name for p in (root / "anonlab-uploads").iterdir()) == ["t.csv"]


def households(root: Path) -> None:
    """12 people in two households: household_id is named like an identifier (6 rows each)."""
    rows = [
        [
            "HH-AAA" if i < 6 else "HH-BBB",
            30 + 10 * (i % 2),
            "FM"[i % 2],
            ["flu", "cold"][i % 3 > 0],
        ]
        for i in range(12)
    ]
    write_csv(root / "data" / "households.csv", ["household_id", "age", "sex", "disease"], rows)


KEEPS_HOUSEHOLD = (
    "quasi_identifiers: {age: {}, sex: {}}\nsensitive: [disease]\n"
    "insensitive: [household_id]\nmodels: [{k_anonymity: {k: 2}}]"
)


@pytest.mark.slow
def test_a_release_that_keeps_an_identifying_column_or_has_k_1_waits_for_confirmation(root):
    households(root)
    write_csv(
        root / "data" / "five.csv",
        ["age", "sex", "zip", "disease"],
        [[30, "F", 1000, "flu"], [30, "F", 1000, "cold"], [40, "M", 2000, "flu"],
         [40, "M", 2000, "flu"], [50, "F", 3000, "flu"]],
    )  # fmt: skip
    with signed_in(create_app(root, token=TOKEN)) as c:
        cases = {
            # the form drops the other columns; a job file can release one knowingly
            "data/households.csv": (
                {"yaml": KEEPS_HOUSEHOLD},
                "The release keeps the column 'household_id', which may identify people on its "
                "own (its name says it identifies people or records): the job releases it as it is "
                "(insensitive). Confirm to release it, or declare it under 'identifiers:' (never "
                "released) or make it a quasi-identifier.",
            ),
            "data/five.csv": (
                {"qi": ["age", "sex", "zip"], "k": "1"},
                "The release has k = 1: a released record is alone in its class, so anyone who "
                "knows its quasi-identifiers finds it. Add k-anonymity with k of 2 or more.",
            ),
        }

        def outputs() -> int:
            folder = root / "anonlab-output"
            return len(list(folder.iterdir())) if folder.exists() else 0

        for done, (path, (form, reason)) in enumerate(cases.items()):
            where = open_path(c, path)
            r = c.post(f"{where}/job", data=form, follow_redirects=False)
            job = r.headers["location"]
            page = wait(c, job)
            assert 'data-status="held"' in page, errors(page)
            assert f"warning: {reason}" in html.unescape(page), re.findall("warning: [^<]*", page)
            assert outputs() == done  # nothing written yet
            assert c.get(f"{job}/files/release").status_code == 404
            r = c.post(f"{job}/release", follow_redirects=False)
            assert r.status_code == 303 and r.headers["location"] == job
            page = wait(c, job)
            assert 'data-status="done"' in page
            assert c.get(f"{job}/files/release").status_code == 200 and outputs() == done + 1
        # declared an identifier, the column is not released: nothing to confirm
        where = open_path(c, "data/households.csv")
        text = (
            "quasi_identifiers: {age: {}, sex: {}}\nidentifiers: [household_id]\n"
            "models: [{k_anonymity: {k: 2}}]"
        )
        r = c.post(f"{where}/job", data={"yaml": text}, follow_redirects=False)
        assert 'data-status="done"' in wait(c, r.headers["location"])


@pytest.mark.slow
def test_the_report_is_internal_and_masks_identifying_values(root):
    households(root)
    with signed_in(create_app(root, token=TOKEN)) as c:
        where = open_path(c, "data/households.csv")
        page = c.get(where).text
        assert "HH-AAA" not in page and "hidden: identifying column" in page
        assert "30 (6)" in page  # the other columns' values are shown
        r = c.post(f"{where}/job", data={"yaml": KEEPS_HOUSEHOLD}, follow_redirects=False)
        job = r.headers["location"]
        assert 'data-status="held"' in wait(c, job)
        c.post(f"{job}/release")
        report = c.get(f"{job}/files/report").text
        release = c.get(f"{job}/files/release").text
    assert "HH-AAA" in release  # confirmed: the column is released as it is...
    assert "HH-AAA" not in report and "HH-BBB" not in report  # ...but the report never shows it
    assert 'data-internal="true"' in report
    assert "Internal: this report contains data of individuals" in report
    assert "hidden: identifying column" in report
    assert str(root) not in report and str(api.adult_path().parent) not in report
    # values held by fewer rows than the risk threshold (5) are masked too
    table = anonlab.EncodedTable.from_rows(
        [("a", "x")] * 4 + [("b", "y")] * 2 + [("c", "z")], ["rare", "common"]
    )
    data = api.report_data(table, quasi_identifiers=["common"])
    assert data.risk.threshold == 5
    from anonlab.report.html import render

    page = render(data)
    assert "hidden: held by fewer than 5 rows" in page and "a (4)" not in page


def test_error_lines_name_no_server_path_and_no_python_name(client, root, monkeypatch):
    from anonlab.web import pages
    from anonlab.web.state import one_line

    assert one_line(KeyError("secret_internal_key")) == (
        "an unexpected error stopped this; the server's log has the details."
    )
    missing = FileNotFoundError(2, "No such file or directory", str(root / "data" / "x.csv"))
    assert one_line(missing, root) == "No such file or directory (data/x.csv)."
    elsewhere = api.InputError("Cannot read '/srv/private/tables/t.csv': denied")
    assert one_line(elsewhere, root) == "Cannot read '…/t.csv': denied"
    assert one_line(api.InputError(f"{root} is full"), root) == "the served folder is full"
    # through the app: a page, an upload, a file that does not parse, an unforeseen error
    assert str(root) not in client.get("/").text
    (root / "data" / "bad.csv").write_text("a,b\n1,2\n3\n")
    r = client.post("/open", data={"source": "path", "path": "data/bad.csv"})
    assert errors(r.text)[0].startswith("error: Cannot parse CSV file 'data/bad.csv'")
    where = open_path(client, "data/people.csv")
    page = client.get(f"{where}/ask", params={"attr": ["age", "sex"]}).text
    assert "anonlab diagnose data/people.csv" in page and str(root) not in page

    def broken(*args, **kwargs):
        raise KeyError("secret_internal_key")

    monkeypatch.setattr(pages, "profile_html", broken)
    with signed_in(create_app(root, token=TOKEN), raise_server_exceptions=False) as c:
        r = c.get(open_path(c, "data/people.csv"))
    assert r.status_code == 500
    assert errors(r.text) == [
        "error: an unexpected error stopped this; the server's log has the details."
    ]
    assert "KeyError" not in r.text and "secret_internal_key" not in r.text


def serve_command(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "anonlab", "serve", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
    )


@pytest.mark.slow
def test_serve_checks_its_options_in_one_line_and_binds_before_it_says_serving(tmp_path):
    import socket

    refused = {
        (
            "--max-upload-mb",
            "nan",
        ): "error: --max-upload-mb must be a number of MB above 0; got nan.",
        ("--max-upload-mb", "0"): "error: --max-upload-mb must be a number of MB above 0; got 0.0.",
        ("--port", "70000"): "error: The port must be a whole number from 0 to 65535 (0: a free "
        "one); got 70000.",
        ("--host", "0.0.0.0", "--no-token"): "error: Listening on 0.0.0.0 without an access "
        "token would let anyone who reaches the port read the tables; keep the token (leave "
        "out --no-token) or listen on 127.0.0.1.",
        ("--token", "abc"): "error: The access token must have at least 16 characters, "
        "letters, digits and . _ ~ - only (got 3 characters); leave it out for a random one.",
    }
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        refused[("--port", port)] = (
            f"error: Port {port} on 127.0.0.1 is in use by another program; choose another "
            "with --port, or --port 0 for a free one."
        )
        for args, message in refused.items():
            out = serve_command("--root", str(tmp_path), *args)
            assert (out.returncode, out.stderr.strip(), out.stdout) == (2, message, ""), args
    assert list(tmp_path.iterdir()) == []


def test_serve_on_port_0_prints_its_port_and_token_and_removes_its_files_when_stopped(tmp_path):
    import signal

    import httpx

    log = tmp_path / "log.txt"
    root = tmp_path / "served"
    root.mkdir()
    with log.open("w") as fh:
        proc = subprocess.Popen(
            [sys.executable, "-m", "anonlab", "serve", "--root", str(root), "--port", "0"],
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    try:
        for _ in range(300):
            found = re.search(r"at (http://127\.0\.0\.1:(\d+)/\?token=(\S+)) ", log.read_text())
            if found or proc.poll() is not None:
                break
            time.sleep(0.1)
        assert found, log.read_text()
        start, port, token = found.groups()
        assert int(port) > 0 and len(token) >= 40
        with httpx.Client(base_url=f"http://127.0.0.1:{port}") as c:
            assert c.get("/").status_code == 403
            assert c.get(start, follow_redirects=True).status_code == 200
            r = c.post("/upload", files={"file": ("t.csv", b"a,b\n1,2\n1,2\n")})
            assert r.status_code == 303
        assert (root / "anonlab-uploads" / "t.csv").exists()
    finally:
        proc.send_signal(signal.SIGINT)  # Ctrl-C
        proc.wait(timeout=30)
    assert proc.returncode == 130, log.read_text()  # 128 + SIGINT, as a shell reports it
    assert "Traceback" not in log.read_text()
    assert list(root.iterdir()) == []


def test_a_column_without_a_hierarchy_gets_one_inferred_from_its_values(root):
    """The form's job gives a quasi-identifier without a hierarchy file an automatic one
    (issue 54): ages generalize to intervals instead of all or nothing."""
    rng = __import__("random").Random(1)
    rows = "".join(f"{rng.randint(18, 80)},{rng.choice('FM')}\n" for _ in range(300))
    with signed_in(create_app(root, token=TOKEN)) as client:
        r = client.post("/upload", files={"file": ("people.csv", f"age,sex\n{rows}".encode())},
                        follow_redirects=False)  # fmt: skip
        assert r.status_code == 303, errors(r.text)
        form = {"qi": ["age", "sex"], "k": "10", "suppression": "0"}
        r = client.post(f"{r.headers['location']}/job", data=form, follow_redirects=False)
        assert r.status_code == 303, errors(r.text)
        page = wait(client, r.headers["location"])
        assert 'data-status="done"' in page, errors(page)
        job = client.get(r.headers["location"] + "/files/job").text
        assert "grouping: frequency" in job
        ages = {
            line.split(",")[0]
            for line in client.get(r.headers["location"] + "/files/release").text.splitlines()[1:]
        }
        assert ages != {"*"} and all(a.startswith(("[", "<", ">=")) for a in ages), ages


def test_the_risk_question_takes_a_sampling_fraction_or_a_weight_column(client):
    """Issue 53: the page asks whether the table is a sample; the risk then shows the
    population estimates (the command line says so too); both at once, or either with
    another question, is one line."""
    where = open_adult(client)
    page = client.get(
        f"{where}/ask", params={"attr": QI, "what": "risk", "sampling_fraction": "0.01"}
    )
    assert page.status_code == 200, errors(page.text)
    text = html.unescape(page.text)
    assert "Population uniqueness (sampling fraction 0.01" in text
    assert "--sampling-fraction=0.01" in text
    page = client.get(f"{where}/ask", params={"attr": QI, "what": "risk", "weight": "fnlwgt"})
    assert "Benedetti-Franconi" in html.unescape(page.text), errors(page.text)
    both = {"attr": QI, "what": "risk", "weight": "fnlwgt", "sampling_fraction": "0.1"}
    assert errors(client.get(f"{where}/ask", params=both).text) == [
        "error: Give the sampling fraction or the weight column, not both: the weights say "
        "how large the population is."
    ]
    other = {"attr": QI, "what": "question", "sampling_fraction": "0.1"}
    assert "apply to the risk only" in errors(client.get(f"{where}/ask", params=other).text)[0]
    bad = {"attr": QI, "what": "risk", "sampling_fraction": "2"}
    assert "sampling" in errors(client.get(f"{where}/ask", params=bad).text)[0]


def test_a_job_of_a_sample_reports_its_population_risk_before_and_after(client):
    where = open_adult(client)
    form = {"qi": ["age", "sex"], "sensitive": ["income"], "k": "5", "suppression": "0.02",
            "sampling_fraction": "0.05"}  # fmt: skip
    r = client.post(f"{where}/job", data=form, follow_redirects=False)
    assert r.status_code == 303, errors(r.text)
    page = wait(client, r.headers["location"])
    assert 'data-status="done"' in page, errors(page)
    report = html.unescape(client.get(r.headers["location"] + "/files/report").text)
    assert "Re-identification risk before and after" in report
    assert "Population uniqueness (sampling fraction 0.05" in report


def test_the_table_setup_guesses_the_separator_previews_and_gives_safe_roles(root):
    """Issue 54, item 6: a ';' file opens as its columns (the separator guessed), the first
    rows are shown (an identifying column hidden), every column has a role and an
    identifying one starts as an identifier; the job's page previews the release."""
    rows = "".join(f"p{i};{20 + i % 40};{'FM'[i % 2]};x{i % 3}\n" for i in range(120))
    with signed_in(create_app(root, token=TOKEN)) as client:
        r = client.post(
            "/upload",
            files={"file": ("people.csv", f"patient_id;age;sex;visits\n{rows}".encode())},
            data={"separator": "auto"},
            follow_redirects=False,
        )
        assert r.status_code == 303, errors(r.text)
        where = r.headers["location"]
        page = html.unescape(client.get(where).text)
        assert "The first 10 rows" in page and "(hidden: identifying)" in page
        assert "p3" not in page.split("The first 10 rows")[1].split("</table>")[0]
        form = html.unescape(client.get(f"{where}/job").text)
        assert '<select name="role:patient_id"><option value="quasi-identifier">' in form
        assert (
            'value="identifier" selected>identifier (dropped)'
            in form.split("role:patient_id")[1].split("</select>")[0]
        )
        job = {"role:patient_id": "identifier", "role:age": "quasi-identifier",
               "role:sex": "quasi-identifier", "role:visits": "insensitive",
               "k": "5", "suppression": "0.05"}  # fmt: skip
        r = client.post(f"{where}/job", data=job, follow_redirects=False)
        assert r.status_code == 303, errors(r.text)
        done = wait(client, r.headers["location"])
        assert 'data-status="done"' in done, errors(done)
        assert 'data-figure="release-preview"' in done
        release = client.get(r.headers["location"] + "/files/release").text
        assert release.splitlines()[0] == "age,sex,visits"  # the identifier dropped
        explored = client.get(r.headers["location"] + "/explore")
        assert explored.status_code == 200 and 'data-figure="frontier"' in explored.text
        for family in ("mondrian", "local_suppression"):  # the statistics offices' methods too
            assert f"<td>{family}" in explored.text, family
        two = {**job, "role:visits": "weight", "role:age": "weight"}
        r = client.post(f"{where}/job", data=two, follow_redirects=False)
        assert r.status_code == 400 and "Two columns are sampling weights" in errors(r.text)[0]


def test_a_file_without_a_header_opens_with_named_columns(root):
    rows = "".join(f"{20 + i % 40},{'FM'[i % 2]},{i % 5}\n" for i in range(60))
    (root / "nohead.csv").write_text(rows)
    with signed_in(create_app(root, token=TOKEN)) as client:
        r = client.post("/open", data={"source": "path", "path": "nohead.csv", "separator": "auto"},
                        follow_redirects=False)  # fmt: skip
        assert r.status_code == 303, errors(r.text)
        page = html.unescape(client.get(r.headers["location"]).text)
        assert "<th>c0</th><th>c1</th><th>c2</th>" in page and "--no-header" in page


def test_the_job_form_shows_each_hierarchy_and_takes_a_highest_level(root):
    rows = "".join(f"{20 + i % 50},{'FM'[i % 2]},{i % 3}\n" for i in range(200))
    (root / "ages.csv").write_text("age,sex,visits\n" + rows)
    with signed_in(create_app(root, token=TOKEN)) as client:
        r = client.post(
            "/open", data={"source": "path", "path": "ages.csv"}, follow_redirects=False
        )
        where = r.headers["location"]
        form = html.unescape(client.get(f"{where}/job").text)
        assert 'name="max_level:age"' in form and "intervals of width" in form
        job = {"role:age": "quasi-identifier", "role:sex": "quasi-identifier",
               "role:visits": "insensitive", "max_level:age": "1", "k": "3", "suppression": "0.1"}  # fmt: skip
        r = client.post(f"{where}/job", data=job, follow_redirects=False)
        assert r.status_code == 303, errors(r.text)
        assert 'data-status="done"' in wait(client, r.headers["location"])
        text = client.get(r.headers["location"] + "/files/job").text
        assert "max_level: 1" in text and "&id" not in text


def test_a_hierarchy_is_edited_level_by_level_in_the_job_form(root):
    """The form shows each column's hierarchy as editable rows; an edited one replaces the
    inferred one (written beside the job); a malformed one is one line naming the column."""
    rows = "".join(f"{20 + i % 50},{'FM'[i % 2]},{i % 3}\n" for i in range(200))
    (root / "ages.csv").write_text("age,sex,visits\n" + rows)
    with signed_in(create_app(root, token=TOKEN)) as client:
        r = client.post(
            "/open", data={"source": "path", "path": "ages.csv"}, follow_redirects=False
        )
        where = r.headers["location"]
        form = html.unescape(client.get(f"{where}/job").text)
        shown = form.split('name="hierarchy:age"')[1].split(">", 1)[1].split("</textarea>")[0]
        assert shown.splitlines()[0].startswith("20;")
        mine = "\n".join(f"{a};{'young' if a < 45 else 'old'};*" for a in range(20, 70))
        job = {"role:age": "quasi-identifier", "role:sex": "quasi-identifier",
               "role:visits": "insensitive", "hierarchy:age": mine, "k": "10",
               "suppression": "0"}  # fmt: skip
        r = client.post(f"{where}/job", data=job, follow_redirects=False)
        assert r.status_code == 303, errors(r.text)
        assert 'data-status="done"' in wait(client, r.headers["location"])
        release = client.get(r.headers["location"] + "/files/release").text
        assert {line.split(",")[0] for line in release.splitlines()[1:]} <= {"young", "old", "*"}
        assert "hierarchies/age.csv" in client.get(r.headers["location"] + "/files/job").text
        bad = {**job, "hierarchy:age": "20;young;*\n21;young"}
        r = client.post(f"{where}/job", data=bad, follow_redirects=False)
        assert r.status_code == 400 and "'age'" in errors(r.text)[0]
