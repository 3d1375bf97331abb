"""Run the examples of README.md and docs/: sybil parses the Markdown, these evaluate it.

* ```python blocks run (one namespace per document, block after block); a block of ``>>>``
  lines is a doctest whose shown output is compared (``...`` and whitespace as doctest allows);
* ```bash blocks: every line that starts with ``anonlab `` runs through the command line
  (in-process, Typer's runner) and must succeed; other lines (``pip install``, ``./scripts``)
  are not run;
* ```json blocks are valid JSON (``{...}`` and ``"..."`` for what is left out); one that follows
  a ```bash block ending with a ``--json`` command is what that command printed: every key
  and value shown, numbers to the digits shown;
* ```yaml blocks are jobs, or parts of one: their keys, models, metric and algorithm
  parameters are validated as a job file's are;
* ```console blocks: each ``$ anonlab ...`` line runs, and the lines under it are the output
  it must print (whitespace normalized, ``...`` matches anything); it must succeed, or,
  where the output shown holds ``error: ``, exit with code 2 (bad input);
* ```toml blocks are valid TOML;
* ``<!-- skip: next "why" -->`` before a block skips it, saying why.

Each document runs in a fresh folder holding the docs' small files (``docs/data``), the
bundled Adult as ``adult.csv.gz``, ``big.parquet`` and ``big.csv.gz`` made from ``data.csv``,
and links to the repository's ``src`` and ``examples`` (so ``src/anonlab/datasets/adult.csv.gz``
and ``examples/adult_k5.yaml`` read as in a checkout; nothing is written there).
"""

from __future__ import annotations

import doctest
import json
import os
import shlex
import shutil
import sys
from pathlib import Path
from typing import Any

from sybil import Example, Sybil
from sybil.parsers.markdown import CodeBlockParser, PythonCodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("ANONLAB_SHARED", ROOT.parent / "shared"))
ARX_ADULT = SHARED / "datasets" / "arx" / "adult.csv"
FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
#: The terminal width of the command lines' output the docs show.
WIDTH = 100


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


def run_cli(command: str, *, stderr: bool = True) -> tuple[int, str]:
    """Run one ``anonlab ...`` line in-process: its exit code and what it printed (stdout, and
    stderr unless ``stderr`` is false)."""
    from typer.testing import CliRunner

    from anonlab.cli import app

    args = shlex.split(command, comments=True)
    assert args[0] == "anonlab", command
    consoles = [sys.modules["anonlab.cli.app"].out, sys.modules["anonlab.cli.app"].err]
    widths = [c._width for c in consoles]  # a width fixed when the module was imported
    for c in consoles:
        c.width = WIDTH  # the width the docs show tables at, whatever the test run's
    try:
        res = CliRunner().invoke(app, args[1:], env={"COLUMNS": str(WIDTH), "NO_COLOR": "1"})
    finally:
        for c, w in zip(consoles, widths):
            c._width = w
    if res.exception is not None and not isinstance(res.exception, SystemExit):
        raise res.exception
    output = res.stdout
    if stderr and res.stderr_bytes is not None:
        output += res.stderr
    return res.exit_code, output


class CommandBlockParser(CodeBlockParser):
    """```bash blocks: each ``anonlab`` line must succeed."""

    language = "bash"

    def evaluate(self, example: Example) -> str | None:
        for line in _logical_lines(example.parsed):
            if not line.strip().startswith("anonlab "):
                continue
            code, output = run_cli(line.strip(), stderr=False)
            if code != 0:
                return f"{line.strip()!r} exited with {code}:\n{output}"
            if "--json" in shlex.split(line, comments=True):
                example.namespace[JSON_OUTPUT] = output
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
            want = "\n".join(shown).strip() + "\n"
            expected = 2 if "error: " in want else 0  # the docs show an error: exit code 2
            if code != expected:
                return f"{command!r} exited with {code}, not {expected}:\n{output}"
            if want.strip() and not checker.check_output(want, output, FLAGS):
                return f"{command!r} printed\n{output}\nwhere the docs show\n{want}"
        return None


#: The namespace key of the last ``--json`` output of a document's ```bash block.
JSON_OUTPUT = "__anonlab_json_output__"


class _Shown(float):
    """A number as a JSON block writes it, with the digits it shows."""

    digits: int

    def __new__(cls, text: str) -> _Shown:
        value = super().__new__(cls, text)
        mantissa = text.lower().split("e")[0]
        value.digits = len(mantissa.split(".")[1]) if "." in mantissa else 0
        if "e" in text.lower():
            value.digits = 12  # a number in scientific notation is compared closely
        return value


