"""Masking by parsing (issue 41): any character in a password, the URL forms each target
family takes, structures walked, text read URL by URL; a message that quotes no secret
keeps its words."""
from __future__ import annotations

from urllib.parse import quote

import pytest

from benchlib.masking import hide_secrets, mask_mapping, mask_text, mask_url, restore_secrets

PRINTABLE = "".join(map(chr, range(32, 127)))
PW = "Xy7" + PRINTABLE + "Qz9"


@pytest.fixture(autouse=True)
def forget_secrets():
    """The secrets these tests mask are forgotten after each (a process remembers what it
    masked: "postgres" would be masked in the next test's messages)."""
    from benchlib import masking
    before = set(masking._seen)
    yield
    masking._seen.intersection_update(before)


@pytest.mark.parametrize("url, masked", [
    ("postgresql://postgres:Qu'S3cret@127.0.0.1:5432/db", "postgresql://postgres:***@127.0.0.1:5432/db"),
    ('postgresql://u:a"b<c>d e@h/db', "postgresql://u:***@h/db"),
    ("postgresql://u:p@ss@h:5432/db", "postgresql://u:***@h:5432/db"),
    ("postgresql://u:pa/ss?x#y@h/db", "postgresql://u:***@h/db"),
    ("postgresql://u@h/db?sslmode=disable&password=a'b c&application_name=x",
     "postgresql://u@h/db?sslmode=disable&password=***&application_name=x"),
    ("postgresql://u@h/db?pass%77ord=abc", "postgresql://u@h/db?pass%77ord=***"),
    ("mysql+pymysql://root:%27%22%3C%3E@h:3306/db", "mysql+pymysql://root:***@h:3306/db"),
    ("mysql://root@h/db?password=x%26y", "mysql://root@h/db?password=***"),
    ("redis://:pw d@h:6379/0", "redis://:***@h:6379/0"),
    ("redis://user:pw@h:6379/0", "redis://user:***@h:6379/0"),
    ("unix:///tmp/redis.sock?db=0&password=pw", "unix:///tmp/redis.sock?db=0&password=***"),
    ("mysql://root@h/db", "mysql://root@h/db"),
    ("postgresql://h:5432/db", "postgresql://h:5432/db"),
])
def test_a_url_is_masked_where_its_parser_reads_a_password(url, masked):
    assert mask_url(url) == masked


@pytest.mark.parametrize("form", ["raw", "encoded", "query"])
def test_every_printable_character_in_a_password(form):
    url = {"raw": f"postgresql://u:{PW}@h:5432/db",
           "encoded": f"postgresql://u:{quote(PW, safe='')}@h:5432/db",
           "query": f"postgresql://u@h:5432/db?password={quote(PW, safe='')}"}[form]
    out = mask_url(url)
    assert "Xy7" not in out and "Qz9" not in out and "***" in out
    # in a structure (the experiment, meta.json) and in a line of text alike
    walked = mask_mapping({"targets": [{"name": "t", "url": url}], "n": 1})
    assert "Xy7" not in repr(walked) and walked["n"] == 1
    assert "Qz9" not in mask_text(f"cannot connect to {url}: refused") + mask_text(f"'{url}'")


def test_a_secret_named_value_is_masked_in_structures_and_text():
    walked = mask_mapping({"properties": {"db.passwd": "a'b", "recordcount": 5},
                           "options": {"password": 7, "ssl_token": "t"}})
    assert walked == {"properties": {"db.passwd": "***", "recordcount": 5},
                      "options": {"password": "***", "ssl_token": "***"}}
    assert mask_text("{'db.passwd': 'two words', 'x': 1}") == "{'db.passwd': '***', 'x': 1}"
    assert mask_text('a "password": "x y" b') == 'a "password": "***" b'
    assert mask_text("props db.passwd=abc recordcount=5") == "props db.passwd=*** recordcount=5"


def test_a_message_quoting_no_secret_keeps_its_words():
    line = ("cannot connect to mysql://root:***@127.0.0.1:3306/db: (1045, \"Access denied for user "
            "'root'@'localhost' (using password: YES)\")")
    assert mask_text(line) == line
    line = "cannot connect to postgresql://u@h/db: FATAL: role \"x@y\" does not exist"
    assert mask_text(line) == line
    assert mask_text("no URL here: a@b:c") == "no URL here: a@b:c"


def test_a_secret_once_masked_is_masked_wherever_text_quotes_it():
    mask_url("postgresql://u:Sq'7 Wv%40rd@h/db")
    # a driver's message quoting the user-info as it was given, or decoded
    assert mask_text('unexpected spaces found in "Sq\'7 Wv%40rd"') == 'unexpected spaces found in "***"'
    assert "Wv@rd" not in mask_text("password Sq'7 Wv@rd refused")


def test_notebook_parameters_come_back_whole():
    params = {"targets": [{"name": "m", "url": f"mysql://root:{quote(PW, safe='')}@h/db"}],
              "properties": {"db.passwd": PW, "recordcount": 5}, "seed": 1}
    masked, secrets = hide_secrets(params)
    assert "Xy7" not in repr(masked) and set(secrets) == {"targets", "properties"}
    import json
    assert restore_secrets(masked, {"BENCHLIB_NOTEBOOK_SECRETS": json.dumps(secrets)}) == params


def test_a_known_secret_is_masked_where_it_stands_whole_and_not_in_structures():
    """A password that is a word ("postgres") is masked as a word, not inside
    "postgresql"; a structure is walked, never searched for known secrets (a target
    named like the password keeps its name)."""
    mask_url("postgresql://postgres:postgres@h/db")
    assert mask_text("postgresql://u@h/db: password postgres refused") == \
        "postgresql://u@h/db: password *** refused"
    walked = mask_mapping({"name": "postgres", "url": "postgresql://postgres:postgres@h/db"})
    assert walked == {"name": "postgres", "url": "postgresql://postgres:***@h/db"}
