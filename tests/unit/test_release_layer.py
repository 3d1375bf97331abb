"""The release layer and the registry: a new family is one class; bad input is refused."""

from __future__ import annotations

import numpy as np
import pytest

import anonlab
from anonlab.algorithms import ALGORITHMS
from anonlab.algorithms.base import Anonymizer, Param, build_anonymizer, register
from anonlab.exceptions import ParameterError, PrivacyCheckError
from anonlab.metrics import build_metric
from anonlab.models import build_model
from anonlab.release import FullDomain, Levels, Problem, SearchStats, verify
from anonlab.testing import check_anonymizer, conformance_table


@pytest.fixture
def everything():
    """The README's example family, registered for the test."""

    @register
    class Everything(Anonymizer):
        """Generalize every quasi-identifier to its highest allowed level."""

        name = "everything"
        _parameter_constraints = {"spare": Param(int, low=0)}

        def __init__(self, *, spare: int = 0) -> None:
            self.spare = spare

        def _fit(self, problem, progress):
            self.recoding_ = FullDomain(dict(zip(problem.quasi_identifiers, problem.max_levels)))
            self.search_ = SearchStats(elapsed_s=0.0, evaluated=1)

    yield Everything
    del ALGORITHMS["everything"]


def test_a_new_family_is_one_registered_class(everything):
    check_anonymizer("everything")
    res = anonlab.anonymize(
        conformance_table(),
        {
            "quasi_identifiers": ["zip", "sex"],
            "identifiers": ["age"],  # 30 % of the records unique on it
            "models": [{"k_anonymity": {"k": 2}}],
            "algorithm": {"name": "everything", "spare": 1},
        },
    )
    assert res.algorithm == "everything" and res.parameters == {"spare": 1}
    assert set(res.columns["zip"]) == {"*"}


def test_unknown_algorithms_and_parameters_name_the_valid_ones():
    with pytest.raises(
        ParameterError, match=r"Unknown algorithm 'optimum'.*Did you mean 'optimal'"
    ):
        build_anonymizer("optimum")
    with pytest.raises(ParameterError, match=r"Valid parameters: score, d, p"):
        build_anonymizer("privacyfrost2", {"scroe": "log"})
    with pytest.raises(ParameterError, match=r"Valid parameters: none"):
        build_anonymizer("optimal", {"depth": 3})


def _problem(k=3, suppressed=0):
    return Problem(
        conformance_table(),
        ("age", "sex"),
        {
            "age": anonlab.interval_hierarchy(
                conformance_table()["age"].categories, widths=[10, 20], attribute="age"
            ),
            "sex": anonlab.taxonomy_hierarchy({"F": ["*"], "M": ["*"]}, attribute="sex"),
        },
        (build_model("k_anonymity", {"k": k}),),
        build_metric("height"),
        max_suppressed=suppressed,
    )


def test_verify_refuses_an_unsafe_recoding():
    p = _problem(k=3)
    with pytest.raises(PrivacyCheckError, match="more than the suppression limit of 0"):
        verify(p, FullDomain({"age": 0, "sex": 0}))
    release = verify(p, FullDomain({"age": 3, "sex": 1}))
    assert release.verification.checks == {"k_anonymity": True}


def test_levels_outside_the_bounds_are_refused():
    p = _problem()
    levels = np.array([[9, 0]])
    with pytest.raises(ParameterError, match="'age' is outside its bounds"):
        verify(p, Levels(levels, np.zeros(p.n_rows, dtype=np.int64)))
    # the groups in use are checked, each attribute by name; a vector of the wrong length too
    group = np.arange(p.n_rows) % 2
    with pytest.raises(ParameterError, match="'sex' is outside its bounds"):
        verify(p, Levels(np.array([[0, 0], [1, -1]]), group))
    with pytest.raises(ParameterError, match="have 3 entries; the problem has 2"):
        verify(p, Levels(np.array([[0, 0, 0]]), np.zeros(p.n_rows, dtype=np.int64)))
    # a vector no row uses releases nothing
    release = verify(p, Levels(np.array([[3, 1], [9, 9]]), np.zeros(p.n_rows, dtype=np.int64)))
    assert release.verification.checks == {"k_anonymity": True}


def test_problem_validation():
    flat = {
        q: anonlab.flat_hierarchy(
            [v for v in conformance_table()[q].categories if v is not None], attribute=q
        )
        for q in ("age", "disease")
    }
    with pytest.raises(ParameterError, match="both a quasi-identifier and the sensitive"):
        Problem(
            conformance_table(),
            ("age", "disease"),
            flat,
            (build_model("distinct_l_diversity", {"attribute": "disease", "l": 2}),),
            build_metric("height"),
        )
    with pytest.raises(ParameterError, match="has no hierarchy"):
        Problem(conformance_table(), ("age",), {}, (), build_metric("height"))
