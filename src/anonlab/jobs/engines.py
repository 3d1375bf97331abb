"""Which engine runs a job: the one asked for, checked, or ``auto``'s choice by size.

:func:`choose_engine` names the engine (``auto`` says why it chose, as a note to the user);
:func:`open_engine` opens an out-of-core one over the job's data. Which run a job takes is
decided by the engine class's declared capabilities
(:attr:`~anonlab.engines.base.Engine.in_memory`) and the algorithm's
(:mod:`anonlab.jobs.run`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from anonlab._resources import format_bytes, memory_budget
from anonlab._validation import did_you_mean
from anonlab.data.source import FileSource
from anonlab.data.table import EncodedTable
from anonlab.engines import ENGINES, Engine, engine_class, get_engine
from anonlab.exceptions import InputError, ParameterError
from anonlab.io import memory_estimate
from anonlab.io.atomic import check_input_file
from anonlab.io.job import JobSpec

__all__ = [
    "AUTO_OUT_OF_CORE_SHARE",
    "DUCKDB_MEMORY_CAP",
    "DUCKDB_MEMORY_SHARE",
    "EngineChoice",
    "JOB_ENGINES",
    "choose_engine",
    "engine_choice",
    "open_engine",
]

#: The engines ``anonymize`` and ``check`` take: ``auto`` chooses by the data's size.
JOB_ENGINES = ("auto", *ENGINES)
#: ``auto`` runs a job out of core (DuckDB) when reading the data whole would need more than
#: this share of the available memory (:func:`anonlab._resources.memory_budget`).
AUTO_OUT_OF_CORE_SHARE = 0.25
#: The memory limit of an engine that spills to disk (DuckDB), for a job: this share of the
#: available memory, at most :data:`DUCKDB_MEMORY_CAP` (its peak RSS stays within about twice
#: the limit).
DUCKDB_MEMORY_SHARE = 0.25
DUCKDB_MEMORY_CAP = 2 << 30


def _auto_engine(role: str) -> tuple[str, type[Engine]]:
    """The registered engine whose class declares ``auto_role == role``, and its class."""
    for name in ENGINES:
        cls = engine_class(name)
        if cls.auto_role == role:
            return name, cls
    raise ParameterError(f"No registered engine runs a job {role} for engine='auto'.")


def choose_engine(data: Any, engine: str = "auto") -> str:
    """The engine that runs a job on ``data``: the one asked for, checked, or by size.

    ``auto`` runs out of core (``duckdb``) a file that would need more than
    :data:`AUTO_OUT_OF_CORE_SHARE` of the available memory read whole
    (:func:`anonlab.io.memory_estimate`; ``ANONLAB_MEMORY_BUDGET`` sets the memory), and
    everything else in memory (``numpy``). ``numpy`` is refused for a file that would need
    more than the available memory.

    Parameters
    ----------
    data : path, DataFrame, pyarrow Table or EncodedTable
        The table.
    engine : str
        ``"auto"``, ``"numpy"``, ``"duckdb"`` (or another registered engine).

    Returns
    -------
    str
        The engine's name.

    Raises
    ------
    ParameterError
        An unknown engine, or an out-of-core engine for a table already in memory.
    InputError
        ``numpy`` for a file larger than the memory (the message gives the sizes and the
        engine to use instead).

    Examples
    --------
    >>> import pandas as pd
    >>> choose_engine(pd.DataFrame({"age": [30, 41]}))
    'numpy'
    """
    return engine_choice(data, engine).name


@dataclass(frozen=True)
class EngineChoice:
    """The engine a job runs on, its class (with its declared capabilities) and, for
    ``auto``, why it was chosen.

    Attributes
    ----------
    name : str
        The engine's registered name.
    engine : type of Engine
        Its class: :attr:`~anonlab.engines.base.Engine.in_memory` tells whether it holds
        the rows.
    note : str
        ``auto``'s reason (a sentence for the user); empty for an engine asked for by name.
    auto : bool
        Whether ``auto`` chose it.

    Examples
    --------
    >>> import pandas as pd
    >>> choice = engine_choice(pd.DataFrame({"age": [30, 41]}), "auto")
    >>> choice.name, choice.in_memory
    ('numpy', True)
    >>> choice.note
    'engine auto chose numpy (in memory): the table is in memory already.'
    """

    name: str
    engine: type[Engine]
    note: str = ""
    auto: bool = False

    @property
    def in_memory(self) -> bool:
        """Whether the engine holds the table's rows in memory."""
        return self.engine.in_memory


