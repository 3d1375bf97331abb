"""``anonlab diagnose`` and ``anonlab demo``: the Diagnosis Centre on the command line."""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

import anonlab
from anonlab import api, report
from anonlab.api import AnonlabError, ParameterError, PrivacyRiskWarning
from anonlab.io import CsvOptions, check_input_file, column_names

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


class EngineName(str, Enum):
    """Engines selectable on the command line."""

    numpy = "numpy"
    duckdb = "duckdb"
    spark = "spark"


def _version(value: bool) -> None:
    if value:
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
    if value is None:
        return None
    items = [v.strip() for v in value.split(",") if v.strip()]
    return items


def _pairs(values: list[str] | None, option: str) -> dict[str, str]:
    result: dict[str, str] = {}
    for item in values or []:
        if "=" not in item:
            raise ParameterError(f"{option} takes ATTRIBUTE=VALUE; got {item!r}.")
        key, val = item.split("=", 1)
        result[key.strip()] = val.strip()
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
        warnings.simplefilter("always", PrivacyRiskWarning)
        warnings.showwarning = _show_warning
        try:
            yield
        except AnonlabError as exc:
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


class _Bar:
    """A progress callback for the API: ``bar(advance, total)`` and ``bar.stage(message)``."""

    def __init__(self, bar: Progress, label: str) -> None:
        self._bar = bar
        self._label = label
        self._task = bar.add_task(label, total=None)

    def __call__(self, step: int, total: int | None) -> None:
        self._bar.update(self._task, advance=step, total=total, description=self._label)

    def stage(self, message: str) -> None:
        self._bar.update(self._task, description=message)


@contextmanager
def _progress(enabled: bool, label: str = "subsets") -> Iterator[_Bar | None]:
    if not enabled or not err.is_terminal:
        yield None
        return
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        transient=True,
    ) as bar:
        yield _Bar(bar, label)


#: ``--spark-master``, the same option on every command that takes ``--engine spark``.
SparkMaster = Annotated[
    str | None,
    typer.Option(
        "--spark-master",
        help="With --engine spark: where Spark runs (spark://host:7077, yarn, local[4]); "
        "default local[2].",
    ),
]


