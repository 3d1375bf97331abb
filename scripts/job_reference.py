"""Generate docs/reference/job-file.md from the declarations jobs are validated with.

The keys a job file may hold (``anonlab.io.job``), every registered algorithm, privacy model,
metric and engine (``anonlab._registry`` registries) with their parameters, their declared
constraints (``anonlab._validation.Param``) and the descriptions of their numpydoc
docstrings. ``python scripts/job_reference.py`` writes the page; ``--check`` exits with 1 when
the committed page differs. As a mkdocs hook (``hooks:`` in mkdocs.yml) it refuses to build
the site from a stale page, and ``tests/docs/test_job_reference.py`` fails on one.
"""

from __future__ import annotations

import inspect
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "reference" / "job-file.md"

#: What each top-level key of a job means. A key the job reader accepts without a line here
#: (or a line for a key it does not accept) stops the generator: the page cannot drift.
TOP_KEYS = {
    "separator": "CSV: the field separator, one character (`tab` or `'\\t'` for a tab); default `,`. A CSV release is written with it too.",
    "header": "CSV: whether the first line names the columns (a boolean); default `true`.",
    "quote": 'CSV: the quote character; default `"`.',
    "encoding": "CSV: the file's encoding, any of Python's names (`latin-1`, `utf-8`, ...); default UTF-8.",
    "na_values": "CSV: the markers of a missing value (a list); default the empty field and `?`.",
    "strip": "CSV: strip spaces around fields, as in UCI files (a boolean); default `false`.",
    "names": "CSV: the column names of a file without a header row (a list).",
    "quasi_identifiers": "The quasi-identifiers: a list of names, or a mapping from each name to its options ([below](#quasi-identifier-options)).",
    "sensitive": "The sensitive attributes (a list): released as they are, judged by the models that name them.",
    "identifiers": "Columns that identify people (a list): dropped, never released.",
    "insensitive": "Columns released as they are, knowingly (a list): exempt from the identifying-column check.",
    "identifying_threshold": "The share of records a column (or pair) may make unique before `anonymize` refuses to release it undeclared.",
    "models": "The privacy models, a list of `{name: {parameters}}` ([privacy models](#privacy-models)); every one must hold.",
    "suppression": "The largest share of the rows that may be suppressed.",
    "metric": "The information-loss metric: a name, or `{name: ..., parameters}` ([metrics](#metrics)); default `loss`.",
    "algorithm": "The algorithm: a name, or `{name: ..., parameters}` ([algorithms](#algorithms)); default `optimal`.",
    "privacyfrost2": "The older form of PrivacyFrost2's parameters, beside `algorithm: privacyfrost2` (prefer `algorithm: {name: privacyfrost2, ...}`).",
    "output": "`{suppressed: remove}` (the default: suppressed rows are left out) or `{suppressed: mask}` (their quasi-identifiers become `*`).",
    "personalized": "Per-record leakage limits: `{limit_column: COLUMN}`, `{default_limit: 0.25}` or both, and `release_limits: true` to release the limit column.",
    "weight": "A column of sampling weights: `COLUMN` or `{column: COLUMN, release: true}`; never a quasi-identifier, dropped from the release unless `release: true`.",
    "population": "The population table the sample was drawn from, for `k_map` and `delta_presence`: `FILE` or `{file: FILE}` (relative to the job).",
}

QI_KEYS = {
    "hierarchy": "An ARX-format hierarchy file (relative to the job), or `auto`.",
    "mask": "Build a masking hierarchy ([builders](#hierarchy-builders)).",
    "intervals": "Build an interval hierarchy ([builders](#hierarchy-builders)).",
    "dates": "Build a date hierarchy ([builders](#hierarchy-builders)).",
    "auto": "Infer the hierarchy from the column's values ([builders](#hierarchy-builders)).",
    "min_level": "The lowest level the release may use.",
    "max_level": "The highest level the release may use (by default the hierarchy's top).",
    "weight": "The attribute's weight in the metric.",
    "priority": "PrivacyFrost2's priority `v_i` (higher keeps finer); default 1.",
}


_ROLE = re.compile(r":(?:class|func|meth|attr|data|mod|obj|ref|any):`~?(?:[\w.]*\.)?([^`]+)`")


def _plain(text: str) -> str:
    """A docstring's reST as Markdown: roles become code, double backticks single."""
    text = _ROLE.sub(r"`\1`", text)
    return re.sub(r"``([^`]+)``", r"`\1`", text)


