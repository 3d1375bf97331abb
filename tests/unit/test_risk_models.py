"""The risk-based privacy models, on tables computed by hand: average re-identification risk,
sample uniqueness, population uniqueness and k-map estimated with a population model (ARX's
criteria), their parameter checks, the job path and the release's verification."""

from __future__ import annotations

import math

import numpy as np
import pytest

from anonlab import EncodedTable, anonymize
from anonlab.api import open_engine
from anonlab.data.stats import ClassStats
from anonlab.exceptions import InputError, ParameterError
from anonlab.models import (
    MODELS,
    AverageRisk,
    KAnonymity,
    KMap,
    PopulationUniquenessModel,
    SampleUniqueness,
    build_model,
    failing_classes,
    model_parameters,
)
from anonlab.models.risk import estimated_k, size_threshold
from anonlab.risk.population import population_uniques


def stats_of(sizes: list[int], n_rows: int | None = None) -> ClassStats:
    s = np.asarray(sizes, dtype=np.int64)
    return ClassStats(("q",), (0,), s, int(s.sum()) if n_rows is None else n_rows)


def zips(counts: dict[str, int]) -> ClassStats:
    values = [z for z, c in counts.items() for _ in range(c)]
    return open_engine(EncodedTable.from_columns({"zip": values})).class_stats(["zip"])


# ------------------------------------------------------------------ average risk
def test_average_risk_is_classes_over_records():
    stats = zips({"a": 3, "b": 1, "c": 1})  # 3 classes, 5 records
    assert AverageRisk(0.6).value(stats) == pytest.approx(0.6)
    assert AverageRisk(0.6).holds(stats)
    assert not AverageRisk(0.5).holds(stats)
    # one unique suppressed: 2 classes of 4 records, 0.5
    assert AverageRisk(0.5).class_ok(stats).tolist() == [True, False, True]
    # both: 1 class of 3 records, 1/3
    assert AverageRisk(0.4).class_ok(stats).tolist() == [True, False, False]


def test_average_risk_with_records_at_risk():
    # highest risk 0.2: classes below size_threshold(0.2) = 5 records are at risk
    stats = stats_of([5, 2, 10])  # average 3/17 = 0.176; at risk 2/17 = 0.118
    assert AverageRisk(0.2).holds(stats)
    assert AverageRisk(0.2, highest_risk=0.2, records_at_risk=0.12).holds(stats)
    model = AverageRisk(0.2, highest_risk=0.2, records_at_risk=0.1)
    assert not model.holds(stats)
    assert model.class_ok(stats).tolist() == [True, False, True]  # 2/15, none at risk
    assert not model.monotonic_suppression and AverageRisk(0.2).monotonic_suppression


@pytest.mark.parametrize(
    ("risk", "size"), [(0.2, 5), (0.3, 4), (0.33, 4), (0.334, 3), (1.0, 1), (0.1, 10), (0.05, 20)]
)
def test_size_threshold_is_arx_parameter_translation(risk, size):
    # floor(1/r), plus one where 1/floor(1/r) - r >= 1 % of r (ARX's ParameterTranslation)
    assert size_threshold(risk) == size


# ------------------------------------------------------------------ sample uniqueness
def test_sample_uniqueness_share_and_suppression():
    stats = zips({"a": 3, "b": 1, "c": 1})  # 2 uniques of 5 records
    assert SampleUniqueness(0.4).value(stats) == pytest.approx(0.4)
    assert SampleUniqueness(0.4).holds(stats)
    # 0.3: one unique goes (1 of 4 = 0.25)
    assert SampleUniqueness(0.3).class_ok(stats).tolist() == [True, False, True]
    # 0.2: both go (0 of 3)
    assert SampleUniqueness(0.2).class_ok(stats).tolist() == [True, False, False]
    assert SampleUniqueness(0.5).holds(stats_of([]))


