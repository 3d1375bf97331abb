"""The separator of a CSV file guessed from its first lines (the web app's default)."""

from __future__ import annotations

import gzip

import pytest

from anonlab.io import sniff_separator


@pytest.mark.parametrize("sep", [",", ";", "\t", "|"])
def test_each_separator_is_guessed(tmp_path, sep):
    text = (
        sep.join(["age", "sex", "city"])
        + "\n"
        + "".join(sep.join([str(20 + i), "FM"[i % 2], f"c{i}"]) + "\n" for i in range(50))
    )
    plain = tmp_path / "t.csv"
    plain.write_text(text)
    packed = tmp_path / "t.csv.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    assert sniff_separator(plain) == sep and sniff_separator(packed) == sep


def test_what_cannot_be_guessed_gets_the_default(tmp_path):
    one = tmp_path / "one.csv"
    one.write_text("age\n30\n40\n")
    assert sniff_separator(one) == ","
    assert sniff_separator(tmp_path / "t.parquet", default=";") == ";"
    assert sniff_separator(tmp_path / "missing.csv") == ","


def test_a_header_is_guessed(tmp_path):
    from anonlab.io import sniff_header

    with_names = tmp_path / "a.csv"
    with_names.write_text("age;sex\n" + "".join(f"{20 + i};{'FM'[i % 2]}\n" for i in range(30)))
    without = tmp_path / "b.csv"
    without.write_text("".join(f"{20 + i},{'FM'[i % 2]},c{i}\n" for i in range(30)))
    assert sniff_header(with_names, ";") is True and sniff_header(without) is False
