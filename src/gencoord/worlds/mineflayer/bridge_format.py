"""Between the executor and the bridge: what a reset is sent, and how the bridge's answers read.

The bridge speaks JSON (player names, ``"x,y,z"`` cell keys, item counts that may be 0);
the executor speaks agents, cells and bags. These turn one into the other, so the executor
holds only the running of actions.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gencoord.prior.gamedata import GameData
from gencoord.prior.loot import default_loot
from gencoord.worlds.actions import (
    Action,
    BreakAt,
    CraftItem,
    Deposit,
    DigDown,
    FurnaceCollect,
    FurnaceLoad,
    GoTo,
    Hunt,
    ObtainBlock,
    Pillar,
    PlaceAt,
    PlaceBlock,
    PlaceStation,
    StepAside,
    Withdraw,
)
from gencoord.worlds.changes import BlockRoute, DepleteSource, LoseThrow, RemoveItems, WorldChange
from gencoord.worlds.executor import Items
from gencoord.worlds.mineflayer.layout import Cell, Layout, shift
from gencoord.worlds.sim.physics import default_physics
from gencoord.worlds.spec import WorldSpec


def reset_request(
    world: WorldSpec, layout: Layout, players: Mapping[str, str], origin: Cell, game: GameData, clear: list[Any]
) -> dict[str, Any]:
    """What the bridge's ``reset`` is sent: the layout, what to clear first, the loot, furnace and recipe tables both
    worlds share, the containers' contents and every agent (its player, where it stands, its bag)."""
    physics = default_physics()
    return {
        "layout": layout.as_json(),
        # the whole area once per server; afterwards only what bots can change (sites; refs and
        # resources are set anew every reset)
        "clear": clear,
        "drops": layout.drops,
        # ripe crops and animals drop what this table rolls, from the world's seed
        "loot": default_loot().model_dump(include={"blocks", "mobs"}),
        "seed": world.seed,
        # the furnace rules both worlds share (vanilla's smelting results, burn times, 200 ticks an item)
        "furnace": {
            "smelting": dict(physics.smelting),
            "smoking": dict(physics.smoking),
            "fuel": dict(physics.fuel_ticks),
            "ticksPerItem": physics.smelt_ticks_per_item,
            "ticksPerSmoke": physics.smoke_ticks_per_item,
        },
        "fuel": [
            {
                "at": layout.refs[name]["position"],
                "smoker": world.refs[name].block == "smoker",
                "fuel": dict(fuel),
            }
            for name, fuel in sorted(world.fuel.items())
        ],
        # recipe variants the simulator's data has beyond minecraft-data's (ingredient tags it collapsed):
        # the server crafts them and the bots ask for them, so both worlds craft from one recipe table
        "recipes": [
            {"result": item, "count": recipe.count, "ingredients": dict(recipe.ingredients)}
            for item, recipe in game.tag_variants
        ],
        "contents": {name: dict(items) for name, items in world.contents.items()},
        "agents": [
            {
                "name": players[agent.name],
                "position": [c + 0.5 if axis != 1 else c for axis, c in enumerate(shift(agent.position, origin))],
                "inventory": dict(agent.inventory),
            }
            for agent in world.agents
        ],
    }


def ref_of(action: Action) -> tuple[str, str] | None:
    """The ref an action acts on, and the kind that ref must be."""
    if isinstance(action, GoTo):
        return (action.target, "") if action.target_kind == "ref" else None
    if isinstance(action, ObtainBlock):
        return action.source, "resource"
    if isinstance(action, Hunt):
        return action.herd, "resource"
    if isinstance(action, Withdraw | Deposit):
        return action.container, "container"
    if isinstance(action, PlaceBlock | PlaceAt | BreakAt | Pillar | DigDown | StepAside):
        return action.site, "site"
    if isinstance(action, CraftItem) and action.station is not None:
        return action.station, "station"
    if isinstance(action, FurnaceLoad | FurnaceCollect | PlaceStation):
        return action.station, "station"
    return None


def counts(raw: Mapping[str, Any]) -> Items:
    return {str(item): int(n) for item, n in raw.items() if int(n) > 0}


def read_cells(raw: Mapping[str, Mapping[str, str]]) -> dict[str, dict[Cell, str]]:
    """Build sites' standing blocks from the bridge ("x,y,z" offsets → block names)."""
    found: dict[str, dict[Cell, str]] = {}
    for site, cells in raw.items():
        found[site] = {}
        for key, name in cells.items():
            x, y, z = (int(c) for c in key.split(","))
            found[site][(x, y, z)] = str(name)
    return found


def named_in(change: WorldChange) -> tuple[str | None, str | None]:
    """The agent, or the ref, a change is about."""
    if isinstance(change, RemoveItems):
        return change.agent, None
    if isinstance(change, LoseThrow):
        return change.giver, None
    if isinstance(change, BlockRoute):
        return None, change.ref
    if isinstance(change, DepleteSource):
        return None, change.source
    return None, change.station


def differences(what: str, seen: Mapping[str, Mapping[str, int]], truth: Mapping[str, Items]) -> list[str]:
    """Where the bots' view and the server's ground truth disagree (only what both know)."""
    return [
        f"{what} {name}: bots see {dict(seen[name])}, the server holds {dict(truth.get(name, {}))}"
        for name in sorted(seen)
        if counts(seen[name]) != truth.get(name, {})
    ]
