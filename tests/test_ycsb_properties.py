"""YCSB property files and CoreWorkload's properties: syntax, defaults, coercion, checks."""
from __future__ import annotations

from pathlib import Path

import pytest

from benchlib.workloads.ycsb.properties import (
    INT_MAX,
    CoreWorkloadProperties,
    PropertyFileError,
    WorkloadPropertyError,
    likely_misspellings,
    read_property_file,
    split_properties,
)

DATA = Path(__file__).parent / "data" / "ycsb"


def write(tmp_path: Path, text: str, name: str = "w.properties", newline: str = "\n") -> Path:
    p = tmp_path / name
    p.write_bytes(text.replace("\n", newline).encode())
    return p


# ------------------------------------------------------------ the real workload files

def test_workloada_parses_as_ycsb_reads_it():
    d = read_property_file(DATA / "workloada")
    assert d == {
        "recordcount": "1000", "operationcount": "1000",
        "workload": "site.ycsb.workloads.CoreWorkload", "readallfields": "true",
        "readproportion": "0.5", "updateproportion": "0.5", "scanproportion": "0",
        "insertproportion": "0", "requestdistribution": "zipfian",
    }
    _, other = split_properties(d)
    assert other == {"workload": "site.ycsb.workloads.CoreWorkload"}
    p = CoreWorkloadProperties.from_properties(d)
    assert (p.recordcount, p.operationcount, p.requestdistribution) == (1000, 1000, "zipfian")
    assert p.proportions == {"readproportion": 0.5, "updateproportion": 0.5,
                             "insertproportion": 0.0, "scanproportion": 0.0,
                             "readmodifywriteproportion": 0.0}
    assert p.insertcount == 1000 and p.insertstart == 0


def test_workloade_parses_as_ycsb_reads_it():
    p = CoreWorkloadProperties.from_properties(read_property_file(DATA / "workloade"))
    assert (p.scanproportion, p.insertproportion, p.readproportion) == (0.95, 0.05, 0.0)
    assert (p.maxscanlength, p.minscanlength, p.scanlengthdistribution) == (100, 1, "uniform")


def test_defaults_are_ycsbs():
    p = CoreWorkloadProperties.from_properties({"recordcount": 10})
    assert p.table == "usertable" and p.fieldcount == 10 and p.fieldlength == 100
    assert p.fieldlengthdistribution == "constant" and p.minfieldlength == 1
    assert p.fieldlengthhistogram == "hist.txt" and p.fieldnameprefix == "field"
    assert p.readallfields is True and p.readallfieldsbyname is False
    assert p.writeallfields is False and p.dataintegrity is False
    assert (p.readproportion, p.updateproportion) == (0.95, 0.05)
    assert p.requestdistribution == "uniform" and p.zipfianconstant == 0.99
    assert (p.hotspotdatafraction, p.hotspotopnfraction) == (0.2, 0.8)
    assert p.exponential_percentile == 95 and p.exponential_frac == 0.8571428571
    assert p.insertorder == "hashed" and p.zeropadding == 1
    assert (p.minscanlength, p.maxscanlength, p.scanlengthdistribution) == (1, 1000, "uniform")
    assert p.core_workload_insertion_retry_limit == 0
    assert p.core_workload_insertion_retry_interval == 3
    assert p.field_names == [f"field{i}" for i in range(10)]


def test_recordcount_zero_means_integer_max_value_as_in_coreworkload():
    p = CoreWorkloadProperties.from_properties({})
    assert p.recordcount == INT_MAX and p.insertcount == INT_MAX


# ------------------------------------------------------------ .properties syntax

