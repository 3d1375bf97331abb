"""The one registry helper: names, the did-you-mean error, entry points of installed packages."""

from __future__ import annotations

from importlib.metadata import EntryPoint

import pytest

import anonlab._registry as registry_module
from anonlab._registry import Registry
from anonlab.algorithms import ALGORITHMS, build_anonymizer
from anonlab.engines import ENGINES
from anonlab.exceptions import ParameterError
from anonlab.metrics import METRICS
from anonlab.models import MODELS, KAnonymity, build_model
from anonlab.release import VERIFIERS


def test_every_kind_is_one_registry():
    for registry in (ALGORITHMS, MODELS, METRICS, ENGINES, VERIFIERS):
        assert isinstance(registry, Registry)
    assert list(ENGINES) == ["numpy", "duckdb", "spark"]
    assert set(VERIFIERS) == {"blanks", "classes", "graph", "centroids", "regions"}
    assert list(ALGORITHMS) == sorted(ALGORITHMS)


@pytest.mark.parametrize(
    ("registry", "message"),
    [
        (ALGORITHMS, "Unknown algorithm 'optimall'. Did you mean 'optimal'? Valid algorithms: "),
        (MODELS, "Unknown privacy model 'optimall'. Valid models: alpha_k_anonymity, "),
        (METRICS, "Unknown metric 'optimall'. Valid metrics: entropy, loss, "),
        (ENGINES, "Unknown engine 'optimall'. Valid engines: numpy, duckdb, spark."),
    ],
)
def test_one_wording_for_an_unknown_name(registry, message):
    with pytest.raises(ParameterError) as info:
        registry.lookup("optimall")
    assert str(info.value).startswith(message)


def test_a_name_is_never_taken_twice():
    r = Registry[int]("colour")
    r.register("red", 1)
    r.register("red", 1)  # the same entry again: nothing happens
    with pytest.raises(ValueError, match="'red' is taken"):
        r.register("red", 2)
    assert r.lookup("red") == 1


def _points(monkeypatch, *points):
    def entry_points(*, group):
        return [p for p in points if p.group == group]

    monkeypatch.setattr(registry_module, "entry_points", entry_points)


def test_an_installed_package_adds_a_model_by_entry_point(monkeypatch):
    _points(
        monkeypatch,
        EntryPoint("k_anonymity_again", "anonlab.models:KAnonymity", "anonlab.models"),
        EntryPoint("elsewhere", "anonlab.models:KAnonymity", "anonlab.metrics"),
    )
    models = Registry("privacy model", plural="models", group="anonlab.models", sort=True)
    models.register("k_anonymity", KAnonymity)
    assert models.names() == ["k_anonymity", "k_anonymity_again"]
    assert models.lookup("k_anonymity_again") is KAnonymity


def test_an_entry_point_never_replaces_a_name_and_a_broken_one_is_skipped(monkeypatch):
    _points(
        monkeypatch,
        EntryPoint("k_anonymity", "anonlab.metrics:Height", "anonlab.models"),
        EntryPoint("broken", "anonlab_no_such_package:Model", "anonlab.models"),
    )
    models = Registry("privacy model", plural="models", group="anonlab.models")
    models.register("k_anonymity", KAnonymity)
    with pytest.warns(RuntimeWarning) as caught:
        assert models.names() == ["k_anonymity"]
    texts = " ".join(str(w.message) for w in caught)
    assert "anonlab already has a privacy model of that name" in texts
    assert "cannot be loaded (ModuleNotFoundError" in texts
    assert models["k_anonymity"] is KAnonymity


def test_the_job_builders_read_the_registries(monkeypatch):
    monkeypatch.setitem(MODELS._entries, "k_anonymity_plugin", KAnonymity)
    assert build_model("k_anonymity_plugin", {"k": 3}).k == 3
    assert build_anonymizer("optimal").name == "optimal"


# ------------------------------------------------------------- lists made from the registry


@pytest.fixture
def plugin_family():
    """A family an installed package would add: it places rows, block by block."""
    from typing import ClassVar

    from anonlab.algorithms.base import Anonymizer, register

    @register
    class Mondrian(Anonymizer):
        name: ClassVar[str] = "mondrian_plugin"
        family: ClassVar[str] = "multidimensional partitioning"

        def __init__(self) -> None:
            pass

        def accepts_partitions(self) -> bool:
            return True

        def _fit(self, problem, progress):  # pragma: no cover - never run here
            raise NotImplementedError

    yield Mondrian
    del ALGORITHMS["mondrian_plugin"]


def test_capability_lists_are_made_from_the_registry(plugin_family):
    from anonlab.algorithms import base

    assert base.FREQUENCY_SET_ALGORITHMS == (
        "The full-domain searches (optimal, incognito, and privacyfrost2 without "
        "partial_domain and presampling)"
    )
    assert base.PARTITION_ALGORITHMS == (
        "The row-placing algorithms (progressive, top_down, local_suppression, "
        "microaggregation, mondrian, wong_nh, murakami_uno, personalized, mondrian_plugin)"
    )
    assert base.algorithm_families().endswith("; mondrian_plugin (multidimensional partitioning)")


def test_help_lists_are_made_from_the_registry(plugin_family):
    from anonlab import api

    lists = api.help_lists()
    assert lists["partition_algorithms"].endswith("personalized, mondrian_plugin")
    assert lists["algorithms"].startswith(
        "optimal, incognito or privacyfrost2 (full-domain generalization); progressive or "
        "top_down ((alpha,k) local recoding); local_suppression (local suppression, cells "
        "blanked under wildcard matching); microaggregation (MDAV: groups of k records "
        "released as their centroid); mondrian (Mondrian multidimensional "
        "partitioning); wong_nh or murakami_uno (non-homogeneous "
        "generalization); personalized (each person's own limit, with the personalized section)"
    )
    assert api.engine_names() == list(ENGINES)


def test_the_command_line_help_shows_the_registry():
    from typer.testing import CliRunner

    from anonlab import api
    from anonlab.cli import app

    def shown(*args):
        output = CliRunner().invoke(app, [*args, "--help"], env={"COLUMNS": "200"}).output
        return " ".join(output.replace("\u2502", " ").split())  # (the boxes' side lines)

    text = shown("anonymize")
    for name in ALGORITHMS:
        assert name in text
    assert api.help_lists()["partition_algorithms"] in text
    text = shown("diagnose")
    assert "numpy|duckdb|spark" in text


def test_the_user_guide_names_every_registered_entry():
    """The hand-written guide (docs/guide), not only the generated job-file reference."""
    from pathlib import Path

    guide = Path(__file__).parents[2] / "docs" / "guide"
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(guide.rglob("*.md")))
    for registry in (ALGORITHMS, MODELS, METRICS, ENGINES):
        missing = [name for name in registry if name not in text]
        assert not missing, f"the user guide names no {registry.kind} {missing}"
