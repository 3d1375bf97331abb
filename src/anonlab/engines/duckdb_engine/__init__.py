"""The DuckDB engine: GROUP BY pushed into SQL over CSV/Parquet files, out of core."""

from anonlab.engines.duckdb_engine.engine import DuckDBEngine

ENGINE = DuckDBEngine

__all__ = ["DuckDBEngine", "ENGINE"]