def test_java_properties_syntax(tmp_path):
    lines = [
        "# comment", "! also a comment", "   # indented comment", "",
        "a=1", "b = 2", "c: 3", "d 4", "e\t=\t5   ", "f=", "g = x = y",
        # a continuation drops the next line's leading whitespace, nothing else
        "h = first \\", "    second\\", "  third",
        "# comment \\", "i=after a comment ending in a backslash",
        "j = tab\\tand\\u0041", "k\\=ey = v", "l = kept space\\ ", "m = 7\\\\",
        "readproportion: 0.5", "a=last wins",
    ]
    p = write(tmp_path, "\n".join(lines) + "\n")
    d = read_property_file(p)
    assert d == {
        "a": "last wins", "b": "2", "c": "3", "d": "4", "e": "5", "f": "", "g": "x = y",
        "h": "first secondthird", "i": "after a comment ending in a backslash",
        "j": "tab\tandA", "k=ey": "v", "l": "kept space ", "m": "7\\",
        "readproportion": "0.5",
    }


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_crlf_and_cr_line_ends(tmp_path, newline):
    p = write(tmp_path, "a=1\nb = 2 \\\n  3\n", newline=newline)
    assert read_property_file(p) == {"a": "1", "b": "2 3"}


@pytest.mark.parametrize("text, lineno, expected", [
    ("recordcount=10\n\nreadproportion\n", 3, "'key=value'"),
    ("# x\n=0.5\n", 2, "a key before the separator"),
    ("a=1\nb=\\u00zz\n", 2, "four hex digits after \\u"),
    ("a=1\nb=2 \\\n", 2, "end of the file"),
    ("a=1\n[section]\n", 2, "'key=value'"),
])
def test_malformed_file_gives_one_line_with_path_and_lineno(tmp_path, text, lineno, expected):
    p = write(tmp_path, text)
    with pytest.raises(PropertyFileError) as ei:
        read_property_file(p)
    msg = str(ei.value)
    assert "\n" not in msg
    assert msg.startswith(f"{p}:{lineno}: ")
    assert expected in msg
    assert ei.value.lineno == lineno and isinstance(ei.value, ValueError)


# ------------------------------------------------------------ coercion and validation

def test_strings_and_yaml_types_are_coerced():
    s = CoreWorkloadProperties.from_properties({
        "recordcount": "1000", "readallfields": "FALSE", "writeallfields": "true",
        "readproportion": "0.25", "updateproportion": ".75", "exponential.frac": "0.5",
        "zeropadding": " 12 ", "insertstart": None})
    y = CoreWorkloadProperties.from_properties({
        "recordcount": 1000, "readallfields": False, "writeallfields": True,
        "readproportion": 0.25, "updateproportion": 0.75, "exponential.frac": 0.5,
        "zeropadding": 12})
    assert s == y
    assert s.readallfields is False and s.exponential_frac == 0.5 and s.zeropadding == 12


@pytest.mark.parametrize("props, fragment", [
    ({"readallfields": "yes"}, "readallfields: expected true or false"),
    ({"recordcount": "1e3"}, "recordcount"),
    ({"requestdistribution": "Zipfian"}, "requestdistribution"),
    ({"insertorder": "hashd"}, "insertorder"),
    ({"hotspotdatafraction": 1.5}, "hotspotdatafraction"),
    ({"hotspotopnfraction": -0.1}, "hotspotopnfraction"),
    ({"exponential.percentile": 100}, "exponential.percentile"),
    ({"readproportion": "nan"}, "readproportion"),
    ({"fieldlengthdistribution": "uniform", "minfieldlength": 200}, "minfieldlength = 200 exceeds"),
    ({"minscanlength": 10, "maxscanlength": 5}, "minscanlength = 10 exceeds maxscanlength = 5"),
    ({"dataintegrity": "true", "fieldlengthdistribution": "zipfian"}, "requires fieldlengthdistribution=constant"),
    ({"insertstart": 600, "insertcount": 500}, "insertstart + insertcount = 600 + 500 = 1100 exceeds recordcount = 1000"),
    ({"insertstart": 1001}, "insertstart = 1001 exceeds recordcount = 1000"),
])
def test_invalid_values_are_rejected_in_one_line(props, fragment):
    with pytest.raises(WorkloadPropertyError) as ei:
        CoreWorkloadProperties.from_properties({"recordcount": 1000, **props})
    assert "\n" not in str(ei.value)
    assert fragment in str(ei.value)


