"""Every example of README.md and docs/ runs and shows what anonlab does (see ``examples.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.examples import ROOT, documents, evaluate, prepare

#: Pages whose examples take more than a few seconds (anonymize runs of every family on Adult,
#: PrivacyFrost2's first compilation): they run in the whole suite, not in the dev loop.
SLOW = {
    "README.md",
    "docs/getting-started.md",
    "docs/guide/families/full-domain.md",
    "docs/guide/families/microaggregation.md",
    "docs/guide/families/nonhomogeneous.md",
    "docs/guide/report-and-app.md",
}


def _param(path: Path) -> object:
    name = path.relative_to(ROOT).as_posix()
    marks = [pytest.mark.slow] if name in SLOW else []
    return pytest.param(path, id=name, marks=marks)


@pytest.mark.parametrize("path", [_param(p) for p in documents()])
def test_the_examples_run_and_show_what_they_print(path, tmp_path, monkeypatch):
    prepare(tmp_path)
    monkeypatch.chdir(tmp_path)
    ran, skipped, failures = evaluate(path)
    assert not failures, "\n\n".join(failures)
    for reason in skipped:  # every skip says why
        assert reason.split(": ", 1)[1].strip(), reason
