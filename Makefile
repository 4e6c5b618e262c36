# The two commands of the README: `make book` builds the book, `make test` runs every test.
# Both create the virtual environment from requirements.txt when it is missing or stale.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2

.PHONY: book test lint bench refresh clean

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

book: $(STAMP)
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo "The book is built: open $(CURDIR)/_build/html/index.html"

test: $(STAMP) lint
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest -n $(JOBS) --dist loadscope --nbval -p no:cacheprovider tests book

lint: $(STAMP)
	$(BIN)/ruff check theorylib tests

bench: $(STAMP)
	$(BIN)/python -m theorylib bench

refresh: $(STAMP)
	$(BIN)/python -m theorylib refresh --all

clean:
	rm -rf _build runs