def engine_choice(data: Any, engine: str) -> EngineChoice:
    """:func:`choose_engine`'s engine, with its class and, for ``auto``, why.

    Parameters
    ----------
    data : path, DataFrame, pyarrow Table or EncodedTable
        The table.
    engine : str
        ``"auto"`` or a registered engine's name.

    Returns
    -------
    EngineChoice

    Raises
    ------
    ParameterError, InputError
        As :func:`choose_engine` raises them.

    Examples
    --------
    >>> engine_choice("adult.csv", "duckdb").in_memory
    False
    """
    if not isinstance(engine, str) or engine not in JOB_ENGINES:
        raise ParameterError(
            f"Unknown engine {engine!r}.{did_you_mean(str(engine), JOB_ENGINES)} "
            f"Valid engines: {', '.join(JOB_ENGINES)}."
        )
    auto = engine == "auto"
    asked = None if auto else engine_class(engine)
    if isinstance(data, EncodedTable) and asked is not None and not asked.in_memory:
        raise ParameterError(
            f"The {engine} engine reads files or data frames; this table is encoded in "
            "memory already: use engine='numpy', or give the file."
        )
    if asked is None and not isinstance(data, (str, os.PathLike)):
        name, cls = _auto_engine("in memory")
        note = f"engine auto chose {name} (in memory): the table is in memory already."
        return EngineChoice(name, cls, note, auto)
    if asked is not None and (not isinstance(data, (str, os.PathLike)) or not asked.in_memory):
        return EngineChoice(engine, asked)
    on_disk, need = memory_estimate(data)
    if asked is not None and need > memory_budget(1.0):
        raise InputError(
            f"The data file {str(data)!r} ({format_bytes(on_disk)} on disk) needs about "
            f"{format_bytes(need)} in memory, more than this machine has available "
            f"({format_bytes(memory_budget(1.0))}); use --engine duckdb (engine='duckdb'), "
            "which anonymizes it out of core. Nothing was written."
        )
    if asked is not None:
        return EngineChoice(engine, asked)
    budget = memory_budget(AUTO_OUT_OF_CORE_SHARE)
    out_of_core = need > budget
    why = (
        f"{Path(data).name} needs about {format_bytes(need)} read whole, "
        f"{'more than' if out_of_core else 'within'} the {format_bytes(budget)} a table in "
        "memory may take (a quarter of the memory available)."
    )
    role = "out of core" if out_of_core else "in memory"
    name, cls = _auto_engine(role)
    return EngineChoice(name, cls, f"engine auto chose {name} ({role}): {why}", auto)


def open_engine(
    data: Any, spec: JobSpec, name: str, engine_options: Mapping[str, Any] | None = None
) -> Engine:
    """An out-of-core engine over the job's data (``engine_options`` passed to it).

    A file is opened as a :class:`~anonlab.data.source.FileSource` with the job's CSV
    options; DuckDB's memory limit is :data:`DUCKDB_MEMORY_SHARE` of the available memory,
    at most :data:`DUCKDB_MEMORY_CAP`.

    Parameters
    ----------
    data : path, DataFrame or pyarrow Table
    spec : JobSpec
    name : str
        The engine's name.
    engine_options : mapping, optional

    Returns
    -------
    Engine
        Open: the caller closes it.

    Raises
    ------
    ParameterError
        An engine that cannot compute frequency sets and write releases.

    Examples
    --------
    >>> import pandas as pd
    >>> from anonlab.jobs.problem import load_job
    >>> job = load_job({"quasi_identifiers": {"age": {}}, "models": [{"k_anonymity": {"k": 2}}]})
    >>> engine = open_engine(pd.DataFrame({"age": [30, 41, 30]}), job, "duckdb")
    >>> engine.n_rows
    3
    >>> engine.close()
    """
    source = data
    if isinstance(data, (str, os.PathLike)):
        source = FileSource(check_input_file(data, "data file"), csv=spec.csv)
    options = dict(engine_options or {})
    if engine_class(name).spills_to_disk:  # beyond the limit it spills: the peak stays bounded
        limit = min(memory_budget(DUCKDB_MEMORY_SHARE), DUCKDB_MEMORY_CAP)
        options["memory_limit"] = f"{max(limit >> 20, 256)}MB"
    engine = get_engine(name, source, **options)
    if not engine.writes_releases:
        engine.close()
        raise ParameterError(
            f"The {name} engine cannot compute frequency sets and write releases yet, so it "
            "cannot anonymize or check a job; use --engine duckdb (out of core) or --engine "
            "numpy (in memory)."
        )
    return engine
