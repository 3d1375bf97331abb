"""Bundled data: UCI Adult (CC BY 4.0) with hierarchies built by anonlab."""

from anonlab.datasets.adult import (
    ADULT_QUASI_IDENTIFIERS,
    adult_csv_options,
    adult_hierarchies,
    adult_path,
    load_adult,
)

__all__ = [
    "ADULT_QUASI_IDENTIFIERS",
    "adult_csv_options",
    "adult_hierarchies",
    "adult_path",
    "load_adult",
]
