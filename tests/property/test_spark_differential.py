"""Hypothesis: the Spark engine and the numpy engine agree on small random tables (issue 33).

Class sizes, class statistics (keys, rows, sensitive histograms, numbered alike), rows in small
classes, batched subset sizes and diagnosis questions, at hierarchy levels and with nulls
(:func:`tests.property._engines.check_agrees`). Spark answers in tenths of a second per
question, so the examples are few; they share one local SparkSession (the ``spark`` fixture
of tests/conftest.py).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given

from anonlab.engines import get_engine
from tests.property._engines import HIER, check_agrees, questions, tables
from tests.support.profiles import costly


# costly: each example runs Spark jobs
@costly(20, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(tables(), *questions)
def test_spark_and_numpy_engines_agree(spark, table, subset, sens, level, k, delta):
    sp = get_engine("spark", table, hierarchies=HIER, spark=spark)
    try:
        check_agrees(sp, table, subset, sens, level, k, delta, same_numbering=True)
    finally:
        sp.close()