#: What the metrics' parameters mean (the metrics module's docstring); every parameter of a
#: registered metric factory must have a line.
METRIC_PARAMETERS = {
    "monotonic": "Build ARX's monotonic variant of the metric (a boolean).",
    "gamma": "ARX's gs-factor in [0, 1]: how generalization and suppression are weighed.",
    "aggregate": "How the attributes' losses are combined: `sum`, `arithmetic`, `geometric`, `max` or `rank`.",
    "weights": "A weight >= 0 per attribute (a mapping).",
    "n_sensitive": "How many sensitive attributes the information-left degree counts.",
}


def _cell(text: str) -> str:
    return _plain(" ".join(str(text).split())).replace("|", "\\|")


def _parameters_section(doc: str | None) -> dict[str, str]:
    """The numpydoc ``Parameters`` entries of ``doc``: name -> description in one line."""
    if not doc:
        return {}
    lines = inspect.cleandoc(doc).splitlines()
    out: dict[str, str] = {}
    i = 0
    while i < len(lines) - 1:
        if lines[i].strip() == "Parameters" and set(lines[i + 1].strip()) == {"-"}:
            i += 2
            names: list[str] = []
            while i < len(lines):
                line = lines[i]
                if i + 1 < len(lines) and line.strip() and set(lines[i + 1].strip()) == {"-"}:
                    return out
                if line and not line.startswith(" "):
                    names = [n.strip().lstrip("*") for n in line.split(":")[0].split(",")]
                    for n in names:
                        out[n] = ""
                elif line.strip():
                    for n in names:
                        out[n] = (out[n] + " " + line.strip()).strip()
                i += 1
            return out
        i += 1
    return out


def _summary(doc: str | None) -> str:
    """The first paragraph of a docstring, in one line."""
    if not doc:
        return ""
    first = inspect.cleandoc(doc).split("\n\n", 1)[0]
    return _plain(" ".join(first.split()))


def _default(p: inspect.Parameter) -> str:
    if p.default is inspect.Parameter.empty:
        return "required"
    return f"`{p.default!r}`"


def _param_table(
    func: Callable[..., Any],
    constraints: dict[str, Any],
    docs: dict[str, str],
    skip: tuple[str, ...] = ("self",),
) -> list[str]:
    params = [
        p
        for p in inspect.signature(func).parameters.values()
        if p.name not in skip and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
    ]
    if not params:
        return ["No parameters.", ""]
    rows = ["| parameter | default | accepts | meaning |", "|---|---|---|---|"]
    for p in params:
        rule = constraints.get(p.name)
        accepts = rule.describe() if rule is not None else ""
        rows.append(
            f"| `{p.name}` | {_cell(_default(p))} | {_cell(accepts)} | {_cell(docs.get(p.name, ''))} |"
        )
    return [*rows, ""]


