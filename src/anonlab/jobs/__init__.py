"""Anonymization jobs: a job file and a table become a Problem, an algorithm, a release.

The public entry points are :func:`anonlab.anonymize` and :func:`anonlab.check`. A job names
its algorithm (``algorithm: optimal`` or ``{name: privacyfrost2, score: log}``); the
algorithm, looked up in :data:`anonlab.algorithms.ALGORITHMS`, returns a recoding of the
:class:`~anonlab.release.problem.Problem`; :func:`anonlab.release.verify` re-checks the
released table independently, suppresses within the limit or raises
:class:`~anonlab.exceptions.PrivacyCheckError`, and measures the loss on the release; only
then is anything returned or written.

The path of a job is :func:`anonlab.jobs.run.anonymize`. Where things live:

``problem``
    The job bound to its data (:func:`build_problem`), the job's files, the models.
``limits``
    Per-record leakage limits (personalized privacy).
``identifying``
    The undeclared columns that identify people: refused (``anonymize``) or warned of.
``engines``
    The engine a job runs on (``auto``'s choice and its note), opened.
``base``
    The :class:`~anonlab.jobs.base.Run` protocol and the fit -> verify step.
``in_memory``, ``frequency_set``, ``blocks`` (with ``union``)
    The runs: the rows in memory; out of core on the frequency set; out of core block by
    block. A new execution mode is a new :class:`~anonlab.jobs.base.Run` in
    :data:`anonlab.jobs.run.RUNS`.
``run``
    :func:`anonymize`, the one skeleton, and :func:`validate_job`.
``check``
    :func:`check` of a table, or of a release beside its original.
"""

from __future__ import annotations

from anonlab.jobs.check import CheckReport, check
from anonlab.jobs.engines import JOB_ENGINES, choose_engine
from anonlab.jobs.problem import JobLike, build_problem, input_files, load_job
from anonlab.jobs.run import anonymize, validate_job
from anonlab.release import AnonymizationResult

__all__ = [
    "AnonymizationResult",
    "CheckReport",
    "JOB_ENGINES",
    "JobLike",
    "anonymize",
    "build_problem",
    "check",
    "choose_engine",
    "input_files",
    "load_job",
    "validate_job",
]
