"""Population-uniqueness estimators against their papers' formulas, computed by hand.

Each expected value below is computed in this file from the paper's own formula with explicit
loops over the classes and records (no digamma closed forms, no code shared with
:mod:`anonlab.risk.population`):

- Zayatz (1991): hypergeometric probabilities from binomial coefficients (``math.comb``);
- Pitman (Hoshino 2001, section 3): the log-likelihood of Pitman's sampling formula written as
  sums of logarithms, maximised with Nelder-Mead (not solved for its derivatives);
- SNB (Chen & Keller-McNulty 1998, section 2): the Shlosser estimate of K (Haas & Stokes 1998,
  eq. 4.6) by loops and the two moment equations solved by bounded least squares;
- Dankar et al. (2012), as ARX 3.9.2 applies the rule.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize

from anonlab.exceptions import ParameterError
from anonlab.risk import ESTIMATORS, population_size, population_uniqueness, population_uniques

# A small sample: 8 classes, 23 records, 3 sample uniques, 2 classes of size 2.
SMALL = [1, 1, 1, 2, 2, 3, 5, 8]
# A sample with many uniques and a long tail (Pitman has an admissible alpha in (0, 1)).
SKEWED = [1] * 30 + [2] * 10 + [3] * 5 + [4] * 3 + [6, 9, 15, 40]


def _histogram(sizes: list[int]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for s in sizes:
        counts[s] = counts.get(s, 0) + 1
    return counts


def _hypergeom_one(population: int, marked: int, draws: int) -> float:
    """P(exactly one of ``marked`` records among ``draws`` drawn from ``population``)."""
    return marked * math.comb(population - marked, draws - 1) / math.comb(population, draws)


def zayatz_by_hand(sizes: list[int], fraction: float) -> float:
    n = sum(sizes)
    big_n = round(n / fraction)
    f = n / big_n
    hist = _histogram(sizes)
    u = len(sizes)
    c1 = hist.get(1, 0)
    total = sum(c / u * _hypergeom_one(big_n, j, n) for j, c in hist.items())
    conditional = (c1 / u) * _hypergeom_one(big_n, 1, n) / total
    return c1 * conditional / f / big_n


def pitman_by_hand(sizes: list[int], fraction: float) -> float:
    n = sum(sizes)
    big_n = round(n / fraction)
    u = len(sizes)
    hist = _histogram(sizes)

    def minus_log_likelihood(x: np.ndarray) -> float:
        theta, alpha = x
        if theta < 0 or not 0 < alpha < 1:
            return 1e300
        value = sum(math.log(theta + i * alpha) for i in range(1, u))
        value -= sum(math.log(theta + i) for i in range(1, n))
        value += sum(c * sum(math.log(i - alpha) for i in range(1, j)) for j, c in hist.items())
        return -value

    best = optimize.minimize(
        minus_log_likelihood,
        x0=[5.0, 0.5],
        method="Nelder-Mead",
        options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20_000},
    )
    theta, alpha = best.x
    uniques = math.exp(math.lgamma(theta + 1) - math.lgamma(theta + alpha)) * big_n**alpha
    return uniques / big_n


def snb_by_hand(sizes: list[int], fraction: float) -> float:
    n = sum(sizes)
    big_n = round(n / fraction)
    f = n / big_n
    hist = _histogram(sizes)
    u = len(sizes)
    c1, c2 = hist.get(1, 0), hist.get(2, 0)
    q = 1 - f
    num = sum(j * f * f * (1 - f * f) ** (j - 1) * c for j, c in hist.items())
    den = sum(q**j * ((1 + f) ** j - 1) * c for j, c in hist.items())
    outer = sum(q**j * c for j, c in hist.items()) / sum(
        j * f * q ** (j - 1) * c for j, c in hist.items()
    )
    k = u + c1 * num / den * outer**2

    def residuals(x: np.ndarray) -> list[float]:
        alpha, beta = x
        d = (1 - f) * (1 - beta)
        e1 = k * f * (beta / (1 - d)) ** alpha * (1 + alpha * d / (1 - d))
        e2 = (
            k
            * f
            * f
            * alpha
            * (1 - beta)
            * beta**alpha
            * (2 - (1 - alpha) * d)
            / (2 * (1 - d) ** (alpha + 2))
        )
        return [e1 / c1 - 1, e2 / c2 - 1]

    fit = optimize.least_squares(
        residuals,
        x0=[1.0, 0.5],
        bounds=([1e-9, 1e-9], [1e6, 1 - 1e-12]),
        xtol=1e-15,
        ftol=1e-15,
        gtol=1e-15,
    )
    assert max(abs(r) for r in residuals(fit.x)) < 1e-9
    alpha, beta = fit.x
    return k * beta**alpha / big_n


@pytest.mark.parametrize("fraction", [0.05, 0.3, 0.5, 0.9])
@pytest.mark.parametrize("sizes", [SMALL, SKEWED], ids=["small", "skewed"])
def test_zayatz_matches_the_hypergeometric_formula(sizes: list[int], fraction: float) -> None:
    assert population_uniques(sizes, fraction, "zayatz") == pytest.approx(
        zayatz_by_hand(sizes, fraction), rel=1e-10
    )


@pytest.mark.parametrize("fraction", [0.01, 0.05, 0.1])
def test_pitman_maximises_the_likelihood_of_pitmans_formula(fraction: float) -> None:
    estimate = population_uniques(SKEWED, fraction, "pitman")
    assert estimate is not None
    assert estimate == pytest.approx(pitman_by_hand(SKEWED, fraction), rel=1e-5)


@pytest.mark.parametrize("fraction", [0.3, 0.5, 0.8])
def test_snb_solves_the_moment_equations_with_shlossers_k(fraction: float) -> None:
    estimate = population_uniques(SKEWED, fraction, "snb")
    assert estimate is not None
    assert estimate == pytest.approx(snb_by_hand(SKEWED, fraction), rel=1e-7)


def test_zayatz_small_sample_worked_value() -> None:
    # n = 23, f = 0.5 -> N = 46; h(1; 46, j, 23) = j C(46-j, 22) / C(46, 23) is 1/2, 23/45,
    # 0.38333, 0.14858, 0.02161 for j = 1, 2, 3, 5, 8; with u = 8 and c1 = 3:
    # P = (3/8 * 1/2) / (3/8 * 1/2 + 2/8 * 23/45 + (0.38333 + 0.14858 + 0.02161)/8) = 0.487687,
    # uniques = 3 * 0.487687 / 0.5 = 2.92612, share = 2.92612 / 46 = 0.0636113.
    assert population_uniques(SMALL, 0.5, "zayatz") == pytest.approx(0.0636113, abs=5e-8)


def test_population_size_is_arxs_rounding() -> None:
    assert population_size(30162, 0.01) == 3016200
    assert population_size(23, 0.3) == 77  # 76.67 rounds up


def test_dankar_rule_picks_pitman_at_small_fractions() -> None:
    result = population_uniqueness(SKEWED, 0.05)
    assert result.dankar_choice == "pitman"
    assert result.dankar == result.pitman


def test_dankar_rule_falls_back_to_zayatz_without_pitman() -> None:
    # A single class of size 1: Pitman's likelihood has no maximum (u = 1).
    result = population_uniqueness([1], 0.05)
    assert result.pitman is None
    assert result.dankar_choice == "zayatz"
    assert result.dankar == result.zayatz


def test_dankar_rule_takes_the_smaller_of_zayatz_and_snb_above_ten_percent() -> None:
    result = population_uniqueness(SKEWED, 0.5)
    assert result.zayatz is not None and result.snb is not None
    assert result.dankar == min(result.zayatz, result.snb)
    assert result.dankar_choice == ("snb" if result.snb <= result.zayatz else "zayatz")


def test_snb_without_classes_of_size_two_has_no_solution() -> None:
    # E[c2] = 0 needs beta = 1 or alpha = 0: no admissible root.
    result = population_uniqueness([1, 1, 1, 3, 4], 0.5)
    assert result.snb is None
    assert result.dankar_choice == "zayatz"
    assert population_uniques([1, 1, 1, 3, 4], 0.5, "dankar") == result.zayatz


def test_a_sample_without_uniques_has_no_population_uniques() -> None:
    result = population_uniqueness([2, 3, 7], 0.1)
    assert (result.pitman, result.zayatz, result.snb, result.dankar) == (0.0, 0.0, 0.0, 0.0)
    for name in (*ESTIMATORS, "dankar"):
        assert population_uniques([2, 3, 7], 0.1, name) == 0.0


def test_estimates_do_not_depend_on_the_order_of_the_classes() -> None:
    shuffled = list(reversed(SKEWED))
    assert population_uniqueness(shuffled, 0.05) == population_uniqueness(SKEWED, 0.05)


def test_unknown_estimator_is_named_with_a_suggestion() -> None:
    with pytest.raises(
        ParameterError, match=r"Unknown estimator 'zayats'\. Did you mean 'zayatz'\?"
    ):
        population_uniques(SMALL, 0.1, "zayats")


@pytest.mark.parametrize("fraction", [0, -0.1, 1.5])
def test_fraction_outside_zero_one_is_refused(fraction: float) -> None:
    with pytest.raises(ParameterError, match="sampling_fraction"):
        population_uniqueness(SMALL, fraction)
