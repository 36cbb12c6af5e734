"""The pair-episode experiments' own tables: fidelity, stages, representation, horizon and visibility.

Each is computed from our records; the paper's figures are read from ``data/paper.toml`` and
only printed beside ours (:mod:`gencoord.eval.tables` holds the shared table types).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from gencoord.backends.families import parse_backend
from gencoord.backends.registry import FACTORIZED_RULE
from gencoord.dsl.ast import Path, Proposal
from gencoord.eval.kinds.episodes.rows import (
    DIMENSIONS,
    RULE_KINDS,
    Row,
    against_paper_model,
    backend_kinds,
    paper_cell,
    row_cell,
    success,
    tokens_in,
)
from gencoord.eval.stats import (
    cluster_means,
    percentile,
)
from gencoord.eval.tables import DASH, Record, Table, mean_of, number_cell, percent_cell
from gencoord.prior.compose import compose
from gencoord.prior.load import default_prior
from gencoord.tasks.suites import default_suites

if TYPE_CHECKING:
    from gencoord.eval.kinds.episodes.config import EpisodeExperimentConfig as ExperimentConfig


def _path_of(text: str) -> Path:
    return default_prior().parse_path(text)


def _fields(paths: Mapping[str, Path], sender: str, receiver: str) -> dict[str, object]:
    """The commitment fields feedback can move: craft actor, handoff, peer suffix, goal."""
    crafter = next((agent for agent, path in paths.items() if any(t.skill == "craft.item" for t in path)), None)
    handoff = next((t for t in paths[sender] if t.skill == "resource.deliver" and t.has("to")), None)
    goal = next((t for path in paths.values() for t in path if t.get("dst") == "order_chest"), None)
    return {
        "craft_actor": crafter,
        "handoff_item": None if handoff is None else handoff.get("item"),
        "handoff_count": None if handoff is None else handoff.get("q"),
        "peer_suffix": paths[receiver],
        "goal_item": None if goal is None else goal.get("item"),
        "goal_count": None if goal is None else goal.get("q"),
    }


def _composed_fields(record: Record, binding: str) -> dict[str, object]:
    prior = default_prior()
    sender, receiver = record["sender"], record["receiver"]
    proposal: Proposal = compose(
        prior, record["template"], binding, sender=sender, receiver=receiver, params=record["params"]
    )
    assert proposal.request is not None
    return _fields({sender: proposal.self_plan, receiver: proposal.request.plan}, sender, receiver)


def fidelity_table(records: Sequence[Record], config: ExperimentConfig) -> Table | None:
    """Table S19: under counterfactual feedback, which commitment fields follow the injected response."""
    injected_runs = [
        r for r in records if r["condition"] == "counterfactual_feedback" and "commitment" in r["protocol"]
    ]
    if not injected_runs:
        return None
    prior = default_prior()
    matches: dict[str, list[int]] = {name: [0, 0] for name in _FIDELITY_FIELDS}
    for record in injected_runs:
        paths = {agent: _path_of(text) for agent, text in record["protocol"]["commitment"]["paths"].items()}
        actual = _fields(paths, record["sender"], record["receiver"])
        true_binding = record["binding"]
        injected = next(b for b in prior.templates[record["template"]].bindings if b != true_binding)
        for column, binding in enumerate((injected, true_binding)):
            expected = _composed_fields(record, binding)
            for name in _FIDELITY_FIELDS:
                matches[name][column] += actual[name] == expected[name]
    n = len(injected_runs)
    table = Table(
        "fidelity",
        "Commitment fields under counterfactual feedback",
        ["field", "matches injected", "matches true world", "observed", "paper injected", "paper true"],
        caption="Each formed counterfactual commitment compared field by field with the binding the injected "
        "response calls for and the binding the true workcell needs.",
    )
    for name in _FIDELITY_FIELDS:
        injected_count, true_count = matches[name]
        behaviour = (
            "invariant" if injected_count == true_count == n else "rewritten" if injected_count == n else "mixed"
        )
        paper = paper_cell(config, "fidelity", name)
        table.rows.append(
            [
                name.replace("_", " "),
                f"{injected_count}/{n}",
                f"{true_count}/{n}",
                behaviour,
                DASH if paper is None else f"{paper[0]}/240",
                DASH if paper is None else f"{paper[1]}/240",
            ]
        )
    return table


_FIDELITY_FIELDS = ("craft_actor", "handoff_item", "handoff_count", "peer_suffix", "goal_item", "goal_count")


def stage_table(rows: Sequence[Row], config: ExperimentConfig) -> Table:
    """v2 Table S46: the share of episodes passing each stage; a dash when no episode reached it."""
    table = Table(
        "stages",
        "Stage checks under controlled faults",
        ["fault", "assigned", "C", "H", "T", "F", "G", "failure codes", "paper C H T F G"],
        caption="Fractions of assigned episodes that pass each stage; – where no episode reached the stage.",
    )
    for row in rows:
        cells = []
        for stage in ("C", "H", "T", "F", "G"):
            reached = [r["outcome"][stage] for r in row.records if r["outcome"][stage] is not None]
            cells.append(DASH if not reached else f"{sum(reached) / len(row.records):.2f}".rstrip("0").rstrip("."))
        codes: dict[str, int] = defaultdict(int)
        for record in row.records:
            codes[record["outcome"]["failure"] or "none"] += 1
        paper = paper_cell(config, "stages", row_cell(row, config))
        table.rows.append(
            [
                row.label,
                str(len(row.records)),
                *cells,
                ", ".join(f"{code} {n}" for code, n in sorted(codes.items())),
                DASH if paper is None else " ".join(paper),
            ]
        )
    return table


def representation_table(rows: Sequence[Row], config: ExperimentConfig) -> Table:
    """Table 2 / S10's columns: success, calls, tokens, wire bytes, TTC, with the paper's beside."""
    table = Table(
        "representation",
        "Communication surfaces at matched quality",
        [
            "row",
            "success",
            "model calls",
            "paper calls",
            "in tok",
            "paper in tok",
            "out tok",
            "paper out tok",
            "wire B",
            "paper wire B",
            "TTC p50 ms",
            "TTC p95 ms",
            "paper TTC p50 s",
            "paper TTC p95 s",
        ],
        caption="Wire B is the peer request for the structured surfaces and every dialogue turn for free-form. "
        "Tokens are per episode, from the backend's own tokenizer (– for backends without one).",
    )
    table.differences += against_paper_model(rows)
    table.differences.append(
        "TTC: ours is milliseconds of CPU wall time on this machine (with rule backends, protocol overhead only); the "
        "paper's is seconds on a GPU, generation included."
    )
    table.differences.append(
        "The paper's calls, tokens, wire bytes and TTC come from a separate 40-cluster timing sample (its success "
        "from 128 clusters; v2 Table S10); ours all come from this run's episodes."
    )
    if any(row.key[DIMENSIONS.index("surface")] == "freeform" for row in rows):
        table.differences.append(
            "The paper's free-form dialogue ends in a structured commit (v2 Table S10, 'controlled free-form + "
            "structured commit'); ours recovers the commitment from the dialogue with a shared deterministic extractor."
        )
    for row in rows:
        cell = row.key[DIMENSIONS.index("surface")]
        ttc = [1000 * r["seconds"]["protocol"] for r in row.records]
        table.rows.append(
            [
                row.label,
                percent_cell(row.success.value),
                number_cell(mean_of(r["protocol"]["model_calls"] for r in row.records), 2),
                number_cell(paper_cell(config, "calls", cell), 2),
                number_cell(tokens_in(row.records, "input_tokens")),
                number_cell(paper_cell(config, "input_tokens", cell)),
                number_cell(tokens_in(row.records, "output_tokens")),
                number_cell(paper_cell(config, "output_tokens", cell)),
                number_cell(mean_of(r["protocol"]["wire_bytes"] for r in row.records)),
                number_cell(paper_cell(config, "wire_bytes", cell)),
                number_cell(percentile(ttc, 50), 3),
                number_cell(percentile(ttc, 95), 3),
                number_cell(paper_cell(config, "ttc_p50_s", cell), 3),
                number_cell(paper_cell(config, "ttc_p95_s", cell), 3),
            ]
        )
    return table


def _family(template: str) -> str:
    return default_prior().templates[template].family


def _horizon_differences(rows: Sequence[Row], config: ExperimentConfig) -> list[str]:
    """What the paper's horizon figures beside ours were computed on: its own held-out templates, unnamed."""
    templates = sorted({r["template"] for row in rows for r in row.records})
    papers = set(default_suites().forward.representation_templates)
    ours = [template for template in templates if template not in papers]
    notes = [
        "The family columns hold this run's templates ("
        + ", ".join(f"{template}: {_family(template)}" for template in templates)
        + "); the paper's family figures beside them are for its own held-out templates, which it does not name."
    ]
    if ours:
        notes.append(f"Our own templates, not among the paper's eight: {', '.join(ours)}.")
    if config.pool != "held_out_templates":
        pool = config.pool if isinstance(config.pool, str) else f"{config.pool.split.value} × {config.pool.size}"
        notes.append(f"This run's pool is {pool}, not held-out templates; the paper's figures are its held-out ones.")
    return notes


