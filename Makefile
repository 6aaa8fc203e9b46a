# svmtrain: `make demo` and `make test` each work alone on a fresh machine.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
PIP    := $(BIN)/python -m pip -q --disable-pip-version-check

.PHONY: demo test venv install install-test bench bench-parse bench-startup bench-linear bench-kernel bench-smo bench-smo-growth bench-smo-dense bench-asset clean fuzz bench-cache \
	bench-dask bench-stream bench-table bench-all bench-param bench-tasks bench-ranking bench-first-run bench-grid bench-easy bench-sklearn bench-multiclass bench-l1 bench-ocas-sparse bench-ocas-svmocas experiments exp-pegasos exp-runtime-vs-n exp-sbp exp-asset exp-asset-defaults \
	exp-survey \
	readme-tour

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

venv: $(BIN)/python

# set-up compiles every solver's numba kernels once, in parallel processes,
# and the package's Python bytecode: pip compiles it when it installs a wheel
# but not for an editable install, and where PYTHONDONTWRITEBYTECODE is set
# (as in many containers) every command would compile its client again
# (8 ms of a 46 ms run on heart_scale)
install: venv
	$(PIP) install -e .
	$(BIN)/python -m compileall -q svmtrain
	$(BIN)/svm-train --precompile

install-test: venv
	$(PIP) install -e '.[test]'
	$(BIN)/python -m compileall -q svmtrain
	$(BIN)/svm-train --precompile

# Train Pegasos on the bundled UCI Adult (a9a) data and predict the held-out file.
demo: install
	$(BIN)/svm-train -s pegasos -l 1e-4 data/a9a.xz a9a.model
	$(BIN)/svm-predict data/a9a.t.xz a9a.model a9a.t.predictions
	@echo "model: a9a.model   predictions: a9a.t.predictions"

# (install-test has compiled every solver's kernels, in parallel; the check
# proves that no command line of scripts/check_precompile.py compiles
# anything after that, and the tests find numba's cache warm)
test: install-test
	$(BIN)/python scripts/check_precompile.py --in-place
	$(BIN)/python -m pytest -q --durations=25

bench-parse: install
	$(BIN)/python scripts/bench_parse.py

bench-startup: install
	$(BIN)/python scripts/bench_startup.py

bench-cache: install
	$(BIN)/python scripts/bench_cache.py

# One table (results/bench.md, .csv): every solver against every installed peer on the same
# files. BENCH_ARGS for bigger runs, e.g. BENCH_ARGS="--rows 1000000 --test-rows 100000".
BENCH_ARGS ?=
bench-table: install
	$(BIN)/python scripts/bench.py $(BENCH_ARGS)

# svmtrain's linear solvers only
bench-linear: install
	$(BIN)/python scripts/bench.py --sections linear $(BENCH_ARGS)

# -s sbp against LIBSVM's /usr/bin/svm-train on a9a (RBF, gamma 0.01, C 100)
bench-kernel: install
	$(BIN)/python scripts/bench_kernel.py

bench-smo: install
	$(BIN)/python scripts/bench_kernel.py --solver smo --runs 1

bench-smo-growth: install
	$(BIN)/python scripts/bench_smo_growth.py

bench-smo-dense: install
	$(BIN)/python scripts/bench_smo_dense.py

# -s asset (Nystrom and Fourier features) against LIBSVM on a9a
bench-asset: install
	$(BIN)/python scripts/bench_asset.py

# -s ocas (and --ocas-method cp) against Debian's svmocas on a9a, one thread;
# BENCH_OCAS_SVMOCAS_ARGS=--synthetic adds the 200k x 200k synthetic file (minutes)
bench-ocas-svmocas: install
	$(BIN)/python scripts/bench_ocas_svmocas.py $(BENCH_OCAS_SVMOCAS_ARGS)

# --engine dask: distributed OCAS with 1 and 2 workers on a synthetic file split into partitions
bench-dask: venv
	$(PIP) install -e '.[dask]'
	$(BIN)/python scripts/bench_dask.py $(BENCH_DASK_ARGS)

# --stream: peak RSS against --memory-limit + the interpreter's baseline, accuracy against in memory
bench-stream: install
	$(BIN)/python scripts/bench_stream.py $(BENCH_STREAM_ARGS)

bench-param: install
	$(BIN)/python scripts/bench_param_search.py

bench-tasks: install
	$(BIN)/python scripts/bench_tasks.py

bench-ranking: install
	$(BIN)/python scripts/bench_ranking.py
	$(BIN)/python scripts/bench_ranking.py --vs-liblinear --features 5000

bench-sklearn: install
	$(PIP) install -q 'scikit-learn>=1.6'
	$(BIN)/python scripts/bench_sklearn.py

bench-multiclass: install
	$(BIN)/python scripts/bench_multiclass.py $(BENCH_MULTICLASS_ARGS)

bench-l1: install
	$(BIN)/python scripts/bench_l1.py --data a9a --data docstrings --data synthetic

bench-ocas-sparse: install
	$(BIN)/python scripts/bench_ocas_sparse.py $(BENCH_OCAS_ARGS)

bench-grid: install
	$(BIN)/python scripts/bench_grid.py --log2c=-5,15,4 --log2g=3,-15,-4

bench-easy: install
	$(BIN)/python scripts/bench_easy.py

bench-first-run: install
	$(BIN)/python scripts/bench_first_run.py

bench: bench-startup bench-table

# every benchmark, the per-issue ones at their own (larger) default sizes
bench-all: bench bench-parse bench-kernel bench-smo bench-smo-growth bench-smo-dense bench-asset bench-cache bench-dask bench-stream bench-param bench-tasks \
	bench-ranking bench-first-run bench-grid bench-easy bench-multiclass bench-l1 bench-ocas-sparse

# The papers' experiments: results/NAME.csv and results/NAME.png (PNG with the `plot` extra).
exp-pegasos: install
	$(BIN)/python scripts/exp_pegasos.py

exp-runtime-vs-n: install
	$(BIN)/python scripts/exp_runtime_vs_n.py

exp-sbp: install
	$(BIN)/python scripts/exp_sbp.py

exp-asset: install
	$(BIN)/python scripts/exp_asset.py

# -s asset's defaults on a9a: epochs x averaging, the defaults over 8 seeds, --eig-threshold
exp-asset-defaults: install
	$(BIN)/python scripts/exp_asset_defaults.py

exp-survey: install
	$(BIN)/python scripts/exp_survey.py

experiments: exp-pegasos exp-runtime-vs-n exp-sbp exp-asset exp-survey

# The README's one-minute tour: run its commands and write their real output between
# <!-- tour:begin --> and <!-- tour:end -->. README_TOUR_ARGS=--check: exit 1 if it is out of
# date (times masked), --print: show the fresh block only.
README_TOUR_ARGS ?=
readme-tour: install
	$(BIN)/python scripts/readme_tour.py $(README_TOUR_ARGS)

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
