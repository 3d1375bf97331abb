"""Docstrings state contracts with examples that run (issue 52, item 6).

* Every public class and function (the names in the ``__all__`` of the packages users import,
  the registered algorithms and the methods of :data:`API_METHODS`) has a numpydoc
  ``Examples`` section.
* Every example in the package runs: the doctests of all of anonlab's modules run here, each
  module as its own test; a module whose optional dependency is missing is skipped.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil
from types import ModuleType

import pytest

import anonlab
from anonlab.release.result import SearchStats

#: The packages whose ``__all__`` is the public API.
PUBLIC_PACKAGES = (
    "anonlab",
    "anonlab.api",
    "anonlab.data",
    "anonlab.datasets",
    "anonlab.io",
    "anonlab.diagnosis",
    "anonlab.models",
    "anonlab.metrics",
    "anonlab.algorithms",
    "anonlab.release",
    "anonlab.report",
    "anonlab.testing",
)

#: Public methods that are part of the API users call (building tables and hierarchies, roles,
#: the model and metric protocols a new model or metric implements, the JSON forms of results).
#: Other public methods serve the searches (bounds, rules, kernels) and are documented as such.
API_METHODS = {
    "anonlab.data.table.EncodedTable": (
        "from_columns",
        "from_rows",
        "column",
        "select",
        "take",
        "drop_nulls",
        "null_mask",
        "with_schema",
        "with_columns",
        "to_dict",
        "candidate_attributes",
    ),
    "anonlab.data.table.EncodedColumn": ("from_values", "labels", "take"),
    "anonlab.data.hierarchy.Hierarchy": (
        "generalize",
        "level_labels",
        "named",
        "rows",
        "leaf_index",
        "check_covers",
    ),
    "anonlab.data.schema.Schema": ("from_lists", "role", "columns_with"),
    "anonlab.data.schema.Role": ("parse",),
    "anonlab.models.base.PrivacyModel": ("class_ok", "holds", "value", "check_feasible", "params"),
    "anonlab.models.per_record.RecordVerdict": ("report",),
    "anonlab.metrics.base.Metric": ("loss",),
    "anonlab.release.problem.Problem": ("with_models",),
    "anonlab.release.result.AnonymizationResult": ("to_dict",),
    "anonlab.release.result.SearchStats": ("to_dict", "rows"),
    "anonlab.release.verify.Verification": ("to_dict",),
    "anonlab.release.audit.ReleaseAudit": ("to_dict",),
    "anonlab.diagnosis.risk.RiskSummary": ("to_dict",),
    "anonlab.diagnosis.profile.TableProfile": ("to_dict",),
    "anonlab.diagnosis.questions.SubsetAnswer": ("to_dict",),
    "anonlab.diagnosis.subsets.SubsetEvaluator": ("sizes",),
}

#: Modules not imported for their doctests: running them has effects (``python -m anonlab``).
NOT_IMPORTED = frozenset({"anonlab.__main__"})

#: Doctests not run twice: ``anonlab.report(...)`` carries the docstring of
#: :func:`anonlab.api.report`, whose examples run in ``anonlab.api``.
COPIED_DOCSTRINGS = frozenset({"anonlab._CallableReport.__call__"})

#: Optional dependencies: a module that needs a missing one is skipped, not failed.
OPTIONAL = frozenset({"duckdb", "pyspark", "typer", "rich", "starlette", "uvicorn", "polars"})

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def _public_objects() -> dict[str, object]:
    """Every public class and function by its defining module and name."""
    found: dict[str, object] = {}
    for package in PUBLIC_PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                found.setdefault(f"{obj.__module__}.{obj.__qualname__}", obj)
    return found


def _algorithms() -> dict[str, object]:
    """Every registered anonymization algorithm (the classes a job names) and the type of the
    search statistics it reports (``result.search``)."""
    from anonlab.algorithms import ALGORITHMS

    found: dict[str, object] = {}
    for cls in ALGORITHMS.values():
        found[f"{cls.__module__}.{cls.__qualname__}"] = cls
        family = importlib.import_module(cls.__module__.rsplit(".", 1)[0])
        for name in family.__all__:
            obj = getattr(family, name)
            if inspect.isclass(obj) and issubclass(obj, SearchStats):
                found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    return found


def _api_methods(objects: dict[str, object]) -> dict[str, object]:
    """The methods of :data:`API_METHODS` by qualified name."""
    found: dict[str, object] = {}
    for cls_name, methods in API_METHODS.items():
        cls = objects[cls_name]  # a class named here stays public
        for method in methods:
            found[f"{cls_name}.{method}"] = getattr(cls, method)
    return found


def _has_examples(obj: object) -> bool:
    doc = inspect.getdoc(obj) or ""
    return "\nExamples\n--------\n" in f"\n{doc}" and ">>>" in doc.split("Examples", 1)[1]


def test_every_public_name_has_examples() -> None:
    objects = _public_objects()
    assert len(objects) > 100  # the packages' __all__ were read
    objects |= _api_methods(objects) | _algorithms()
    missing = sorted(name for name, obj in objects.items() if not _has_examples(obj))
    assert not missing, (
        f"{len(missing)} public names have no numpydoc Examples section: " + ", ".join(missing)
    )


def _module_names() -> list[str]:
    names = ["anonlab"]
    for info in pkgutil.walk_packages(anonlab.__path__, "anonlab."):
        if info.name not in NOT_IMPORTED:
            names.append(info.name)
    return sorted(names)


def _import(name: str) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        if exc.name and exc.name.split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs {exc.name}, which is not installed")
        raise


@pytest.mark.parametrize("name", _module_names())
def test_doctests(name: str) -> None:
    module = _import(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    tests = [t for t in finder.find(module, name) if t.examples and t.name not in COPIED_DOCSTRINGS]
    # only the module's own objects (a re-exported function runs in its defining module)
    tests = [t for t in tests if t.filename == getattr(module, "__file__", t.filename)]
    report: list[str] = []
    for test in tests:
        runner.run(test, out=report.append)
    if runner.failures:
        pytest.fail(f"{runner.failures} doctest example(s) failed in {name}:\n" + "".join(report))
