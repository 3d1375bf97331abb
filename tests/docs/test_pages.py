"""The README is a first visit's page; the reference pages cannot drift from the code."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import anonlab

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_the_readme_is_short_and_opens_with_the_two_commands():
    lines = README.splitlines()
    assert len(lines) < 200
    opening = "\n".join(lines[:6])
    assert "./scripts/demo   # sets up .venv" in opening
    assert "./scripts/test   # sets up .venv with the test extras" in opening


def test_the_readme_links_resolve():
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def test_the_job_file_reference_is_generated_from_the_declarations():
    res = subprocess.run(
        [sys.executable, "scripts/job_reference.py", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_the_job_file_reference_names_every_registered_entry():
    from anonlab.algorithms import ALGORITHMS
    from anonlab.engines import ENGINES
    from anonlab.metrics import METRICS
    from anonlab.models import MODELS

    page = (ROOT / "docs" / "reference" / "job-file.md").read_text(encoding="utf-8")
    for registry in (ALGORITHMS, MODELS, METRICS):
        for name, entry in registry.registered():
            if entry.__module__.startswith("anonlab."):  # not an installed package's plugin
                assert f"### `{name}`" in page, name
    for name in ENGINES:
        assert f"`{name}`" in page


def test_the_api_reference_documents_every_public_name():
    page = (ROOT / "docs" / "reference" / "api.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"^::: anonlab\.(?:api\.|jobs\.check\.)?(\w+)$", page, flags=re.M))
    assert set(anonlab.__all__) - {"__version__"} <= shown


def test_every_code_block_is_of_a_kind_the_examples_check():
    """A block in another language would go unchecked (tests/docs/examples.py runs these)."""
    from tests.docs.examples import documents

    checked = {"python", "bash", "console", "json", "yaml", "toml"}
    for path in documents():
        fences = re.findall(r"^ *```(\S*)", path.read_text(encoding="utf-8"), flags=re.M)
        opening = fences[::2]  # every other fence opens a block
        unknown = {lang for lang in opening if lang and lang not in checked}
        assert not unknown, f"{path.relative_to(ROOT)}: blocks in {sorted(unknown)}"