def _shown_json(text: str) -> Any:
    """A JSON block as the docs write it: ``{...}`` and ``"..."`` stand for what is left out."""
    return json.loads(text.replace("{...}", '"..."'), parse_float=_Shown)


def json_matches(shown: Any, actual: Any, where: str = "") -> str | None:
    """Whether ``actual`` holds what ``shown`` shows: every key shown (but ``"..."``) with a
    matching value, a list's elements up to a ``"..."`` element, a number to the digits shown.
    The first difference, in words, or None."""
    if shown == "...":
        return None
    if isinstance(shown, dict):
        if not isinstance(actual, dict):
            return f"{where or 'the output'} is {actual!r}, not an object"
        for key, value in shown.items():
            if key == "...":
                continue
            if key not in actual:
                return f"{where}.{key} is not in the output (it has {sorted(actual)})"
            diff = json_matches(value, actual[key], f"{where}.{key}")
            if diff:
                return diff
        return None
    if isinstance(shown, list):
        if not isinstance(actual, list):
            return f"{where} is {actual!r}, not a list"
        open_ended = bool(shown) and shown[-1] == "..."
        items = shown[:-1] if open_ended else shown
        if len(actual) < len(items) or (not open_ended and len(actual) != len(items)):
            return f"{where} has {len(actual)} elements, the docs show {len(shown)}"
        for i, value in enumerate(items):
            diff = json_matches(value, actual[i], f"{where}[{i}]")
            if diff:
                return diff
        return None
    if isinstance(shown, _Shown) and isinstance(actual, (int, float)):
        if abs(actual - shown) <= 0.5 * 10**-shown.digits + 1e-12:
            return None
        return f"{where} is {actual!r}, the docs show {shown!r}"
    if (
        shown != actual
        or type(shown) is not type(actual)
        and not (isinstance(shown, (int, float)) and isinstance(actual, (int, float)))
    ):
        return f"{where} is {actual!r}, the docs show {shown!r}"
    return None


class JsonBlockParser(CodeBlockParser):
    """```json blocks: valid JSON; right after a ``--json`` command, what it printed."""

    language = "json"

    def evaluate(self, example: Example) -> str | None:
        shown = _shown_json(example.parsed)
        output = example.namespace.pop(JSON_OUTPUT, None)
        if output is None:
            return None  # the shape of an answer, not a command's output
        return json_matches(shown, json.loads(output))


class JobBlockParser(CodeBlockParser):
    """```yaml blocks are job files (or parts of one): every key, model, metric and algorithm
    parameter they name is one anonlab accepts, with a value it accepts."""

    language = "yaml"

    def evaluate(self, example: Example) -> str | None:
        import yaml

        from anonlab.algorithms.base import build_anonymizer
        from anonlab.io.job import parse_job
        from anonlab.metrics import build_metric
        from anonlab.models import build_model, model_parameters

        data = yaml.safe_load(example.parsed)
        if not isinstance(data, dict):
            return f"a job is a mapping, not {data!r}"
        qis = data.get("quasi_identifiers")
        if isinstance(qis, dict):  # a part of a job: ``...`` for the attributes left out
            data["quasi_identifiers"] = {k: v for k, v in qis.items() if k != "..."}
        job = {"quasi_identifiers": {"age": {}}, "models": [{"k_anonymity": {"k": 2}}], **data}
        spec = parse_job(job, base_dir=Path.cwd())
        for name, params in spec.models:
            required, optional = model_parameters(name)
            unknown = sorted(set(params) - set(required) - set(optional))
            missing = sorted(set(required) - set(params) - {"hierarchy", "population"})
            if unknown or missing:
                return f"model {name!r}: unknown {unknown}, missing {missing}"
            if "hierarchy" not in params and spec.population is None:
                build_model(name, params, sensitive=spec.sensitive)  # the values too
        build_metric(spec.metric[0], **spec.metric[1])
        build_anonymizer(spec.algorithm, spec.algorithm_params)._validate_params()
        return None


class TomlBlockParser(CodeBlockParser):
    """```toml blocks (a package's ``pyproject.toml`` entry points) are valid TOML."""

    language = "toml"

    def evaluate(self, example: Example) -> str | None:
        import tomllib

        tomllib.loads(example.parsed)
        return None


SYBIL = Sybil(
    parsers=[
        SkipParser(),
        PythonCodeBlockParser(doctest_optionflags=FLAGS),
        CommandBlockParser(),
        ConsoleBlockParser(),
        JsonBlockParser(),
        JobBlockParser(),
        TomlBlockParser(),
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
