"""``gencoord episode`` and ``gencoord demo``: one episode, shown stage by stage."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from gencoord.cli.application import command, console
from gencoord.cli.options import (
    HostOption,
    OriginOption,
    PortOption,
    VersionOption,
    ViewOption,
    ViewPortOption,
    WorldOption,
    world_choice,
)
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError, did_you_mean
from gencoord.protocol.delivery import CacheSetting
from gencoord.reasons import Reason
from gencoord.run.episode import Condition
from gencoord.run.faults import Fault
from gencoord.tasks.suites import SuiteDocument, default_suites

# What runs an episode is imported when one runs: --help and the other commands start without it.
from gencoord.worlds.choice import DEFAULT_VIEW_PORT, WorldChoice, executor_for


def _choice(suites: SuiteDocument, template: str | None, binding: str | None, mode: str | None) -> tuple[str, str]:
    """The template and the private choice the options name, refused where they do not fit the suites."""
    capability = suites.goal_capability
    if template is None:
        raise ConfigError(
            Reason.MISSING_TEMPLATE,
            "name the episode's template with --template: a forward template ("
            f"{', '.join(sorted(suites.forward.templates))}) or a Goal×Capability goal "
            f"({', '.join(sorted(capability.goals))})",
        )
    forward = suites.forward.templates.get(template)
    if forward is None and template not in capability.goals:
        known = [*sorted(suites.forward.templates), *sorted(capability.goals)]
        raise ConfigError(
            Reason.UNKNOWN_TEMPLATE,
            f"unknown template {template!r}{did_you_mean(template, known)}; known: {', '.join(known)}",
        )
    if forward is not None:
        if mode is not None:
            raise ConfigError(
                Reason.MODE_FOR_FORWARD,
                f"{template} is a forward template: it takes --binding, not --mode (a Goal×Capability option)",
            )
        if binding is not None and binding not in forward.goals:
            raise ConfigError(
                Reason.UNKNOWN_BINDING,
                f"{binding!r} is not a binding of {template}; one of {', '.join(sorted(forward.goals))}",
            )
        return template, binding or sorted(forward.goals)[0]
    if binding is not None:
        raise ConfigError(
            Reason.BINDING_FOR_CAPABILITY,
            f"{template} is a Goal×Capability goal: it takes --mode, not --binding (a forward-template option)",
        )
    if mode is not None and mode not in capability.modes:
        raise ConfigError(
            Reason.UNKNOWN_MODE, f"{mode!r} is not a workcell mode; one of {', '.join(sorted(capability.modes))}"
        )
    return template, mode or sorted(capability.modes)[0]


@command(
    epilog="Example: gencoord episode --template CHEST_A_OR_B --binding CHEST_A --seed 3; "
    "private structure: --condition goal_delivery --cache warm"
)
def episode(
    template: Annotated[
        str | None, typer.Option(help="A forward template, or a Goal×Capability goal (GC_…); required.")
    ] = None,
    binding: Annotated[
        str | None, typer.Option(help="Forward: the sender's private binding (default: the first).")
    ] = None,
    mode: Annotated[
        str | None, typer.Option(help="Goal×Capability: the peer's workcell mode (default: the first).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Draws the world variant; seeds the backends.")] = 0,
    role: Annotated[int, typer.Option(min=0, max=1, help="Role permutation: 0 = agent_a sends, 1 = agent_b.")] = 0,
    params: Annotated[int, typer.Option(min=0, help="Which of the template's parameter sets to use.")] = 0,
    condition: Annotated[Condition | None, typer.Option(help="What crosses the boundary (default per suite).")] = None,
    fault: Annotated[Fault, typer.Option(help="A controlled fault to inject (v2 Table S46).")] = Fault.CLEAN,
    cache: Annotated[
        CacheSetting,
        typer.Option(
            help="Delivery conditions (private task structure): the cache off, or on with the slot empty (cold), "
            "holding this delivery already (warm: a reference travels) or an older one (changed)."
        ),
    ] = CacheSetting.OFF,
    receiver_answers: Annotated[
        bool,
        typer.Option(
            "--receiver-answers",
            help="Delivery conditions: the receiver's backend writes its own path from the delivery (stage "
            "receiver_delivery), checked like a realized one; by default the shared delivery processing realizes it.",
        ),
    ] = False,
    surface: Annotated[SurfaceName, typer.Option(help="The wire form: one record (dsl, json) or a dialogue.")] = (
        SurfaceName.DSL
    ),
    backend: Annotated[
        str, typer.Option(help="Who writes: rule, model:<checkpoint>, constrained:<checkpoint>, api:<url>#<model>.")
    ] = "rule",
    as_json: Annotated[bool, typer.Option("--json", help="Print the episode record as one JSON object.")] = False,
    world: WorldOption = None,
    host: HostOption = None,
    port: PortOption = 25565,
    mc_version: VersionOption = "1.21.4",
    origin: OriginOption = "0,0,0",
    view: ViewOption = False,
    view_port: ViewPortOption = DEFAULT_VIEW_PORT,
) -> None:
    """Run one episode end to end (embedded simulator by default, or real Minecraft) and show its trace."""
    from gencoord.backends.registry import backend_set  # noqa: PLC0415 - see the note on imports above
    from gencoord.cli.show import show_episode  # noqa: PLC0415
    from gencoord.prior.load import default_prior  # noqa: PLC0415
    from gencoord.run.episode import run_episode  # noqa: PLC0415
    from gencoord.run.record import episode_record  # noqa: PLC0415
    from gencoord.tasks.cluster import make_cluster  # noqa: PLC0415
    from gencoord.tasks.instances import build_episode  # noqa: PLC0415

    prior = default_prior()
    suites = default_suites()
    named, choice = _choice(suites, template, binding, mode)
    cluster = make_cluster(named, choice, seed, param_choice=params, suites=suites)
    spec = build_episode(cluster, role, seed, prior, suites, surface)
    team = backend_set(backend)(spec, condition is Condition.NO_REQUEST, prior, suites)
    executor = executor_for(world_choice(world, host, port, mc_version, origin, view, view_port) or WorldChoice())
    result = run_episode(
        spec,
        condition,
        fault=fault,
        backends=team,
        executor=executor,
        prior=prior,
        suites=suites,
        cache=cache,
        receiver_answers=receiver_answers,
    )
    record = episode_record(result)
    if as_json:
        typer.echo(json.dumps(record, ensure_ascii=False))
    else:
        show_episode(console(), record)
    raise typer.Exit(0 if result.outcome.success else 1)


@command(epilog="Example: gencoord demo")
def demo() -> None:
    """Resolve the paper's two worked examples (replays of its recorded outputs) and show every stage."""
    from gencoord.cli.demo import run_demo  # noqa: PLC0415 - see the note on imports above

    run_demo(console())
