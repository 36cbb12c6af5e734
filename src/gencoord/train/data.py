"""Supervision rows built programmatically from the task suites (paper Tables S5–S6).

For every cluster and role view: a sender-proposal row (the sender's model input → its
canonical SELF+REQ, or its binding code for factor models) and a receiver-after-request
row (the receiver's input with the delivered REQ → its SELF and ``REQ -``, or the
accepted binding code); for Goal×Capability, requester-initial and requester-after-
response rows. Rows come from a split's pool, so held-out templates and cross-products
never enter a training file. Files are JSONL with a manifest of counts and hashes.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from enum import StrEnum
from pathlib import Path

from gencoord import __version__
from gencoord.backends.context import PriorView, model_input
from gencoord.backends.rule import RuleRequester, composed
from gencoord.dsl.ast import Proposal
from gencoord.dsl.surface import SurfaceName, surface
from gencoord.prior.prior import Prior
from gencoord.protocol.response import respond
from gencoord.run.lifecycle import GenerationRequest, Stage
from gencoord.tasks.cluster import Cluster
from gencoord.tasks.episode import build_episode
from gencoord.tasks.spec import SuiteDocument


class Target(StrEnum):
    DIRECT = "direct"  # the whole record in the surface (Direct Short DSL / Direct JSON)
    FACTOR = "factor"  # the binding code; the composer writes the record


@dataclass(frozen=True, slots=True)
class Row:
    stage: str
    prompt: str
    target: str
    cluster: str
    template: str
    binding: str
    role: int
    split: str


@dataclass(frozen=True)
class RowSpec:
    target: Target = Target.DIRECT
    surface: SurfaceName = SurfaceName.DSL
    view: PriorView = PriorView.NONE
    compact: bool = True


def _forward(
    cluster: Cluster, role: int, seed: int, prior: Prior, suites: SuiteDocument, spec: RowSpec
) -> Iterator[Row]:
    episode = build_episode(cluster, role, seed, prior, suites, spec.surface)
    assert episode.binding is not None
    spoken = surface(spec.surface, prior.vocab)
    sent = composed(prior, episode.binding, episode.sender, episode.receiver, episode.params)
    assert sent.request is not None
    opening = GenerationRequest(episode.sender, Stage.SENDER_INITIAL, episode.receiver)
    delivered = spoken.request(sent.request)
    answer = GenerationRequest(
        episode.receiver, Stage.RECEIVER_AFTER_REQUEST, episode.sender, delivered_request=delivered
    )
    targets = (
        (spoken.serialize(sent), spoken.serialize(Proposal(sent.request.plan, ())))
        if spec.target is Target.DIRECT
        else (episode.binding, episode.binding)
    )
    for agent, request, target in ((episode.sender, opening, targets[0]), (episode.receiver, answer, targets[1])):
        prompt = model_input(episode.contexts[agent], request, prior, spec.view, spec.compact)
        yield Row(
            request.stage.value,
            prompt,
            target,
            cluster.id,
            cluster.template,
            episode.binding,
            role,
            cluster.split.value,
        )


def _capability(
    cluster: Cluster, role: int, seed: int, prior: Prior, suites: SuiteDocument, spec: RowSpec
) -> Iterator[Row]:
    episode = build_episode(cluster, role, seed, prior, suites, spec.surface)
    spoken = surface(spec.surface, prior.vocab)
    context = episode.contexts[episode.sender]
    requester = RuleRequester(prior, suites)
    local_binding = requester.initial_binding(context)
    initial = composed(prior, local_binding, episode.sender, episode.receiver, episode.params)
    assert initial.request is not None and cluster.mode is not None
    response = respond(initial.request, episode.sender, cluster.mode, prior)
    opening = GenerationRequest(episode.sender, Stage.REQUESTER_INITIAL, episode.receiver)
    revision = GenerationRequest(
        episode.sender,
        Stage.REQUESTER_AFTER_RESPONSE,
        episode.receiver,
        initial_proposal=spoken.serialize(initial),
        response=response.serialize(),
    )
    revised_binding = episode.binding or local_binding
    for request, binding in ((opening, local_binding), (revision, revised_binding)):
        reply = requester.generate(context, request)
        target = reply.text if spec.target is Target.DIRECT else binding
        prompt = model_input(context, request, prior, spec.view, spec.compact)
        yield Row(request.stage.value, prompt, target, cluster.id, cluster.template, binding, role, cluster.split.value)


def build_rows(
    clusters: Iterable[Cluster],
    prior: Prior,
    suites: SuiteDocument,
    spec: RowSpec,
    roles: tuple[int, ...] = (0, 1),
    seed: int = 0,
) -> list[Row]:
    rows: list[Row] = []
    for cluster in clusters:
        make = _capability if cluster.suite == "goal_capability" else _forward
        for role in roles:
            rows.extend(make(cluster, role, seed, prior, suites, spec))
    return rows


def write_rows(rows: list[Row], folder: Path, name: str, spec: RowSpec) -> Path:
    """``<name>.jsonl`` plus ``<name>.manifest.json`` (counts by stage and split, sha256)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(asdict(row), ensure_ascii=False, separators=(",", ":")) + "\n" for row in rows)
    path = folder / f"{name}.jsonl"
    path.write_text(text, encoding="utf-8")
    manifest = {
        "rows": len(rows),
        "by_stage": dict(Counter(row.stage for row in rows)),
        "by_split": dict(Counter(row.split for row in rows)),
        "templates": sorted({row.template for row in rows}),
        "spec": {k: str(v) for k, v in asdict(spec).items()},
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "gencoord": __version__,
    }
    (folder / f"{name}.manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return path


def read_rows(path: Path) -> list[Row]:
    return [Row(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line]
