"""Supervision rows built programmatically from the task suites (paper Tables S5–S6).

For every cluster and role view: a sender-proposal row (the sender's model input → its
canonical SELF+REQ, or its binding code for factor models) and a receiver-after-request
row (the receiver's input with the delivered REQ → its SELF and ``REQ -``, or the
accepted binding code); for Goal×Capability, requester-initial and requester-after-
response rows, or for a centralized model one joint-plan row from the merged views; for
the controlled free-form surface, one row per dialogue turn (a request of n steps takes n
rounds); for the composition reference's Direct model, one sender row per observed case
(its factors → the library case's SELF+REQ, :func:`composition_rows`). Rows come from a
split's pool, so held-out templates and cross-products never enter a training file. Files
are JSONL with a manifest of counts and hashes.
"""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from gencoord import __version__
from gencoord.backends.context import model_input
from gencoord.backends.rule import RuleRequester, at_stage, composed
from gencoord.dsl.ast import Proposal
from gencoord.dsl.dialogue import parse_line, scripted
from gencoord.dsl.surface import SurfaceName, surface
from gencoord.models.variant import Horizon, ModelSpec, Records, Target, Templates
from gencoord.planning.composition import CompositionMethod, library_proposal, rule_proposal
from gencoord.prior.load import default_prior
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Stage
from gencoord.protocol.response import respond
from gencoord.tasks.cluster import Cluster, Split, draw_pool, forward_space, paper_pool
from gencoord.tasks.context import LocalContext, after_step, merged_view
from gencoord.tasks.cross_products import Factors, composition_case, observed_cases, unseen_cross_products
from gencoord.tasks.instances import build_episode
from gencoord.tasks.suites import SuiteDocument, default_suites


@dataclass(frozen=True, slots=True)
class SupervisionRow:
    """One training example: the model input at a stage, and the record the model should write."""

    stage: str
    prompt: str
    target: str
    cluster: str
    template: str
    binding: str
    role: int
    split: str


def _dialogue(
    cluster: Cluster, role: int, seed: int, prior: Prior, suites: SuiteDocument, spec: ModelSpec
) -> Iterator[SupervisionRow]:
    """One row per turn of the faithful dialogue: each sees the turns before it (context grows)."""
    episode = build_episode(cluster, role, seed, prior, suites, spec.surface)
    assert episode.binding is not None
    sent = composed(prior, episode.binding, episode.sender, episode.receiver, episode.params)
    said = scripted(sent, episode.sender)
    for index, line in enumerate(said):
        turn = parse_line(line)
        peer = episode.receiver if turn.speaker == episode.sender else episode.sender
        stage = Stage.DIALOGUE_SENDER if turn.speaker == episode.sender else Stage.DIALOGUE_RECEIVER
        request = GenerationRequest(turn.speaker, stage, peer, dialogue=tuple(said[:index]))
        prompt = model_input(episode.contexts[turn.speaker], request, prior, spec.view, spec.compact)
        yield SupervisionRow(
            stage.value, prompt, turn.text, cluster.id, cluster.template, episode.binding, role, cluster.split.value
        )


