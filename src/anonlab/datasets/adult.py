"""UCI Adult, shipped with anonlab, and its generalization hierarchies.

Becker, B. & Kohavi, R. (1996). Adult. UCI Machine Learning Repository (CC BY 4.0),
https://doi.org/10.24432/C5XW20. The file is ``adult.data`` (32,561 rows) with a header row
added and the white space after each comma removed; ``?`` marks a missing value. Without the
rows that have a ``?`` it has the 30,162 rows used by most anonymization papers.

The hierarchies are built here by anonlab's builders (they are not copies of ARX's files):
age in intervals of 5, 10, 20 years; categorical attributes by the groupings below.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from anonlab.data.builders import flat_hierarchy, interval_hierarchy, taxonomy_hierarchy
from anonlab.data.hierarchy import Hierarchy
from anonlab.data.schema import Schema
from anonlab.data.source import CsvOptions
from anonlab.data.table import EncodedTable
from anonlab.io.readers import read_table

__all__ = [
    "ADULT_QUASI_IDENTIFIERS",
    "adult_path",
    "adult_csv_options",
    "load_adult",
    "adult_hierarchies",
]

#: The eight quasi-identifiers of the Diagnosis Centre paper's section 6.
ADULT_QUASI_IDENTIFIERS = (
    "age",
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "race",
    "sex",
    "native-country",
)

_WORKCLASS = {
    "Federal-gov": ["Government"],
    "Local-gov": ["Government"],
    "State-gov": ["Government"],
    "Private": ["Private"],
    "Self-emp-inc": ["Self-employed"],
    "Self-emp-not-inc": ["Self-employed"],
    "Without-pay": ["Not paid"],
    "Never-worked": ["Not paid"],
}
_EDUCATION = {
    **{v: ["Primary", "Low"] for v in ("Preschool", "1st-4th", "5th-6th", "7th-8th")},
    **{v: ["Secondary", "Low"] for v in ("9th", "10th", "11th", "12th")},
    "HS-grad": ["High school graduate", "Medium"],
    **{v: ["College", "Medium"] for v in ("Some-college", "Assoc-acdm", "Assoc-voc")},
    "Bachelors": ["Bachelors", "High"],
    **{v: ["Graduate", "High"] for v in ("Masters", "Prof-school", "Doctorate")},
}
_MARITAL = {
    **{
        v: ["Married"] for v in ("Married-civ-spouse", "Married-AF-spouse", "Married-spouse-absent")
    },
    **{v: ["Previously married"] for v in ("Divorced", "Separated", "Widowed")},
    "Never-married": ["Never married"],
}
_OCCUPATION = {
    **{
        v: ["White-collar"]
        for v in ("Adm-clerical", "Exec-managerial", "Prof-specialty", "Sales", "Tech-support")
    },
    **{
        v: ["Blue-collar"]
        for v in (
            "Craft-repair",
            "Farming-fishing",
            "Handlers-cleaners",
            "Machine-op-inspct",
            "Transport-moving",
        )
    },
    **{
        v: ["Service"]
        for v in ("Other-service", "Priv-house-serv", "Protective-serv", "Armed-Forces")
    },
}
_COUNTRY = {
    **{v: ["North America"] for v in ("United-States", "Canada", "Outlying-US(Guam-USVI-etc)")},
    **{
        v: ["Latin America"]
        for v in (
            "Mexico",
            "Puerto-Rico",
            "Cuba",
            "Jamaica",
            "Dominican-Republic",
            "Haiti",
            "Guatemala",
            "Honduras",
            "El-Salvador",
            "Nicaragua",
            "Trinadad&Tobago",
            "Columbia",
            "Ecuador",
            "Peru",
        )
    },
    **{
        v: ["Europe"]
        for v in (
            "England",
            "Germany",
            "Greece",
            "Italy",
            "Poland",
            "Portugal",
            "Ireland",
            "France",
            "Hungary",
            "Scotland",
            "Yugoslavia",
            "Holand-Netherlands",
        )
    },
    **{
        v: ["Asia"]
        for v in (
            "Cambodia",
            "India",
            "Japan",
            "China",
            "Iran",
            "Philippines",
            "Vietnam",
            "Laos",
            "Taiwan",
            "Thailand",
            "Hong",
            "South",
        )
    },
}


def adult_path() -> Path:
    """Return the path of the bundled ``adult.csv.gz``.

    Examples
    --------
    >>> adult_path().name
    'adult.csv.gz'
    """
    return Path(str(resources.files("anonlab.datasets").joinpath("adult.csv.gz")))


def adult_csv_options() -> CsvOptions:
    """CSV options of the bundled file (comma-separated, header row, ``?`` is missing).

    Examples
    --------
    >>> options = adult_csv_options()
    >>> options.separator, options.na_values
    (',', ('?',))
    """
    return CsvOptions(separator=",", header=True, na_values=("?",))


def load_adult(*, drop_missing: bool = True) -> EncodedTable:
    """Load the bundled UCI Adult data.

    Parameters
    ----------
    drop_missing : bool
        Drop the rows with a missing value (``?``): 30,162 rows remain of 32,561.

    Returns
    -------
    EncodedTable
        With the paper's eight quasi-identifiers marked and ``income`` sensitive.

    Examples
    --------
    >>> t = load_adult()
    >>> t.n_rows, t.names[:3]
    (30162, ['age', 'workclass', 'fnlwgt'])
    """
    schema = Schema.from_lists(quasi_identifiers=ADULT_QUASI_IDENTIFIERS, sensitive=["income"])
    table = read_table(adult_path(), csv_options=adult_csv_options(), schema=schema)
    return table.drop_nulls() if drop_missing else table


def adult_hierarchies(table: EncodedTable | None = None) -> dict[str, Hierarchy]:
    """Build hierarchies for Adult's eight quasi-identifiers.

    Parameters
    ----------
    table : EncodedTable, optional
        The table whose age values the interval hierarchy covers (default: the bundled data).

    Returns
    -------
    dict of str to Hierarchy
        ``age``: value, 5-, 10-, 20-year intervals, ``*``; ``workclass``, ``marital-status``,
        ``occupation``, ``native-country``: value, group, ``*``; ``education``: value,
        group, level (Low/Medium/High), ``*``; ``race``, ``sex``: value, ``*``.

    Examples
    --------
    >>> hierarchies = adult_hierarchies()
    >>> sorted(hierarchies)
    ['age', 'education', 'marital-status', 'native-country', 'occupation', 'race', 'sex', 'workclass']
    >>> hierarchies["sex"].height
    1
    """
    table = table if table is not None else load_adult(drop_missing=False)
    ages = [a for a in table.column("age").categories if a is not None]
    hierarchies = {
        "age": interval_hierarchy(ages, widths=[5, 10, 20], start=0, attribute="age"),
        "workclass": taxonomy_hierarchy(_WORKCLASS, attribute="workclass"),
        "education": taxonomy_hierarchy(_EDUCATION, attribute="education"),
        "marital-status": taxonomy_hierarchy(_MARITAL, attribute="marital-status"),
        "occupation": taxonomy_hierarchy(_OCCUPATION, attribute="occupation"),
        "native-country": taxonomy_hierarchy(_COUNTRY, attribute="native-country"),
        "race": flat_hierarchy(table.column("race").categories, attribute="race"),
        "sex": flat_hierarchy(table.column("sex").categories, attribute="sex"),
    }
    return hierarchies
