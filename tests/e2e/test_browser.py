"""The Diagnosis Centre in a real browser: headless Chromium (the distribution's) driven by
Playwright against ``anonlab serve`` on a free port, and the HTML report opened from disk.

Marked ``browser``: skipped where Chromium or Playwright is missing, unless
``ANONLAB_REQUIRE_BROWSER=1`` (CI sets it) turns that into a failure. Screenshots of every
page go to ``$ANONLAB_ARTIFACTS`` (default: a temporary folder, named in the test output).
"""

from __future__ import annotations

import csv
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import anonlab
from anonlab import api
from tests.support.web import adult_k5_job

pytestmark = [pytest.mark.browser, pytest.mark.slow]  # (each drives Chromium for many seconds)

QI = list(api.ADULT_QUASI_IDENTIFIERS)
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
]


def _chromium() -> str:
    path = os.environ.get("ANONLAB_CHROMIUM") or shutil.which("chromium")
    path = path or shutil.which("chromium-browser")
    reason = ""
    if path is None:
        reason = "no Chromium (apt-get install chromium chromium-driver, or set ANONLAB_CHROMIUM)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            reason = "Playwright is not installed (pip install 'anonlab[test]')"
    if reason:
        if os.environ.get("ANONLAB_REQUIRE_BROWSER") == "1":
            pytest.fail(f"browser tests required but {reason}")
        pytest.skip(reason)
    assert path is not None
    return path


@pytest.fixture(scope="module")
def artifacts(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = os.environ.get("ANONLAB_ARTIFACTS")
    path = Path(folder) if folder else tmp_path_factory.mktemp("screenshots")
    path.mkdir(parents=True, exist_ok=True)
    print(f"screenshots in {path}")
    return path


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    executable = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_FLAGS)
        yield b
        b.close()


