"""The documentation site builds with warnings as errors (``./scripts/docs``), every page in it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: Public functions whose name is also a module's (``anonlab.risk``, ``anonlab.report``, and
#: ``anonlab.jobs.check``): the API page documents them at their definition.
ALSO_A_MODULE = {
    "risk": "anonlab.api.risk",
    "report": "anonlab.api.report",
    "check": "anonlab.jobs.check.check",
}

pytest.importorskip("mkdocs", reason="the docs extra (mkdocs) is not installed")
pytest.importorskip("mkdocstrings_handlers.python", reason="mkdocstrings-python is not installed")


def _nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, dict):
        return [p for v in nav.values() for p in _nav_pages(v)]
    if isinstance(nav, list):
        return [p for v in nav for p in _nav_pages(v)]
    return []


@pytest.mark.slow
def test_the_site_builds_strictly_with_every_page(tmp_path):
    import yaml

    site = tmp_path / "site"
    res = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**__import__("os").environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=600,
    )
    assert res.returncode == 0, res.stderr[-4000:]
    config = yaml.load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"), Loader=yaml.BaseLoader)
    pages = _nav_pages(config["nav"])
    assert len(pages) >= 25
    for page in pages:  # every page of the navigation was built
        out = site / (
            "index.html"
            if page == "index.md"
            else page.removesuffix(".md").removesuffix("/index") + "/index.html"
        )
        assert out.is_file(), page
    # every Markdown page under docs/ is in the navigation (but the data folder's note)
    on_disk = {
        p.relative_to(ROOT / "docs").as_posix()
        for p in (ROOT / "docs").rglob("*.md")
        if "data" not in p.relative_to(ROOT / "docs").parts
    }
    assert on_disk == set(pages)
    api = (site / "reference" / "api" / "index.html").read_text(encoding="utf-8")
    import anonlab

    for name in anonlab.__all__:  # the reference renders every public name
        if name in ALSO_A_MODULE:  # documented where the function is defined
            assert f'id="{ALSO_A_MODULE[name]}"' in api, name
        elif name != "__version__":
            assert f'id="anonlab.{name}"' in api, name
    bench = (site / "benchmarks" / "index.html").read_text(encoding="utf-8")
    assert "Measurements behind choices in the code" in bench  # benchmarks/README.md included