def _own(entries: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    """A registry's entries that anonlab itself defines (not an installed package's plugins)."""
    return [(n, e) for n, e in entries if getattr(e, "__module__", "").startswith("anonlab.")]


def _same_keys(declared: Any, described: dict[str, str], what: str) -> None:
    declared, described_keys = set(declared), set(described)
    if declared != described_keys:
        raise SystemExit(
            f"scripts/job_reference.py: the {what} differ from the job reader's: "
            f"undescribed {sorted(declared - described_keys)}, "
            f"unknown {sorted(described_keys - declared)}."
        )


def render() -> str:
    """The page, from the declarations of the installed (or checked-out) anonlab."""
    from anonlab.algorithms import ALGORITHMS
    from anonlab.data.builders import BUILDERS, builder_options
    from anonlab.engines import ENGINES
    from anonlab.io import job
    from anonlab.metrics import METRICS
    from anonlab.models import MODELS

    _same_keys(job._TOP_KEYS, TOP_KEYS, "top-level keys")
    _same_keys(job._QI_KEYS, QI_KEYS, "quasi-identifier options")
    key_params: dict[str, Any] = dict(job._KEY_PARAMS)
    qi_params: dict[str, Any] = dict(job._QI_PARAMS)

    out = [
        "# Job-file reference",
        "",
        "<!-- Generated by scripts/job_reference.py from the declarations jobs are validated",
        "     with; do not edit (tests/docs/test_job_reference.py fails when it is stale). -->",
        "",
        "Every key a job file may hold, every algorithm, privacy model and metric it may name,",
        "with their parameters, the values each accepts (as the error for a bad value says it)",
        "and their meaning from the docstrings. This page is generated from the code that",
        "validates jobs, so it says what anonlab accepts today. A key or a parameter not listed",
        "here is refused with the valid ones. How to write a job: [the job file](../guide/jobs.md).",
        "",
        "## Top-level keys",
        "",
        "| key | accepts | meaning |",
        "|---|---|---|",
    ]
    for key in sorted(TOP_KEYS):
        rule = key_params.get(key)
        out.append(
            f"| `{key}` | {_cell(rule.describe() if rule else '')} | {_cell(TOP_KEYS[key])} |"
        )
    out += [
        "",
        "Sub-keys: `output:` takes "
        + ", ".join(f"`{k}`" for k in job._OUTPUT_KEYS)
        + "; `weight:` "
        + ", ".join(f"`{k}`" for k in job._WEIGHT_KEYS)
        + "; `population:` "
        + ", ".join(f"`{k}`" for k in job._POPULATION_KEYS)
        + "; `personalized:` "
        + ", ".join(f"`{k}`" for k in job._PERSONALIZED_KEYS)
        + f" (`default_limit` {job._DEFAULT_LIMIT.describe()}).",
        "",
    ]

    out += [
        "## Quasi-identifier options",
        "",
        "Under `quasi_identifiers:`, each attribute takes `{}` (no hierarchy: value -> `*`) "
        "or these options; at most one of " + ", ".join(f"`{b}`" for b in job._BUILDERS) + ".",
        "",
        "| option | accepts | meaning |",
        "|---|---|---|",
    ]
    for key in sorted(QI_KEYS):
        rule = qi_params.get(key)
        out.append(
            f"| `{key}` | {_cell(rule.describe() if rule else '')} | {_cell(QI_KEYS[key])} |"
        )
    out.append("")

    out += ["## Hierarchy builders", ""]
    from anonlab.data.auto import auto_hierarchy, infer_hierarchy

    for kind, func in BUILDERS.items():
        doc_func = auto_hierarchy if kind == "auto" else func
        docs = _parameters_section(doc_func.__doc__)
        if kind == "auto":  # its options are infer_hierarchy's, documented there
            docs = {**_parameters_section(infer_hierarchy.__doc__), **docs}
        out += [f"### `{kind}`", "", _summary(doc_func.__doc__), ""]
        options = builder_options(kind)
        skip = tuple(p for p in inspect.signature(func).parameters if p not in options)
        out += _param_table(func, {}, docs, skip=skip)

    out += [
        "## Algorithms",
        "",
        "`algorithm: NAME` or `algorithm: {name: NAME, PARAMETER: VALUE, ...}`.",
        "",
    ]
    for name, cls in _own(ALGORITHMS.registered()):
        family = getattr(cls, "family", "") or ""
        out += [f"### `{name}`", ""]
        if family:
            out += [f"*{family}* (`{cls.__module__}.{cls.__qualname__}`)", ""]
        out += [_summary(cls.__doc__), ""]
        docs = _parameters_section(cls.__doc__)
        out += _param_table(cls.__init__, dict(cls._parameter_constraints), docs)

    out += ["## Privacy models", "", "`models: [{NAME: {PARAMETER: VALUE, ...}}, ...]`.", ""]
    for name, cls in _own(MODELS.registered()):
        out += [
            f"### `{name}`",
            "",
            f"`{cls.__module__}.{cls.__qualname__}`: {_summary(cls.__doc__)}",
            "",
        ]
        docs = _parameters_section(cls.__doc__)
        out += _param_table(cls.__init__, dict(cls._parameter_constraints), docs)

    out += [
        "## Metrics",
        "",
        "`metric: NAME` or `metric: {name: NAME, PARAMETER: VALUE, ...}`.",
        "",
    ]
    from anonlab.metrics import _MONOTONIC
    from anonlab.metrics._util import GAMMA
    from anonlab.metrics.info_left import InformationLeft

    metric_rules = {
        "monotonic": _MONOTONIC,
        "gamma": GAMMA,
        **InformationLeft._parameter_constraints,
    }
    used = {p for _, f in _own(METRICS.registered()) for p in inspect.signature(f).parameters}
    _same_keys(used, METRIC_PARAMETERS, "metric parameters")
    for name, factory in _own(METRICS.registered()):
        out += [f"### `{name}`", "", _summary(factory.__doc__), ""]
        out += _param_table(factory, metric_rules, METRIC_PARAMETERS)

    out += [
        "## Engines",
        "",
        "`--engine` on the command line, `engine=` in Python: "
        + ", ".join(f"`{n}`" for n in ENGINES.names())
        + " ([engines and scale](../guide/engines.md)).",
        "",
    ]
    return "\n".join(out).rstrip("\n") + "\n"


def on_pre_build(config: Any) -> None:
    """mkdocs hook: refuse to build the site from a stale job-file page."""
    if PAGE.read_text(encoding="utf-8") != render():
        raise SystemExit("docs/reference/job-file.md is stale: run python scripts/job_reference.py")


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        stale = not PAGE.exists() or PAGE.read_text(encoding="utf-8") != text
        if stale:
            print("docs/reference/job-file.md is stale: run python scripts/job_reference.py")
        return int(stale)
    PAGE.write_text(text, encoding="utf-8")
    print(f"wrote {PAGE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
