"""One validation vocabulary: declared constraints, one wording, ParameterError a TypeError."""

from __future__ import annotations

import pytest

from anonlab.data.builders import build_hierarchy
from anonlab.exceptions import InputError, ParameterError


def test_a_parameter_error_is_a_type_error_and_a_value_error():
    assert issubclass(ParameterError, TypeError)
    assert issubclass(ParameterError, ValueError)
    assert issubclass(ParameterError, InputError)


@pytest.mark.parametrize(
    ("kind", "options", "message"),
    [
        ("mask", {"width": 0}, "The 'width' parameter must be an int >= 1. Got 0 instead."),
        ("intervals", {"widths": [0]}, "Interval widths must be positive numbers. Got [0]."),
    ],
)
def test_a_builder_keeps_its_own_message(kind, options, message):
    # the builder's ParameterError is a TypeError too; it is not wrapped as "Bad options"
    with pytest.raises(ParameterError) as info:
        build_hierarchy(kind, ["10", "20"], options, attribute="a")
    assert str(info.value) == message


JOB = {"quasi_identifiers": {"age": {}}, "models": ["k_anonymity"]}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"suppression": 1.5},
            "The 'suppression' parameter must be a number in [0, 1]. Got 1.5 instead.",
        ),
        (
            {"quasi_identifiers": {"age": {"max_level": 1.5}}},
            "The 'max_level' of quasi-identifier 'age' must be an int. Got 1.5 instead.",
        ),
        (
            {"quasi_identifiers": {"age": {"weight": -1}}},
            "The 'weight' of quasi-identifier 'age' must be a number >= 0. Got -1 instead.",
        ),
        (  # a weight that is not a number at all (NaN) was taken before the declared rule
            {"quasi_identifiers": {"age": {"weight": float("nan")}}},
            "The 'weight' of quasi-identifier 'age' must be a number >= 0. Got nan instead.",
        ),
        (
            {"personalized": {"default_limit": 0}},
            "The 'default_limit' parameter of 'personalized' (a leakage limit) must be a number "
            "in (0, 1]. Got 0 instead.",
        ),
    ],
)
def test_the_jobs_own_keys_speak_the_one_wording(change, message):
    from anonlab.io.job import parse_job

    with pytest.raises(ParameterError) as info:
        parse_job({**JOB, **change})
    assert str(info.value) == message


def test_models_declare_their_parameters():
    from anonlab.models import MODELS, model_parameters

    for name, cls in MODELS.items():
        required, optional = model_parameters(name)
        declared = set(cls._parameter_constraints)
        assert declared <= set(required + optional), name
        assert declared, name


def _patients():
    import pandas as pd

    ages = [34, 35, 36, 37, 44, 45, 46, 47, 52, 53, 58, 59]
    return pd.DataFrame(
        {
            "age": [str(a) for a in ages],
            "sex": ["F", "F", "M", "M"] * 3,
            "disease": ["flu", "hiv", "cold"] * 4,
        }
    )


class _Refused(dict):
    def __getitem__(self, key):
        raise AssertionError("the search validated the job's parameters again")


def test_privacyfrost2_is_validated_once_per_job(monkeypatch):
    from anonlab.algorithms.privacyfrost2 import PrivacyFrost2, search
    from anonlab.api import anonymize

    calls = []
    original = PrivacyFrost2._validate_params

    def counted(self):
        calls.append(1)
        original(self)

    def refuse(*args, **kwargs):
        raise AssertionError("the search validated the job's parameters again")

    monkeypatch.setattr(PrivacyFrost2, "_validate_params", counted)
    monkeypatch.setattr(search, "per_attribute", refuse)
    monkeypatch.setattr(search, "_ARGUMENTS", _Refused())
    job = {
        "quasi_identifiers": {"age": {"intervals": {"widths": [5, 10, 20]}}, "sex": {}},
        "sensitive": ["disease"],
        "models": [{"k_anonymity": {"k": 3}}],
        "algorithm": {"name": "privacyfrost2", "p": 1},
    }
    result = anonymize(_patients(), job)
    assert calls == [1]
    assert result.algorithm == "privacyfrost2"


def test_fit_checks_again_when_the_parameters_changed_after_check():
    from anonlab.algorithms import build_anonymizer
    from anonlab.api import build_problem, load_job

    job = {
        "quasi_identifiers": {"age": {}, "sex": {}},
        "models": [{"k_anonymity": {"k": 2}}],
    }
    problem = build_problem(_patients(), load_job(job))
    algorithm = build_anonymizer("privacyfrost2")
    algorithm.check(problem)
    algorithm.p = -1
    with pytest.raises(ParameterError, match="'p' parameter of privacyfrost2 must be an int >= 0"):
        algorithm.fit(problem)
