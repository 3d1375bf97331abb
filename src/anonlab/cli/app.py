"""``anonlab diagnose`` and ``anonlab demo``: the Diagnosis Centre on the command line."""

from __future__ import annotations

import json
import signal
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand

from anonlab import _lazy
from anonlab.io import temporary

if TYPE_CHECKING:
    from anonlab import api
    from anonlab.io import CsvOptions
    from anonlab.report import Section
else:  # loaded by the first command that uses it: ``anonlab --help`` does not wait for it
    api = _lazy.module("anonlab.api")


class _Command(TyperCommand):
    """A command whose help names the registries' entries, filled in when the help is shown.

    The help texts say ``{algorithms}``, ``{partition_algorithms}``, ``{models}`` and
    ``{engines}`` where :func:`anonlab.api.help_lists` names them; filling them in loads
    every algorithm, which ``anonlab --help`` and a command that runs need not wait for.
    """

    def format_help(self, ctx: Any, formatter: Any) -> None:
        lists = api.help_lists()

        def fill(text: str | None) -> str | None:
            for key, names in lists.items():
                text = text.replace("{" + key + "}", names) if text else text
            return text

        self.help = fill(self.help)
        for param in self.params:
            if getattr(param, "help", None):
                param.help = fill(param.help)  # type: ignore[attr-defined]
            param.metavar = fill(param.metavar)
        super().format_help(ctx, formatter)


app = typer.Typer(
    name="anonlab",
    help="A privacy diagnosis centre and anonymizer for tabular microdata.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode="markdown",
    pretty_exceptions_enable=False,
)
out = Console()
err = Console(stderr=True)


#: ``--engine`` of the commands that open one engine: a name of the engine registry (the
#: help lists them; an unknown name is refused by the registry, with the closest name).
EngineOption = Annotated[str, typer.Option(help="Engine.", metavar="[{engines}]")]


