"""LinkBench's two loads on real servers: ``load.mode java`` as LinkBenchLoad with
LinkStoreSql (mdcallag/linkbench) sends it — the tables created with their index before
any row, then multi-row ``INSERT … VALUES`` of ``bulk_insert_count`` rows (GraphStore's
property), a loader's links and counts filling its batches across id1s and chunks of
``loader_chunk_size`` — and the fast one (COPY / multi-row batches, the index after).

What is checked is what the server got: the rows in the database against the
``LOAD PHASE COMPLETED`` line's totals (and its Links/s against those rows and its
seconds), and, on a server the test starts with its statement log on (PostgreSQL's
``log_statement = all``, MariaDB's general log), the CREATE INDEX before the first
INSERT and the rows of every INSERT. The load progress lines: id1s done as the loaders
finish them (their counts written), monotonic, at most maxid1, the last the total, in
the Java client's shape (shared sample ``pgsql_load.stdout.log``)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import mysql_rows

from benchlib import run_experiment
from benchlib.params import validate

DATA = Path(__file__).parent / "data" / "linkbench"
SMALL = str(DATA / "Distribution_small.dat")   # ~3 links an id1, no giant node
MAXID1, BULK, CHUNK, EVERY = 20001, 200, 500, 5000
STMT_MAXID1 = 5001   # the statement logs' loads
DONE = re.compile(r"\]: LOAD PHASE COMPLETED\. Loaded (\d+) nodes \(Expected (\d+)\), (\d+) links "
                  r"\([\d.]+ /node\), (\d+) counts \([\d.]+ /node\)\. ([\d.]+) seconds, (\d+) Links/s, "
                  r"(\d+) \(link\+count\)/s, (\d+) \(link\+count\+node\)/s(.*)$", re.M)
PROGRESS = re.compile(r"^INFO \S+ \S+ \[Thread-\d+\]: (\d+)/(\d+) id1s \(([\d.]+)%\) at [\d.]+ /sec\. "
                      r"(\d+) links at [\d.]+ /sec\. (\d+) counts at [\d.]+ /sec\. "
                      r"link\+count at [\d.]+ /sec\. $", re.M)


def _load(tmp_path: Path, url: str, mode: str, name: str, options: dict | None = None,
          maxid1: int = MAXID1) -> Path:
    props = {"maxid1": maxid1, "loaders": 2, "data_file": SMALL, "bulk_insert_count": BULK,
             "loader_chunk_size": CHUNK, "load_progress_interval": EVERY, "link_partitions": 0}
    exp = {"experiment": name, "workload": "linkbench", "load": {"mode": mode}, "properties": props,
           "targets": [{"name": "t", "url": url, **(options or {})}], "run": {"skip": True}, "seed": 7}
    res = run_experiment(validate(exp, "test"), tmp_path / "d", progress=False)
    assert res.ok
    (run_id,) = res.runs
    return tmp_path / "d" / name / run_id


def _done(log: str, maxid1: int = MAXID1) -> tuple[list[int], float, int, str]:
    """The completed line's (nodes, links, counts), seconds, Links/s and what follows."""
    m = DONE.search(log)
    assert m, log[-2000:]
    nodes, expected, links, counts = (int(x) for x in m.group(1, 2, 3, 4))
    assert expected == nodes == maxid1 - 1
    return [nodes, links, counts], float(m.group(5)), int(m.group(6)), m.group(9)