def _forward(
    cluster: Cluster, role: int, seed: int, prior: Prior, suites: SuiteDocument, spec: ModelSpec
) -> Iterator[SupervisionRow]:
    episode = build_episode(cluster, role, seed, prior, suites, spec.surface)
    assert episode.binding is not None
    spoken = surface(spec.surface, prior.vocab)
    sent = composed(prior, episode.binding, episode.sender, episode.receiver, episode.params)
    assert sent.request is not None
    delivered = spoken.request(sent.request)
    answer = GenerationRequest(
        episode.receiver, Stage.RECEIVER_AFTER_REQUEST, episode.sender, delivered_request=delivered
    )
    receiver_target = Proposal(sent.request.plan, ())
    steps: list[tuple[GenerationRequest, Proposal]] = []
    if spec.horizon is Horizon.SINGLE:
        first = GenerationRequest(episode.sender, Stage.SENDER_STEP, episode.receiver)
        taken = at_stage(sent, first, prior, spec.surface)
        later = GenerationRequest(
            episode.sender, Stage.SENDER_AFTER_OBTAIN, episode.receiver, executed=spoken.serialize(taken)
        )
        steps += [(first, taken), (later, at_stage(sent, later, prior, spec.surface))]
    else:
        steps.append((GenerationRequest(episode.sender, Stage.SENDER_INITIAL, episode.receiver), sent))
    if spec.records is Records.SELF_PLAN:  # the receiver plans its own path with no request in view
        answer = GenerationRequest(episode.receiver, Stage.RECEIVER_WITHOUT_REQUEST, episode.sender)
    steps.append((answer, receiver_target))
    for request, record in steps:
        context = episode.contexts[request.agent]
        if request.executed is not None:
            context = after_step(context, spoken.parse(request.executed).self_plan[0], prior)
        prompt = model_input(context, request, prior, spec.view, spec.compact)
        target = spoken.serialize(record) if spec.target is Target.DIRECT else episode.binding
        yield SupervisionRow(
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
    cluster: Cluster, role: int, seed: int, prior: Prior, suites: SuiteDocument, spec: ModelSpec
) -> Iterator[SupervisionRow]:
    """The requester's records: initial and after-response from its local view, or (centralized)
    one joint plan from the merged views, which is the binding the peer's mode calls for."""
    episode = build_episode(cluster, role, seed, prior, suites, spec.surface)
    spoken = surface(spec.surface, prior.vocab)
    context = episode.contexts[episode.sender]
    requester = RuleRequester(prior, suites)
    opening = GenerationRequest(episode.sender, Stage.REQUESTER_INITIAL, episode.receiver)
    if spec.records is Records.CENTRALIZED:
        merged = merged_view(context, episode.contexts[episode.receiver])
        yield _requester_row(cluster, role, spec, prior, requester, merged, opening, requester.initial_binding(merged))
        return
    local_binding = requester.initial_binding(context)
    initial = composed(prior, local_binding, episode.sender, episode.receiver, episode.params)
    assert initial.request is not None and cluster.mode is not None
    response = respond(initial.request, episode.sender, cluster.mode, prior)
    revision = GenerationRequest(
        episode.sender,
        Stage.REQUESTER_AFTER_RESPONSE,
        episode.receiver,
        initial_proposal=spoken.serialize(initial),
        response=response.serialize(),
    )
    revised_binding = episode.binding or local_binding
    for request, binding in ((opening, local_binding), (revision, revised_binding)):
        yield _requester_row(cluster, role, spec, prior, requester, context, request, binding)


def _requester_row(
    cluster: Cluster,
    role: int,
    spec: ModelSpec,
    prior: Prior,
    requester: RuleRequester,
    context: LocalContext,
    request: GenerationRequest,
    binding: str,
) -> SupervisionRow:
    """The rule requester's record at ``request`` (it realizes ``binding``), as the row a model learns."""
    reply = requester.generate(context, request)
    target = reply.text if spec.target is Target.DIRECT else binding
    prompt = model_input(context, request, prior, spec.view, spec.compact)
    return SupervisionRow(
        request.stage.value, prompt, target, cluster.id, cluster.template, binding, role, cluster.split.value
    )


def build_rows(
    clusters: Iterable[Cluster],
    prior: Prior,
    suites: SuiteDocument,
    spec: ModelSpec,
    roles: tuple[int, ...] = (0, 1),
    seed: int = 0,
) -> list[SupervisionRow]:
    rows: list[SupervisionRow] = []
    dialogue = spec.surface == SurfaceName.FREEFORM
    for cluster in clusters:
        if dialogue and cluster.suite == "goal_capability":
            continue  # free-form is the forward representation comparator; feedback records have no dialogue
        if cluster.suite not in spec.records.suites:
            continue
        make = _capability if cluster.suite == "goal_capability" else (_dialogue if dialogue else _forward)
        for role in roles:
            rows.extend(make(cluster, role, seed, prior, suites, spec))
    return rows


COMPOSITION_TRAINING_CASES = 320
"""Fixed composition training rows (a fine-tune's data set): 16 training worlds of each of the library's 20 cases."""


def composition_rows(
    cases: Iterable[tuple[int, Factors]],
    prior: Prior,
    suites: SuiteDocument,
    spec: ModelSpec,
    worlds: Split = Split.TRAINING,
    roles: tuple[int, ...] = (0, 1),
    seed: int = 0,
) -> list[SupervisionRow]:
    """One sender row per (world index, factors) and role: the factor-form input → the record.

    Observed cases write the library's own path (:func:`library_proposal`); an unseen
    cross-product has no library case, so its row (evaluation only) writes the explicit-factor
    composition, the one legal path for its factors.
    """
    observed = observed_cases(prior, suites)
    spoken = surface(spec.surface, prior.vocab)
    rows = []
    for index, factors in cases:
        for role in roles:
            case = composition_case(index, role, seed, prior, suites, factors, worlds)
            episode = case.spec
            if factors in observed:
                record = library_proposal(case, prior, suites)
                binding = observed[factors][1]
            else:
                record = rule_proposal(CompositionMethod.EXPLICIT_FACTOR_COMPOSER, case, prior, suites)
                binding = ""
            request = GenerationRequest(episode.sender, Stage.SENDER_INITIAL, episode.receiver)
            prompt = model_input(episode.contexts[episode.sender], request, prior, spec.view, spec.compact)
            row = SupervisionRow(
                request.stage.value,
                prompt,
                spoken.serialize(record),
                f"case-{index:05d}",
                factors.name,
                binding,
                role,
                worlds.value,
            )
            rows.append(row)
    return rows