def test_sample_based_models_judge_what_the_class_based_models_leave():
    # k = 2 suppresses the two uniques first; the classes of 2 then make the average risk
    # 3/7 > 0.4, and the smallest of what is left (a class of 2) goes too: 2/5 = 0.4
    stats = stats_of([3, 1, 2, 1, 2])
    alone = failing_classes([AverageRisk(0.4)], stats)
    both = failing_classes([AverageRisk(0.4), KAnonymity(2)], stats)  # order of the job: any
    assert both.tolist() == [False, True, True, True, False]
    assert int(stats.sizes[both].sum()) == 4
    # alone, smallest first: [1, 1, 2, 2, 3] is 5/9; without one unique 4/8, without both
    # 3/7 = 0.43, without a class of 2 as well 2/5 = 0.4: the same three classes
    assert alone.tolist() == [False, True, True, True, False]
    assert failing_classes([SampleUniqueness(0.5), KAnonymity(2)], stats).tolist() == [
        False, True, False, True, False
    ]  # fmt: skip


class _FailsTheLargest(KAnonymity):
    """A class-based model that fails the largest class (as l-diversity may)."""

    def class_ok(self, stats):
        return stats.sizes < stats.sizes.max()


def test_a_class_based_suppression_can_raise_the_risk_of_the_rest():
    # alone the average risk is 4/15 = 0.27 <= 0.3; once the class of 10 is suppressed by a
    # class-based model the rest is 3/5 = 0.6, 2/4, 1/2 and all of it must go
    stats = stats_of([10, 2, 2, 1])
    assert failing_classes([AverageRisk(0.3)], stats).tolist() == [False] * 4
    both = failing_classes([AverageRisk(0.3), _FailsTheLargest(1)], stats)
    assert both.tolist() == [True] * 4


def test_binary_search_follows_arx_on_a_table_where_it_is_needed():
    # 10 uniques and one class of 90: 10 classes of 1 record must go for 0.02 (1/90 = 0.011
    # ... 2/91 = 0.022 > 0.02): ARX's binary search finds all ten
    stats = stats_of([90] + [1] * 10)
    out = failing_classes([AverageRisk(0.02)], stats)
    assert out.tolist() == [False] + [True] * 10
    out = failing_classes([AverageRisk(0.025)], stats)  # 2/91 = 0.022: nine go
    assert int(out.sum()) == 9


# ------------------------------------------------------------------ population uniqueness
def test_population_uniqueness_reads_the_estimator_on_what_is_left():
    stats = zips({"a": 3, "b": 4, "c": 2, "d": 1})
    m = PopulationUniquenessModel(0.02, sampling_fraction=0.5, estimator="zayatz")
    n = 10
    assert m.population(n) == 20  # round(10 / 0.5)
    assert m.value(stats) == pytest.approx(population_uniques([3, 4, 2, 1], 0.5, "zayatz"))
    assert not m.holds(stats)
    # the unique goes: no sample unique left, the estimate is 0 and the table passes
    assert m.class_ok(stats).tolist() == [True, True, True, False]


def test_population_uniqueness_fixes_the_population_by_the_whole_table():
    m = PopulationUniquenessModel(0.5, sampling_fraction=0.1, estimator="zayatz")
    sizes = np.array([1, 1, 2, 5, 8], dtype=np.int64)  # 17 records left of 30: N = 300
    expected = population_uniques(sizes, 17 / 300, "zayatz")
    assert m.estimate(sizes, 30) == pytest.approx(expected)
    given = PopulationUniquenessModel(0.5, population_size=300, estimator="zayatz")
    assert given.estimate(sizes, 30) == pytest.approx(expected)
    with pytest.raises(ParameterError, match=r"'population_size' .*\(300\) is below .*1,000"):
        given.population(1000)


def test_population_uniqueness_follows_arx_is_fulfilled():
    m = PopulationUniquenessModel(0.5, sampling_fraction=0.5)
    assert m.fulfilled(np.array([], dtype=np.int64), 10)  # all suppressed
    assert m.fulfilled(np.array([2, 3], dtype=np.int64), 5)  # no unique: estimate 0
    # Dankar's rule below a fraction of 0.1 is Pitman's estimate, without Zayatz's fallback
    low = PopulationUniquenessModel(0.5, sampling_fraction=0.05)
    sizes = np.array([1, 1, 1, 2, 2, 3, 5, 8], dtype=np.int64)
    pitman = population_uniques(sizes, sizes.sum() / low.population(23), "pitman")
    assert low.estimate(sizes, 23) == pitman
    assert not low.monotonic_generalization and not low.monotonic_suppression