def horizon_table(rows: Sequence[Row], config: ExperimentConfig) -> Table:
    """Table S13: success overall and by template family, decisions and tokens per episode."""
    families = sorted({_family(r["template"]) for row in rows for r in row.records})
    table = Table(
        "horizon",
        "Commitment horizon: multi-step vs single-step",
        [
            "row",
            "success",
            "paper",
            "decisions / ep",
            "paper",
            "model calls / ep",
            "in tok / ep",
            "paper",
            "out tok / ep",
            *[f"{family} (paper multi / single)" for family in families],
        ],
        caption="Decisions are generation stages per episode (a rule decides without a model call); model calls "
        "count learned or API calls only. Family cells: our success, then the paper's multi-step / single-step.",
    )
    table.differences += against_paper_model(rows) + _horizon_differences(rows, config)
    for row in rows:
        condition = row.key[0]
        cells = []
        for family in families:
            members = [r for r in row.records if _family(r["template"]) == family]
            paper = paper_cell(config, "family", family)
            published = DASH if paper is None else f"{paper[0]:.1f} / {paper[1]:.1f}"
            cells.append(f"{percent_cell(mean_of(float(success(r)) for r in members))} ({published})")
        paper_success = paper_cell(config, "success", condition)
        table.rows.append(
            [
                row.label,
                percent_cell(row.success.value),
                DASH if paper_success is None else f"{paper_success:.1f}%",
                number_cell(mean_of(len(r["protocol"]["generations"]) for r in row.records), 3),
                number_cell(paper_cell(config, "decisions", condition), 3),
                number_cell(mean_of(r["protocol"]["model_calls"] for r in row.records), 3),
                number_cell(tokens_in(row.records, "input_tokens")),
                number_cell(paper_cell(config, "input_tokens", condition)),
                number_cell(tokens_in(row.records, "output_tokens")),
                *cells,
            ]
        )
    return table


