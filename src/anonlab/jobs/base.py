"""The :class:`Run` protocol every way of running a job follows, and what a run hands back.

A run binds the job to its data (:meth:`Run.problem`), finds the release and verifies it
(:meth:`Run.release`), writes it where asked and re-checks what it wrote (:meth:`Run.write`),
and lets go of what it holds (:meth:`Run.close`). :func:`anonlab.jobs.run.anonymize` chooses
the run from the algorithm's and the engine's declared capabilities (:meth:`Run.fits`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self

from anonlab._progress import Progress, stage
from anonlab._threads import single_threaded_blas
from anonlab.algorithms.base import Anonymizer
from anonlab.engines import Engine
from anonlab.exceptions import PrivacyCheckError
from anonlab.io.job import JobSpec
from anonlab.release import Problem, verify
from anonlab.release.recoding import Recoding
from anonlab.release.result import BlockSummary, SearchStats
from anonlab.release.verify import Release

__all__ = ["Released", "Run", "Task", "fit_and_verify"]


@dataclass(frozen=True)
class Task:
    """What a run is asked to do: the job, its algorithm, where to write, what to protect.

    Attributes
    ----------
    data : path, DataFrame, pyarrow Table or EncodedTable
        The table (an out-of-core run reads it through its engine).
    spec : JobSpec
        The job.
    algorithm : Anonymizer
        The job's algorithm, its parameters validated.
    output : path, optional
        Where to write the release.
    protect : tuple of Path
        The job's input files, never overwritten (:func:`anonlab.jobs.problem.input_files`).
    progress : callable, optional
        Told the stages and the search's advance.
    block_rows : int, optional
        A block run's rows per block (None: the default).
    engine : str
        The engine's name (an out-of-core run opens it).

    Examples
    --------
    >>> from anonlab.algorithms import build_anonymizer
    >>> from anonlab.jobs.problem import load_job
    >>> job = load_job({"quasi_identifiers": {"age": {}}, "models": [{"k_anonymity": {"k": 2}}],
    ...                 "output": {"suppressed": "mask"}})
    >>> Task(None, job, build_anonymizer("optimal"), None, ()).mask
    True
    """

    data: Any
    spec: JobSpec
    algorithm: Anonymizer
    output: str | os.PathLike[str] | None
    protect: tuple[Path, ...]
    progress: Progress | None = None
    block_rows: int | None = None
    engine: str = "numpy"

    @property
    def mask(self) -> bool:
        """Whether suppressed rows are masked (``output: {suppressed: mask}``), not removed."""
        return bool(self.spec.output.get("suppressed", "remove") == "mask")


@dataclass(frozen=True)
class Released:
    """What a run released: the verified release and what the algorithm did.

    Attributes
    ----------
    release : Release or None
        The verified release (None until a block run has written and re-checked its
        union: :meth:`Run.write` returns it complete).
    recoding : Recoding or None
        The algorithm's recoding (None for a block run: see ``blocks``).
    search : SearchStats
        The algorithm's own figures (a block run's: summed over its blocks).
    blocks : BlockSummary, optional
        A block run's blocks and their recodings' summaries.

    Examples
    --------
    >>> Released(None, None, SearchStats(0.0, 0)).verified()
    Traceback (most recent call last):
    ...
    anonlab.exceptions.PrivacyCheckError: The run returned no verified release. Nothing was released.
    """

    release: Release | None
    recoding: Recoding | None
    search: SearchStats
    blocks: BlockSummary | None = None

    def verified(self) -> Release:
        """The verified release (:class:`~anonlab.exceptions.PrivacyCheckError` if none)."""
        if self.release is None:  # pragma: no cover - every run's write() sets it
            raise PrivacyCheckError("The run returned no verified release. Nothing was released.")
        return self.release


class Run(Protocol):
    """One way of running a job: in memory, on a frequency set, or block by block.

    A run class declares when it fits (:meth:`fits`) and what it refuses before its engine
    opens (:meth:`refuse`); :meth:`open` makes a run of a task (opening its engine).

    Examples
    --------
    >>> from anonlab.algorithms import build_anonymizer
    >>> from anonlab.engines import engine_class
    >>> from anonlab.jobs.run import RUNS
    >>> [run.label for run in RUNS if run.fits(build_anonymizer("top_down"), engine_class("duckdb"))]
    ['blocks']
    """

    #: What the run is called in messages.
    label: ClassVar[str]

    @classmethod
    def fits(cls, algorithm: Anonymizer, engine: type[Engine]) -> bool:
        """Whether this run runs ``algorithm`` on ``engine`` (their declared capabilities)."""
        ...

    @classmethod
    def refuse(cls, task: Task) -> None:
        """Refuse, before the engine opens, what the run would refuse after reading."""
        ...

    @classmethod
    def open(cls, task: Task, engine_options: Mapping[str, Any] | None = None) -> Self:
        """A run of ``task``, its engine open (with ``engine_options``)."""
        ...

    def problem(self) -> Problem:
        """The job bound to its data, checked (identifying columns refused)."""
        ...

    def release(self, problem: Problem) -> Released:
        """Fit the algorithm and verify its release."""
        ...

    def write(self, problem: Problem, released: Released) -> Released:
        """Write the release where asked, re-check what was written; the complete release."""
        ...

    def close(self) -> None:
        """Let go of the engine and any temporary file."""
        ...


def fit_and_verify(algorithm: Anonymizer, problem: Problem, task: Task) -> Released:
    """Fit ``algorithm`` on ``problem`` and verify its release (:func:`anonlab.release.verify`).

    Parameters
    ----------
    algorithm : Anonymizer
    problem : Problem
    task : Task
        Its progress is told the stages; its job says whether suppressed rows are masked.

    Returns
    -------
    Released

    Examples
    --------
    >>> from anonlab import EncodedTable
    >>> from anonlab.algorithms import build_anonymizer
    >>> from anonlab.jobs.problem import build_problem, load_job
    >>> t = EncodedTable.from_columns({"sex": ["F", "M"] * 5})
    >>> job = load_job({"quasi_identifiers": {"sex": {}}, "models": [{"k_anonymity": {"k": 5}}]})
    >>> algorithm = build_anonymizer("optimal")
    >>> released = fit_and_verify(algorithm, build_problem(t, job), Task(t, job, algorithm, None, ()))
    >>> released.verified().verification.k_after
    5
    """
    stage(task.progress, "searching")
    with single_threaded_blas():
        algorithm.fit(problem, progress=task.progress)
        stage(task.progress, "verifying")
        release = verify(
            problem, algorithm.recoding_, mask_suppressed=task.mask, context=algorithm.context_
        )
    return Released(release, algorithm.recoding_, algorithm.search_)