@app.command()
def diagnose(
    data: Annotated[
        Path, typer.Argument(help="CSV or Parquet file.", show_default=False, readable=False)
    ],
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
    engine: Annotated[EngineName, typer.Option(help="Engine.")] = EngineName.numpy,
    spark_master: SparkMaster = None,
    separator: Annotated[str, typer.Option("--separator", "-s", help="CSV field separator.")] = ",",
    no_header: Annotated[
        bool, typer.Option("--no-header", help="The CSV has no header row.")
    ] = False,
    names: Annotated[
        str | None, typer.Option(help="Column names for a CSV without header: a,b,c.")
    ] = None,
    quote: Annotated[str, typer.Option(help="CSV quote character.")] = '"',
    encoding: Annotated[str, typer.Option(help="Text encoding of the CSV.")] = "utf-8",
    na: Annotated[
        list[str] | None,
        typer.Option("--na", help="Missing-value marker (repeat); default: empty and '?'."),
    ] = None,
    strip: Annotated[bool, typer.Option("--strip", help="Strip spaces around CSV fields.")] = False,
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
            find_qis=find_qis,
            qi_threshold=qi_threshold,
            max_size=max_size,
        )
        check_input_file(data, "data file")
        csv_options = CsvOptions(
            separator=separator,
            header=not no_header,
            quote=quote,
            encoding=encoding,
            na_values=tuple(na) if na is not None else CsvOptions().na_values,
            strip=strip,
            names=tuple(_split(names) or ()) or None,
        )
        levels = {a: _int_level(a, v) for a, v in _pairs(level, "--level").items()}
        hierarchies = _pairs(hierarchy, "--hierarchy")
        missing = [a for a in levels if a not in hierarchies]
        if missing:
            raise ParameterError(f"--level {missing[0]}=... needs --hierarchy {missing[0]}=FILE.")
        qi_list = _split(qi)
        attr_list = _split(attributes)
        if qi_list is not None and not qi_list:
            raise ParameterError(
                "--qi is empty: no quasi-identifier was given. Name the columns, e.g. "
                "--qi age,sex,zip."
            )
        if attr_list is not None and not attr_list:
            raise ParameterError("--attributes is empty: name the candidate columns, e.g. a,b,c.")
        needed = None  # --risk reads every column: it looks for identifying ones too
        if (qi_list is not None or attr_list is not None) and not risk:
            needed = list(dict.fromkeys((qi_list or []) + (attr_list or [])))
        if spark_master is not None and engine is not EngineName.spark:
            raise ParameterError("--spark-master applies to --engine spark only.")
        engine_options: dict[str, Any] = {"master": spark_master} if spark_master else {}
        eng = api.open_engine(
            data,
            engine=engine.value,
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
                    raise ParameterError("--risk needs --qi (the quasi-identifier set).")
                result = api.risk(
                    eng,
                    qi_list,
                    threshold=5 if risk_threshold is None else risk_threshold,
                    levels=levels,
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
    data: Path,
    csv_options: CsvOptions,
    hierarchies: dict[str, str],
    levels: dict[str, int],
    asked: list[str] | None,
) -> None:
    """--hierarchy and --level name columns of the file, and columns the question uses."""
    names = column_names(data, csv_options)
    for flag, columns in (("--hierarchy", list(hierarchies)), ("--level", list(levels))):
        for name in columns:
            if name not in names:
                raise ParameterError(
                    f"{flag} {name}=...: unknown column {name!r}."
                    f"{api.did_you_mean(name, names)} Available: "
                    f"{', '.join(map(repr, names))}."
                )
            if asked is not None and name not in asked:
                raise ParameterError(
                    f"{flag} {name}=...: column {name!r} is not among the attributes of the "
                    "question (--qi, --attributes); drop the option or add the column."
                )


def _check_applicable(**given: Any) -> None:
    """Refuse options that do not apply to the question asked (one line naming them)."""
    on = {k for k, v in given.items() if v not in (None, False)}
    flag = {k: "--" + k.replace("_", "-") for k in given}
    if "find_qis" in on:
        mode, allowed = "--find-qis", {"find_qis", "attributes", "qi_threshold", "max_size"}
    elif "risk" in on:
        mode, allowed = "--risk", {"risk", "qi", "risk_threshold"}
    else:
        question = "Q5/Q6" if "delta" in on else "Q9-Q12" if "find_delta" in on else "Q1-Q4"
        mode, allowed = f"this question ({question})", {"qi", "attributes", "k", "delta"}
        allowed |= {"find_delta", "max_k", "list_rows", "max_size"}
        one_set = "qi" in on
        if "list_rows" in on and not (one_set and ("delta" in on or "find_delta" in on)):
            raise ParameterError(
                "--list-rows lists the rows that suppression removes: it needs --qi with "
                "--delta (Q5, Q6) or --find-delta and --k (Q9)."
            )
        if "max_k" in on and not ("find_delta" in on and "k" not in on):
            raise ParameterError(
                "--max-k sets the largest k of the delta tables: it needs --find-delta "
                "without --k (Q11, Q12)."
            )
        if one_set and "max_size" in on:
            raise ParameterError(
                "--max-size bounds subset searches; with --qi the question is about one "
                "attribute set. Drop --max-size or --qi."
            )
        if one_set and "attributes" in on:
            raise ParameterError(
                "--attributes lists the candidates of subset searches; with --qi the question "
                "is about that one set. Drop one of them."
            )
    bad = sorted(on - allowed)
    if bad:
        names = ", ".join(flag[b] for b in bad)
        raise ParameterError(f"{names} does not apply to {mode}; drop it.")
    if "risk" in on and "qi" not in on:
        raise ParameterError("--risk needs --qi (the quasi-identifier set).")


def _int_level(attr: str, value: str) -> int:
    try:
        return int(value)
    except ValueError:
        raise ParameterError(f"--level {attr}={value}: the level must be an integer.") from None


# ----------------------------------------------------------------------- rendering
def show(sections: list[report.Section], console: Console | None = None) -> None:
    """Print report sections as Rich tables."""
    con = console or out
    for sec in sections:
        if sec.header is None:
            t = Table(title=sec.title, show_header=False)
            t.add_column("", style="bold")
            t.add_column("")
        else:
            t = Table(title=sec.title)
            for i, name in enumerate(sec.header):
                right = i < len(sec.numeric) and sec.numeric[i]
                t.add_column(name, justify="right" if right else "left")
        for row in sec.rows:
            t.add_row(*row)
        con.print(t)
        for note in sec.notes:
            con.print(note)


def render(result: Any, console: Console | None = None, title: str | None = None) -> None:
    """Print a diagnosis result as Rich tables."""
    show(report.diagnosis_sections(result, title), console)


@app.command()
def demo(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON for machines.")] = False,
) -> None:
    """Diagnose the bundled UCI Adult data (30,162 rows, 8 quasi-identifiers)."""
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


@app.command()
def anonymize(
    data: Annotated[
        Path, typer.Argument(help="CSV or Parquet file.", show_default=False, readable=False)
    ],
    job: Annotated[
        Path, typer.Option("--job", help="YAML job file.", show_default=False, readable=False)
    ],
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
            "(progressive, top_down, wong_nh, murakami_uno, personalized), which run block "
            "by block on the table sorted on its quasi-identifiers; default 100,000.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Anonymize a table as a YAML job file says, with the least information loss.

    The job file (README, section "Anonymize a table") has these top-level keys:
    quasi_identifiers (column: {hierarchy: FILE | mask | intervals | dates, min_level,
    max_level, weight, priority}), sensitive, identifiers (dropped from the release),
    insensitive (released as they are, knowingly), identifying_threshold (default 0.01),
    models (- k_anonymity: {k: 5}, ...), suppression, metric, algorithm ({name: ...,
    params}: optimal, incognito or privacyfrost2 (full-domain generalization); progressive
    or top_down ((alpha,k) local recoding); wong_nh or murakami_uno (non-homogeneous
    generalization); personalized (each person's own limit, with the personalized
    section)), output ({suppressed: remove | mask}), and the CSV options separator, header,
    quote, encoding, na_values, strip, names.

    A column of the table that is none of these is released as it is: the job is refused,
    with the figures, when such a column identifies people (unique on more than
    identifying_threshold of the records, alone or with another column; dependent on a
    quasi-identifier; or named like an identifier) until the job declares it.

    The output format follows the suffix: .csv, .csv.gz or .parquet; with --engine spark
    an output ending with / is a new folder of Parquet part files (a dataset, written in
    parallel). The result is re-checked by the privacy models before it is written
    (atomically); the input, the job file and its hierarchy files are never overwritten.
    """
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


def _spark_options(engine: str, master: str | None) -> dict[str, Any]:
    """The engine options of ``--spark-master`` (refused with any other engine)."""
    if master is None:
        return {}
    if engine != "spark":
        raise ParameterError("--spark-master applies to --engine spark only.")
    return {"master": master}


@app.command()
def check(
    data: Annotated[
        Path, typer.Argument(help="CSV or Parquet file.", show_default=False, readable=False)
    ],
    job: Annotated[
        Path, typer.Option("--job", help="YAML job file.", show_default=False, readable=False)
    ],
    release: Annotated[
        Path | None,
        typer.Option(
            "--release",
            help="A released non-homogeneous table (one row per record of DATA, in order): "
            "report the largest k of its anonymity graph.",
            readable=False,
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
) -> None:
    """Report the privacy models and the metric of a table as it is, or of a release of it."""
    with _errors():
        if release is not None:
            check_input_file(release, "released table")
        checked = api.check(
            data,
            job,
            release=release,
            engine=engine,
            engine_options=_spark_options(engine, spark_master),
        )
        if as_json:
            sys.stdout.write(json.dumps(checked.to_dict(), indent=2) + "\n")
            return
        show(report.check_sections(checked))


@app.command(name="report")
def report_command(
    data: Annotated[
        Path, typer.Argument(help="CSV or Parquet file.", show_default=False, readable=False)
    ],
    output: Annotated[
        Path,
        typer.Option("--output", "-o", help="Where to write the report (.html).", readable=False),
    ],
    qi: Annotated[
        str | None,
        typer.Option("--qi", help="The quasi-identifier set S: a,b,c (default: the job's)."),
    ] = None,
    sensitive: Annotated[
        str | None, typer.Option(help="Sensitive attributes: a,b (default: the job's).")
    ] = None,
    job: Annotated[
        Path | None,
        typer.Option("--job", help="A YAML job to run and report.", readable=False),
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
) -> None:
    """Write a self-contained HTML report: the table's profile, its diagnosis (k, class
    sizes, k against delta, k of every subset, the sets that single people out, risk) and,
    with --job, the anonymization before and after. It works offline (figures inline)."""
    with _errors():
        check_input_file(data, "data file")
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
            )
        out.print(f"wrote {output}")


@app.command()
def serve(
    root: Annotated[
        Path,
        typer.Option(help="The folder whose files the app may open and write under."),
    ] = Path("."),
    host: Annotated[
        str, typer.Option(help="Address to listen on (loopback unless you mean otherwise).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    max_upload_mb: Annotated[float, typer.Option(help="Largest upload, in MB.")] = 100.0,
) -> None:
    """Start the Diagnosis Centre in the browser: open a table, ask the twelve questions,
    run a job, download the release, its job file and the report."""
    with _errors():
        from anonlab.web import serve as serve_app  # the launcher; the app needs 'web'

        serve_app(root=root, host=host, port=port, max_upload=int(max_upload_mb * 2**20))


def main() -> None:
    """Entry point of the ``anonlab`` command."""
    app()
