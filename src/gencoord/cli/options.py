"""Options several commands share: where actions run, and which surface a message speaks."""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from gencoord._config import validated
from gencoord.errors import ConfigError
from gencoord.reasons import Reason
from gencoord.worlds.choice import DEFAULT_VIEW_PORT, WorldChoice
from gencoord.worlds.registry import WORLDS

if TYPE_CHECKING:
    from gencoord.eval.config import ExecutionSpec

WorldOption = Annotated[
    str | None,
    typer.Option(
        metavar="WORLD",
        help="Where actions run: sim (the embedded simulator), minecraft (real Minecraft), or an installed world.",
    ),
]
HostOption = Annotated[
    str | None, typer.Option(help="Minecraft: a server you run (default: start our embedded server).")
]
PortOption = Annotated[int, typer.Option(min=1, max=65535, help="Minecraft: the port of --host.")]
VersionOption = Annotated[str, typer.Option("--mc-version", help="Minecraft: the game version of --host.")]
OriginOption = Annotated[
    str, typer.Option(help="Minecraft: x,y,z of the task data's origin in that world (a flat, empty area).")
]
ViewOption = Annotated[
    bool,
    typer.Option(
        "--view",
        help="Minecraft: serve a live browser view of the world and the bots (prismarine-viewer); "
        "its address is printed.",
    ),
]
ViewPortOption = Annotated[int, typer.Option(min=1, max=65535, help="Minecraft: the local port --view serves on.")]


def world_choice(
    world: str | None,
    host: str | None,
    port: int,
    version: str,
    origin: str,
    view: bool = False,
    view_port: int = DEFAULT_VIEW_PORT,
) -> WorldChoice | None:
    """The world the options ask for; None when they leave it to the config."""
    if view and (world is None or "view_port" not in WORLDS.get(world).settings.model_fields):
        raise ConfigError(Reason.VIEW_WITHOUT_MINECRAFT, "--view shows a Minecraft world: add --world minecraft")
    if world is None:
        if host is not None:
            raise ConfigError(Reason.HOST_WITHOUT_WORLD, "--host names a Minecraft server: add --world minecraft")
        return None
    try:
        x, y, z = (int(part) for part in origin.split(","))
    except ValueError:
        raise ConfigError(Reason.BAD_ORIGIN, f"--origin must be three integers x,y,z, not {origin!r}") from None
    settings = {"kind": world, "host": host, "port": port, "version": version, "origin": (x, y, z)}
    chosen = {**settings, **({"view_port": view_port} if view else {})}  # a world without them: at their defaults
    return validated(WorldChoice, chosen, f"--world {world}", ConfigError, Reason.BAD_WORLD)


class Scheduler(StrEnum):
    POOL = "pool"
    RAY = "ray"


SchedulerOption = Annotated[
    Scheduler | None,
    typer.Option(
        "--scheduler",
        "--executor",  # its name before 0.2: a world is an executor, a pool or Ray schedules jobs
        help="What schedules the jobs: the local process pool (default) or Ray.",
    ),
]
RayAddressOption = Annotated[
    str | None, typer.Option(help="Ray: 'auto' or host:port of a running cluster (default: a local instance).")
]
RetriesOption = Annotated[
    int | None, typer.Option(min=0, max=20, help="Ray: runs of a job whose worker died (default 3).")
]


ApiBudgetTokensOption = Annotated[
    int | None,
    typer.Option(
        min=1,
        help="Stop once the run folder's model calls have spent this many tokens (input + output); "
        "the same command with a larger budget goes on.",
    ),
]
ApiBudgetChargeOption = Annotated[
    float | None,
    typer.Option(
        min=0.0,
        help="Stop once the run folder's model calls have cost this much, at $GENCOORD_API_PRICE_IN/_OUT "
        "per million tokens; the same command with a larger budget goes on.",
    ),
]


def execution_of(
    base: ExecutionSpec,
    scheduler: Scheduler | None,
    address: str | None,
    retries: int | None,
    budget_tokens: int | None = None,
    budget_charge: float | None = None,
) -> ExecutionSpec:
    """``base`` with what the options change; an address alone means Ray."""
    changes: dict[str, object] = {}
    if budget_tokens is not None:
        changes["api_budget_tokens"] = budget_tokens
    if budget_charge is not None:
        changes["api_budget_charge"] = budget_charge
    if scheduler is not None:
        changes["scheduler"] = scheduler.value
    if address is not None:
        changes["ray_address"] = address
        changes.setdefault("scheduler", "ray")
    if retries is not None:
        changes["retries"] = retries
    return base.model_copy(update=changes) if changes else base
