# The two commands of the README: `make book` builds the book, `make test` runs every test.
# Both create the virtual environment from requirements.txt when it is missing or stale.
PYTHON ?= python3.11
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
JOBS   ?= 2

.PHONY: book pdf test lint bench refresh mutation clean

$(STAMP): requirements.txt pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name python3 >/dev/null
	touch $(STAMP)

# The HTML book; it offers the PDF for download when `make pdf` has made it (`make book` makes both).
book: pdf
	$(BIN)/jupyter-book build . -W -n --keep-going
	@echo "The book is built: open $(CURDIR)/_build/html/index.html"

# The whole book as one PDF (_build/latex/book.pdf): jupyter-book's LaTeX builder, XeLaTeX (Debian's TeX Live).
pdf: $(STAMP)
	$(BIN)/jupyter-book build . --builder pdflatex -W -n --keep-going
	$(BIN)/python tests/pdf_checks.py _build/latex
	@echo "The PDF is built: $(CURDIR)/_build/latex/book.pdf"

# The numeric environment of the portability pass: numpy's dispatched SIMD loops off (baseline only),
# torch's CPU kernels at their default capability, MKL at AVX2. The OpenBLAS kernel is never set here
# (OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE: some machines need theirs).
PERTURBED := NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL AVX512_SPR" ATEN_CPU_CAPABILITY=default \
             MKL_ENABLE_INSTRUCTIONS=AVX2
ONE_THREAD := OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

test: $(STAMP) lint
	$(ONE_THREAD) $(BIN)/python -m pytest -n $(JOBS) --dist loadscope --nbval -p no:cacheprovider tests book
	@echo "portability: nbval over book/ again, in a perturbed numeric environment ($(PERTURBED))"
	$(ONE_THREAD) $(PERTURBED) $(BIN)/python -m pytest -n $(JOBS) --dist loadscope --nbval -p no:cacheprovider book

lint: $(STAMP)
	$(BIN)/ruff check theorylib tests book _ext

bench: $(STAMP)
	$(BIN)/python -m theorylib bench

# Each chapter's mutation score (minutes; a benchmark, not a test): rewrites the reports beside the theories.
mutation: $(STAMP)
	$(ONE_THREAD) $(BIN)/python -m theorylib mutate --all

refresh: $(STAMP)
	$(BIN)/python -m theorylib refresh --all

clean:
	rm -rf _build runs
