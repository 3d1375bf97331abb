"""The import rules of docs/concepts/architecture.md, enforced with import-linter; docstrings present."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import anonlab

ROOT = Path(__file__).resolve().parents[1]


def test_import_linter_contracts_hold():
    exe = shutil.which("lint-imports") or str(Path(sys.executable).with_name("lint-imports"))
    if not Path(exe).exists():
        pytest.skip("import-linter is not installed")
    res = subprocess.run([exe], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_import_anonlab_stays_light():
    code = (
        "import sys, anonlab; heavy = {'duckdb', 'pandas', 'polars', 'typer', 'rich', 'pyarrow',"
        " 'matplotlib', 'starlette', 'uvicorn'};"
        "print(sorted(heavy & set(sys.modules)))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_every_public_function_and_class_has_a_docstring():
    missing = []
    for info in pkgutil.walk_packages(anonlab.__path__, "anonlab."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and not inspect.getdoc(obj):
                missing.append(f"{info.name}.{name}")
    assert not missing, missing


def _tool(name: str) -> str:
    exe = Path(sys.executable).with_name(name)
    if not exe.exists():
        pytest.skip(f"{name} is not installed")
    return str(exe)


@pytest.mark.slow
def test_mypy_strict_on_the_package():
    res = subprocess.run([_tool("mypy")], cwd=ROOT, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr


def test_ruff_lint():
    res = subprocess.run(
        [_tool("ruff"), "check", "src", "tests"], cwd=ROOT, capture_output=True, text=True
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_property_tests_filter_with_assume_instead_of_returning_early():
    """A Hypothesis test that returns early passes an example it did not check; it says
    ``assume(...)`` instead (issue 28), so that Hypothesis counts and replaces the example."""
    import ast

    early = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for fn in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(fn, ast.FunctionDef) or not any(
                isinstance(d, ast.Call) and getattr(d.func, "id", None) == "given"
                for d in fn.decorator_list
            ):
                continue
            nested = {
                id(n)
                for d in ast.walk(fn)
                if d is not fn and isinstance(d, (ast.FunctionDef, ast.Lambda))
                for n in ast.walk(d)
            }
            early += [
                f"{path.relative_to(ROOT)}:{n.lineno} {fn.name}"
                for n in ast.walk(fn)
                if isinstance(n, ast.Return) and id(n) not in nested
            ]
    assert not early, "use hypothesis.assume instead of return in: " + ", ".join(early)


def test_the_cli_starts_without_its_heavy_dependencies():
    """``anonlab --help`` imports no numpy, scipy, pandas, pyarrow, DuckDB, Spark, matplotlib,
    scikit-learn or numba, nor the API (loaded by the first command that runs) and the
    algorithms whose names the commands' help lists: each is imported where a command first
    needs it (issue 56, item 4; the time it saves is measured in benchmarks/README.md)."""
    import subprocess
    import sys

    heavy = "numpy scipy pandas pyarrow duckdb pyspark matplotlib sklearn numba starlette".split()
    code = (
        "import sys, anonlab.cli.app; "
        f"print(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_import_anonlab_is_light_and_its_names_come_on_first_use():
    """``import anonlab`` loads no numpy (PEP 562 names); ``anonlab.risk`` stays the API's
    function once the subpackage of that name is imported; ``anonlab.report`` is callable."""
    import subprocess
    import sys

    code = (
        "import sys, anonlab; print('numpy' in sys.modules); "
        "import anonlab.risk.population; print(anonlab.risk.__module__); "
        "print(anonlab.load_adult().n_rows, callable(anonlab.report), "
        "anonlab.report.Section.__name__, 'diagnose' in dir(anonlab))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["False", "anonlab.api", "30162", "True", "Section", "True"]
