# The two commands of a fresh machine (see README.md):
#   make quickstart   creates .venv, installs benchlib, runs the quickstart experiment + report
#   make test         creates .venv, installs benchlib, runs the whole test suite
# and `make docs` builds the documentation site (docs/, mkdocs.yml) into site/
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
NATIVE_C := benchlib/workloads/_native

.PHONY: quickstart test test-newcomer install mysql-c docs clean-data bytecode

$(BIN)/.installed: pyproject.toml setup.py benchlib/importers/_linescan.c \
		$(NATIVE_C)/_pgloop.c $(NATIVE_C)/_myloop.c $(NATIVE_C)/_redisloop.c $(NATIVE_C)/_lbloop.c \
		$(NATIVE_C)/_lbmyloop.c $(NATIVE_C)/_lbplan.h $(NATIVE_C)/_mylib.h $(NATIVE_C)/_lbops.h $(NATIVE_C)/_loop.h $(NATIVE_C)/_sqlplan.h $(NATIVE_C)/_sqlcols.h $(NATIVE_C)/_muxconn.h
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all]'
	@$(BIN)/python -c "from benchlib.workloads.ycsb.bindings import postgres_native as n; n.AVAILABLE or print('note: ' + n.MISSING)"
	@$(BIN)/python -c "from benchlib.workloads.kv.bindings import redis_native as n; n.AVAILABLE or print('note: ' + n.MISSING + '; kv on Redis runs redis-py')"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

# MariaDB's C client (mysqlclient) and benchlib's C loop over libmariadb
# (workloads/_native/_myloop.c) build against libmariadb-dev with pkg-config, which
# need root to install: tried at each make until it is there, PyMySQL and the Python loop
# meanwhile
mysql-c: $(BIN)/.installed
	@$(BIN)/python -c 'import MySQLdb' 2>/dev/null \
	  || $(BIN)/python -m pip install --quiet 'mysqlclient>=2.1' >/dev/null 2>&1 \
	  || echo "mysqlclient not installed, MariaDB goes through PyMySQL: apt-get install libmariadb-dev pkg-config, then make install"
	@$(BIN)/python -c 'from benchlib.workloads._native import _myloop' 2>/dev/null \
	  || { mariadb_config --include >/dev/null 2>&1 && $(BIN)/python -m pip install --quiet --no-deps -e . >/dev/null 2>&1; } \
	  || echo "the C loop over libmariadb is not built, MariaDB's run loops are Python's: apt-get install libmariadb-dev, then make install"

install: $(BIN)/.installed mysql-c

quickstart: $(BIN)/.installed mysql-c
	$(BIN)/benchlib run parameters/quickstart.yaml --report

# three pytest workers: most tests wait on a server or a subprocess, and the suite was
# twice as long on one (15.5 against 8.8 min on a 2-core machine); every test works in
# a database, table or folder of its own, so they run side by side; --dist loadscope is
# xdist's, over the suite's own units (tests/scheduling.py): a module sharing a module
# fixture (test_points' ybio runs) goes to one worker, every other test alone, longest first
# bytecode (compileall) first: where PYTHONDONTWRITEBYTECODE is set (this machine's shells) no
# process writes benchlib's bytecode, so every Python process the suite starts
# (a run's spawned clients, `benchlib` subprocesses, kernels) compiled ~100 modules from
# source again; compileall writes them regardless, skips what is up to date, and a module
# edited since is compiled afresh in memory, never run stale
test: $(BIN)/.installed mysql-c bytecode
	$(BIN)/python -m pytest -q -n 3 --dist loadscope

bytecode: $(BIN)/.installed
	@$(BIN)/python -m compileall -q benchlib tests >/dev/null

# the suite on a newcomer's machine (the README's first paragraph: a C compiler, but no
# client library's headers, so no C loops and no mysqlclient): the tracked files copied to $(NEWCOMER), installed there with
# BENCHLIB_C_LOOPS=0 and without the mysql-c step, so that no loop built in this tree is seen;
# every test of an absent part skips, saying why (.ci/run runs it before make test)
NEWCOMER ?= /tmp/benchlib-newcomer
# the tests of the optional parts' files (the fast ones, and every one that names an
# optional part, which skips); NEWCOMER_TESTS= runs the whole suite so
NEWCOMER_TESTS ?= -m "not slow or requires" tests/test_mysql_drivers.py tests/test_mysql_native.py \
  tests/test_pg_native.py tests/test_kv_native.py tests/test_ybio_native.py tests/test_native_loops.py tests/test_importers_linescan.py tests/test_linkbench_cloop.py tests/test_linkbench_mycloop.py tests/test_ycsb_columns.py \
  tests/test_targets.py tests/test_packaging.py tests/test_reconnect.py tests/faults/test_kill_connections.py \
  tests/faults/test_failed_ops.py tests/faults/test_run_faults.py
test-newcomer:
	rm -rf $(NEWCOMER) && mkdir -p $(NEWCOMER)
	git ls-files -z | xargs -0 cp --parents -t $(NEWCOMER)
	cd $(NEWCOMER) && $(PYTHON) -m venv .venv && .venv/bin/python -m pip install --quiet --upgrade pip \
	  && BENCHLIB_C_LOOPS=0 .venv/bin/python -m pip install --quiet -e '.[all]' \
	  && .venv/bin/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	cd $(NEWCOMER) && .venv/bin/python -m pytest -q -n 3 --dist loadscope $(NEWCOMER_TESTS)

# the documentation site, as CI checks it (tests/test_docs.py): a broken link or a page
# outside the nav fails the build
docs: $(BIN)/.installed
	$(BIN)/python -m mkdocs build --strict --site-dir site

clean-data:
	rm -rf data/quickstart data/smoke data/catalog.sqlite
