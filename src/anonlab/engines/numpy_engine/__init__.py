"""The in-memory numpy engine."""

from anonlab.engines.numpy_engine.engine import NumpyEngine

ENGINE = NumpyEngine

__all__ = ["NumpyEngine", "ENGINE"]
