"""The Backend protocol and the bridge from per-agent backends to the protocol's Generator."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from gencoord.protocol.generation import GenerationRequest, Generator, Reply
from gencoord.tasks.context import LocalContext


class Backend(Protocol):
    """Maps an agent's own context and the current stage to the text it emits.

    A backend sees one agent's LocalContext and what the protocol delivered to that
    agent (a REQ line, a response), never the peer's context or the world state.
    """

    name: str

    def generate(self, context: LocalContext, request: GenerationRequest) -> Reply: ...


def speaks(backend: Backend) -> bool:
    """Whether ``backend`` writes its own words under the free-form surface, as a model or an API does.

    A rule writes typed lines whatever the surface, and the surface says them in controlled
    sentences on its behalf; a backend that sets ``speaks = True`` is sent and heard in words.
    """
    return bool(getattr(backend, "speaks", False))


def bind(backends: Mapping[str, Backend], contexts: Mapping[str, LocalContext]) -> Generator:
    """One Generator for the protocol: each agent's stage goes to that agent's backend."""

    def generate(request: GenerationRequest) -> Reply:
        return backends[request.agent].generate(contexts[request.agent], request)

    return generate
