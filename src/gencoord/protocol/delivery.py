"""Private task structure (v2 S20–S23): what a sender that keeps its task graph private delivers.

The sender delivers one of three things to the receiver: its PATH (the receiver's role
path, as a REQ would carry it), a SLICE of the sender's task graph (the receiver's nodes,
the hand-over node they hang off, and the edges between them), or only the GOAL (the
conjuncts the receiver's part must make true). What the receiver does with each lives in
``planning.delivery``; this module is the wire side: one-line messages, the content id,
and the cache that lets a repeated delivery travel as a reference.

Cache protocol. The receiver keeps one entry per slot (giver, kind). A content message
carries its id; the receiver stores it (``STORED``), or replaces the slot's older entry
(``REPLACED``: a changed delivery invalidates what was there). A repeated delivery is a
``REF`` to the id the sender last saw acknowledged; the receiver answers ``HIT``, or
``MISS`` when the slot holds something else, and the sender then sends the content.
Every delivery is acknowledged, a rejected one with ``REJECT`` and the reason code; a
rejected content is never stored. The sender believes only what an ACK told it.
"""

from __future__ import annotations

import hashlib
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TypeVar

from gencoord.errors import GencoordError, Location, ParseError, ProtocolFailureError
from gencoord.protocol.wire import Wire
from gencoord.reasons import Reason

T = TypeVar("T")


class DeliveryKind(StrEnum):
    PATH = "PATH"
    SLICE = "SLICE"
    GOAL = "GOAL"


class CacheSetting(StrEnum):
    """Cache off (content every time), or on with this delivery first, repeated, or changed."""

    OFF = "off"
    COLD = "cold"  # cache on, the slot is empty: the content travels and is stored
    WARM = "warm"  # cache on, the same content was delivered before: a reference travels
    CHANGED = "changed"  # cache on, the slot holds an older, different delivery: content replaces it


class AckStatus(StrEnum):
    FRESH = "FRESH"  # accepted, cache off
    STORED = "STORED"
    REPLACED = "REPLACED"
    HIT = "HIT"
    MISS = "MISS"
    REJECT = "REJECT"


ID_LENGTH = 12
_NAME = r"[A-Za-z0-9_.:-]+"
_CONTENT = re.compile(
    rf"^(?P<kind>PATH|SLICE|GOAL) (?P<to>{_NAME}) id=(?P<id>[0-9a-f]{{{ID_LENGTH}}}|-) "
    rf"from=(?P<giver>{_NAME}) receives=(?P<receives>-|[0-9]{{1,9}}:{_NAME}) :: (?P<body>\S.*)$"
)
_REF = re.compile(
    rf"^REF (?P<kind>PATH|SLICE|GOAL) (?P<to>{_NAME}) from=(?P<giver>{_NAME}) id=(?P<id>[0-9a-f]{{{ID_LENGTH}}})$"
)
_ACK = re.compile(rf"^ACK (?P<id>[0-9a-f]{{{ID_LENGTH}}}|-) (?P<status>[A-Z]+)(?: (?P<reason>[A-Z_]+))?$")


@dataclass(frozen=True, slots=True)
class Delivery:
    """One delivered PATH, SLICE or GOAL: the body, and the hand-over it comes with (if any)."""

    kind: DeliveryKind
    giver: str
    receiver: str
    receives: tuple[str, int] | None  # the item and quantity the giver hands over before the receiver's part
    body: str

    @property
    def content(self) -> str:
        """The canonical text the id is taken over (everything but the id itself)."""
        return f"{self.kind} {self.receiver} from={self.giver} receives={self._receives()} :: {self.body}"

    @property
    def ident(self) -> str:
        return hashlib.sha256(self.content.encode("utf-8")).hexdigest()[:ID_LENGTH]

    @property
    def slot(self) -> tuple[str, DeliveryKind]:
        return (self.giver, self.kind)

    def message(self, cached: bool) -> str:
        ident = self.ident if cached else "-"
        return f"{self.kind} {self.receiver} id={ident} from={self.giver} receives={self._receives()} :: {self.body}"

    def reference(self) -> str:
        return f"REF {self.kind} {self.receiver} from={self.giver} id={self.ident}"

    def _receives(self) -> str:
        return "-" if self.receives is None else f"{self.receives[1]}:{self.receives[0]}"


