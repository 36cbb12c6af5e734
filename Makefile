# The two commands of the README: `make run` (the main job) and `make test`.
# Both create or refresh the virtual environment in .venv/ from pyproject.toml.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
MC_JS := src/gencoord/worlds/mineflayer/js
NPM_STAMP := $(MC_JS)/node_modules/.installed
# pytest workers for `make test`: the Minecraft tests wait on the game's clock while the rest
# use the CPU, so two workers overlap them (tests/conftest.py groups them).
TEST_WORKERS ?= 2

.PHONY: run test docs wheel-check bench fuzz clean browser

# torch is installed on its own first: pinned to the CPU build, so that transformers does not pull
# a multi-GB CUDA build of it.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check torch==2.13.0
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,learn,scale]'
	touch $(STAMP)

# The Minecraft world's Node side (Mineflayer, flying-squid and our plugin), from its lockfile.
$(NPM_STAMP): $(MC_JS)/package-lock.json
	npm ci --prefix $(MC_JS) --no-audit --no-fund --loglevel=error
	touch $(NPM_STAMP)

# The main job: the paper's worked examples, then the shipped experiments (GenCoord's mechanism,
# representation, horizon and visibility experiments with rules and the tiny CPU models, the gate ablations, the
# learned backends) on the embedded world, each written to runs/<name>-<timestamp>/ with report.md and
# report.html.
run: $(STAMP) $(NPM_STAMP)
	$(BIN)/gencoord demo
	$(BIN)/gencoord run experiments/request_intervention.toml experiments/feedback_intervention.toml \
		experiments/request_intervention_learned.toml experiments/feedback_intervention_learned.toml \
		experiments/controlled_faults.toml experiments/representation.toml experiments/horizon.toml \
		experiments/horizon_in_distribution.toml experiments/gate_ablation.toml experiments/gate_tight_budget.toml \
		experiments/gate_teams.toml experiments/learned_backends.toml experiments/receivers.toml \
		experiments/private_structure.toml experiments/private_structure_learned.toml experiments/composition.toml \
		experiments/team_tasks.toml experiments/visibility.toml

# Headless Chromium (Debian's package) for the test that loads --view's live page. Installing
# it needs root, as in CI; elsewhere that one test is skipped and says why.
browser:
	@if ! command -v chromium >/dev/null 2>&1; then \
		if [ "$$(id -u)" = 0 ]; then \
			apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium; \
		else echo "note: chromium is not installed (as root: apt-get install chromium); the --view browser test is skipped"; fi; \
	fi

test: $(STAMP) $(NPM_STAMP) browser
	npm test --prefix $(MC_JS) --silent
	$(BIN)/ruff check src tests scripts benchmarks
	$(BIN)/ruff format --check src tests scripts benchmarks
	$(BIN)/mypy
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup

# The manual (docs/, mkdocs.yml) as a site in site/; strict: a broken link or anchor fails.
# docs/errors.md is generated from the code: scripts/errors_catalogue.py rewrites it.
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict

# The built wheel in a clean venv outside the tree: demo, a forward and a gate experiment by shipped name.
wheel-check:
	PYTHON=$(PYTHON) scripts/check_wheel.sh

bench: $(STAMP)
	$(BIN)/python benchmarks/codec.py
	$(BIN)/python benchmarks/episodes.py
	$(BIN)/python benchmarks/harness.py
	$(BIN)/python benchmarks/learned.py
	$(BIN)/python benchmarks/selector_accuracy.py
	$(BIN)/python benchmarks/constrained.py
	$(BIN)/python benchmarks/team_tasks.py
	$(BIN)/python benchmarks/mindcraft.py --generated 80 --minecraft 65 --minecraft-generated 10
	$(BIN)/python benchmarks/gate_oracle.py
	$(BIN)/python benchmarks/scale.py
	$(BIN)/python benchmarks/minecraft.py
	$(BIN)/python benchmarks/soak.py

fuzz: $(STAMP)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,fuzz]'
	$(BIN)/python benchmarks/fuzz_codec.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis $(MC_JS)/node_modules site
