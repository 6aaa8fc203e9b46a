# svmtrain: `make demo` and `make test` each work alone on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip -q --disable-pip-version-check

.PHONY: demo test venv install install-test bench bench-parse bench-startup clean fuzz bench-cache

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

venv: $(BIN)/python

install: venv
	$(PIP) install -e .

install-test: venv
	$(PIP) install -e '.[test]'

# Train Pegasos on the bundled UCI Adult (a9a) data and predict the held-out file.
demo: install
	$(BIN)/svm-train -s pegasos -l 1e-4 data/a9a.xz a9a.model
	$(BIN)/svm-predict data/a9a.t.xz a9a.model a9a.t.predictions
	@echo "model: a9a.model   predictions: a9a.t.predictions"

test: install-test
	$(BIN)/python -m pytest -q

bench-parse: install
	$(BIN)/python scripts/bench_parse.py

bench-startup: install
	$(BIN)/python scripts/bench_startup.py

bench-cache: install
	$(BIN)/python scripts/bench_cache.py

bench: bench-parse bench-startup

# A longer fuzz campaign than the tests run (FUZZ_CASES reader inputs, a seed
# from the clock unless FUZZ_SEED is given; failing inputs go to results/fuzz-failures/).
FUZZ_CASES ?= 200000
FUZZ_CLI_CASES ?= 2000
FUZZ_SEED ?=
fuzz: install
	$(BIN)/python scripts/fuzz.py --cases $(FUZZ_CASES) --cli-cases $(FUZZ_CLI_CASES) $(if $(FUZZ_SEED),--seed $(FUZZ_SEED))

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache a9a.model a9a.t.predictions
	find . -name __pycache__ -prune -exec rm -rf {} +