def observed_rows(
    count: int, first: int, prior: Prior, suites: SuiteDocument, spec: ModelSpec, worlds: Split, seed: int = 0
) -> list[SupervisionRow]:
    """``count`` observed-case rows per role, cycling over the library's cases from world ``first`` on."""
    library = sorted(observed_cases(prior, suites), key=lambda factors: factors.name)
    cases = [(first + index, library[index % len(library)]) for index in range(count)]
    return composition_rows(cases, prior, suites, spec, worlds, seed=seed)


def training_split(spec: ModelSpec) -> Split:
    """The forward split ``spec``'s model trains on."""
    return Split.REPRESENTATION_TRAINING if spec.templates is Templates.REPRESENTATION else Split.TRAINING


def fixed_training_rows(spec: ModelSpec) -> list[SupervisionRow]:
    """The one data set a fine-tune trains on, for every seed (the paper's seeds share one data hash)."""
    prior, suites = default_prior(), default_suites()
    if spec.records is Records.COMPOSITION:
        return observed_rows(COMPOSITION_TRAINING_CASES, 0, prior, suites, spec, Split.TRAINING)
    return build_rows(paper_pool(training_pool_name(spec)), prior, suites, spec)


def training_pool_name(spec: ModelSpec) -> str:
    """The paper pool a fine-tune's fixed training rows come from (composition rows come from no pool)."""
    if "forward" not in spec.records.suites:
        return "goal_capability_training"
    return "representation_training" if spec.templates is Templates.REPRESENTATION else "training"


def evaluation_rows(spec: ModelSpec, count: int, seed: int = 0) -> tuple[list[SupervisionRow], list[SupervisionRow]]:
    """Up to ``count`` rows each from the templates trained on and from templates never trained on.

    Neither pool shares a world with training (their own seed namespaces), but a prompt
    does not show its world: the first set's prompts and targets recur among the training
    rows, so exact match there measures fit, not generalization. The second shares no
    template with training: what a model does there is transfer, not recall.
    """
    prior, suites = default_prior(), default_suites()
    if spec.records is Records.COMPOSITION:
        return _composition_evaluation(spec, count, seed)
    seen_split = Split.REPRESENTATION if spec.templates is Templates.REPRESENTATION else Split.IN_DISTRIBUTION
    seen_pool = draw_pool(seen_split, 24, seed=7) + draw_pool(Split.GOAL_CAPABILITY, 4, seed=7)
    trained = {template for template, _ in forward_space(training_split(spec), suites)}
    unseen_pool = [c for c in draw_pool(Split.HELD_OUT_TEMPLATE, 24, seed=7) if c.template not in trained]
    chooser = random.Random(seed)
    picked = []
    for pool in (seen_pool, unseen_pool):
        rows = build_rows(pool, prior, suites, spec)
        picked.append(chooser.sample(rows, min(count, len(rows))))
    return picked[0], picked[1]


def _composition_evaluation(
    spec: ModelSpec, count: int, seed: int
) -> tuple[list[SupervisionRow], list[SupervisionRow]]:
    """The composition model's two sets: observed cases in evaluation worlds, and the unseen cross-products."""
    prior, suites = default_prior(), default_suites()
    seen = observed_rows(40, 0, prior, suites, spec, Split.IN_DISTRIBUTION)
    unseen = composition_rows(
        enumerate(unseen_cross_products(prior, suites)), prior, suites, spec, Split.IN_DISTRIBUTION
    )
    chooser = random.Random(seed)
    return chooser.sample(seen, min(count, len(seen))), chooser.sample(unseen, min(count, len(unseen)))


def rows_text(rows: Iterable[SupervisionRow]) -> str:
    """The JSONL form of ``rows``: what is written, and what a checkpoint's data hash covers."""
    return "".join(json.dumps(asdict(row), ensure_ascii=False, separators=(",", ":")) + "\n" for row in rows)


def write_rows(rows: list[SupervisionRow], folder: Path, name: str, spec: ModelSpec) -> Path:
    """``<name>.jsonl`` plus ``<name>.manifest.json`` (counts by stage and split, sha256)."""
    folder.mkdir(parents=True, exist_ok=True)
    text = rows_text(rows)
    path = folder / f"{name}.jsonl"
    path.write_text(text, encoding="utf-8")
    manifest = {
        "rows": len(rows),
        "by_stage": dict(Counter(row.stage for row in rows)),
        "by_split": dict(Counter(row.split for row in rows)),
        "templates": sorted({row.template for row in rows}),
        "spec": spec.fields(),
        "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
        "gencoord": __version__,
    }
    (folder / f"{name}.manifest.json").write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return path


def read_rows(path: Path) -> list[SupervisionRow]:
    return [SupervisionRow(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line]
