#!/usr/bin/env bash
# Build the wheel, install it into a clean virtual environment outside the source tree, and
# run what a new user runs first: the demo, a small forward experiment and a small gate
# experiment, by the names of the shipped configs. Catches a wheel that lacks package data.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
python="${PYTHON:-python3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$python" -m pip wheel --quiet --disable-pip-version-check --no-deps "$root" -w "$work/dist"
wheel=$(ls "$work"/dist/gencoord-*.whl)
listing=$("$python" -m zipfile -l "$wheel")
if grep -q node_modules <<<"$listing"; then
    echo "the wheel carries npm files:" >&2; grep node_modules <<<"$listing" >&2; exit 1
fi
for needed in gencoord/py.typed gencoord/gate/data/task_graphs.toml gencoord/experiments/request_intervention.toml \
    gencoord/experiments/team/generated.json gencoord/prior/data/team.toml \
    gencoord/experiments/checkpoints/tiny-dsl/model.safetensors gencoord/worlds/mineflayer/js/package-lock.json; do
    grep -q "$needed" <<<"$listing" || { echo "the wheel lacks $needed" >&2; exit 1; }
done
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$wheel"
cd "$work"  # nothing from the checkout is importable from here
gencoord="$work/venv/bin/gencoord"
"$gencoord" --version
"$gencoord" demo > demo.txt
grep -q "replayed from the paper's recording" demo.txt
"$gencoord" run request_intervention --clusters 4 --workers 2 --out runs
"$gencoord" run gate_ablation --clusters 2 --workers 2 --out runs
ls runs/*/report.html > /dev/null
printf '%s' '{"t": {"agent_count": 2, "initial_inventory": {"0": {"milk_bucket": 2}, "1": {"sugar": 2, "egg": 1, "wheat": 3}},
  "target": "cake", "number_of_target": 1, "timeout": 300, "blocked_actions": {"0": ["!collectBlocks"], "1": ["!collectBlocks"]}}}' > tasks.json
status=0
"$gencoord" tasks check tasks.json --jsonl > check.txt || status=$?
test "$status" -eq 1  # the file's only task cannot be done: nothing can run
grep -q 'needs 3 milk_bucket, team has 2' check.txt
"$gencoord" run team_tasks --clusters 4 --workers 2 --out runs
printf '%s' '{"t": {"agent_count": 3, "initial_inventory": {"0": {"stick": 2}, "1": {"iron_ingot": 2}, "2": {"iron_ingot": 1}},
  "target": "iron_pickaxe", "number_of_target": 1, "timeout": 300, "blocked_actions": {}}}' > pickaxe.json
"$gencoord" tasks run pickaxe.json --out team --jsonl | grep -q '"success": true'
echo "wheel check passed: demo, request_intervention (4 clusters), gate_ablation (2 instances), team_tasks (4 tasks), a MINDcraft task check and a 3-agent MINDcraft task run from an installed wheel"
