"""The ``gencoord`` command line."""

from __future__ import annotations

import json
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

from gencoord.demo import run_demo
from gencoord.dsl.ast import Proposal
from gencoord.dsl.json_surface import parse_json, serialize_json
from gencoord.errors import GencoordError, PriorError
from gencoord.prior.contract import check_proposal
from gencoord.prior.load import load_prior
from gencoord.prior.prior import Prior

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Executable skill-path commitments (GenCoord).")


class Surface(StrEnum):
    dsl = "dsl"
    json = "json"


def _load(prior_file: Path | None) -> Prior:
    try:
        return load_prior(prior_file)
    except PriorError as exc:
        Console(stderr=True).print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(2) from None


def _read(source: str) -> bytes:
    if source == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(source).read_bytes()
    except OSError as exc:
        Console(stderr=True).print(f"[red]cannot read {source!r}: {exc.strerror}[/red]", highlight=False)
        raise typer.Exit(2) from None


def _speaker(proposal: Proposal, prior: Prior, agent: str | None) -> str:
    """The sender: as given, else the first agent of the episode that the message does not address."""
    if agent is not None:
        return agent
    addressed = {request.target for request in proposal.peer_requests}
    agents = prior.default_episode.agents
    return next((a for a in agents if a not in addressed), agents[0])


@app.command()
def parse(
    source: Annotated[str, typer.Argument(help="A file holding one message, or - for standard input.")] = "-",
    surface: Annotated[Surface, typer.Option(help="The message's surface.")] = Surface.dsl,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of text.")] = False,
    prior_file: Annotated[
        Path | None, typer.Option("--prior", help="A prior TOML file (default: the packaged prior).")
    ] = None,
    agent: Annotated[str | None, typer.Option(help="The sending agent (default: the first one not addressed).")] = None,
    template: Annotated[str | None, typer.Option(help="Restrict bindings to this template's branches.")] = None,
) -> None:
    """Parse and contract-check one SELF+REQ message; exit 0 when legal, 1 when not, 2 on usage errors."""
    prior = _load(prior_file)
    if template is not None and template not in prior.templates:
        Console(stderr=True).print(f"[red]unknown template {template!r}[/red]", highlight=False)
        raise typer.Exit(2)
    message = _read(source)
    try:
        proposal = parse_json(message, prior.vocab) if surface is Surface.json else prior.parse(message)
        check_proposal(proposal, _speaker(proposal, prior, agent), prior, prior.episode(template))
        canonical = serialize_json(proposal, prior.vocab) if surface is Surface.json else prior.serialize(proposal)
    except GencoordError as exc:
        if as_json:
            typer.echo(json.dumps(exc.as_dict(), ensure_ascii=True))
        else:
            Console(stderr=True).print(f"[red]{exc}[/red]", highlight=False)
        raise typer.Exit(1) from None
    typer.echo(json.dumps({"ok": True, "canonical": canonical}) if as_json else canonical)


@app.command()
def demo() -> None:
    """Resolve the paper's two worked examples and show every stage."""
    run_demo(Console())


if __name__ == "__main__":
    app()