@dataclass(frozen=True, slots=True)
class Reference:
    kind: DeliveryKind
    giver: str
    receiver: str
    ident: str

    @property
    def slot(self) -> tuple[str, DeliveryKind]:
        return (self.giver, self.kind)


@dataclass(frozen=True, slots=True)
class Ack:
    ident: str  # "-" where the content carried no id (cache off)
    status: AckStatus
    reason: str | None = None

    def serialize(self) -> str:
        return f"ACK {self.ident} {self.status}" + (f" {self.reason}" if self.reason else "")


def malformed(reason: Reason, message: str) -> ParseError:
    """A delivery that does not decode: the parse failure, located in the delivery."""
    return ParseError(reason, message, Location(section="DELIVERY"))


def parse_delivery(text: str) -> Delivery | Reference:
    """A delivery or reference message as it arrived; anything else is a ``ParseError``."""
    if (ref := _REF.match(text)) is not None:
        return Reference(DeliveryKind(ref["kind"]), ref["giver"], ref["to"], ref["id"])
    found = _CONTENT.match(text)
    if found is None:
        raise malformed(Reason.BAD_DELIVERY, f"not a PATH, SLICE, GOAL or REF message: {text[:80]!r}")
    receives = None
    if found["receives"] != "-":
        quantity, item = found["receives"].split(":", 1)
        if int(quantity) <= 0:
            raise malformed(Reason.BAD_DELIVERY, "a hand-over quantity must be positive")
        receives = (item, int(quantity))
    delivery = Delivery(DeliveryKind(found["kind"]), found["giver"], found["to"], receives, found["body"])
    if found["id"] != "-" and found["id"] != delivery.ident:
        raise malformed(Reason.DELIVERY_ID, f"id {found['id']} is not the content's id {delivery.ident}")
    return delivery


def parse_ack(text: str) -> Ack:
    found = _ACK.match(text)
    if found is None or found["status"] not in AckStatus.__members__:
        raise malformed(Reason.BAD_ACK, f"not an acknowledgment: {text[:80]!r}")
    return Ack(found["id"], AckStatus(found["status"]), found["reason"])


@dataclass
class ReceiverCache:
    """The receiver's stored deliveries, one per slot (giver, kind)."""

    entries: dict[tuple[str, DeliveryKind], Delivery] = field(default_factory=dict)

    @property
    def stored_bytes(self) -> int:
        return sum(len(entry.content.encode("utf-8")) for entry in self.entries.values())

    def copy(self) -> ReceiverCache:
        return ReceiverCache(dict(self.entries))


@dataclass
class SenderCache:
    """What the sender knows the receiver holds: only what an ACK confirmed."""

    confirmed: dict[tuple[str, DeliveryKind], str] = field(default_factory=dict)  # (receiver, kind) → id

    def copy(self) -> SenderCache:
        return SenderCache(dict(self.confirmed))


@dataclass(frozen=True, slots=True)
class Transmission:
    """What one delivery cost and how it ended."""

    request_bytes: int  # content or reference messages, a resend after a MISS included
    ack_bytes: int
    acks: tuple[AckStatus, ...]
    cpu_us: float  # delivery processing: serialization, decoding, realization, checks, acknowledgment


@dataclass(frozen=True, slots=True)
class DeliveryReport:
    """The private-structure part of an episode's trace: what was delivered, at what cost."""

    kind: DeliveryKind
    cache: CacheSetting
    sender_complete: bool  # the sender wrote the complete object its private graph calls for (S23)
    transmission: Transmission | None = None  # None: nothing was delivered (the sender's record failed)
    cache_bytes: int = 0  # what the receiver's cache stores after the delivery
    realized_differs: bool = False  # the receiver's path is not the sender's REQ (bind labels aside)