def test_insertstart_insertcount_as_ycsb_checks_them():
    p = CoreWorkloadProperties.from_properties({"recordcount": 1000, "insertstart": 500})
    assert p.insertcount == 500  # default: recordcount - insertstart
    p = CoreWorkloadProperties.from_properties(
        {"recordcount": 1000, "insertstart": 500, "insertcount": 500})
    assert p.insertstart + p.insertcount == p.recordcount
    # minfieldlength only matters to variable lengths: constant with a short field is fine
    CoreWorkloadProperties.from_properties({"fieldlength": 1, "minfieldlength": 5})


def test_proportion_sum_not_one_is_rejected_naming_the_sum():
    with pytest.raises(WorkloadPropertyError) as ei:
        CoreWorkloadProperties.from_properties({"readproportion": 0.5, "updateproportion": 0.6})
    msg = str(ei.value)
    assert "\n" not in msg
    assert "= 1.1" in msg and "must sum to 1" in msg
    for name in ("readproportion=0.5", "updateproportion=0.6", "insertproportion=0 (default)",
                 "scanproportion=0 (default)", "readmodifywriteproportion=0 (default)"):
        assert name in msg
    # the default update proportion 0.05 counts: readproportion=1 alone sums to 1.05
    with pytest.raises(WorkloadPropertyError, match=r"updateproportion=0.05 \(default\).*= 1.05"):
        CoreWorkloadProperties.from_properties({"readproportion": 1})
    # rounding within 1e-9 is accepted
    CoreWorkloadProperties.from_properties(
        {"readproportion": 0.1, "updateproportion": 0.2, "scanproportion": 0.7})


def test_split_keeps_client_and_binding_keys_aside():
    d = {"threadcount": "8", "target": "1000", "db": "site.ycsb.BasicDB", "db.url": "jdbc:x",
         "jdbc.fetchsize": "10", "basicdb.verbose": "false", "measurementtype": "hdrhistogram",
         "status.interval": "1", "exporter": "x", "workload": "site.ycsb.workloads.CoreWorkload",
         "recordcount": "100", "exponential.percentile": "90", "zipfianconstant": "0.9",
         "maxexecutiontime": "60", "core_workload_insertion_retry_limit": "2"}
    core, other = split_properties(d)
    assert set(core) == {"recordcount", "exponential.percentile", "zipfianconstant",
                         "maxexecutiontime", "core_workload_insertion_retry_limit"}
    assert set(other) == set(d) - set(core)
    p = CoreWorkloadProperties.from_properties(d)  # the non-core keys are ignored
    assert p.exponential_percentile == 90 and p.maxexecutiontime == 60


def test_unknown_keys_are_forbidden_on_direct_construction_and_flagged_as_misspelled():
    with pytest.raises(ValueError):
        CoreWorkloadProperties(requestdistrbution="zipfian")
    _, other = split_properties({"requestdistrbution": "zipfian", "threadcount": 4,
                                 "db.url": "x", "mongodb.url": "y"})
    assert likely_misspellings(other) == {"requestdistrbution": "requestdistribution"}


def test_field_names_use_the_prefix():
    p = CoreWorkloadProperties.from_properties({"fieldcount": "3", "fieldnameprefix": "f_"})
    assert p.field_names == ["f_0", "f_1", "f_2"]


def test_a_misspelled_experiment_key_given_as_a_property_names_the_key_meant(tmp_path):
    # -p executr=dask lands among the workload's properties: the error names executor
    from benchlib.params import ParameterError, validate
    d = {"experiment": "e", "workload": "ycsb", "targets": [{"name": "s", "url": "sqlite"}],
         "properties": {"recordcount": 10, "executr": "dask"}}
    with pytest.raises(ParameterError, match=r"executr: unknown property \(did you mean executor "
                                             r"\(an experiment key\)\?\)"):
        validate(d, "e.yaml")