def _progress(log: str, total_links: int, secs: float) -> None:
    """LoadProgress's lines: id1s done, monotonic, at most maxid1, the last the totals;
    a line when the links pass a multiple of load_progress_interval (or the last id1)."""
    lines = [tuple(int(x) for x in m.group(1, 2, 4, 5)) for m in PROGRESS.finditer(log)]
    assert lines, log[-3000:]
    assert len(lines) >= 2 or secs < 3   # an update a second: a few lines in a load of seconds
    id1s = [x[0] for x in lines]
    assert all(x[1] == MAXID1 - 1 for x in lines)
    assert id1s == sorted(id1s) and all(0 < i <= MAXID1 - 1 for i in id1s)
    assert [x[2] for x in lines] == sorted(x[2] for x in lines)
    assert lines[-1] == (MAXID1 - 1, MAXID1 - 1, total_links, 2 * (MAXID1 - 1)), lines[-1]
    assert all(b[2] // EVERY > a[2] // EVERY for a, b in zip(lines, lines[1:-1]))
    # the counts written are those of the id1s done (link_type_count 2): never ahead
    assert all(c >= 2 * i for i, _, _, c in lines)


def _java_shapes(log: str) -> None:
    """The load's progress and completed lines have the Java sample's shapes."""
    java = (DATA / "pgsql_load.stdout.log").read_text()
    assert PROGRESS.search(java) and DONE.search(java) and DONE.search(java).group(9) == ""
    assert PROGRESS.search(log)


@pytest.mark.postgres
@pytest.mark.parametrize("mode", ["java", "fast"])
def test_postgres_load_rows_are_the_lines_totals(pg_own_db, tmp_path, mode):
    import psycopg

    def rows(sql):
        with psycopg.connect(pg_own_db) as c:
            return c.execute(sql).fetchall()
    _rows_are_the_lines_totals(_load(tmp_path, pg_own_db, mode, f"lbpg{mode}"), rows, mode)


@pytest.mark.mysql
@pytest.mark.parametrize("mode", ["java", "fast"])
def test_mariadb_load_rows_are_the_lines_totals(mysql_own_db, tmp_path, mode):
    _rows_are_the_lines_totals(_load(tmp_path, mysql_own_db, mode, f"lbmy{mode}"),
                               lambda sql: mysql_rows(mysql_own_db, sql), mode)


def _rows_are_the_lines_totals(rd, rows_of, mode) -> None:
    """The load's LOAD PHASE COMPLETED line against the tables' rows (``rows_of(sql)``)."""
    log = (rd / "linkbench.log").read_text()
    (nodes, links, counts), secs, rate, tail = _done(log)
    rows = [rows_of(f"SELECT count(*) FROM {t}")[0][0] for t in ("nodetable", "linktable", "counttable")]
    in_counts = rows_of("SELECT sum(count) FROM counttable")[0][0]
    _check(rows, int(in_counts), (nodes, links, counts), secs, rate, tail, mode, log)


def _check(rows, in_counts, line, secs, rate, tail, mode, log) -> None:
    assert list(rows) == list(line) and in_counts == line[1]   # the totals counted, not assumed
    assert line[0] == MAXID1 - 1 and line[2] == 2 * (MAXID1 - 1)
    # Links/s: the counted links over the step's seconds (the line prints them to 0.1 s)
    assert abs(line[1] / rate - secs) <= 0.05 + 1e-3
    if mode == "java":
        assert tail == "" and "Load mode java: INSERTs of 200 rows" in log   # Java's line as it is
    else:
        assert tail.startswith(" (mode fast: ") and "not in these Links/s" in tail
        assert re.search(r"Load mode fast: .* built after in [\d.]+ seconds: \d+ Links/s with it", log)
    _progress(log, line[1], secs)
    _java_shapes(log)


# ---------------------------------------------------------------- the statement logs
def _inserts(statements: list[str]) -> dict[str, list[int]]:
    """Per table, the rows of each multi-row INSERT, in the order sent."""
    out: dict[str, list[int]] = {}
    for s in statements:
        m = re.match(r"INSERT INTO [`\"]?(\w+)[`\"]? \(([^)]*)\) VALUES (.*)$", s, re.S)
        if m:
            tuples = re.findall(r"\((?:[^()']|'(?:[^'\\]|\\.)*')*\)", m.group(3))
            out.setdefault(m.group(1), []).append(len(tuples))
    return out


def _check_statements(statements: list[str], log: str) -> None:
    (nodes, links, counts), _, _, _ = _done(log, STMT_MAXID1)
    created = [i for i, s in enumerate(statements) if re.match(r"CREATE INDEX", s)]
    first = [i for i, s in enumerate(statements) if re.match(r"INSERT INTO [`\"]?linktable", s)]
    assert created and first and created[0] < first[0]   # the index there before any link
    batches = _inserts(statements)
    assert {t: sum(v) for t, v in batches.items()} == {"nodetable": nodes, "linktable": links,
                                                         "counttable": counts}
    for table, sizes in batches.items():
        # every batch bulk_insert_count rows but each loader's last (2 link loaders; the node loader)
        short = [n for n in sizes if n != BULK]
        assert all(0 < n < BULK for n in short) and len(short) <= (1 if table == "nodetable" else 2), \
            (table, short)
        assert sizes.count(BULK) >= 2


@pytest.mark.postgres
def test_postgres_java_load_sends_inserts_of_bulk_insert_count_rows(tmp_path):
    """PostgreSQL's statement log (``log_statement = all``, the server's log in the run
    folder): each INSERT with its parameters' DETAIL. benchlib sends a batch's rows as one
    INSERT of a column array each (``unnest``: the same rows, one statement, at a third of
    the client CPU of 7 × bulk_insert_count bound values): its rows are $1's elements."""
    rd = _load(tmp_path, "postgres-provisioned", "java", "lbpgstmt", {"settings": {"log_statement": "all"}},
               STMT_MAXID1)
    entries = re.findall(r"^\S+ \S+ \S+ \[(\d+)\] (LOG|DETAIL):\s+(.*?)(?=\n\S+ \S+ \S+ \[\d+\] |\Z)",
                         (rd / "server.log").read_text(), re.S | re.M)
    statements = []
    for i, (pid, kind, text) in enumerate(entries):
        m = re.match(r"(?:statement|execute [^:]*): (.*)$", text, re.S) if kind == "LOG" else None
        if not m:
            continue
        st = re.sub(r"\s+", " ", m.group(1)).strip()
        if st.startswith("INSERT INTO") and "unnest(" in st:   # the rows: $1's array, in the next DETAIL of the same session
            detail = next(t for p_, k, t in entries[i + 1:] if p_ == pid and k == "DETAIL")
            n = len(re.match(r"parameters: \$1 = '\{([^}]*)\}'", detail).group(1).split(","))
            st = re.sub(r" SELECT \* FROM unnest\(.*", " VALUES " + ", ".join(["(1)"] * n), st)
        statements.append(st)
    _check_statements(statements, (rd / "linkbench.log").read_text())


@pytest.mark.mysql
def test_mariadb_java_load_sends_inserts_of_bulk_insert_count_rows(tmp_path):
    (tmp_path / "glog").mkdir()
    (tmp_path / "glog").chmod(0o777)   # the server runs as the system's mysql user
    general = tmp_path / "glog" / "general.log"
    rd = _load(tmp_path, "mysql-provisioned", "java", "lbmystmt",
               {"settings": {"general_log": "ON", "general_log_file": str(general)}}, STMT_MAXID1)
    text = general.read_text(errors="replace")
    statements = [re.sub(r"\s+", " ", m.group(1)).strip() for m in re.finditer(
        r"\s\d+ Query\t(.*?)(?=\n(?:\d{6} |\s+\d+ [A-Z][a-z]+\t)|\Z)", text, re.S)]
    _check_statements(statements, (rd / "linkbench.log").read_text())


@pytest.mark.parametrize("given,says", [("jaav", "did you mean java?"), ("FAST", "did you mean fast?"),
                                        ("bulk", "Input should be 'fast' or 'java'")])
def test_a_misspelled_load_mode_is_one_line_and_exit_2(tmp_path, capsys, given, says):
    from benchlib import cli
    cfg = tmp_path / "e.yaml"
    cfg.write_text("experiment: lbmode\nworkload: linkbench\nproperties: {maxid1: 101}\n"
                   "targets: [{name: s, url: sqlite}]\n")
    assert cli.main(["run", str(cfg), "-p", f"load.mode={given}", "--data-dir", str(tmp_path / "d")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "load.mode" in err and says in err, err
    assert not (tmp_path / "d").exists()
