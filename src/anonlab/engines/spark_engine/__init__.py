"""The Spark engine: class statistics by ``groupBy`` on Spark DataFrames, locally or on a cluster."""

from anonlab.engines.spark_engine.engine import SparkEngine, spark_session

ENGINE = SparkEngine

__all__ = ["SparkEngine", "spark_session", "ENGINE"]
