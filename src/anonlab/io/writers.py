"""Writing tables atomically (CSV or Parquet), never over the input."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import numpy.typing as npt

from anonlab._optional import import_optional
from anonlab.data.source import infer_format
from anonlab.io.atomic import atomic_write

__all__ = ["write_table"]


def write_table(
    columns: Mapping[str, npt.NDArray[np.object_]],
    path: str | os.PathLike[str],
    *,
    separator: str = ",",
    protect: tuple[Path, ...] = (),
) -> Path:
    """Write label columns to a CSV or Parquet file (by suffix), atomically.

    Parameters
    ----------
    columns : Mapping[str, ndarray of object]
        Column name to labels (a null as None).
    path : path-like
        Output file; ``.parquet``/``.pq`` writes Parquet, anything else CSV.
    separator : str
        CSV separator.
    protect : tuple of Path
        Input files that must not be overwritten.

    Returns
    -------
    Path
        The written file.
    """
    pa = import_optional("pyarrow")
    target = Path(path)
    table = pa.table(
        {name: pa.array(values.tolist(), type=pa.string()) for name, values in columns.items()}
    )
    with atomic_write(target, protect=protect) as tmp:
        if infer_format(target) == "parquet":
            import_optional("pyarrow.parquet").write_table(table, tmp)
        else:
            pcsv = import_optional("pyarrow.csv")
            pcsv.write_csv(
                table,
                tmp,
                write_options=pcsv.WriteOptions(delimiter=separator, quoting_style="needed"),
            )
    return target