def test_population_uniqueness_errors():
    with pytest.raises(ParameterError, match="exactly one of 'sampling_fraction'"):
        PopulationUniquenessModel(0.1)
    with pytest.raises(ParameterError, match="exactly one of 'sampling_fraction'"):
        PopulationUniquenessModel(0.1, sampling_fraction=0.1, population_size=100)
    with pytest.raises(ParameterError, match="'estimator' .* Did you mean 'pitman'"):
        PopulationUniquenessModel(0.1, sampling_fraction=0.1, estimator="pitmann")
    with pytest.raises(ParameterError, match="'sampling_fraction' parameter .* Got 1.5"):
        PopulationUniquenessModel(0.1, sampling_fraction=1.5)


# ------------------------------------------------------------------ k-map
def test_k_map_derived_k_by_hand():
    # lambda = 0.01 * 10 = 0.1: P(X <= 0) = 0.905 < 0.99, P(X <= 1) = 0.9953: ARX's loop
    # stops with counter 2 and returns counter + 1 = 3
    assert math.exp(-0.1) < 0.99 <= math.exp(-0.1) * 1.1
    assert estimated_k(10, 0.01, 0.01, "poisson") == 3
    # zero-truncated: P(1)/(1 - P(0)) = 0.951, + P(2)/(1 - P(0)) = 0.998: counter 3
    assert estimated_k(10, 0.01, 0.01, "zero_truncated_poisson") == 3
    # capped at k
    assert estimated_k(2, 1.0, 0.0, "poisson") == 2


@pytest.mark.parametrize(
    ("k", "f", "alpha", "estimator", "arx"),
    [(100, 0.1, 0.01, "poisson", 20), (1000, 0.01, 0.05, "zero_truncated_poisson", 16)],
)
def test_k_map_derived_k_is_arx(k, f, alpha, estimator, arx):
    # ARX 3.9.2 printed "(100)-map estimated as (20)-anonymity (Poisson)" and "(1000)-map
    # estimated as (16)-anonymity (Zero-truncated Poisson)" on adult (bench_risk_models.py)
    m = KMap(k, sampling_fraction=f, significance=alpha, estimator=estimator)
    assert m.derived_k == arx == m.min_class_size
    stats = stats_of([arx, arx - 1])
    assert m.class_ok(stats).tolist() == [True, False]
    assert m.class_rule() is not None and m.class_rule().params == (float(arx),)


def test_k_map_errors():
    with pytest.raises(ParameterError, match="'estimator' parameter of KMap .* Did you mean"):
        KMap(10, sampling_fraction=0.1, estimator="zero_truncated")
    with pytest.raises(ParameterError, match="'significance' parameter of KMap"):
        KMap(10, sampling_fraction=0.1, significance=2)
    with pytest.raises(ParameterError, match="'k' parameter of KMap"):
        KMap(0, sampling_fraction=0.1)


# ------------------------------------------------------------------ checks, registry, jobs
@pytest.mark.parametrize(
    ("cls", "kwargs", "words"),
    [
        (AverageRisk, {"threshold": 0}, "'threshold' parameter of AverageRisk"),
        (AverageRisk, {"threshold": 1.5}, "'threshold' parameter of AverageRisk"),
        (AverageRisk, {"threshold": 0.1, "highest_risk": 0.2}, "together"),
        (AverageRisk, {"threshold": 0.1, "highest_risk": 0, "records_at_risk": 0.1}, "highest"),
        (AverageRisk, {"threshold": 0.1, "highest_risk": 0.2, "records_at_risk": -1}, "records"),
        (SampleUniqueness, {"threshold": "x"}, "'threshold' parameter of SampleUniqueness"),
    ],
)
def test_parameter_errors_name_the_parameter(cls, kwargs, words):
    with pytest.raises(ParameterError, match=words):
        cls(**kwargs)


def test_registered_with_their_parameters():
    for name in ("average_risk", "sample_uniqueness", "population_uniqueness", "k_map"):
        assert name in MODELS
    assert model_parameters("average_risk") == (["threshold"], ["highest_risk", "records_at_risk"])
    # (sampling_fraction, or a population table instead: k-map with a population table)
    assert model_parameters("k_map") == (
        ["k"],
        ["sampling_fraction", "significance", "estimator", "population"],
    )
    m = build_model("population_uniqueness", {"threshold": 0.01, "sampling_fraction": 0.01})
    assert m.params() == {"threshold": 0.01, "sampling_fraction": 0.01, "estimator": "dankar"}
    with pytest.raises(ParameterError, match="Unknown parameter 'risk' of model 'average_risk'"):
        build_model("average_risk", {"risk": 0.1})


