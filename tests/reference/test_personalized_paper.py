"""Personalized privacy against the examples of paper 004 (Song, Huang, Wang, Kang & Liu 2015).

Table 1 (diagnosis records), Table 2 (a voter list an attacker links with), Table 3 (a
2-anonymous release on {Age, Postcode}). Every owner asks for at most 50 % leakage. The paper:
Zhao (12, 22000) links to the fourth or fifth record of Table 3, both pneumonia, so his
disease leaks; "in Table 3 the fourth and fifth records have Pleak 1 and the first three 1/3"
(Definition 8 with the record itself in its group). The method's output meets every limit.

Figure 1's trees are only "part of" the trees in the extracted text. They are rebuilt here:
Age has the leaves 5..20 under [5-10] and [11-20] (the labels of Table 3), Postcode the
postcodes of Tables 1-2 under [10001-20000] and [20001-25000], Disease two branches,
digestive (gastric ulcer, dyspepsia) and respiratory (bronchitis, pneumonia).
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from anonlab import EncodedTable, Hierarchy, anonymize, check
from anonlab.cli import app
from anonlab.metrics.info_left import info_left_cells, info_left_table, info_left_tuples

COLUMNS = ["Age", "Postcode", "Disease"]
TABLE1 = [
    ("5", "12000", "gastric ulcer"),
    ("9", "14000", "dyspepsia"),
    ("8", "19000", "bronchitis"),
    ("12", "22000", "pneumonia"),
    ("19", "24000", "pneumonia"),
]
TABLE2 = [  # Name, Age, Zipcode
    ("Li", 5, 12000),
    ("Wang", 9, 14000),
    ("Wang", 6, 18000),
    ("Liu", 8, 19000),
    ("Chen", 7, 17000),
    ("Zhao", 12, 22000),
]
TABLE3 = [
    ("[5-10]", "[10001-20000]", "gastric ulcer"),
    ("[5-10]", "[10001-20000]", "dyspepsia"),
    ("[5-10]", "[10001-20000]", "bronchitis"),
    ("[11-20]", "[20001-25000]", "pneumonia"),
    ("[11-20]", "[20001-25000]", "pneumonia"),
]
AGE = Hierarchy(
    [[str(a), "[5-10]" if a <= 10 else "[11-20]", "*"] for a in range(5, 21)], attribute="Age"
)
POSTCODE = Hierarchy(
    [
        [str(z), "[10001-20000]" if z <= 20000 else "[20001-25000]", "*"]
        for z in (12000, 14000, 17000, 18000, 19000, 22000, 24000)
    ],
    attribute="Postcode",
)
DISEASE = Hierarchy(
    [
        ["gastric ulcer", "digestive disease", "disease"],
        ["dyspepsia", "digestive disease", "disease"],
        ["bronchitis", "respiratory disease", "disease"],
        ["pneumonia", "respiratory disease", "disease"],
    ],
    attribute="Disease",
)
LEAKAGE = {"personalized_leakage": {"attribute": "Disease", "hierarchy": DISEASE}}


def job(quasi_identifiers, **extra):
    out = {
        "quasi_identifiers": quasi_identifiers,
        "sensitive": ["Disease"],
        "models": [{"k_anonymity": {"k": 2}}, LEAKAGE],
        "personalized": {"default_limit": 0.5},
        "metric": "info_left",
    }
    out.update(extra)
    return out


AS_IS = {"Age": {}, "Postcode": {}}  # a release checked as it is: its labels are the values
TREES = {"Age": {"hierarchy": AGE}, "Postcode": {"hierarchy": POSTCODE}}


def leakage(report):
    return next(m for m in report.models if m["model"] == "personalized_leakage")


def test_table3_is_2_anonymous_and_exposes_zhao():
    report = check(EncodedTable.from_rows(TABLE3, COLUMNS), job(AS_IS)).to_dict()
    k, leak = report["models"]
    assert k["holds"]  # 2-anonymous on {Age, Postcode}
    assert not leak["holds"]
    assert leak["violating_records"] == [3, 4]  # the fourth and fifth records
    assert leak["highest_pleak"] == 1.0
    assert leak["average_pleak"] == pytest.approx((3 * (1 / 3) + 2 * 1.0) / 5)


def test_table3_pleak_per_record():
    from anonlab.models import PersonalizedLeakage
    from anonlab.models.personalized import SensitiveTree, privacy_leakage

    table = EncodedTable.from_rows(TABLE3, COLUMNS)
    group = np.array([0, 0, 0, 1, 1])
    col = table["Disease"]
    tree = SensitiveTree.of(DISEASE, col)
    pleak = privacy_leakage(tree, group, col.codes, np.zeros(5, dtype=np.int64))
    np.testing.assert_allclose(pleak, [1 / 3, 1 / 3, 1 / 3, 1.0, 1.0])
    assert PersonalizedLeakage("Disease", DISEASE).record_values(group, col, col)[3] > 0.5


def test_zhao_links_to_the_pneumonia_class():
    """Linking Table 2 with Table 3: Zhao matches only the two pneumonia records."""
    table = EncodedTable.from_rows(TABLE3, COLUMNS)
    ages = table["Age"].labels()
    zips = table["Postcode"].labels()
    for name, age, zipcode in TABLE2:
        match = [
            i
            for i in range(5)
            if AGE.generalize([str(age)], 1)[0] == ages[i]
            and (
                str(zipcode) not in POSTCODE.leaves
                or POSTCODE.generalize([str(zipcode)], 1)[0] == zips[i]
            )
        ]
        if name == "Zhao":
            assert match == [3, 4]
            assert {TABLE3[i][2] for i in match} == {"pneumonia"}  # above 50 %: certain
        else:
            assert match == [0, 1, 2]


def test_table1_as_it_is_exposes_everyone():
    report = check(EncodedTable.from_rows(TABLE1, COLUMNS), job(AS_IS)).to_dict()
    leak = leakage_of(report)
    assert leak["violating_records"] == [0, 1, 2, 3, 4]  # each record alone: Pleak 1
    assert leak["highest_pleak"] == 1.0 and leak["average_pleak"] == 1.0


def leakage_of(report):
    return next(m for m in report["models"] if m["model"] == "personalized_leakage")


def test_the_method_meets_every_owners_limit():
    res = anonymize(EncodedTable.from_rows(TABLE1, COLUMNS), job(TREES, algorithm="personalized"))
    assert res.checks == {"k_anonymity": True, "personalized_leakage": True}
    # the adaptive clustering finds Table 3's groups and labels
    assert list(res.columns["Age"]) == [row[0] for row in TABLE3]
    assert list(res.columns["Postcode"]) == [row[1] for row in TABLE3]
    # SA_Generalization raises the two pneumonias to their parent: Pleak 1/2 each
    assert list(res.columns["Disease"]) == [
        "gastric ulcer",
        "dyspepsia",
        "bronchitis",
        "respiratory disease",
        "respiratory disease",
    ]
    assert res.search.highest_pleak == 0.5
    assert res.search.average_pleak == pytest.approx((3 * (1 / 3) + 2 * 0.5) / 5)
    released = EncodedTable.from_rows(
        list(zip(*(res.columns[c] for c in ("Age", "Postcode")), [r[2] for r in TABLE1])),
        COLUMNS,
    )  # the released groups, judged against the original diseases
    report = check(released, job(AS_IS))
    assert leakage(report)["violating_records"] == [3, 4]  # as Table 3 with leaf diseases


def test_information_left_of_table3_and_of_the_method():
    """Definitions 9-11 on the rebuilt trees, by hand: ILeft_value = 1 - (leaves - 1)/N."""
    age = {"[5-10]": 1 - 5 / 16, "[11-20]": 1 - 9 / 16}
    zipc = {"[10001-20000]": 1 - 4 / 7, "[20001-25000]": 1 - 1 / 7}
    disease_leaf, respiratory = 1.0, 1 - 1 / 4
    t3 = [(age[a] + zipc[z] + disease_leaf) / 3 for a, z, _ in TABLE3]
    table1 = EncodedTable.from_rows(TABLE1, COLUMNS)
    values = [
        info_left_cells(tree, table1[c].categories, table1[c].codes, levels)
        for c, tree, levels in (
            ("Age", AGE, [1] * 5),
            ("Postcode", POSTCODE, [1] * 5),
            ("Disease", DISEASE, [0] * 5),
        )
    ]
    np.testing.assert_allclose(info_left_tuples(values), t3)
    assert info_left_table(info_left_tuples(values)) == pytest.approx(sum(t3) / 5)
    res = anonymize(table1, job(TREES, algorithm="personalized"))
    method = t3[:3] + [(age["[11-20]"] + zipc["[20001-25000]"] + respiratory) / 3] * 2
    assert res.search.info_left == pytest.approx(sum(method) / 5)


def test_check_from_the_command_line(tmp_path):
    data = tmp_path / "table3.csv"
    data.write_text("Age,Postcode,Disease,pleak\n" + "".join(
        f"{a},{z},{d},0.5\n" for a, z, d in TABLE3
    ))  # fmt: skip
    tree = tmp_path / "disease.csv"
    tree.write_text("".join(";".join(r) + "\n" for r in DISEASE.rows()))
    job_file = tmp_path / "job.yaml"
    job_file.write_text(
        "quasi_identifiers: {Age: {}, Postcode: {}}\nsensitive: [Disease]\n"
        "models:\n  - k_anonymity: {k: 2}\n"
        "  - personalized_leakage: {attribute: Disease, hierarchy: disease.csv}\n"
        "personalized: {limit_column: pleak}\n"
    )
    res = CliRunner().invoke(app, ["check", str(data), "--job", str(job_file), "--json"])
    assert res.exit_code == 0, res.output
    leak = leakage_of(json.loads(res.stdout))
    assert leak["violating_records"] == [3, 4] and leak["highest_pleak"] == 1.0
    res = CliRunner().invoke(app, ["check", str(data), "--job", str(job_file)])
    assert res.exit_code == 0, res.output
    assert "over their limit" in res.output and "rows 4, 5, counted from 1" in res.output
