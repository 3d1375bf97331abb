"""ARX parity of the risk-based models: the same job gives ARX 3.9.2's optimum on ARX's adult.

Runs ``benchmarks/bench_risk_models.py``'s settings (the job, and ARX through
``benchmarks/peers/arx/ArxBench.java`` compiled against ``$ARX_CP``); skipped where ARX is not
built (``../shared/tools/arx/build.sh``) or ../shared is absent. The transformation and the
suppressed records must be ARX's; the loss too, within 0.5 % where ARX orders classes of one
size by their loss before suppressing them (anonlab takes them in class order).

The models with a population table anonymize ARX's own research subset of adult
(``adult_subset.csv``, 3,016 rows) with adult (30,162 rows) as the population table, as ARX
does with ``DataSubset.create(data, subset)``: k-map with a population table (ARX ``KMap(k,
subset)``) and delta-presence (ARX ``DPresence(dmin, dmax, subset)``), with and without a
suppression limit, and delta-presence with a lower bound (population records in a class
without a sample record fail the transformation). Their loss must be ARX's exactly.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from anonlab import CsvOptions, read_table

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import bench_risk_models as bench  # noqa: E402

pytestmark = [pytest.mark.shared, pytest.mark.slow]

LABELS = (
    "avg-risk 0.05, 5 %, loss",
    "k 5 + avg-risk 0.02, 10 %, height",
    "sample-uniqueness 0.001, 0 %, discernability",
    "k-map 100 (f 0.1, Poisson), 5 %, loss",
    "population-uniqueness zayatz 0.01 (f 0.01), 5 %, loss",
)
#: The models with a population table.
POPULATION_LABELS = (
    "k-map 5 (population table), 0 %, loss",
    "k-map 10 (population table), 5 %, loss",
    "delta-presence 0.0-0.5, 0 %, loss",
    "delta-presence 0.05-0.5, 5 %, loss",
)


@pytest.fixture(scope="module")
def arx(tmp_path_factory) -> str:
    classpath = None if shutil.which("javac") is None else bench.common.arx_classpath()
    if classpath is None:
        pytest.skip("ARX is not built (../shared/tools/arx/build.sh) or java/javac is absent")
    return bench.compile_harness(classpath, tmp_path_factory.mktemp("arx"))


@pytest.fixture(scope="module")
def adult():
    return read_table(bench.data_dir() / "adult.csv", csv_options=CsvOptions(separator=";"))


@pytest.mark.parametrize("label", LABELS)
def test_the_optimum_is_arx(arx, adult, label):
    (setting,) = [s for s in bench.SETTINGS if s["label"] == label]
    ours = bench.anonlab_optimum(adult, setting)
    theirs = bench.arx_optimum(arx, setting)
    assert ours["levels"] == theirs["levels"], (ours, theirs)
    assert ours["suppressed_rows"] == theirs["suppressed_rows"], (ours, theirs)
    assert ours["loss"] == pytest.approx(theirs["loss"], rel=5e-3), (ours, theirs)


@pytest.mark.parametrize("label", POPULATION_LABELS)
def test_the_optimum_with_a_population_table_is_arx(arx, adult, label):
    (setting,) = [s for s in bench.SETTINGS if s["label"] == label]
    assert setting["population"]
    ours = bench.anonlab_optimum(adult, setting)
    theirs = bench.arx_optimum(arx, setting)
    assert (ours["levels"], ours["suppressed_rows"]) == (
        theirs["levels"],
        theirs["suppressed_rows"],
    ), (ours, theirs)
    assert ours["loss"] == pytest.approx(theirs["loss"], rel=1e-12), (ours, theirs)
