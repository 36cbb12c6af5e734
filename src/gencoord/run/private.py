"""Private task structure (v2 S20–S23): the sender keeps its task graph and delivers PATH, SLICE or GOAL.

The sender writes its SELF+REQ from its private graph as usual; what crosses the boundary
is then a delivery of one kind, through the cache protocol of ``protocol.delivery``. The
receiver never sees the task graph: it adopts the PATH, linearizes the SLICE, or plans the
GOAL with the shared recipes, checks the result against the shared contract and its own
ledger, and acknowledges. The commitment joins the sender's SELF with the path the
receiver realized, so a receiver that planned another legal path is held to that path.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Mapping
from contextlib import suppress
from dataclasses import replace

from gencoord.dsl.ast import Path, PeerRequest, Proposal
from gencoord.dsl.surface import Surface
from gencoord.errors import GencoordError
from gencoord.planning.delivery import adopted, realize, without_binding, write_delivery
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode
from gencoord.protocol.delivery import (
    CacheSetting,
    Delivery,
    DeliveryKind,
    DeliveryRejectedError,
    DeliveryReport,
    ReceiverCache,
    SenderCache,
    transmit,
)
from gencoord.protocol.generation import GenerationRequest, Generator, Stage
from gencoord.protocol.resolve import resolve_team
from gencoord.protocol.result import ProtocolResult
from gencoord.protocol.wire import Wire
from gencoord.run.lifecycle import PROTOCOL_ERRORS, Session

REPEATS = 5  # technical repeats of the delivery processing, whose median is recorded (the paper's five)

Substitution = Callable[[Delivery], Delivery]
"""What the wire delivers instead of the sender's delivery (the alternative-request interventions)."""


def run_private_delivery(
    generate: Generator,
    sender: str,
    receiver: str,
    prior: Prior,
    episode: PublicEpisode,
    holdings: Mapping[str, Mapping[str, int]],
    kind: DeliveryKind,
    cache: CacheSetting,
    *,
    complete: Proposal,
    earlier: Proposal,
    substitute: Substitution | None = None,
    surface: Surface | None = None,
    receiver_answers: bool = False,
) -> ProtocolResult:
    """One private-structure exchange, from the sender's record to the dispatch plan.

    ``complete`` is the object the sender's private graph calls for (S23 counts how often it
    is written). ``earlier`` is the record of an earlier order whose delivery last filled the
    slot (the ``changed`` cache setting); under ``warm`` the same delivery went before.
    ``receiver_answers``: the receiver's backend writes its path from each delivery (stage
    ``receiver_delivery``), checked as a realized one is; otherwise the shared delivery
    processing realizes it (the paper's).
    """
    session = Session(generate, prior, episode, surface)
    trace = session.trace
    complete_sent = False
    try:
        sent, request = session.propose(GenerationRequest(sender, Stage.SENDER_INITIAL, receiver))
        complete_sent = sent == complete
        clock = time.thread_time_ns()
        delivery = write_delivery(kind, sent, sender, prior)
        writing_us = (time.thread_time_ns() - clock) / 1000
        if substitute is not None:
            delivery = substitute(delivery)

        answers: dict[str, Path | GencoordError] = {}

        def accept(arrived: Delivery) -> Path:
            bag = holdings.get(receiver, {})
            if not receiver_answers:
                return realize(arrived, bag, prior, episode)
            if arrived.content not in answers:  # asked once per content: the timing repeats replay its answer
                asked = GenerationRequest(
                    receiver, Stage.RECEIVER_DELIVERY, sender, delivered_request=arrived.message(False)
                )
                try:
                    answers[arrived.content] = session.answer(asked).self_plan
                except PROTOCOL_ERRORS as error:
                    answers[arrived.content] = error
            answer = answers[arrived.content]
            if isinstance(answer, GencoordError):
                raise answer
            return adopted(answer, arrived, bag, prior, episode)

        caches = None if cache is CacheSetting.OFF else (SenderCache(), ReceiverCache())
        if caches is not None and cache is not CacheSetting.COLD:
            before = delivery if cache is CacheSetting.WARM else write_delivery(kind, earlier, sender, prior)
            with suppress(DeliveryRejectedError):  # a refused earlier order leaves its slot empty; the ACKs show it
                transmit(before, Wire(), accept, caches)
        timings = _rehearsed(delivery, accept, caches)
        trace.delivery = DeliveryReport(kind, cache, complete_sent)
        try:
            path, cost = transmit(delivery, trace.wire, accept, caches)
        except DeliveryRejectedError as refused:
            assert refused.transmission is not None
            cpu = statistics.median([*timings, refused.transmission.cpu_us]) + writing_us
            trace.delivery = DeliveryReport(kind, cache, complete_sent, replace(refused.transmission, cpu_us=cpu))
            raise
        cpu = statistics.median([*timings, cost.cpu_us]) + writing_us
        differs = without_binding(path) != without_binding(request.plan)
        stored = 0 if caches is None else caches[1].stored_bytes
        trace.delivery = DeliveryReport(kind, cache, complete_sent, replace(cost, cpu_us=cpu), stored, differs)
        joint = Proposal(sent.self_plan, (PeerRequest(receiver, path),))
        return session.success(resolve_team(joint, sender, holdings, prior, episode))
    except PROTOCOL_ERRORS as error:
        if trace.delivery is None:
            trace.delivery = DeliveryReport(kind, cache, complete_sent)
        return session.fail(error)


def _rehearsed(
    delivery: Delivery, accept: Callable[[Delivery], Path], caches: tuple[SenderCache, ReceiverCache] | None
) -> list[float]:
    """CPU microseconds of ``REPEATS`` − 1 rehearsals of the transmission, each on copies of the caches, so the
    one that counts finds them as the rehearsals did; a refused rehearsal is timed up to its refusal."""
    timings = []
    for _ in range(REPEATS - 1):
        scratch = None if caches is None else (caches[0].copy(), caches[1].copy())
        try:
            timings.append(transmit(delivery, Wire(), accept, scratch)[1].cpu_us)
        except DeliveryRejectedError as refused:
            timings.append(refused.transmission.cpu_us if refused.transmission else 0.0)
    return timings