@dataclass(frozen=True)
class VisibilityCell:
    source: str  # what wrote the row, by its short label (the model, or the rule set)
    method: str  # the paper's method key (dsl, freeform, factorized_rule), or another rule set's name
    view: str  # full, skeleton, node, or "own" (the view a model was trained on)
    motif: str
    success: float | None  # ours, fraction
    paper: float | None  # percent


def _visibility_row(row: Row, config: ExperimentConfig) -> list[VisibilityCell]:
    """One row's Figure S5 cells, a cell per topology motif, the paper's figure beside ours."""
    forward = default_suites().forward
    backend = parse_backend(row.key[2])
    base = backend.base + (f"+{backend.receiver}" if backend.receiver else "")
    method_key = (
        "factorized_rule"
        if backend.family is FACTORIZED_RULE
        else row.key[3]  # a model: its surface, Direct Short DSL or controlled free-form
        if backend_kinds(row) - RULE_KINDS
        else base
    )
    shown = "own" if backend.view is None else backend.view.value
    source = backend.family.label(backend.target) + (f" · {backend.receiver} receiver" if backend.receiver else "")
    published = paper_cell(config, "success", f"{method_key}.{shown}") or {}
    cells = []
    for motif in forward.visibility_motifs:
        members = [r for r in row.records if forward.motif_of(r["template"]) == motif]
        ours = mean_of(cluster_means((r["cluster"], float(success(r))) for r in members).values())
        paper = published.get(motif)
        cells.append(VisibilityCell(source, method_key, shown, motif, ours, None if paper is None else float(paper)))
    return cells


def visibility_cells(rows: Sequence[Row], config: ExperimentConfig) -> list[VisibilityCell]:
    """Figure S5's cells: success per method, view and topology motif, the paper's figure beside ours."""
    return [cell for row in rows for cell in _visibility_row(row, config)]


def visibility_table(rows: Sequence[Row], config: ExperimentConfig) -> Table:
    """Figure S5 as a table: a row per method and view, a column per topology motif."""
    motifs = list(default_suites().forward.visibility_motifs)
    table = Table(
        "visibility",
        "Task-structure visibility: method × view × topology motif",
        ["row", "method", "view", *[f"{motif.replace('_', ' ')} (paper)" for motif in motifs]],
        caption="Success per motif (cluster means), the paper's Figure S5 cell in brackets. Full shows every "
        "binding's ordered paths; Skeleton the same nodes by coarse stage, unordered within a stage; Node-only the "
        "nodes alone, sorted. Models are shown the named view whatever view they were trained on.",
    )
    table.differences += against_paper_model(rows)
    table.differences.append(
        "Our factorized rule follows the paper's description of its symbolic reference (Full: the given order; "
        "Skeleton: stage order, each stage as listed; Node-only: a fixed gather/transform/hand-over/place priority), "
        "so its cells follow from how our views list nodes, not from the paper's implementation; our unseen motifs "
        "are our own templates (CRAFT_THEN_BUILD, CRAFT_BEFORE_HANDOFF), not the paper's."
    )
    for row in rows:
        mine = _visibility_row(row, config)
        table.rows.append(
            [
                row.label,
                mine[0].method,
                mine[0].view,
                *[
                    f"{percent_cell(cell.success)} ({DASH if cell.paper is None else f'{cell.paper:.1f}%'})"
                    for cell in mine
                ],
            ]
        )
    return table
