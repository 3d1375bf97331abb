"""The numpy array aliases every module annotates with (one definition for the package)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["BoolArray", "FloatArray", "IntArray", "U64Array"]

#: Codes, counts and row indices.
IntArray = npt.NDArray[np.int64]
#: Masks.
BoolArray = npt.NDArray[np.bool_]
#: Losses, shares and distances.
FloatArray = npt.NDArray[np.float64]
#: Packed keys.
U64Array = npt.NDArray[np.uint64]
