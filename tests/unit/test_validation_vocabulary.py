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