def _version(value: bool) -> None:
    if value:
        import anonlab

        out.print(f"anonlab {anonlab.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """A privacy diagnosis centre and anonymizer for tabular microdata."""


def _split(value: str | None) -> list[str] | None:
    """Column names given as ``a,b,c`` (in Unicode NFC, as the data's are read)."""
    if value is None:
        return None
    items = [api.column_name(v.strip()) for v in value.split(",") if v.strip()]
    return items


def _pairs(values: list[str] | None, option: str) -> dict[str, str]:
    """``ATTRIBUTE=VALUE`` options: the attribute in Unicode NFC, as the data's names."""
    result: dict[str, str] = {}
    for item in values or []:
        if "=" not in item:
            raise api.ParameterError(f"{option} takes ATTRIBUTE=VALUE; got {item!r}.")
        key, val = item.split("=", 1)
        result[api.column_name(key.strip())] = val.strip()
    return result


def _show_warning(
    message: Warning | str,
    category: type[Warning],
    filename: str,
    lineno: int,
    file: Any = None,
    line: str | None = None,
) -> None:
    err.print(f"[bold yellow]warning:[/] {escape(str(message))}", highlight=False, soft_wrap=True)


@contextmanager
def _errors() -> Iterator[None]:
    """One line and exit code 2 for every error of the input; warnings as one line each."""
    with warnings.catch_warnings():
        warnings.simplefilter("always", api.PrivacyRiskWarning)
        warnings.showwarning = _show_warning
        try:
            api.memory_budget()  # ANONLAB_MEMORY_BUDGET, if set, is a size: said before any work
            yield
        except api.AnonlabError as exc:
            # escaped: a message may hold brackets ("pip install 'anonlab[duckdb]'")
            err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True)
            raise typer.Exit(2) from None
        except OSError as exc:  # a file the checks could not foresee (a disk full, ...)
            where = f" ({exc.filename})" if exc.filename else ""
            err.print(
                f"[bold red]error:[/] {exc.strerror or exc}{where}.",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(2) from None
        except MemoryError:
            err.print(
                "[bold red]error:[/] this machine ran out of memory; ask a smaller question "
                "(fewer attributes or levels) or use --engine duckdb.",
                highlight=False,
                soft_wrap=True,
            )
            raise typer.Exit(2) from None


def _clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:d}:{minutes:02d}:{secs:02d}"


class _Count(ProgressColumn):
    """Steps done, out of the total when it is known; blank for a step without a count."""

    def render(self, task: Task) -> Text:
        if task.total is None:
            return Text(f"{int(task.completed):,}" if task.completed else "")
        return Text(f"{int(task.completed):,}/{int(task.total):,}", style="progress.download")


class _Elapsed(ProgressColumn):
    """Time since the command started (every step's bar counts from there)."""

    def render(self, task: Task) -> Text:
        return Text(_clock(task.get_time() - task.fields["started"]), style="progress.elapsed")


class _Remaining(ProgressColumn):
    """Time left at the step's average pace since it started, the time since its last
    advance included: while nothing advances the estimate grows, where Rich's (the pace
    between its last samples) would stay as it was. Blank until a total is known and a
    first step is done."""

    def render(self, task: Task) -> Text:
        done, total, start = task.completed, task.total, task.start_time
        if total is None or not done or start is None or done >= total:
            return Text("")
        left = (task.get_time() - start) * (total - done) / done
        return Text(f"{_clock(left)} left", style="progress.remaining")


def _columns() -> tuple[ProgressColumn | str, ...]:
    """The columns of the progress bars: step, bar, count, elapsed, time left."""
    return (
        TextColumn("{task.description}"),
        BarColumn(),
        _Count(),
        _Elapsed(),
        _Remaining(),
    )


class _Notes:
    """Where the API's notes go without a progress bar: one line each on stderr, once (a
    command that runs many jobs, as explore does, says the same thing once)."""

    def __init__(self) -> None:
        self._said: set[str] = set()

    def __call__(self, step: int, total: int | None) -> None:
        del step, total

    def note(self, message: str) -> None:
        if message not in self._said:
            self._said.add(message)
            err.print(f"[bold]note:[/] {escape(message)}", highlight=False, soft_wrap=True)


class _Bar(_Notes):
    """A progress callback for the API: ``bar(advance, total)``, ``bar.stage(message)`` and
    ``bar.note(message)`` (a line above the bar, which then shows it too).

    Each stage is a new bar: its count, pace and time left start afresh (a stage that counts
    nothing shows none), the elapsed time counts from the command's start. A stage message
    inside a counted loop ("block 3 of about 9 done", then ``bar(1, 9)``) carries the count
    and its pace on.
    """

    def __init__(self, bar: Progress, label: str) -> None:
        super().__init__()
        self._bar = bar
        self._started = bar.get_time()
        self._task = bar.add_task(label, total=None, started=self._started)
        self._before: Task | None = None  # the counted step the last stage message ended

    def _current(self) -> Task:
        return next(t for t in self._bar.tasks if t.id == self._task)

    def __call__(self, step: int, total: int | None) -> None:
        before, self._before = self._before, None
        if before is not None and total is not None and before.total == total > before.completed:
            self._current().start_time = before.start_time
            step += int(before.completed)
        self._bar.update(self._task, advance=step, total=total)

    def stage(self, message: str) -> None:
        current = self._current()
        self._before = current if current.total is not None else None
        self._bar.remove_task(self._task)
        self._task = self._bar.add_task(message, total=None, started=self._started)

    def note(self, message: str) -> None:
        super().note(message)
        self.stage(message)


@contextmanager
def _progress(enabled: bool, label: str = "subsets") -> Iterator[_Bar | None]:
    """A progress bar on stderr when it is a terminal and ``enabled`` (else None); the
    API's notes (:func:`api.listening`) are printed on stderr either way."""
    from anonlab import api

    if not enabled or not err.is_terminal:
        with api.listening(_Notes()):
            yield None
        return
    with Progress(*_columns(), console=err, transient=True) as bar:
        progress = _Bar(bar, label)
        with api.listening(progress):
            yield progress


#: ``--spark-master``, the same option on every command that takes ``--engine spark``.
SparkMaster = Annotated[
    str | None,
    typer.Option(
        "--spark-master",
        help="With --engine spark: where Spark runs (spark://host:7077, yarn, local[4]); "
        "default local[2].",
    ),
]

# How a command reads a CSV table: one set of options, shared by every command that takes
# the table's CSV options on the command line (diagnose, report, hierarchies).
#: The sample's place in its population, the same options on every command that measures risk
#: (diagnose --risk, report, explore): the journalist and marketer models and the
#: population-uniqueness estimates need one of them.
SamplingFraction = Annotated[
    float | None,
    typer.Option(
        help="The share of the population the table holds, in (0, 1]: adds the journalist and "
        "marketer models and the population-uniqueness estimates (diagnose: with --risk)."
    ),
]
PopulationSize = Annotated[
    int | None,
    typer.Option(
        help="The number of records of the population the table was sampled from (instead of "
        "--sampling-fraction)."
    ),
]
Weight = Annotated[
    str | None,
    typer.Option(
        help="A column of sampling weights, the population records each record stands for "
        "(with a job, its 'weight' by default): adds the Benedetti-Franconi risk and the population "
        "estimates."
    ),
]
Separator = Annotated[
    str,
    typer.Option(
        "--separator", "-s", help="CSV field separator: one character, or tab ('tab' or '\\t')."
    ),
]
NoHeader = Annotated[bool, typer.Option("--no-header", help="The CSV has no header row.")]
Names = Annotated[str | None, typer.Option(help="Column names for a CSV without header: a,b,c.")]
Quote = Annotated[str, typer.Option(help="CSV quote character.")]
Encoding = Annotated[str, typer.Option(help="Text encoding of the CSV.")]
Na = Annotated[
    list[str] | None,
    typer.Option("--na", help="Missing-value marker (repeat); default: empty and '?'."),
]
Strip = Annotated[bool, typer.Option("--strip", help="Strip spaces around CSV fields.")]


def _csv(
    separator: str,
    no_header: bool,
    names: str | None,
    quote: str,
    encoding: str,
    na: list[str] | None,
    strip: bool,
) -> CsvOptions:
    """The :class:`CsvOptions` of the shared CSV options."""
    from anonlab.io import CsvOptions

    return CsvOptions(
        separator=separator,
        header=not no_header,
        quote=quote,
        encoding=encoding,
        na_values=tuple(na) if na is not None else CsvOptions().na_values,
        strip=strip,
        names=tuple(_split(names) or ()) or None,
    )


@app.command(cls=_Command)
def diagnose(
    data: Annotated[str, typer.Argument(help="CSV or Parquet file.", show_default=False)],
    qi: Annotated[
        str | None, typer.Option("--qi", help="The quasi-identifier set S: a,b,c.")
    ] = None,
    attributes: Annotated[
        str | None,
        typer.Option(help="Candidate attributes of subset searches (default: all columns)."),
    ] = None,
    k: Annotated[int | None, typer.Option("--k", help="Required k.")] = None,
    delta: Annotated[float | None, typer.Option(help="Suppression threshold in [0, 1].")] = None,
    find_delta: Annotated[
        bool, typer.Option("--find-delta", help="Ask for the smallest delta.")
    ] = False,
    max_k: Annotated[
        int | None, typer.Option(help="Largest k of the delta tables (Q11, Q12); default 50.")
    ] = None,
    engine: EngineOption = "numpy",
    spark_master: SparkMaster = None,
    separator: Separator = ",",
    no_header: NoHeader = False,
    names: Names = None,
    quote: Quote = '"',
    encoding: Encoding = "utf-8",
    na: Na = None,
    strip: Strip = False,
    drop_missing: Annotated[
        bool,
        typer.Option(
            "--drop-missing", help="Drop rows with a missing value in the attributes used."
        ),
    ] = False,
    hierarchy: Annotated[
        list[str] | None,
        typer.Option("--hierarchy", help="ATTRIBUTE=FILE, an ARX-format hierarchy (repeat)."),
    ] = None,
    level: Annotated[
        list[str] | None,
        typer.Option("--level", help="ATTRIBUTE=N: ask at hierarchy level N (repeat)."),
    ] = None,
    list_rows: Annotated[
        bool, typer.Option("--list-rows", help="List the positions of suppressed rows.")
    ] = False,
    risk: Annotated[
        bool, typer.Option("--risk", help="Re-identification risk summary for --qi.")
    ] = False,
    risk_threshold: Annotated[
        int | None,
        typer.Option(help="Class size below which a record is at risk (--risk); default 5."),
    ] = None,
    sampling_fraction: SamplingFraction = None,
    population_size: PopulationSize = None,
    weight: Weight = None,
    population: Annotated[
        str | None,
        typer.Option(
            help="With --risk: the population table (CSV or Parquet with the --qi columns); "
            "the journalist model counts each class there."
        ),
    ] = None,
    find_qis: Annotated[
        bool,
        typer.Option(
            "--find-qis", help="Find the minimal attribute subsets that single people out."
        ),
    ] = False,
    qi_threshold: Annotated[
        int | None,
        typer.Option(
            help="With --find-qis: a class smaller than this exposes its rows; default 2."
        ),
    ] = None,
    max_size: Annotated[
        int | None,
        typer.Option(help="Subset questions and --find-qis: largest subset size examined."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:
    """Diagnose a table: which k, which attribute subsets, how much suppression (Q1-Q12).

    The question is decided by what you give, as in the Diagnosis Centre paper:
    --qi and --k: Q1; --qi: Q2; --k: Q3; nothing: Q4; add --delta for Q5-Q8;
    --find-delta with --qi and --k: Q9, with --k: Q10, with --qi: Q11, alone: Q12.
    """
    from anonlab import api
    from anonlab.io.atomic import check_input_file

    with _errors():
        _check_applicable(
            qi=qi,
            attributes=attributes,
            k=k,
            delta=delta,
            find_delta=find_delta,
            max_k=max_k,
            list_rows=list_rows,
            risk=risk,
            risk_threshold=risk_threshold,
            sampling_fraction=sampling_fraction,
            population_size=population_size,
            weight=weight,
            population=population,
            find_qis=find_qis,
            qi_threshold=qi_threshold,
            max_size=max_size,
        )
        check_input_file(data, "data file")
        if population is not None:
            check_input_file(population, "population file")
        csv_options = _csv(separator, no_header, names, quote, encoding, na, strip)
        levels = {a: _int_level(a, v) for a, v in _pairs(level, "--level").items()}
        hierarchies = _pairs(hierarchy, "--hierarchy")
        missing = [a for a in levels if a not in hierarchies]
        if missing:
            raise api.ParameterError(
                f"--level {missing[0]}=... needs --hierarchy {missing[0]}=FILE."
            )
        qi_list = _split(qi)
        attr_list = _split(attributes)
        if qi_list is not None and not qi_list:
            raise api.ParameterError(
                "--qi is empty: no quasi-identifier was given. Name the columns, e.g. "
                "--qi age,sex,zip."
            )
        if attr_list is not None and not attr_list:
            raise api.ParameterError(
                "--attributes is empty: name the candidate columns, e.g. a,b,c."
            )
        needed = None  # --risk reads every column: it looks for identifying ones too
        if (qi_list is not None or attr_list is not None) and not risk:
            needed = list(dict.fromkeys((qi_list or []) + (attr_list or [])))
        if spark_master is not None and engine != "spark":
            raise api.ParameterError("--spark-master applies to --engine spark only.")
        engine_options: dict[str, Any] = {"master": spark_master} if spark_master else {}
        eng = api.open_engine(
            data,
            engine=engine,
            hierarchies={a: h for a, h in hierarchies.items() if needed is None or a in needed},
            csv_options=csv_options,
            drop_missing=(needed or True) if drop_missing else None,
            columns=needed,
            **engine_options,
        )
        if hierarchies or levels:
            _check_attribute_options(data, csv_options, hierarchies, levels, needed)
        with _progress(not as_json) as progress:
            if find_qis:
                result: Any = api.find_quasi_identifiers(
                    eng,
                    attr_list,
                    threshold=2 if qi_threshold is None else qi_threshold,
                    max_size=max_size,
                    levels=levels,
                    progress=progress,
                )
            elif risk:
                if qi_list is None:
                    raise api.ParameterError("--risk needs --qi (the quasi-identifier set).")
                result = api.risk(
                    eng,
                    qi_list,
                    threshold=5 if risk_threshold is None else risk_threshold,
                    levels=levels,
                    hierarchies=hierarchies if population is not None else None,
                    engine=engine,
                    csv_options=csv_options,
                    sampling_fraction=sampling_fraction,
                    population_size=population_size,
                    weight=weight,
                    population=population,
                )
            else:
                result = api.diagnose(
                    eng,
                    quasi_identifiers=qi_list,
                    attributes=attr_list,
                    k=k,
                    delta=delta,
                    find_delta=find_delta,
                    max_k=max_k,
                    levels=levels,
                    list_rows=list_rows,
                    progress=progress,
                    max_size=max_size,
                )
        if as_json:
            sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
        else:
            render(result)


def _check_attribute_options(
    data: str,
    csv_options: CsvOptions,
    hierarchies: dict[str, str],
    levels: dict[str, int],
    asked: list[str] | None,
) -> None:
    """--hierarchy and --level name columns of the file, and columns the question uses."""
    from anonlab.io.readers import column_names

    names = column_names(data, csv_options)
    for flag, columns in (("--hierarchy", list(hierarchies)), ("--level", list(levels))):
        for name in columns:
            if name not in names:
                raise api.ParameterError(
                    f"{flag} {name}=...: unknown column {name!r}."
                    f"{api.did_you_mean(name, names)} Available: "
                    f"{', '.join(map(repr, names))}."
                )
            if asked is not None and name not in asked:
                raise api.ParameterError(
                    f"{flag} {name}=...: column {name!r} is not among the attributes of the "
                    "question (--qi, --attributes); drop the option or add the column."
                )


#: The options that tell the population a table was sampled from (``diagnose --risk``).
_POPULATION_OPTIONS = ("sampling_fraction", "population_size", "weight", "population")


def _check_applicable(**given: Any) -> None:
    """Refuse options that do not apply to the question asked (one line naming them)."""
    on = {k for k, v in given.items() if v not in (None, False)}
    flag = {k: "--" + k.replace("_", "-") for k in given}
    if "find_qis" in on:
        mode, allowed = "--find-qis", {"find_qis", "attributes", "qi_threshold", "max_size"}
    elif "risk" in on:
        mode, allowed = "--risk", {"risk", "qi", "risk_threshold", *_POPULATION_OPTIONS}
    else:
        question = "Q5/Q6" if "delta" in on else "Q9-Q12" if "find_delta" in on else "Q1-Q4"
        mode, allowed = f"this question ({question})", {"qi", "attributes", "k", "delta"}
        allowed |= {"find_delta", "max_k", "list_rows", "max_size"}
        one_set = "qi" in on
        if "list_rows" in on and not (one_set and ("delta" in on or "find_delta" in on)):
            raise api.ParameterError(
                "--list-rows lists the rows that suppression removes: it needs --qi with "
                "--delta (Q5, Q6) or --find-delta and --k (Q9)."
            )
        if "max_k" in on and not ("find_delta" in on and "k" not in on):
            raise api.ParameterError(
                "--max-k sets the largest k of the delta tables: it needs --find-delta "
                "without --k (Q11, Q12)."
            )
        if one_set and "max_size" in on:
            raise api.ParameterError(
                "--max-size bounds subset searches; with --qi the question is about one "
                "attribute set. Drop --max-size or --qi."
            )
        if one_set and "attributes" in on:
            raise api.ParameterError(
                "--attributes lists the candidates of subset searches; with --qi the question "
                "is about that one set. Drop one of them."
            )
    bad = sorted(on - allowed)
    if bad:
        names = ", ".join(flag[b] for b in bad)
        raise api.ParameterError(f"{names} does not apply to {mode}; drop it.")
    if "risk" in on and "qi" not in on:
        raise api.ParameterError("--risk needs --qi (the quasi-identifier set).")
    told = [flag[p] for p in _POPULATION_OPTIONS if p in on]
    if len(told) > 1:
        raise api.ParameterError(f"{' and '.join(told)}: give the population one way, not both.")


def _whole(value: str, option: str) -> int:
    """An integer of a comma-separated option, or one line naming it."""
    try:
        return int(value)
    except ValueError:
        raise api.ParameterError(f"{option} {value!r}: give whole numbers, e.g. 2,5,10.") from None


def _int_level(attr: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise api.ParameterError(f"--level {attr}={value}: the level must be an integer.") from None


# ----------------------------------------------------------------------- rendering
def show(sections: list[Section], console: Console | None = None) -> None:
    """Print report sections as Rich tables (their text as it is: a label such as
    ``[30, 40)`` is not Rich markup)."""
    con = console or out
    for sec in sections:
        if sec.header is None:
            t = Table(title=escape(sec.title), show_header=False)
            t.add_column("", style="bold")
            t.add_column("")
        else:
            t = Table(title=escape(sec.title))
            for i, name in enumerate(sec.header):
                right = i < len(sec.numeric) and sec.numeric[i]
                t.add_column(escape(name), justify="right" if right else "left")
        for row in sec.rows:
            t.add_row(*(escape(cell) for cell in row))
        con.print(t)
        for note in sec.notes:
            con.print(escape(note))


def render(result: Any, console: Console | None = None, title: str | None = None) -> None:
    """Print a diagnosis result as Rich tables."""
    from anonlab import report

    show(report.diagnosis_sections(result, title), console)


@app.command(cls=_Command)
def demo(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:
    """Diagnose the bundled UCI Adult data (30,162 rows, 8 quasi-identifiers)."""
    from anonlab import api

    with _errors():
        table = api.load_adult()
        eng = api.open_engine(table, hierarchies=api.adult_hierarchies(table))
        qi = list(api.ADULT_QUASI_IDENTIFIERS)
        coarse = {
            "age": 2,
            "education": 2,
            "marital-status": 1,
            "occupation": 1,
            "native-country": 1,
            "workclass": 1,
        }
        steps: list[tuple[str, Any]] = [
            (
                "Q2: for which k is Adult k-anonymous w.r.t. its 8 quasi-identifiers?",
                api.diagnose(eng, quasi_identifiers=qi),
            ),
            ("Risk summary", api.risk(eng, qi)),
            (
                "Q9: how many rows must go for 5-anonymity?",
                api.diagnose(eng, quasi_identifiers=qi, k=5, find_delta=True),
            ),
            (
                "Q9 at coarser levels (age in 20-year bands, ...)",
                api.diagnose(eng, quasi_identifiers=qi, k=5, find_delta=True, levels=coarse),
            ),
            (
                "Q3: the largest attribute sets that are 10-anonymous",
                api.diagnose(eng, attributes=qi, k=10),
            ),
            (
                "Which outside information singles people out? (minimal sets with a unique record)",
                api.find_quasi_identifiers(eng, qi),
            ),
        ]
        if as_json:
            payload = [{"title": t, **r.to_dict()} for t, r in steps]
            sys.stdout.write(json.dumps(payload, indent=2) + "\n")
            return
        out.rule("[bold]anonlab demo: diagnosis of UCI Adult (30,162 rows)")
        for title, result in steps:
            out.print()
            render(result, title=title)


_ANONYMIZE_HELP = """Anonymize a table as a YAML job file says, with the least information loss.

The job file (docs/guide/jobs.md; every key: docs/reference/job-file.md) has these keys:
quasi_identifiers (column: {hierarchy: FILE | mask | intervals | dates, min_level,
max_level, weight, priority}), sensitive, identifiers (dropped from the release),
insensitive (released as they are, knowingly), identifying_threshold (default 0.01),
models (- k_anonymity: {k: 5}, ...: {models}), suppression, metric, algorithm ({name: ...,
params}: {algorithms}), output ({suppressed: remove | mask}), and the CSV options
separator, header, quote, encoding, na_values, strip, names.

A column of the table that is none of these is released as it is: the job is refused,
with the figures, when such a column identifies people (unique on more than
identifying_threshold of the records, alone or with another column; dependent on a
quasi-identifier; or named like an identifier) until the job declares it.

The output format follows the suffix: .csv, .csv.gz or .parquet (a CSV release is
written with the job's separator); with --engine spark an output ending with / is a new folder of Parquet part files (a dataset, written in
parallel). The result is re-checked by the privacy models before it is written
(atomically); the input, the job file and its hierarchy files are never overwritten.
"""


@app.command(help=_ANONYMIZE_HELP, cls=_Command)
def anonymize(
    data: Annotated[str, typer.Argument(help="CSV or Parquet file.", show_default=False)],
    job: Annotated[str, typer.Option("--job", help="YAML job file.", show_default=False)],
    output: Annotated[
        str,
        typer.Option(
            "--output",
            "-o",
            help="Where to write the released table (.csv, .csv.gz, .parquet); with "
            "--engine spark, a new folder ending with / receives a Parquet dataset.",
        ),
    ],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
    engine: Annotated[
        str,
        typer.Option(
            "--engine",
            help="auto (by the data's size), numpy (in memory), duckdb (out of core: the "
            "search on the frequency set, the release streamed by DuckDB) or spark.",
        ),
    ] = "auto",
    spark_master: SparkMaster = None,
    block_rows: Annotated[
        int | None,
        typer.Option(
            "--block-rows",
            help="Out of core: rows per block of the algorithms that place rows "
            "({partition_algorithms}), which run block "
            "by block on the table sorted on its quasi-identifiers; default 100,000 "
            "(mondrian: 250,000).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Anonymize a table as a YAML job file says, with the least information loss (the
    help text, with the algorithms of the registry: ``_ANONYMIZE_HELP``)."""
    from anonlab import api, report

    with _errors():
        with _progress(not as_json, "nodes") as progress:
            result = api.anonymize(
                data,
                job,
                output=output,
                progress=progress,
                engine=engine,
                engine_options=_spark_options(engine, spark_master),
                block_rows=block_rows,
            )
        if as_json:
            sys.stdout.write(json.dumps(result.to_dict(), indent=2) + "\n")
            return
        show(report.anonymization_sections(result))


@app.command(cls=_Command)
def hierarchies(
    data: Annotated[str, typer.Argument(help="CSV or Parquet file.", show_default=False)],
    qi: Annotated[
        str, typer.Option("--qi", help="The quasi-identifiers: a,b,c.", show_default=False)
    ],
    output_dir: Annotated[
        str,
        typer.Option(
            "--output-dir",
            help="Folder of the hierarchy files (<column>.csv, ARX's format); made if missing.",
            show_default=False,
        ),
    ],
    grouping: Annotated[
        str,
        typer.Option(
            "--grouping",
            help="Categorical columns: frequency (rare values grouped into 'other' first) or "
            "none (value -> *).",
        ),
    ] = "frequency",
    engine: EngineOption = "numpy",
    separator: Separator = ",",
    no_header: NoHeader = False,
    names: Names = None,
    quote: Quote = '"',
    encoding: Encoding = "utf-8",
    na: Na = None,
    strip: Strip = False,
) -> None:
    """Infer a hierarchy for each quasi-identifier from its values and write it in ARX's
    format: intervals of nice widths with the sparse tails top- and bottom-coded for numbers,
    month/quarter/year/decade for dates, masking from the right for codes, '*' (or rare
    values grouped) for the rest. A job gets the same with 'hierarchy: auto'."""
    from anonlab import api
    from anonlab.io.atomic import check_input_file

    with _errors():
        check_input_file(data, "data file")
        columns = _split(qi) or []
        if not columns:
            raise api.ParameterError("--qi needs at least one column: --qi a,b,c.")
        written = api.write_hierarchies(
            data,
            columns,
            output_dir,
            grouping=grouping,
            engine=engine,
            csv_options=_csv(separator, no_header, names, quote, encoding, na, strip),
        )
        table = Table(title=f"Hierarchies written to {escape(output_dir)}")
        for header in ("column", "kind", "levels", "what the levels keep"):
            table.add_column(header)
        for column, (auto, _) in written.items():
            table.add_row(
                escape(column), auto.kind, str(auto.hierarchy.height), escape(auto.description)
            )
        Console().print(table)
        lines = [f"  {c}: {{hierarchy: {p.name}}}" for c, (_, p) in written.items()]
        Console().print(
            f"In a job file in {escape(output_dir)}:\nquasi_identifiers:\n"
            + escape("\n".join(lines))
        )


def _spark_options(engine: str, master: str | None) -> dict[str, Any]:
    """The engine options of ``--spark-master`` (refused with any other engine)."""
    if master is None:
        return {}
    if engine != "spark":
        raise api.ParameterError("--spark-master applies to --engine spark only.")
    return {"master": master}


@app.command(cls=_Command)
def check(
    data: Annotated[str, typer.Argument(help="CSV or Parquet file.", show_default=False)],
    job: Annotated[str, typer.Option("--job", help="YAML job file.", show_default=False)],
    release: Annotated[
        str | None,
        typer.Option(
            "--release",
            help="A table the job released from DATA (any algorithm): verify its columns, "
            "rows, cells and identifying columns against DATA and the job, and judge the "
            "models on it (classes of its labels, or a cell cover's anonymity graph). Exit "
            "code 1 if it fails.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
    engine: Annotated[
        str,
        typer.Option(
            "--engine",
            help="auto (by the data's size), numpy (in memory), duckdb (one GROUP BY over "
            "the file) or spark.",
        ),
    ] = "auto",
    spark_master: SparkMaster = None,
    disclosure_share: Annotated[
        float | None,
        typer.Option(
            help="Besides the classes whose records share one sensitive value, list those where "
            "one value holds more than this share of the records, in (0, 1].",
        ),
    ] = None,
) -> None:
    """Report the privacy models and the metric of a table as it is, or verify a release of
    it (--release: exit code 0 if everything holds, 1 if not, 2 on an error)."""
    from anonlab import api, report
    from anonlab.io.atomic import check_input_file

    with _errors():
        if release is not None:
            check_input_file(release, "released table")
        with _progress(False):  # (its notes: the engine auto chose)
            checked = api.check(
                data,
                job,
                release=release,
                engine=engine,
                engine_options=_spark_options(engine, spark_master),
                disclosure_share=disclosure_share,
            )
        if as_json:
            sys.stdout.write(json.dumps(checked.to_dict(), indent=2) + "\n")
        else:
            show(report.check_sections(checked))
    if checked.release is not None and not checked.release["holds"]:
        raise typer.Exit(1)


@app.command(name="report", cls=_Command)
def report_command(
    data: Annotated[str, typer.Argument(help="CSV or Parquet file.", show_default=False)],
    output: Annotated[
        str,
        typer.Option("--output", "-o", help="Where to write the report (.html)."),
    ],
    qi: Annotated[
        str | None,
        typer.Option("--qi", help="The quasi-identifier set S: a,b,c (default: the job's)."),
    ] = None,
    sensitive: Annotated[
        str | None,
        typer.Option(
            help="Sensitive attributes: a,b (default: the job's); the report lists the classes "
            "of S (and, with --job, of the release) whose records share one of their values."
        ),
    ] = None,
    job: Annotated[
        str | None,
        typer.Option("--job", help="A YAML job to run and report."),
    ] = None,
    k: Annotated[
        int | None,
        typer.Option("--k", help="k of the subset search Q3 (default: the job's k, else 5)."),
    ] = None,
    max_k: Annotated[int | None, typer.Option(help="Largest k of Q11 (default 50).")] = None,
    drop_missing: Annotated[
        bool,
        typer.Option(
            "--drop-missing", help="Drop rows with a missing value in the attributes used."
        ),
    ] = False,
    title: Annotated[str | None, typer.Option(help="The report's title.")] = None,
    separator: Separator = ",",
    no_header: NoHeader = False,
    names: Names = None,
    quote: Quote = '"',
    encoding: Encoding = "utf-8",
    na: Na = None,
    strip: Strip = False,
    disclosure_share: Annotated[
        float | None,
        typer.Option(
            help="Besides the classes whose records share one sensitive value, list those "
            "where one value holds more than this share, in (0, 1]."
        ),
    ] = None,
    sampling_fraction: SamplingFraction = None,
    population_size: PopulationSize = None,
    weight: Weight = None,
    contingency: Annotated[
        str | None,
        typer.Option(
            help="With --job: two attributes a,b whose contingency table the report shows "
            "before and after."
        ),
    ] = None,
    classify: Annotated[
        str | None,
        typer.Option(
            help="With --job: an attribute released as it is (e.g. income) that a logistic "
            "regression and a random forest learn from the data and from the release; needs "
            "pip install 'anonlab[utility]'."
        ),
    ] = None,
) -> None:
    """Write a self-contained HTML report: the table's profile, its diagnosis (k, class
    sizes, k against delta, k of every subset, the sets that single people out, risk under
    the prosecutor, journalist and marketer models, the riskiest records by SUDA score) and,
    with --job, the anonymization and its risk before and after. It works offline (figures
    inline)."""
    from anonlab import api
    from anonlab.io.atomic import check_input_file

    with _errors():
        check_input_file(data, "data file")
        csv = _csv(separator, no_header, names, quote, encoding, na, strip)
        with _progress(True, "report") as progress:
            api.report(
                data,
                output=output,
                quasi_identifiers=_split(qi),
                sensitive=_split(sensitive),
                job=job,
                k=k,
                max_k=max_k,
                drop_missing=drop_missing,
                title=title,
                progress=progress,
                disclosure_share=disclosure_share,
                contingency=_split(contingency),
                classify=classify,
                sampling_fraction=sampling_fraction,
                population_size=population_size,
                weight=weight,
                # (none given: the job's CSV options, else the defaults)
                csv_options=csv
                if csv != _csv(",", False, None, '"', "utf-8", None, False)
                else None,
            )
        out.print(f"wrote {output}")


@app.command(cls=_Command)
def explore(
    data: Annotated[str, typer.Argument(help="CSV or Parquet file.", show_default=False)],
    job: Annotated[
        str, typer.Option("--job", help="The YAML job the candidates vary.", show_default=False)
    ],
    output: Annotated[
        str,
        typer.Option(
            "--output",
            "-o",
            help="The page to write (.html); each candidate's report, release and job go into "
            "a new folder beside it, <name>_files/.",
            show_default=False,
        ),
    ],
    k: Annotated[str, typer.Option("--k", help="The k's to try: 2,3,5,10,20.")] = "2,3,5,10,20",
    algorithms: Annotated[
        str,
        typer.Option("--algorithms", help="The algorithms to try: a,b ({algorithms})."),
    ] = "optimal",
    sampling_fraction: SamplingFraction = None,
    classify: Annotated[
        str | None,
        typer.Option(
            help="An attribute released as it is (e.g. income): each candidate's accuracy "
            "predicting it, trained on the data and on the release (pip install "
            "'anonlab[utility]')."
        ),
    ] = None,
    separator: Separator = ",",
    no_header: NoHeader = False,
    names: Names = None,
    quote: Quote = '"',
    encoding: Encoding = "utf-8",
    na: Na = None,
    strip: Strip = False,
) -> None:
    """Run the job as candidate releases (each k, each algorithm), draw their risk against
    their loss on one scale (GCP), mark the frontier (no other candidate both loses less and
    risks less) and link each candidate's report, release and job."""
    from anonlab import api
    from anonlab.io.atomic import check_input_file

    with _errors():
        check_input_file(data, "data file")
        csv = _csv(separator, no_header, names, quote, encoding, na, strip)
        ks = [_whole(v, "--k") for v in _split(k) or []]
        with _progress(True, "candidates") as progress:
            found = api.explore(
                data,
                job,
                ks=ks,
                algorithms=_split(algorithms) or [],
                output=output,
                sampling_fraction=sampling_fraction,
                classify=classify,
                csv_options=csv
                if csv != _csv(",", False, None, '"', "utf-8", None, False)
                else None,
                progress=progress,
            )
        best = [f"k={c.k} {c.algorithm}" for c in found.candidates if c.frontier]
        refused = [c for c in found.candidates if c.refused]
        out.print(
            f"wrote {output}: {len(found.candidates)} candidates, frontier: {', '.join(best)}"
        )
        for c in refused:
            out.print(f"k={c.k} {c.algorithm} refused: {escape(c.refused or '')}")


@app.command(cls=_Command)
def serve(
    ctx: typer.Context,
    root: Annotated[
        Path,
        typer.Option(help="The folder whose files the app may open and write under."),
    ] = Path("."),
    host: Annotated[
        str,
        typer.Option(
            help="Address to listen on (loopback unless you mean otherwise; another needs "
            "the token)."
        ),
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: a free one, printed).")] = 8000,
    max_upload_mb: Annotated[
        float, typer.Option(help="Largest upload, in MB, also once decompressed.")
    ] = 100.0,
    token: Annotated[
        str | None,
        typer.Option(
            envvar="ANONLAB_TOKEN",
            show_envvar=True,
            help="The access token (16 or more letters, digits, . _ ~ -; default: a random "
            "one). Printed in the start address; prefer the environment variable, which "
            "other accounts cannot read in the process list.",
        ),
    ] = None,
    no_token: Annotated[
        bool,
        typer.Option(
            "--no-token",
            help="No access token: every account of this machine can use the app "
            "(refused with a --host other than loopback).",
        ),
    ] = False,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            help="Another name requests may give for this machine (repeatable); requests "
            "naming any other host are refused.",
        ),
    ] = None,
    keep_outputs: Annotated[
        bool,
        typer.Option(
            "--keep-outputs",
            help="Keep the uploads and the jobs' files when the app stops (default: removed).",
        ),
    ] = False,
) -> None:
    """Start the Diagnosis Centre in the browser: open a table, ask the twelve questions,
    run a job, download the release, its job file and the report. Open the address it
    prints: it carries the access token."""
    import math

    with _errors():
        if not math.isfinite(max_upload_mb) or max_upload_mb <= 0:
            raise api.ParameterError(
                f"--max-upload-mb must be a number of MB above 0; got {max_upload_mb}."
            )
        source = ctx.get_parameter_source("token")
        given = getattr(source, "name", "") == "COMMANDLINE"  # not ANONLAB_TOKEN
        if no_token and given:
            raise api.ParameterError("--token and --no-token contradict each other; give one.")
        from anonlab.web import serve as serve_app  # the launcher; the app needs 'web'

        serve_app(
            root=root,
            host=host,
            port=port,
            max_upload=max(1, int(max_upload_mb * 2**20)),
            token=False if no_token else (True if token is None else token),
            allow_hosts=allow_host or [],
            keep_outputs=keep_outputs,
        )


def main() -> None:
    """Entry point of the ``anonlab`` command.

    Ctrl-C, ``SIGTERM`` and ``SIGHUP`` stop a command in order: the work unwinds, every
    temporary file and folder it made is removed (a partial output too; the target is left
    as it was), one line says so and the exit status is ``128 + signal`` (130, 143, 129).
    A command that does not unwind within :data:`~anonlab.io.temporary.STOP_GRACE`
    seconds, or a second signal, removes them and exits at once. The handlers are the
    command line's: :mod:`anonlab` as a library installs none. Temporary paths that killed
    runs of this host left in the system's temporary folder are removed first.
    """
    with temporary.stop_on_signals() as stop:
        try:
            temporary.clean_stale()
            app()
        except BaseException as exc:
            signum = stop.signum
            if signum is None and isinstance(exc, KeyboardInterrupt):
                signum = signal.SIGINT  # (Ctrl-C while a Spark context holds SIGINT)
            if signum is None:
                raise
            temporary.remove_all()
            name = signal.Signals(signum).name
            err.print(
                f"[bold red]stopped[/] by {name}: its temporary files were removed.",
                highlight=False,
                soft_wrap=True,
            )
            raise SystemExit(128 + signum) from None
