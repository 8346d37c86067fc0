# Two commands: `make demo` runs the quick-start scenario, `make test` runs the test suite.
# Both create .venv (if missing) and install simnet with its test extras first.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp

.PHONY: demo test golden clean

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
	$(BIN)/python -m pytest -n auto --dist loadfile

# Rewrite tests/golden/*.csv from the current code and print every timing that moved.
golden: $(STAMP)
	$(BIN)/python -m pytest -q -s tests/test_golden.py --simnet-update-golden
	@git status --short tests/golden

clean:
	rm -rf $(VENV) results .pytest_cache .hypothesis
