"""Run the examples of README.md and docs/: sybil parses the Markdown, these evaluate it.

* ```python blocks run (one namespace per document, block after block); a block of ``>>>``
  lines is a doctest whose shown output is compared (``...`` and whitespace as doctest allows);
* ```bash blocks: every line that starts with ``anonlab `` runs through the command line
  (in-process, Typer's runner) and must succeed; other lines (``pip install``, ``./scripts``)
  are not run;
* ```console blocks: each ``$ anonlab ...`` line runs, and the lines under it are the output
  it must print (whitespace normalized, ``...`` matches anything);
* ``<!-- skip: next "why" -->`` before a block skips it, saying why.

Each document runs in a fresh folder holding the docs' small files (``docs/data``), the
bundled Adult as ``adult.csv.gz``, ``big.parquet`` and ``big.csv.gz`` made from ``data.csv``,
and links to the repository's ``src`` and ``examples`` (so ``src/anonlab/datasets/adult.csv.gz``
and ``examples/adult_k5.yaml`` read as in a checkout; nothing is written there).
"""

from __future__ import annotations

import doctest
import os
import shlex
import shutil
from pathlib import Path
from typing import Any

from sybil import Example, Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("ANONLAB_SHARED", ROOT.parent / "shared"))
ARX_ADULT = SHARED / "datasets" / "arx" / "adult.csv"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _logical_lines(source: str) -> list[str]:
    """The block's lines with backslash continuations joined."""
    out: list[str] = []
    pending = ""
    for line in source.splitlines():
        if line.rstrip().endswith("\\"):
            pending += line.rstrip()[:-1] + " "
            continue
        out.append(pending + line)
        pending = ""
    if pending:
        out.append(pending)
    return out


def run_cli(command: str) -> tuple[int, str]:
    """Run one ``anonlab ...`` line in-process; its exit code and its output (stdout and stderr)."""
    from typer.testing import CliRunner

    from anonlab.cli import app

    args = shlex.split(command, comments=True)
    assert args[0] == "anonlab", command
    res = CliRunner().invoke(app, args[1:], env={"COLUMNS": "100", "NO_COLOR": "1"})
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    output = res.stdout + (res.stderr if res.stderr_bytes is not None else "")
    return res.exit_code, output


class CommandBlockParser(CodeBlockParser):
    """```bash blocks: each ``anonlab`` line must succeed."""

    language = "bash"

    def evaluate(self, example: Example) -> str | None:
        for line in _logical_lines(example.parsed):
            if not line.strip().startswith("anonlab "):
                continue
            code, output = run_cli(line.strip())
            if code != 0:
                return f"{line.strip()!r} exited with {code}:\n{output}"
        return None


class ConsoleBlockParser(CodeBlockParser):
    """```console blocks: ``$ anonlab ...`` lines and the output shown under each."""

    language = "console"

    def evaluate(self, example: Example) -> str | None:
        steps: list[tuple[str, list[str]]] = []
        for line in _logical_lines(example.parsed):
            if line.startswith("$ "):
                steps.append((line[2:].strip(), []))
            elif steps:
                steps[-1][1].append(line)
        checker = doctest.OutputChecker()
        for command, shown in steps:
            code, output = run_cli(command)
            if code != 0:
                return f"{command!r} exited with {code}:\n{output}"
            want = "\n".join(shown).strip() + "\n"
            if want.strip() and not checker.check_output(want, output, FLAGS):
                return f"{command!r} printed\n{output}\nwhere the docs show\n{want}"
        return None


SYBIL = Sybil(
    parsers=[
        SkipParser(),
        PythonCodeBlockParser(doctest_optionflags=FLAGS),
        CommandBlockParser(),
        ConsoleBlockParser(),
    ],
)


def documents() -> list[Path]:
    """README.md and every page under docs/, in a fixed order."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def prepare(folder: Path) -> None:
    """Fill ``folder`` with what the examples read."""
    for f in (ROOT / "docs" / "data").iterdir():
        if f.suffix != ".md":
            shutil.copy(f, folder / f.name)
    shutil.copy(ROOT / "src" / "anonlab" / "datasets" / "adult.csv.gz", folder / "adult.csv.gz")
    (folder / "src").symlink_to(ROOT / "src")
    (folder / "examples").symlink_to(ROOT / "examples")
    if ARX_ADULT.is_file():
        shutil.copy(ARX_ADULT, folder / "adult.csv")
    import duckdb

    con = duckdb.connect()
    data = str(folder / "data.csv")
    con.execute(
        f"COPY (SELECT * FROM read_csv('{data}', all_varchar=true)) "
        f"TO '{folder / 'big.parquet'}' (FORMAT parquet)"
    )
    con.execute(
        f"COPY (SELECT * FROM read_csv('{data}', all_varchar=true)) "
        f"TO '{folder / 'big.csv.gz'}' (FORMAT csv, HEADER, COMPRESSION gzip)"
    )
    con.close()


def evaluate(path: Path) -> tuple[int, list[str], list[str]]:
    """Run every example of ``path`` in order: (examples run, skip reasons, failures)."""
    from unittest import SkipTest

    from sybil.example import NotEvaluated

    from anonlab.algorithms import ALGORITHMS
    from anonlab.metrics import METRICS
    from anonlab.models import MODELS

    registries: list[Any] = [ALGORITHMS, MODELS, METRICS]
    before = [set(r.names()) for r in registries]
    document = SYBIL.parse(path)
    document.namespace["arx_adult"] = ARX_ADULT.is_file()
    ran, skipped, failures = 0, [], []
    try:
        for example in document.examples():
            where = f"{path.relative_to(ROOT)}, line {example.line}"
            try:
                example.evaluate()
            except SkipTest as e:
                skipped.append(f"{where}: {e}")
                continue
            except NotEvaluated:
                continue
            except Exception as e:  # noqa: BLE001 - every failure is reported together
                failures.append(f"{where}: {type(e).__name__}: {e}")
                continue
            if example.region.evaluator is not None and not _is_directive(example):
                ran += 1
    finally:
        for registry, names in zip(registries, before):
            for name in set(registry.names()) - names:  # a family a page registers
                del registry[name]
    return ran, skipped, failures


def _is_directive(example: Example) -> bool:
    return isinstance(example.parsed, tuple)  # a skip directive's (action, reason)
