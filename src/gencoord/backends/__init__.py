"""Backends: what turns an agent's LocalContext into the text it sends.

Deterministic ones live in ``rule``; learned and API backends plug into the same
:class:`Backend` protocol.
"""

from gencoord.backends.base import Backend, bind
from gencoord.backends.rule import (
    BindingComposer,
    BranchGuesser,
    DirectoryLookup,
    RequestRealizer,
    RuleRequester,
    RuleSender,
)

__all__ = [
    "Backend",
    "BindingComposer",
    "BranchGuesser",
    "DirectoryLookup",
    "RequestRealizer",
    "RuleRequester",
    "RuleSender",
    "bind",
]