@dataclass
class Server:
    """``anonlab serve`` on a port it chose: its address, the start address with the access
    token, and the folder it serves."""

    url: str
    start: str
    root: Path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    root = tmp_path_factory.mktemp("served")
    log = tmp_path_factory.mktemp("server-log") / "serve.txt"
    with log.open("w") as fh:  # a file, not a pipe: the server never waits for a reader
        proc = subprocess.Popen(
            [sys.executable, "-m", "anonlab", "serve", "--root", str(root), "--port", "0"],
            stdout=fh,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 60
    found = None
    while found is None and time.monotonic() < deadline:
        # printed once it listens: the port it was given and the token
        found = re.search(r"at (http://127\.0\.0\.1:\d+)(/\?token=\S+) ", log.read_text())
        if found is None:
            if proc.poll() is not None:
                raise AssertionError(f"anonlab serve exited: {log.read_text()}")
            time.sleep(0.1)
    if found is None:
        proc.kill()
        raise AssertionError("anonlab serve did not start")
    yield Server(found.group(1), found.group(1) + found.group(2), root)
    proc.terminate()
    proc.wait(timeout=30)
    # what it wrote went when it stopped
    assert not (root / "anonlab-output").exists(), log.read_text()
    assert not (root / "anonlab-uploads").exists(), log.read_text()


class Page:
    """A browser page that records every request that leaves it."""

    def __init__(self, browser: object) -> None:
        self.context = browser.new_context(  # type: ignore[attr-defined]
            viewport={"width": 1280, "height": 900}, accept_downloads=True
        )
        self.page = self.context.new_page()
        self.requests: list[str] = []
        self.page.on("request", lambda r: self.requests.append(r.url))

    def foreign(self) -> list[str]:
        """Requests to anything but this machine's app, a file or the page itself."""
        out = []
        for url in self.requests:
            parts = urlsplit(url)
            local = parts.scheme in ("file", "data", "about") or parts.hostname == "127.0.0.1"
            if not local:
                out.append(url)
        return out


@pytest.fixture
def page(browser: object) -> Iterator[Page]:
    p = Page(browser)
    yield p
    p.context.close()


def _kv(page: object, label: str) -> str:
    return str(page.locator(f'table.kv tr:has(th:text-is("{label}")) td').first.inner_text())  # type: ignore[attr-defined]


def test_the_app_needs_its_token_then_keeps_it_in_a_cookie_scripts_cannot_read(server, page):
    p = page.page
    p.goto(server.url + "/")
    assert p.locator(".error").inner_text().startswith("error: This app needs its access token")
    p.goto(server.start)
    assert p.url == server.url + "/"  # the token left the address bar
    assert p.locator("#open-adult").count() == 1
    (cookie,) = page.context.cookies()
    assert cookie["httpOnly"] and cookie["sameSite"] == "Strict"
    assert cookie["name"] == "anonlab-token-" + server.url.rsplit(":", 1)[1]


def test_open_adult_and_ask_q2_q4_q11(server, page, artifacts):
    p = page.page
    p.goto(server.start)
    p.screenshot(path=artifacts / "app-home.png", full_page=True)
    p.click("#open-adult")
    p.wait_for_url("**/d/*")
    assert "30,162" in p.locator('[data-card="rows"]').inner_text()
    p.screenshot(path=artifacts / "app-table.png", full_page=True)
    eng = anonlab.open_engine(anonlab.load_adult())

    # Q2: the Adult data marks its 8 quasi-identifiers; they are checked already
    for q in QI:
        assert p.locator(f'input[name="attr"][value="{q}"]').is_checked()
    p.click("#ask-question")
    p.wait_for_selector('.answer[data-question="Q2"]')
    assert _kv(p, "k") == str(anonlab.diagnose(eng, quasi_identifiers=QI).k)
    p.screenshot(path=artifacts / "app-q2.png", full_page=True)

    # Q4: every subset
    p.check('input[name="scope"][value="subsets"]')
    p.click("#ask-question")
    p.wait_for_selector('.answer[data-question="Q4"]')
    q4 = anonlab.diagnose(eng, attributes=QI)
    cells = p.locator('table[data-section="Q4: k for every subset"] tbody tr').all_inner_texts()
    shown = [(r.split("\t")[0], int(r.split("\t")[1].replace(",", ""))) for r in cells]
    assert shown == [(", ".join(r.attributes), r.k) for r in q4.rows]
    assert p.locator('[data-figure="lattice"] svg').count() == 1
    p.screenshot(path=artifacts / "app-q4.png", full_page=True)

    # Q11: the smallest delta for k = 1..50
    p.check('input[name="scope"][value="set"]')
    p.check('input[name="find_delta"]')
    p.click("#ask-question")
    p.wait_for_selector('.answer[data-question="Q11"]')
    q11 = anonlab.diagnose(eng, quasi_identifiers=QI, find_delta=True)
    rows = p.locator('[data-figure="k-delta"] table tbody tr').all_inner_texts()
    assert [r.split("\t")[1] for r in rows] == [f"{r.delta:.4f}" for r in q11.rows]
    assert p.locator('[data-figure="k-delta"] svg title').count() == len(q11.rows)
    p.locator('[data-figure="k-delta"]').screenshot(path=artifacts / "app-q11-figure.png")
    p.screenshot(path=artifacts / "app-q11.png", full_page=True)
    assert page.foreign() == []


def test_run_a_job_download_the_release_and_open_the_report(server, page, artifacts, browser):
    p = page.page
    p.goto(server.start)
    p.click("#open-adult")
    p.wait_for_url("**/d/*")
    p.click("#to-job")
    p.fill('input[name="k"]', "5")
    p.fill('input[name="suppression"]', "0.05")
    p.select_option('select[name="metric"]', "loss")
    p.select_option('select[name="algorithm"]', "optimal")
    p.screenshot(path=artifacts / "app-job-form.png", full_page=True)
    p.click("#run-job")
    p.wait_for_selector('#status[data-status="done"]', timeout=120_000)
    table = anonlab.load_adult()
    job = adult_k5_job(table)
    reference = anonlab.anonymize(table, job)
    card = p.locator('[data-card="suppressed"] .value').inner_text()
    assert card == f"{reference.suppressed_rows:,}"
    assert p.locator('[data-card="loss"]').get_attribute("data-value") == str(
        round(reference.loss, 6)
    )
    verdicts = p.locator('[data-figure="verdicts"] tbody tr').first.inner_text().split("\t")
    assert verdicts[0] == "k_anonymity" and verdicts[2] == "no" and verdicts[-1] == "yes"
    p.screenshot(path=artifacts / "app-job.png", full_page=True)

    with p.expect_download() as got:
        p.click("#download-release")
    release = Path(got.value.path())
    with release.open(newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    assert len(rows) - 1 == table.n_rows - reference.suppressed_rows
    assert rows[0] == [c for c in table.names if c not in job["identifiers"]]  # the rest dropped
    with p.expect_download() as got:
        p.click("#download-report")
    report = artifacts / "report.html"
    shutil.copy(got.value.path(), report)
    assert page.foreign() == []

    # the report on its own, from disk: its figures, its numbers, no request
    offline = Page(browser)
    try:
        offline.page.goto(report.as_uri())
        banner = offline.page.locator('[data-internal="true"]').inner_text()
        assert banner.startswith("Internal: this report contains data of individuals")
        for name in ("class-sizes", "k-delta", "lattice", "transformation", "loss", "classes"):
            assert offline.page.locator(f'[data-figure="{name}"] svg').count() == 1, name
        assert offline.page.locator('[data-card="k"]').get_attribute("data-value") == "1"
        assert offline.page.locator('[data-card="suppressed"]').get_attribute("data-value") == str(
            reference.suppressed_rows
        )
        offline.page.screenshot(path=artifacts / "report.png", full_page=True)
        offline.page.locator('[data-figure="lattice"]').screenshot(
            path=artifacts / "report-lattice.png"
        )
        assert offline.requests == [report.as_uri()]
        assert offline.foreign() == []
    finally:
        offline.context.close()
    outputs = list((server.root / "anonlab-output").iterdir())
    assert outputs and all((o / "released.csv").exists() for o in outputs)


def test_a_bad_upload_is_one_line_in_the_page(server, page, artifacts, tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    p = page.page
    p.goto(server.start)
    p.set_input_files('input[name="file"]', str(empty))
    p.click("#upload")
    error = p.locator(".error").inner_text()
    assert error == "error: The upload 'empty.csv' is empty."
    assert "Traceback" not in p.content()
    p.screenshot(path=artifacts / "app-bad-upload.png", full_page=True)
    assert not (server.root / "anonlab-uploads" / "empty.csv").exists()


def test_a_hierarchy_edited_level_by_level_in_the_form_is_the_one_the_job_uses(server, page):
    """Open "edit the levels of race", group its values in two, run: the job written beside
    the release names the edited hierarchy and no released race is outside it."""
    p = page.page
    p.goto(server.start)
    p.click("#open-adult")
    p.wait_for_url("**/d/*")
    p.click("#to-job")
    p.click("text=edit the levels of race")
    area = p.locator('textarea[name="hierarchy:race"]')
    rows = [line.split(";")[0] for line in area.input_value().splitlines()]
    assert "White" in rows and len(rows) == 5
    mine = "\n".join(f"{v};{'White' if v == 'White' else 'other'};*" for v in rows)
    area.fill(mine)
    p.fill('input[name="k"]', "5")
    p.fill('input[name="suppression"]', "0.05")
    p.click("#run-job")
    p.wait_for_selector('#status[data-status="done"]', timeout=120_000)
    job = p.request.get(p.url + "/files/job").text()
    assert "hierarchies/race.csv" in job
    run = p.url.rstrip("/").rsplit("/", 1)[-1]
    (folder,) = (server.root / "anonlab-output").glob(f"*-job-{run}")
    written = (folder / "hierarchies" / "race.csv").read_text().split()
    assert sorted(written) == sorted(mine.split())
    release = p.request.get(p.url + "/files/release").text().splitlines()
    column = release[0].split(",").index("race")
    assert {line.split(",")[column] for line in release[1:]} <= {*rows, "other", "*"}
