# Two commands: `make demo` runs the quick-start scenario, `make test` runs the test suite.
# Both create .venv (if missing) and install simnet with its test extras first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || \
		{ echo "simnet needs Python >= 3.11; set PYTHON=/path/to/python3.11"; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

demo: $(STAMP)
	$(BIN)/simnet run scenarios/quickstart.yaml --out results/quickstart

test: $(STAMP)
	$(BIN)/python -m pytest

clean:
	rm -rf $(VENV) results .pytest_cache .hypothesis
