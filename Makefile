# The two commands of a fresh machine (see README.md):
#   make quickstart   creates .venv, installs benchlib, runs the quickstart experiment + report
#   make test         creates .venv, installs benchlib, runs the whole test suite
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: quickstart test install clean-data

$(BIN)/.installed: pyproject.toml setup.py benchlib/importers/_linescan.c benchlib/targets/_pgloop.c
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[all]'
	@$(BIN)/python -c "from benchlib.targets import pg_native as n; n.AVAILABLE or print('note: ' + n.MISSING)"
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $@

install: $(BIN)/.installed

quickstart: $(BIN)/.installed
	$(BIN)/benchlib run parameters/quickstart.yaml --report

test: $(BIN)/.installed
	$(BIN)/python -m pytest -q

clean-data:
	rm -rf data/quickstart data/smoke data/catalog.sqlite
