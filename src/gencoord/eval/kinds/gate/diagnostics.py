"""The gate's diagnostic tables and figure: who decided (tiers), the oracle's verdicts, the paper's targets.

Beside :mod:`gencoord.eval.kinds.gate.tables`' outcomes: these say why a condition's numbers are what
they are, and whether the full gate meets the figures the paper reports (as targets, not ours).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from matplotlib.figure import Figure

from gencoord.eval.figures import save_png
from gencoord.eval.kinds.gate.cells import NOT_RATED, pct_cell, per_cluster, signed_cell
from gencoord.eval.stats import Estimate, paired_difference
from gencoord.eval.tables import DASH, Table

if TYPE_CHECKING:  # the kind imports these tables to report: a type alone, no import cycle
    from gencoord.eval.kinds.gate.config import GateExperimentConfig

Record = Mapping[str, Any]
TARGETS = {"LRR": (">=", 0.765), "UER": ("<=", 0.174), "ECR": (">=", 0.782)}  # the paper's reported figures
CS_REDUCTION = 0.30  # the full gate's CS at least this much below communication-first's (the paper: 145 → 92)

TIERS = ("rule", "score", "adjudicator", "fallback", "cooldown", "fixed")


def tier_table(groups: Mapping[str, Sequence[Record]], facts: Mapping[str, Any]) -> Table:
    """Which tier made each decision, and what it decided: an inert tier shows as such, with why."""
    table = Table(
        "gate_tiers",
        "Who decided: the share of gate decisions made by each tier",
        [
            "condition",
            "decisions",
            *TIERS,
            "escalate share",
            "score → escalate",
            "adjudicator → escalate",
            "adjudicator s",
        ],
        caption="rule: tier 1; score: S at or beyond a threshold; adjudicator: the gray zone between the "
        "thresholds; fallback: the gray zone where a model adjudicator answered neither ESCALATE nor LOCAL and "
        "the logistic model decided; cooldown: a decision forced local by a recent failed request; fixed: "
        "conditions that do not gate (communication-first, never). The arrows count the decisions of that tier "
        "that escalated. Adjudicator s: a model adjudicator's mean time a gray-zone decision (wall clock of its "
        "call; – where the logistic model judged, which takes microseconds).",
    )
    scored: list[float] = []
    for name, rows in groups.items():
        decisions = [d for r in rows for issue in r["issues"] for d in issue["decisions"]]
        if not decisions:
            continue
        shares = [sum(d["tier"] == tier for d in decisions) / len(decisions) for tier in TIERS]
        escalate = sum(d["decision"] == "escalate" for d in decisions) / len(decisions)
        by_tier = {
            tier: f"{sum(d['decision'] == 'escalate' for d in decisions if d['tier'] == tier)} of "
            f"{sum(d['tier'] == tier for d in decisions)}"
            for tier in ("score", "adjudicator")
        }
        scored += [float(d["score"]) for d in decisions if d["tier"] in ("score", "adjudicator", "fallback")]
        thought = [float(d["thought_s"]) for d in decisions if d.get("thought_s") is not None]
        table.rows.append(
            [
                name,
                str(len(decisions)),
                *(f"{100 * share:.1f}%" for share in shares),
                f"{100 * escalate:.1f}%",
                by_tier["score"],
                by_tier["adjudicator"],
                f"{sum(thought) / len(thought):.2f}" if thought else DASH,
            ]
        )
    thresholds = facts.get("thresholds")
    if scored and thresholds:
        low, high = float(thresholds["low"]), float(thresholds["high"])
        table.caption += (
            f" Decisions that passed the rules scored S from {min(scored):.2f} to {max(scored):.2f}, against "
            f"thresholds low {low:.2f} and high {high:.2f}"
            + (
                ": none reached high, so the score tier can only keep an issue local. The rules already escalate "
                "every critical issue with no local route, no failed request and a peer believed able; what reaches "
                "the score has a local route (L) or a failed request (H), both of which lower S. Escalation beyond "
                "the rules comes from the adjudicator."
                if max(scored) < high
                else "."
            )
        )
    return table


def oracle_table(groups: Mapping[str, Sequence[Record]]) -> Table:
    """What the counterfactual oracle changed against the old shared-planner label."""
    table = Table(
        "gate_oracle",
        "The independent oracle against the old shared-planner label",
        [
            "condition",
            "issues",
            "needed escalation (oracle)",
            "needed escalation (old label)",
            "labels changed",
            "escalations",
            "UER (oracle)",
            "UER (old label)",
        ],
        caption="Old label: an issue needs escalation when the gate's own local planner finds no route in the "
        "true world within the budget left (the planner the gate's cost feature also uses). Oracle: the episode "
        "is copied at the moment the issue arises and each option (recover locally, skip a node the goal does "
        "not need, ask each peer) is played to the end under the same budget and policy; an issue needs "
        "escalation when no local option completes the job and some escalation does.",
    )
    for name, rows in groups.items():
        issues = sum(int(r["issue_count"]) for r in rows)
        escalations = sum(int(r["escalations"]) for r in rows)
        needed = sum(int(r["needed_escalations"]) for r in rows)
        old_needed = sum(not issue["shared_planner_recoverable"] for r in rows for issue in r["issues"])
        unnecessary = sum(int(r["unnecessary_escalations"]) for r in rows)
        old_unnecessary = sum(int(r["shared_planner_unnecessary_escalations"]) for r in rows)
        table.rows.append(
            [
                name,
                str(issues),
                str(needed),
                str(old_needed),
                str(sum(int(r["relabelled_issues"]) for r in rows)),
                str(escalations),
                DASH if not escalations else f"{100 * unnecessary / escalations:.1f}%",
                DASH if not escalations else f"{100 * old_unnecessary / escalations:.1f}%",
            ]
        )
    return table


def target_table(
    estimates: Mapping[str, Mapping[str, Estimate | None]],
    groups: Mapping[str, Sequence[Record]],
    config: GateExperimentConfig,
) -> Table:
    table = Table(
        "gate_targets",
        "The full gate against its targets (the paper's reported figures, measured on our suite)",
        ["target", "measured", "met"],
        caption="LRR/UER/ECR bounds are the Gated Coordination paper's reported figures, used here as targets "
        "for our own suite and the counterfactual oracle; they are not our numbers. Point estimates decide "
        "'met' for them; the TSR target needs the paired interval to exclude 0.",
    )
    full = estimates["full"]
    for metric, (direction, bound) in TARGETS.items():
        value = full[metric]
        met = value is not None and (value.value >= bound if direction == ">=" else value.value <= bound)
        table.rows.append([f"{metric} {direction} {100 * bound:.1f}%", pct_cell(value), "yes" if met else "no"])
    reference = "communication_first"
    if reference in groups and "full" in groups:
        rows, base, resamples = groups["full"], groups[reference], config.bootstrap.resamples
        seed = config.bootstrap.paired_seed
        tsr = paired_difference(per_cluster(rows, "success"), per_cluster(base, "success"), resamples, seed)
        table.rows.append(
            [
                "TSR above communication-first, paired 95% CI excluding 0",
                f"Δ {signed_cell(tsr, 100.0)} pp",
                "yes" if tsr.low > 0 else "no",
            ]
        )
        cs, base_cs = full["CS"], estimates[reference]["CS"]
        if cs is not None and base_cs is not None and base_cs.value > 0:
            change = cs.value / base_cs.value - 1
            table.rows.append(
                [
                    f"CS at least {100 * CS_REDUCTION:.0f}% below communication-first",
                    f"{cs.value:.1f} vs {base_cs.value:.1f} steps ({100 * change:+.1f}%)",
                    "yes" if change <= -CS_REDUCTION else "no",
                ]
            )
    return table


def gate_figure(estimates: Mapping[str, Mapping[str, Estimate | None]], path: Path) -> bytes:
    """The ablation: TSR, LRR, UER and ECR by condition with 95% intervals."""
    metrics = ("TSR", "LRR", "UER", "ECR")
    conditions = list(estimates)
    figure = Figure(figsize=(max(6.0, 1.3 * len(conditions) + 2), 3.6))
    axis = figure.subplots()
    width = 0.8 / len(metrics)
    for offset, metric in enumerate(metrics):
        rated = [(i, e) for i, c in enumerate(conditions) if (e := estimates[c][metric]) is not None]
        positions = [i + (offset - 1.5) * width for i, _ in rated]
        bars = axis.bar(
            positions,
            [100 * e.value for _, e in rated],
            width,
            yerr=[[100 * (e.value - e.low) for _, e in rated], [100 * (e.high - e.value) for _, e in rated]],
            capsize=2,
            label=metric,
        )
        colour = bars.patches[0].get_facecolor() if bars.patches else None
        for i, c in enumerate(conditions):
            if estimates[c][metric] is None:
                axis.text(i + (offset - 1.5) * width, 2, NOT_RATED, rotation=90, ha="center", va="bottom", fontsize=7)
        if metric in TARGETS:
            direction, bound = TARGETS[metric]
            axis.axhline(
                100 * bound,
                color=colour,
                linestyle="--",
                linewidth=1,
                label=f"{metric} target {direction} {100 * bound:.1f}%",
            )
    axis.set_xticks(range(len(conditions)), conditions, rotation=20, ha="right")
    axis.set_ylabel("rate or success (%)")
    axis.set_ylim(0, 110)
    axis.set_title(
        "Gate ablation: success and coordination quality by condition (95% CIs; n/a: nothing to rate)", fontsize=10
    )
    axis.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axis.spines[["top", "right"]].set_visible(False)
    path.parent.mkdir(parents=True, exist_ok=True)
    return save_png(figure, path)
