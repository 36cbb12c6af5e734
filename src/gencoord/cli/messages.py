"""``gencoord parse``: check one message the way a receiving agent would."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, BinaryIO

import typer

from gencoord.cli.application import command, fail, show_error
from gencoord.dsl.parse import WIRE_CAP_BYTES
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError, GencoordError
from gencoord.reasons import Reason

if TYPE_CHECKING:
    from gencoord.dsl.ast import Proposal
    from gencoord.prior.prior import Prior


def _read_capped(stream: BinaryIO) -> bytes:
    """At most one byte past the wire cap: enough to reject an oversized message without reading it all."""
    return stream.read(WIRE_CAP_BYTES + 1)


def _read(source: str) -> bytes:
    if source == "-":
        return _read_capped(sys.stdin.buffer)
    try:
        with Path(source).open("rb") as handle:
            return _read_capped(handle)
    except OSError as exc:
        raise ConfigError(Reason.UNREADABLE, f"cannot read {source!r}: {exc.strerror}") from None


def _speaker(proposal: Proposal, prior: Prior, agent: str | None) -> str:
    """The sender: as given, else the first agent of the episode that the message does not address."""
    if agent is not None:
        return agent
    addressed = {request.target for request in proposal.peer_requests}
    agents = prior.default_episode.agents
    return next((a for a in agents if a not in addressed), agents[0])


@command(
    epilog="Example: printf 'SELF -\\nREQ agent_a craft.item(q=1,input=oak_planks,item=crafting_table)\\n' "
    "| gencoord parse --json"
)
def parse(
    source: Annotated[str, typer.Argument(help="A file holding one message, or - for standard input.")] = "-",
    surface: Annotated[SurfaceName, typer.Option(help="The message's surface: dsl or json.")] = SurfaceName.DSL,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")] = False,
    prior_file: Annotated[
        Path | None, typer.Option("--prior", help="A prior TOML file (default: the packaged prior).")
    ] = None,
    agent: Annotated[str | None, typer.Option(help="The sending agent (default: the first one not addressed).")] = None,
    template: Annotated[str | None, typer.Option(help="Restrict bindings to this template's branches.")] = None,
) -> None:
    """Parse and contract-check one SELF+REQ message; exit 0 when legal, 1 when not, 2 on usage errors."""
    if surface is SurfaceName.FREEFORM:
        fail(
            "parse reads one record (dsl or json); a free-form dialogue is many turns, not one message. "
            "Run it with `gencoord episode --surface freeform`."
        )
    from gencoord.dsl.json_surface import parse_json, serialize_json  # noqa: PLC0415 - a light --help
    from gencoord.prior.contract import check_proposal  # noqa: PLC0415
    from gencoord.prior.load import load_prior  # noqa: PLC0415

    prior = load_prior(prior_file)
    if template is not None and template not in prior.templates:
        fail(f"unknown template {template!r}; known: {', '.join(sorted(prior.templates))}")
    message = _read(source)
    try:
        proposal = parse_json(message, prior.vocab) if surface is SurfaceName.JSON else prior.parse(message)
        check_proposal(proposal, _speaker(proposal, prior, agent), prior, prior.episode(template))
        canonical = serialize_json(proposal, prior.vocab) if surface is SurfaceName.JSON else prior.serialize(proposal)
    except GencoordError as exc:
        if as_json:
            typer.echo(json.dumps(exc.as_dict(), ensure_ascii=True))
        else:
            show_error(exc)
        raise typer.Exit(1) from None
    typer.echo(json.dumps({"ok": True, "canonical": canonical}) if as_json else canonical)