class DeliveryRejectedError(ProtocolFailureError):
    """The receiver acknowledged a delivery with REJECT: the stage error that made it refuse."""

    def __init__(self, cause: GencoordError, transmission: Transmission | None = None) -> None:
        super().__init__(cause.reason, cause.message, cause.location)
        self.code, self.stage = cause.code, cause.stage
        self.transmission = transmission  # what the refused delivery cost, its REJECT included


def _receive(
    text: str, cache: ReceiverCache | None, accept: Callable[[Delivery], T]
) -> tuple[Ack, T | None, GencoordError | None]:
    """The receiver side of one message: decode it, take it on, and say what happened."""
    try:
        arrived = parse_delivery(text)
    except ParseError as error:  # undecodable on arrival: refused, never stored
        return Ack("-", AckStatus.REJECT, error.reason), None, error
    if isinstance(arrived, Reference):
        held = None if cache is None else cache.entries.get(arrived.slot)
        if held is None or held.ident != arrived.ident:
            return Ack(arrived.ident, AckStatus.MISS), None, None
        arrived_content, status = held, AckStatus.HIT
    else:
        replaced = cache is not None and cache.entries.pop(arrived.slot, None) is not None
        arrived_content = arrived
        status = AckStatus.FRESH if cache is None else AckStatus.REPLACED if replaced else AckStatus.STORED
    ident = arrived_content.ident if cache is not None else "-"
    try:
        taken = accept(arrived_content)
    except GencoordError as error:
        if cache is not None:
            cache.entries.pop(arrived_content.slot, None)
        return Ack(ident, AckStatus.REJECT, error.reason), None, error
    if cache is not None:
        cache.entries[arrived_content.slot] = arrived_content
    return Ack(ident, status), taken, None


def transmit(
    delivery: Delivery,
    wire: Wire,
    accept: Callable[[Delivery], T],
    caches: tuple[SenderCache, ReceiverCache] | None = None,
) -> tuple[T, Transmission]:
    """Deliver across ``wire``: a reference if the sender knows the receiver holds this content.

    ``accept`` is the receiver taking the content on (realize and check); a ``GencoordError``
    from it is acknowledged as ``REJECT`` and raised as :class:`DeliveryRejectedError`. CPU time is
    this thread's, so waiting and other processes do not count.
    """
    clock = time.thread_time_ns()
    sender_cache, receiver_cache = caches if caches is not None else (None, None)
    start = len(wire.messages)
    slot = (delivery.receiver, delivery.kind)
    ack, taken, error = Ack("-", AckStatus.MISS), None, None
    send_reference = sender_cache is not None and sender_cache.confirmed.get(slot) == delivery.ident
    for message in ([delivery.reference()] if send_reference else []) + [delivery.message(caches is not None)]:
        wire.send(delivery.giver, delivery.receiver, message.split(" ", 1)[0], message)
        ack, taken, error = _receive(message, receiver_cache, accept)
        wire.send(delivery.receiver, delivery.giver, "ACK", ack.serialize())
        if ack.status is not AckStatus.MISS:
            break
    if sender_cache is not None:
        if ack.status in (AckStatus.STORED, AckStatus.REPLACED, AckStatus.HIT):
            sender_cache.confirmed[slot] = delivery.ident
        else:
            sender_cache.confirmed.pop(slot, None)
    sent = wire.messages[start:]
    cost = Transmission(
        sum(m.nbytes for m in sent if m.kind != "ACK"),
        sum(m.nbytes for m in sent if m.kind == "ACK"),
        tuple(parse_ack(m.payload).status for m in sent if m.kind == "ACK"),
        (time.thread_time_ns() - clock) / 1000,
    )
    if error is not None:
        raise DeliveryRejectedError(error, cost)
    assert taken is not None  # an ACK other than REJECT and MISS means the receiver took it on
    return taken, cost
