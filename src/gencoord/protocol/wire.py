"""Wire accounting: every message that crosses the agent boundary, with its UTF-8 bytes.

Bytes are measured on the exact payload sent, never estimated; the size cap is the
same one the parser enforces, so nothing larger than the cap is ever delivered.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gencoord.dsl.parse import WIRE_CAP_BYTES
from gencoord.errors import WireError
from gencoord.reasons import Reason


@dataclass(frozen=True, slots=True)
class WireMessage:
    sender: str
    recipient: str
    kind: str  # "REQ", "RESPONSE", ...
    payload: str

    @property
    def nbytes(self) -> int:
        return len(self.payload.encode("utf-8"))


@dataclass
class Wire:
    """An append-only log of the messages of one coordination episode."""

    messages: list[WireMessage] = field(default_factory=list)

    def send(self, sender: str, recipient: str, kind: str, payload: str) -> str:
        message = WireMessage(sender, recipient, kind, payload)
        if message.nbytes > WIRE_CAP_BYTES:
            raise WireError(
                Reason.MESSAGE_TOO_LARGE, f"{kind} of {message.nbytes} bytes exceeds the {WIRE_CAP_BYTES}-byte cap"
            )
        self.messages.append(message)
        return payload

    @property
    def total_bytes(self) -> int:
        return sum(message.nbytes for message in self.messages)
