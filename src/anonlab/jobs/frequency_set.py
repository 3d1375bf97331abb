"""The frequency-set run: out of core, a full-domain search on the distinct combinations.

The engine computes the frequency set (the distinct combinations of the quasi-identifiers
and the models' attributes, with their counts); the algorithm searches and the release layer
verifies on it; the engine then streams the release into a temporary file, groups the written
file again and the models judge it (:func:`~anonlab.release.recheck_written`) before it is
renamed into place.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

from anonlab._progress import stage
from anonlab.algorithms.base import Anonymizer
from anonlab.engines import Engine
from anonlab.engines.base import ReleasePlan
from anonlab.exceptions import ParameterError
from anonlab.io.atomic import PARQUET_DATASET, atomic_folder, output_format, readable_atomic_write
from anonlab.jobs import engines
from anonlab.jobs.base import Released, Task, fit_and_verify
from anonlab.jobs.identifying import refuse_identifiers
from anonlab.jobs.problem import build_problem, job_models, refuse_record_models
from anonlab.release import Problem, recheck_written
from anonlab.release.recoding import FullDomain

__all__ = ["FrequencySet"]


class FrequencySet:
    """A job run out of core on the engine's frequency set (full-domain searches).

    Parameters
    ----------
    task : Task
    engine : Engine
        An open out-of-core engine over the task's data.

    Examples
    --------
    >>> import pandas as pd
    >>> from anonlab.algorithms import build_anonymizer
    >>> from anonlab.jobs.engines import open_engine
    >>> from anonlab.jobs.problem import load_job
    >>> job = load_job({"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 5}}]})
    >>> data = pd.DataFrame({"sex": ["F", "M"] * 5})
    >>> run = FrequencySet(Task(data, job, build_anonymizer("optimal"), None, ()),
    ...                    open_engine(data, job, "duckdb"))
    >>> problem = run.problem()
    >>> problem.table.n_rows, problem.n_records
    (2, 10)
    >>> run.write(problem, run.release(problem)).verified().verification.k_after
    5
    >>> run.close()
    """

    label: ClassVar[str] = "frequency set"

    def __init__(self, task: Task, engine: Engine) -> None:
        self.task = task
        self.engine = engine

    @classmethod
    def fits(cls, algorithm: Anonymizer, engine: type[Engine]) -> bool:
        """An out-of-core engine and an algorithm that accepts a frequency set."""
        return not engine.in_memory and algorithm.accepts_frequency_set()

    @classmethod
    def refuse(cls, task: Task) -> None:
        """Refuse per-record limits (they need the rows) before the engine opens."""
        refuse_record_models(task.spec, job_models(task.spec), task.engine)

    @classmethod
    def open(cls, task: Task, engine_options: Mapping[str, Any] | None = None) -> Self:
        """A run of ``task`` over its engine, opened (:func:`anonlab.jobs.engines.open_engine`)."""
        return cls(task, engines.open_engine(task.data, task.spec, task.engine, engine_options))

    def problem(self) -> Problem:
        """The engine's frequency set bound to the job, checked."""
        problem = build_problem(None, self.task.spec, engine=self.engine)
        self.task.algorithm.check(problem)
        refuse_identifiers(problem, self.task.spec, self.engine)
        return problem

    def release(self, problem: Problem) -> Released:
        """Search and verify on the frequency set; the recoding must be full-domain."""
        algorithm = self.task.algorithm
        released = fit_and_verify(algorithm, problem, self.task)
        recoding = released.recoding
        if not isinstance(recoding, FullDomain) or recoding.rows is not None:  # pragma: no cover
            raise ParameterError(  # accepts_frequency_set() promises a full-domain recoding
                f"Algorithm {algorithm.name!r} returned a {type(recoding).__name__} release, "
                f"which the {self.engine.name} engine cannot write. Nothing was written."
            )
        return released

    def write(self, problem: Problem, released: Released) -> Released:
        """Stream the release into a temporary file beside the output, group the written
        file again and let the models judge it (:func:`~anonlab.release.recheck_written`);
        only a file that passes is renamed over the output. A character device
        (``/dev/stdout``) gets the file's bytes after the check; a Parquet dataset folder
        (an output ending with ``/``) is written into a temporary folder and renamed into
        place likewise."""
        task, engine = self.task, self.engine
        if task.output is None:
            return released
        output = task.output
        stage(task.progress, f"writing {Path(output).name}")
        release = released.verified()
        recoding = released.recoding
        assert isinstance(recoding, FullDomain)  # (release() refuses any other)
        hidden = set(task.spec.identifiers) | set(problem.identifiers)
        suppressed = release.classes.key_labels() if release.suppressed.any() else []
        plan = ReleasePlan(
            columns=tuple(c for c in engine.columns if c not in hidden),
            quasi_identifiers=problem.quasi_identifiers,
            levels=recoding.vector(problem),
            hierarchies=problem.hierarchies,
            suppressed=tuple(
                tuple(None if x is None else str(x) for x in key)
                for key, s in zip(suppressed, release.suppressed)
                if s
            ),
            mask_suppressed=task.mask,
        )
        fmt = output_format(output)
        separator = task.spec.csv.separator
        staging = (
            atomic_folder(output)
            if fmt == PARQUET_DATASET
            else readable_atomic_write(output, protect=task.protect)
        )
        with staging as target:
            engine.write_release(plan, target, fmt=fmt, separator=separator)
            written = engine.release_stats(
                target,
                fmt=fmt,
                quasi_identifiers=list(problem.quasi_identifiers),
                sensitive=list(problem.sensitive),
                separator=separator,
            )
            recheck_written(
                problem,
                written,
                release.verification,
                mask_suppressed=task.mask,
                levels=recoding.levels,
            )
        return released

    def close(self) -> None:
        """Close the engine."""
        self.engine.close()
