"""The local-recoding family: bad input, the requirement it reads, its figures and reports."""

from __future__ import annotations

import json

import numpy as np
import pytest

from anonlab import EncodedTable, Hierarchy, anonymize
from anonlab.algorithms import ALGORITHMS
from anonlab.algorithms.local_recoding._setup import check_requirement
from anonlab.algorithms.local_recoding.progressive import trunk_sizes
from anonlab.exceptions import InputError, ParameterError
from anonlab.jobs import build_problem, load_job
from anonlab.models import AlphaKAnonymity
from anonlab.report import anonymization_sections, print_plain

H = {
    "zip": Hierarchy(
        [[z, z[:3] + "*", z[:2] + "**", "*"] for z in ("4351", "4352", "4361", "4362")],
        attribute="zip",
    ),
    "age": Hierarchy([[str(a), f"{a // 10 * 10}s", "*"] for a in range(20, 40)], attribute="age"),
}


def table(n=40, seed=0):
    rng = np.random.default_rng(seed)
    return EncodedTable.from_columns(
        {
            "zip": rng.choice(["4351", "4352", "4361", "4362"], size=n).astype(object),
            "age": rng.integers(20, 40, size=n).astype(str).astype(object),
            "disease": np.array(["hiv"] * (n // 5) + ["flu"] * (n - n // 5), dtype=object),
            "income": rng.choice(["low", "mid", "high"], size=n).astype(object),
        }
    )


def job(models, algorithm="progressive", **extra):
    return {
        "quasi_identifiers": {q: {"hierarchy": h} for q, h in H.items()},
        "sensitive": ["disease", "income"],
        "models": models,
        "metric": "distortion",
        "algorithm": algorithm,
        **extra,
    }


def ak(**params):
    return [{"alpha_k_anonymity": {"attribute": "disease", "k": 2, "alpha": 0.5, **params}}]


@pytest.mark.parametrize("algorithm", ["progressive", "top_down"])
@pytest.mark.parametrize(
    ("models", "quasi", "words"),
    [
        (ak(values="hiv", alpha=0), None, "'alpha' parameter of AlphaKAnonymity must be"),
        (ak(values="hiv", alpha=1.5), None, "'alpha' parameter of AlphaKAnonymity must be"),
        (ak(values="hiv", k=0), None, "'k' parameter of AlphaKAnonymity must be"),
        (ak(values="hiv", k=41), None, "needs classes of at least 41 rows"),
        (ak(values="HIV"), None, "Sensitive value 'HIV' of model 'alpha_k_anonymity' does not"),
        (ak(values="hiv", alpha=0.1), None, "Lemma 1"),
        (ak(alpha=0.5), None, "the frequency of 'flu', the most frequent value of 'disease'"),
        (ak(values="hiv"), "disease", "given two roles: quasi-identifier and sensitive"),
        ([{"distinct_l_diversity": {"attribute": "disease", "l": 2}}], None, "must be k_anony"),
    ],
)
def test_bad_input_is_refused_before_any_work(tmp_path, algorithm, models, quasi, words):
    spec = job(models, algorithm)
    if quasi is not None:
        spec["quasi_identifiers"][quasi] = {}
    out = tmp_path / "out.csv"
    with pytest.raises(InputError, match=words.replace("(", r"\(")) as err:
        anonymize(table(), spec, output=out)
    assert "\n" not in str(err.value)  # one line
    assert not out.exists()


def test_lemma1_names_the_frequency():
    with pytest.raises(ParameterError) as err:
        anonymize(table(), job(ak(values="hiv", alpha=0.15)))
    text = str(err.value)
    assert "the frequency of 'hiv' of 'disease', 0.2 (8 of 40 rows)" in text
    assert "Choose alpha >= 0.2" in text
    anonymize(table(), job(ak(values="hiv", alpha=0.2)))  # at the frequency: accepted


def test_multi_attribute_lemma1_names_the_attribute():
    models = [{"alpha_k_anonymity": {"attribute": ["disease", "income"], "k": 2, "alpha": 0.7}}]
    with pytest.raises(ParameterError, match="most frequent value of 'disease'"):
        anonymize(table(), job(models))
    models[0]["alpha_k_anonymity"]["alpha"] = 0.8
    res = anonymize(table(), job(models, "top_down"))
    assert res.search.variant == "multi" and res.suppressed_rows == 0


def test_the_requirement_read_from_the_models():
    spec = job(
        [
            {"k_anonymity": {"k": 3}},
            {
                "alpha_k_anonymity": {
                    "attribute": "disease",
                    "k": 2,
                    "alpha": 0.5,
                    "values": ["hiv"],
                    "refined": False,
                }
            },
        ]
    )
    req = check_requirement(build_problem(table(), load_job(spec)), "progressive")
    assert req.k == 3 and req.trunks and req.variant == "simple"
    (b,) = req.bounds
    assert b.simple and b.alpha == 0.5 and int(b.codes.sum()) == 8
    plain = check_requirement(
        build_problem(table(), load_job(job([{"k_anonymity": {"k": 2}}]))), "top_down"
    )
    assert plain.bounds == () and plain.variant == "k-anonymity" and not plain.trunks


@pytest.mark.parametrize("alpha", [0.1, 0.25, 0.3, 1 / 3, 0.5, 0.7, 1.0])
@pytest.mark.parametrize("refined", [True, False])
def test_max_count_agrees_with_class_ok(alpha, refined):
    # a class of n rows, c of them protected: passes iff c <= max_count(n)
    model = AlphaKAnonymity("s", alpha, 1, values="p", refined=refined)
    for n in range(1, 41):
        rows = [("q", "p")] * n
        cap = int(model.max_count([n])[0])
        for c in range(n + 1):
            t = EncodedTable.from_rows(rows[:c] + [("q", "x")] * (n - c), ["q", "s"])
            from anonlab import open_engine

            stats = open_engine(t).class_stats(["q"], sensitive=["s"])
            if c == 0:  # 'p' must occur for the model to judge; no protected row passes
                assert cap >= 0
                continue
            assert bool(model.class_ok(stats)[0]) == (c <= cap), (n, c, cap)


@pytest.mark.parametrize(
    ("sizes", "protected", "alpha", "refined", "k", "expected"),
    [
        ([3], [1], 0.5, True, 2, ([2], [1])),  # Table 9(b): {t1, t2} of {t1, t2, t3}
        ([5], [1], 0.5, True, 2, ([2], [1])),
        ([10], [3], 0.5, True, 2, ([6], [3])),
        ([4], [0], 0.5, True, 2, ([0], [0])),  # no protected row: no trunk (ceil(alpha p) >= 1)
        ([3], [1], 0.5, True, 3, ([0], [0])),  # a trunk of 2 rows would be below k
        ([7], [1], 0.2, True, 2, ([5], [1])),  # ceil(0.2 * 5) = 1
        ([15], [6], 0.3, False, 2, ([10], [3])),  # Definition 4: exactly alpha p, p in 10s
        ([3], [1], 0.5, False, 2, ([2], [1])),
    ],
)
def test_trunk_sizes(sizes, protected, alpha, refined, k, expected):
    model = AlphaKAnonymity("s", alpha, k, values="p", refined=refined)
    from anonlab.algorithms.local_recoding._setup import Bound

    b = Bound("s", np.zeros(0, np.int64), 2, True, alpha, model.max_count, "'p'")
    p, c = trunk_sizes(b, k, np.array(sizes), np.array(protected))
    assert (p.tolist(), c.tolist()) == (list(expected[0]), list(expected[1]))


@pytest.mark.parametrize("algorithm", ["progressive", "top_down"])
def test_distortion_ratio_beside_the_jobs_metric(algorithm):
    t = table(200, seed=3)
    res = anonymize(t, job(ak(values="hiv"), algorithm) | {"metric": "loss"})
    same = anonymize(t, job(ak(values="hiv"), algorithm))  # metric: distortion
    assert res.metric == "loss"
    assert res.search.distortion_ratio == pytest.approx(same.loss, rel=1e-12)
    doc = res.to_dict()
    assert doc["search"]["distortion_ratio"] == res.search.distortion_ratio
    assert doc["recoding"]["kind"] == "Levels"
    per = doc["recoding"]["rows_per_level"]
    assert sum(per["zip"].values()) == 200 and sum(per["age"].values()) == 200
    json.dumps(doc)
    text = print_plain(anonymization_sections(res))
    assert "distortion ratio (paper 002, section 2)" in text
    assert "rows per level of zip" in text


@pytest.mark.parametrize("algorithm", ["progressive", "top_down", "optimal"])
def test_max_level_is_honoured_without_suppression_when_the_top_classes_pass(algorithm):
    """Every class at the highest levels allowed passes: each algorithm releases without
    suppressing (issue 51: Progressive left a failing remainder, released from a top class
    whose rest could no longer pass, and refused as if no release existed)."""
    for seed in (0, 1):
        spec = job(ak(values="hiv"), algorithm, suppression=0)
        spec["quasi_identifiers"]["zip"]["max_level"] = 0
        spec["quasi_identifiers"]["age"]["max_level"] = 1
        res = anonymize(table(60, seed=seed), spec)
        levels = res.recoding.levels
        if algorithm == "optimal":  # one level per attribute
            levels = np.array([[levels["zip"], levels["age"]]])
        levels = np.asarray(levels)
        assert levels[:, 0].max() == 0 and levels[:, 1].max() <= 1
        assert res.suppressed_rows == 0 and all(res.checks.values())


@pytest.mark.parametrize("algorithm", ["progressive", "top_down"])
def test_what_fails_as_a_whole_at_the_highest_levels_is_suppressed_or_named(algorithm):
    """Ages kept exact (max_level 0): six rows sit in top classes that fail as a whole (too
    few rows, or two hiv of three); within the limit they are suppressed, beyond it the
    message says so."""
    spec = job(ak(values="hiv"), algorithm, suppression=0.1)
    spec["quasi_identifiers"]["zip"]["max_level"] = 2
    spec["quasi_identifiers"]["age"]["max_level"] = 0
    res = anonymize(table(60, seed=4), spec)
    assert 0 < res.suppressed_rows <= 6 and all(res.checks.values())
    assert np.asarray(res.recoding.levels)[:, 1].max() == 0
    spec["suppression"] = 0
    with pytest.raises(InputError) as err:
        anonymize(table(60, seed=4), spec)
    text = str(err.value)
    assert "more than the suppression limit of 0 of 60 rows" in text
    assert "At the highest levels allowed (max_level) 6 rows are in classes that fail" in text
    assert "\n" not in text


def test_registered_with_no_parameters():
    for name in ("progressive", "top_down"):
        cls = ALGORITHMS[name]
        assert cls.parameter_names() == [] and cls._parameter_constraints == {}
        with pytest.raises(ParameterError, match="Unknown parameter 'depth'"):
            anonymize(table(), job(ak(values="hiv"), {"name": name, "depth": 2}))


def _one_attribute(rows, k):
    h = Hierarchy([["a", "*"], ["b", "*"]], attribute="q")
    spec = {
        "quasi_identifiers": {"q": {"hierarchy": h}},
        "sensitive": ["s"],
        "models": [{"alpha_k_anonymity": {"attribute": "s", "alpha": 0.5, "k": k, "values": "c"}}],
        "metric": "distortion",
        "algorithm": "progressive",
    }
    return anonymize(EncodedTable.from_rows(rows, ["q", "s"]), spec)


def test_a_stub_that_cannot_stand_alone_leaves_with_its_trunk():
    # {a n, a c, a n} passes; its trunk is {t1, t2}; the stub t3 alone could never form a
    # class of 2, so it is released with its trunk: the whole class at level 0
    res = _one_attribute([("a", "n"), ("a", "c"), ("a", "n")], 2)
    assert list(res.columns["q"]) == ["a", "a", "a"]
    (rnd,) = res.search.rounds[:1]
    assert (rnd["trunk_rows"], rnd["stubs_with_trunk"], rnd["given_back"]) == (2, 1, 0)
    assert res.loss == 0.0


def test_rows_come_back_when_what_stays_could_not_be_anonymized():
    # {a c, a n} is a trunk of its own; t3 (b) alone fails: the trunk comes back and the three
    # rows are generalized together
    res = _one_attribute([("a", "c"), ("a", "n"), ("b", "n")], 2)
    assert list(res.columns["q"]) == ["*", "*", "*"]
    first = res.search.rounds[0]
    assert (first["trunk_rows"], first["given_back"]) == (0, 2)
    assert res.search.given_back == 2 and res.suppressed_rows == 0


@pytest.mark.parametrize("algorithm", ["progressive", "top_down"])
def test_the_example_job_runs_on_the_bundled_adult(tmp_path, algorithm):
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    spec = load_job(root / "examples" / "adult_local_recoding.yaml")
    assert spec.algorithm == "progressive"
    spec.algorithm = algorithm
    out = tmp_path / "released.csv"
    res = anonymize(root / "src" / "anonlab" / "datasets" / "adult.csv.gz", spec, output=out)
    assert all(res.checks.values()) and res.suppressed_rows == 0
    assert res.search.distortion_ratio == pytest.approx(res.loss)
    assert out.stat().st_size > 0
