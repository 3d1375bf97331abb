"""pandas and polars frames in and out of the API, as a notebook uses it.

Each entry point takes a pandas or a polars DataFrame as its data (and a release as a
frame); :meth:`AnonymizationResult.to_pandas` and :meth:`~AnonymizationResult.to_polars`
give the release back as a frame whose untouched columns keep their type.
"""

from __future__ import annotations

import pandas as pd
import polars as pl
import pytest

import anonlab
from anonlab.exceptions import OptionalDependencyError

ROWS = 40
COLUMNS = {
    "zip": [f"43{i % 4}{i % 3}" for i in range(ROWS)],
    "sex": ["F", "M"] * (ROWS // 2),
    "age": [20 + 10 * (i % 5) for i in range(ROWS)],
    "visits": [i % 5 for i in range(ROWS)],
}
JOB = {
    "quasi_identifiers": {"zip": {"mask": {"width": 4}}, "sex": {}},
    "insensitive": ["age", "visits"],
    "models": [{"k_anonymity": {"k": 4}}],
    "metric": "height",
}


def frame(kind: str) -> pd.DataFrame | pl.DataFrame:
    return pd.DataFrame(COLUMNS) if kind == "pandas" else pl.DataFrame(COLUMNS)


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_a_frame_is_diagnosed_and_its_risk_summarised(kind: str) -> None:
    data = frame(kind)
    expected = anonlab.EncodedTable.from_columns({k: list(map(str, v)) for k, v in COLUMNS.items()})
    answer = anonlab.diagnose(data, quasi_identifiers=["zip", "sex"])
    assert (answer.k, answer.n_rows) == (
        anonlab.diagnose(expected, quasi_identifiers=["zip", "sex"]).k,
        ROWS,
    )
    summary = anonlab.risk(data, ["zip", "sex"], released_as_is=["age", "visits"])
    assert summary.n_rows == ROWS and summary.k == answer.k


@pytest.mark.parametrize("kind", ["pandas", "polars"])
def test_a_frame_is_anonymized_and_the_release_comes_back_as_either_frame(kind: str) -> None:
    result = anonlab.anonymize(frame(kind), JOB)
    assert result.checks == {"k_anonymity": True}

    released = result.to_pandas()
    assert isinstance(released, pd.DataFrame)
    assert list(released.columns) == ["zip", "sex", "age", "visits"]
    assert released["age"].tolist() == COLUMNS["age"]  # released as it is: numbers stay numbers
    assert pd.api.types.is_integer_dtype(released["age"])
    assert released.groupby(["zip", "sex"]).size().min() >= 4

    polars_release = result.to_polars()
    assert isinstance(polars_release, pl.DataFrame)
    assert polars_release.schema["visits"].is_integer()
    assert polars_release["zip"].to_list() == released["zip"].tolist()

    # the frame that came out goes back in: a release verified against the data
    report = anonlab.check(frame(kind), JOB, release=released)
    assert report.holds
    assert anonlab.diagnose(polars_release, quasi_identifiers=["zip", "sex"]).k >= 4


def test_the_frames_need_their_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    """Without pandas (or polars) the method says which extra to install."""
    result = anonlab.anonymize(frame("pandas"), JOB)
    real = __import__("importlib").import_module

    def without(name: str, *args: object) -> object:
        if name.split(".")[0] in ("pandas", "polars"):
            raise ModuleNotFoundError(f"No module named {name!r}")
        return real(name, *args)

    monkeypatch.setattr("importlib.import_module", without)
    with pytest.raises(OptionalDependencyError, match=r"pip install 'anonlab\[pandas\]'"):
        result.to_pandas()
    with pytest.raises(OptionalDependencyError, match=r"pip install 'anonlab\[polars\]'"):
        result.to_polars()
