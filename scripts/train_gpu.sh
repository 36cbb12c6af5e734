#!/usr/bin/env bash
# Fine-tune every checkpoint experiments/gpu/*.toml names from a local Qwen3.5-0.8B folder,
# with the paper's settings (gencoord train --model: AdamW 1e-5, cosine, 3% warm-up,
# effective batch 16, bf16, 2 epochs, prompt masked), three seeds each:
#   dsl       Direct Short DSL, multi-step          (1,920 rows)
#   json      Direct JSON surface                    (1,920 rows)
#   freeform  controlled free-form dialogue turns    (2,400 rows)
#   factor    Factor-Code (binding code) target      (1,920 rows)
#   single    single-step horizon, Short DSL         (2,880 rows)
#   requester Goal×Capability distributed requester  (640 rows: 320 initial + 320 after response)
#   central   Goal×Capability centralized planner    (320 rows, 4 epochs: the same 80 updates, Table S17)
#   selfplan  request removed: sender records + the receiver's own path without a request (1,920 rows)
#   composition  the composition reference's Direct model: factor-form sender records of the library's
#             20 complete cases in 320 training worlds (640 rows), for experiments/gpu/composition.toml
#   dsl-rep, json-rep, freeform-rep: the three surfaces trained on the paper's eight templates
#             (--templates representation), for the representation pool that spans them
#   team      the team model, every role (4,000 rows of planner-led runs of generated MINDcraft-format
#             tasks; seed 1 only), for experiments/gpu/team.toml
set -euo pipefail
base=${1:?usage: scripts/train_gpu.sh <Qwen3.5-0.8B folder> [output folder]}
out=${2:-experiments/checkpoints/qwen3.5-0.8b}
gencoord=${GENCOORD:-.venv/bin/gencoord}
for seed in 1 2 3; do
    "$gencoord" train --model "$base" --out "$out/dsl-s$seed" --seed "$seed"
    "$gencoord" train --model "$base" --out "$out/json-s$seed" --surface json --seed "$seed"
    "$gencoord" train --model "$base" --out "$out/freeform-s$seed" --surface freeform --seed "$seed"
    "$gencoord" train --model "$base" --out "$out/factor-s$seed" --target factor --seed "$seed"
    "$gencoord" train --model "$base" --out "$out/single-s$seed" --horizon single --seed "$seed"
    "$gencoord" train --model "$base" --out "$out/requester-s$seed" --records requester --seed "$seed"
    "$gencoord" train --model "$base" --out "$out/central-s$seed" --records centralized --epochs 4 --seed "$seed"
    "$gencoord" train --model "$base" --out "$out/selfplan-s$seed" --records self_plan --seed "$seed"
    "$gencoord" train --model "$base" --out "$out/composition-s$seed" --records composition --seed "$seed"
    "$gencoord" train --model "$base" --out "$out/dsl-rep-s$seed" --templates representation --seed "$seed"
    "$gencoord" train --model "$base" --out "$out/json-rep-s$seed" --surface json --templates representation --seed "$seed"
    "$gencoord" train --model "$base" --out "$out/freeform-rep-s$seed" --surface freeform --templates representation \
        --seed "$seed"
done
"$gencoord" train --model "$base" --out "$out/team-s1" --records team --seed 1