def _table() -> EncodedTable:
    rng = np.random.default_rng(3)
    n = 200
    return EncodedTable.from_columns(
        {
            "age": rng.integers(20, 70, size=n).astype(str).tolist(),
            "zip": rng.choice(["4350", "4351", "4360", "4361"], size=n).tolist(),
        }
    )


@pytest.mark.parametrize(
    "model",
    [
        {"average_risk": {"threshold": 0.1}},
        {"sample_uniqueness": {"threshold": 0.02}},
        {"population_uniqueness": {"threshold": 0.05, "sampling_fraction": 0.3, "estimator": "zayatz"}},
        {"k_map": {"k": 50, "sampling_fraction": 0.1}},
    ],
)  # fmt: skip
@pytest.mark.parametrize("algorithm", ["optimal", "incognito"])
def test_a_job_releases_a_table_that_satisfies_the_model(model, algorithm):
    job = {
        "quasi_identifiers": {
            "age": {"intervals": {"widths": [5, 10, 20, 40]}},
            "zip": {"mask": {"width": 4}},
        },
        "models": [model],
        "suppression": 0.05,
        "metric": "loss",
        "algorithm": algorithm,
    }
    result = anonymize(_table(), job)
    assert result.release.verification.checks == {next(iter(model)): True}
    released = result.release.classes.sizes[~result.release.suppressed]
    built = build_model(*next(iter(model.items())))
    kept = ClassStats(("age", "zip"), (0, 0), released, 200)
    if built.sample_based:
        assert built.holds(kept)
    assert result.suppressed_rows <= 10


# ------------------------------------------------------------ with a population table
def _with_population(sample, population):
    from anonlab.data.stats import count_population

    s = open_engine(EncodedTable.from_columns({"zip": sample})).class_stats(["zip"])
    p = open_engine(EncodedTable.from_columns({"zip": population})).class_stats(["zip"])
    return count_population(s, p, name="pop")


def test_delta_presence_fails_every_class_when_a_population_class_has_no_sample_record():
    """Population records of zip '3', of which the sample holds none, are in it with
    probability 0: below any dmin > 0, and no suppression of sample rows repairs that (ARX
    fails the transformation); with dmin = 0 they pass."""
    from anonlab.models import DeltaPresence

    pop = EncodedTable.from_columns({"zip": ["1", "1", "2", "2", "3"]})
    stats = _with_population(["1", "2"], ["1", "1", "2", "2", "3"])
    assert stats.population_sizes.tolist() == [2, 2] and stats.population_rows == 5
    assert DeltaPresence(0.0, 0.5, pop).class_ok(stats).tolist() == [True, True]
    assert DeltaPresence(0.1, 0.5, pop).class_ok(stats).tolist() == [False, False]
    whole = _with_population(["1", "2", "3"], ["1", "1", "2", "2", "3"])
    assert DeltaPresence(0.1, 0.5, pop).class_ok(whole).tolist() == [True, True, False]
    assert DeltaPresence(0.1, 0.5, pop).value(whole) == 1.0


def test_k_map_with_a_population_table_counts_the_population_not_the_sample():
    pop = EncodedTable.from_columns({"zip": ["1"] * 5 + ["2"] * 2})
    stats = _with_population(["1", "2", "2"], ["1"] * 5 + ["2"] * 2)
    m = KMap(3, population=pop)
    assert m.class_ok(stats).tolist() == [True, False]
    assert m.params() == {"k": 3, "population": "(in memory)"}
    assert m.class_rule() is None and m.union_safe is None and m.min_class_size == 1
    assert KMap(3, sampling_fraction=0.5).union_safe  # the estimated k-map is unchanged
    with pytest.raises(ParameterError, match="hold no population records"):
        m.class_ok(open_engine(EncodedTable.from_columns({"zip": ["1"]})).class_stats(["zip"]))
    with pytest.raises(ParameterError, match="not both"):
        KMap(3, sampling_fraction=0.5, population=pop)


def test_a_sample_larger_than_its_population_is_named():
    with pytest.raises(InputError, match=r"\(zip='2'\), the sample 2"):
        _with_population(["1", "2", "2"], ["1", "2"])
