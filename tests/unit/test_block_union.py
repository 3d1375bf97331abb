"""Which privacy models survive a union of verified blocks (a release made block by block
out of core), as each model declares it: the same decisions for every model, pinned."""

from __future__ import annotations

import pytest

from anonlab.data.hierarchy import Hierarchy
from anonlab.data.table import EncodedTable
from anonlab.exceptions import ParameterError
from anonlab.models import MODELS, build_model
from anonlab.release.partitioned import check_union

TREE = Hierarchy([["a", "*"], ["b", "*"], ["c", "*"]], attribute="s")
POPULATION = EncodedTable.from_columns({"s": ["a", "b", "c"]})

#: (model, parameters) -> the words of the refusal, or None where the union keeps it
DECISIONS: list[tuple[str, dict[str, object], str | None]] = [
    ("k_anonymity", {"k": 3}, None),
    ("distinct_l_diversity", {"attribute": "s", "l": 2}, None),
    ("entropy_l_diversity", {"attribute": "s", "l": 2}, None),
    ("recursive_cl_diversity", {"attribute": "s", "c": 2, "l": 2}, None),
    ("alpha_k_anonymity", {"attribute": "s", "alpha": 0.5, "k": 2}, None),
    ("alpha_k_anonymity", {"attribute": ["s", "u"], "alpha": 0.5, "k": 2}, None),
    (
        "alpha_k_anonymity",
        {"attribute": "s", "alpha": 0.5, "k": 2, "values": "x", "refined": False},
        None,
    ),
    ("personalized_leakage", {"attribute": "s", "hierarchy": TREE}, None),
    (
        "alpha_k_anonymity",
        {"attribute": "s", "alpha": 0.5, "k": 2, "values": "x"},
        "set 'refined: false'",
    ),
    ("equal_t_closeness", {"attribute": "s", "t": 0.2}, "whole table's distribution"),
    ("ordered_t_closeness", {"attribute": "s", "t": 0.2}, "whole table's distribution"),
    (
        "hierarchical_t_closeness",
        {"attribute": "s", "t": 0.2, "hierarchy": TREE},
        "whole table's distribution",
    ),
    ("basic_beta_likeness", {"attribute": "s", "beta": 1.0}, "whole table's distribution"),
    ("enhanced_beta_likeness", {"attribute": "s", "beta": 1.0}, "whole table's distribution"),
    ("delta_disclosure", {"attribute": "s", "delta": 1.0}, "whole table's distribution"),
    ("k_map", {"k": 10, "sampling_fraction": 0.1}, None),
    ("k_map", {"k": 10, "population": POPULATION}, "counted in the whole table"),
    (
        "delta_presence",
        {"dmin": 0.0, "dmax": 0.5, "population": POPULATION},
        "counted in the whole table",
    ),
    ("average_risk", {"threshold": 0.1}, "judges the whole table"),
    ("sample_uniqueness", {"threshold": 0.1}, "judges the whole table"),
    (
        "population_uniqueness",
        {"threshold": 0.1, "sampling_fraction": 0.1},
        "judges the whole table",
    ),
]


def test_every_registered_model_is_pinned():
    assert {name for name, _, _ in DECISIONS} == set(MODELS)


@pytest.mark.parametrize(("name", "params", "words"), DECISIONS)
def test_the_union_check_decides_as_the_model_declares(name, params, words):
    model = build_model(name, params)
    if words is None:
        check_union([model], "test")  # no error
        assert isinstance(model.union_safe, str) and model.union_safe  # with its reason
        return
    assert model.union_safe is None
    with pytest.raises(ParameterError, match=words) as info:
        check_union([model], "test")
    message = str(info.value)
    assert message.startswith(f"Model {name!r} cannot be met partition by partition (test")
    assert "Nothing was written." in message and "\n" not in message
