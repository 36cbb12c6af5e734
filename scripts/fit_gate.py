"""Fit the gate's score weights, thresholds and logistic adjudicator on the training split.

Runs the *training* pools of both suites (the built-in jobs, and the team suite built from
the shipped team task files; seed ranges disjoint from every evaluation pool) under the
never-escalate and communication-first policies, so that every issue
is seen both fresh and after failed requests. Each decision becomes a row: the
features the gate saw, and the counterfactual oracle's label (1 = the issue needed
escalation: replayed from the moment it arose, no local option completed the job and
asking some peer did; ``gencoord/gate/oracle.py``). Two L2-regularized logistic regressions follow:

* the score S = bias + wC·C + wR·R + wI·I − wL·L − wH·H is the first model's logit;
* the thresholds are fitted on the same rows: the pair (low, high) of score quantiles that
  minimizes wrong firm decisions (a warranted escalation scored at or below low, an
  unwarranted one at or above high) plus GRAY_COST per row left to the adjudicator;
* the adjudicator, on the richer record (plus cost share and budget left), is fitted on
  the rows that fall in that gray zone.

Usage: python scripts/fit_gate.py [--size 240] [--write]   (--write updates gate.toml)
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import numpy as np
from scipy.optimize import minimize

from gencoord.gate.config import FEATURES, default_gate_config
from gencoord.gate.policy import GateCondition
from gencoord.gate.pool import gate_pool, team_pool
from gencoord.gate.rounds import run_gate_episode
from gencoord.prior.load import team_prior
from gencoord.tasks.team_files import load_team_tasks

CONFIG = Path(__file__).resolve().parents[1] / "src" / "gencoord" / "gate" / "data" / "gate.toml"
EXTENDED = (*FEATURES, "cost_share", "budget_left")
GRAY_COST = 0.1  # a gray-zone row costs an adjudicator call; a wrong firm decision costs 1
TEAM_FILES = ("generated.json", "gate_teams.json")
TEAMS = Path(__file__).resolve().parents[1] / "src" / "gencoord" / "experiments" / "team"


def _rows(size: int) -> list[tuple[dict[str, float], int]]:
    prior = team_prior()
    tasks = tuple(task for name in TEAM_FILES for task in load_team_tasks(TEAMS / name, prior=prior))
    teams, _ = team_pool(tasks, size, 0, prior, split="train")
    rows = []
    for condition in (GateCondition.NEVER, GateCondition.COMMUNICATION_FIRST):
        for instance in gate_pool(size, 0, split="train"):
            for issue in run_gate_episode(instance, condition).issues:
                label = 1 if issue.needed_escalation else 0
                rows.extend((decision, label) for decision in issue.decisions)
        for instance in teams:
            for issue in run_gate_episode(instance, condition, prior=prior).issues:
                label = 1 if issue.needed_escalation else 0
                rows.extend((decision, label) for decision in issue.decisions)
    return rows


def _thresholds(z: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """The (low, high) pair of score quantiles with the fewest wrong firm decisions, gray rows costing GRAY_COST."""
    cuts = np.unique(np.quantile(z, np.linspace(0, 1, 41)))
    best: tuple[float, float, float] | None = None
    for i, low in enumerate(cuts):
        for high in cuts[i + 1 :]:
            wrong = np.sum((z <= low) & (y == 1)) + np.sum((z >= high) & (y == 0))
            gray = np.sum((z > low) & (z < high))
            cost = float(wrong + GRAY_COST * gray)
            if best is None or cost < best[0]:
                best = (cost, float(low), float(high))
    assert best is not None, "no decision rows"
    return best[1], best[2]


def _fit(x: np.ndarray, y: np.ndarray, penalty: float = 0.01) -> tuple[np.ndarray, float]:
    def loss(theta: np.ndarray) -> float:
        z = x @ theta[1:] + theta[0]
        return float(np.mean(np.logaddexp(0, z) - y * z) + penalty * np.sum(theta[1:] ** 2))

    result = minimize(loss, np.zeros(x.shape[1] + 1), method="L-BFGS-B")
    return result.x[1:], float(result.x[0])


def _matrix(rows: list[tuple[dict[str, float], int]], names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([[float(row[name] or 0.0) for name in names] for row, _ in rows])
    y = np.array([label for _, label in rows], dtype=float)
    return x, y


def _replace_section(text: str, name: str, body: str) -> str:
    """Swap the body of TOML table ``[name]`` (up to the next table or the end), keeping its header line."""
    pattern = re.compile(rf"^(\[{name}\][^\n]*\n).*?(?=^\[|\Z)", re.MULTILINE | re.DOTALL)
    return pattern.sub(lambda match: match.group(1) + body + "\n", text, count=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=240, help="training instances per policy")
    parser.add_argument("--write", action="store_true", help="write the fitted values into gate.toml")
    args = parser.parse_args()
    rows = _rows(args.size)
    x, y = _matrix(rows, FEATURES)
    coefficients, bias = _fit(x, y)
    z = x @ coefficients + bias
    low, high = _thresholds(z, y)
    gray = [row for row, value in zip(rows, z, strict=True) if low < value < high]
    xa, ya = _matrix(gray if len(gray) >= 20 else rows, EXTENDED)
    adj_weights, adj_bias = _fit(xa, ya)
    accuracy = float(np.mean((z > 0) == (y == 1)))
    weights = dict(zip(FEATURES, coefficients, strict=True))
    signed = {name: (-value if name in ("L", "H") else value) for name, value in weights.items()}
    print(f"{len(rows)} decision rows ({int(y.sum())} warranted escalations), {len(gray)} in the gray zone")
    print(
        "score weights (S = bias + wC C + wR R + wI I - wL L - wH H):",
        {k: round(float(v), 3) for k, v in signed.items()},
    )
    print(f"bias {bias:.3f}; thresholds low {low:.3f} high {high:.3f}; training accuracy {accuracy:.3f}")
    print(
        "adjudicator:",
        {k: round(float(v), 3) for k, v in zip(EXTENDED, adj_weights, strict=True)},
        f"bias {adj_bias:.3f}",
    )
    if not args.write:
        return
    text = CONFIG.read_text(encoding="utf-8")
    weights_block = "\n".join(f"{name} = {signed[name]:.4f}" for name in FEATURES) + f"\nbias = {bias:.4f}\n"
    text = _replace_section(text, "weights", weights_block)
    text = _replace_section(text, "thresholds", f"low = {low:.4f}\nhigh = {high:.4f}\n")
    adjudicator = (
        f"features = {list(EXTENDED)!r}\nweights = {[round(float(w), 4) for w in adj_weights]!r}\n"
        f"bias = {adj_bias:.4f}\n"
    ).replace("'", '"')
    text = _replace_section(text, "adjudicator", adjudicator)
    CONFIG.write_text(text, encoding="utf-8")
    default_gate_config.cache_clear()
    print(f"wrote {CONFIG}")


if __name__ == "__main__":
    main()
