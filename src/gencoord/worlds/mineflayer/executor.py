"""The Minecraft executor: compiled actions run by Mineflayer bots on a real server.

Each agent works through its own actions while the others work on theirs, at the game's
own pace: an action starts as soon as its agent is free and everything it depends on has
finished (``Cascade``, as in the simulator); start and end times are wall-clock seconds
since ``reset``. Inventories, containers and sites come from
the server's ground truth when the server is our embedded one, and from what the bots
saw otherwise; where both exist, every disagreement is reported in the snapshot.
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import asdict, dataclass
from typing import Any

from gencoord.errors import WorldError
from gencoord.prior.gamedata import GameData
from gencoord.prior.load import default_prior
from gencoord.reasons import Reason
from gencoord.worlds.actions import (
    Action,
    CraftItem,
    Deposit,
    GiveItem,
    GoTo,
    PlaceAt,
    PlaceBlock,
    Program,
)
from gencoord.worlds.changes import BlockRoute, DepleteSource, LoseThrow, OccupyStation, WorldChange
from gencoord.worlds.executor import (
    ActionFailure,
    ActionRecord,
    Cascade,
    HandoffHook,
    Items,
    WorldSnapshot,
)
from gencoord.worlds.mineflayer.bridge import Bridge, NodeBridge
from gencoord.worlds.mineflayer.bridge_format import counts, differences, named_in, read_cells, ref_of, reset_request
from gencoord.worlds.mineflayer.layout import Cell, Layout, bounds, lay_out, shift
from gencoord.worlds.mineflayer.server_options import ServerOptions, player_names
from gencoord.worlds.spec import Position, WorldSpec

START_TIMEOUT_S = 60.0
RESET_TIMEOUT_S = 40.0
ACT_TIMEOUT_S = 90.0


OBSERVE_TIMEOUT_S = 10.0
# What a reset answers when the world broke down since the last episode: start a new one.
BROKEN_WORLD = frozenset(
    {Reason.BOT_DISCONNECTED, Reason.SERVER_DIED, Reason.SERVER_TIMEOUT, Reason.BRIDGE_DIED, Reason.BRIDGE_TIMEOUT}
)


@dataclass(frozen=True)
class _Done:
    """One finished action as its agent's thread saw it."""

    began: float
    ended: float
    failure: ActionFailure | None
    after: dict[str, Items]  # the actor's (and a receiver's) inventory after the action
    around: tuple[dict[str, Items], dict[str, Items]]  # every agent's inventory before and after, when asked
    delivered: int | None = None  # a hand-over's own pickups, as the embedded server credits them


class MinecraftExecutor:
    name = "minecraft"

    def __init__(
        self,
        options: ServerOptions | None = None,
        game: GameData | None = None,
        bridge_factory: Callable[[], Bridge] = NodeBridge,
    ) -> None:
        self.options = options or ServerOptions()
        self.game = game or default_prior().game
        self._bridge_factory = bridge_factory
        self._bridge: Bridge | None = None
        self._agents: tuple[str, ...] = ()  # the players logged in
        self._players: dict[str, str] = {}  # agent → player
        self._names: dict[str, str] = {}  # player → agent
        self._world: WorldSpec | None = None
        self._layout: Layout | None = None
        self._fresh = True  # a server no episode has used yet: clear the whole area
        self._zero = time.perf_counter()  # the episode clock's zero, set again at each reset
        self.timings: dict[str, float] = {}
        self.server_pid: int | None = None
        self.view_url: str | None = None  # where --view serves the live view, once the world has started
        self._walled: list[tuple[Cell, Cell]] = []  # boxes of walls built since the last reset
        self._stale: list[tuple[Cell, Cell]] = []  # the last layout's area, when this episode's differs

    # ------------------------------------------------------------------ protocol
    def reset(self, world: WorldSpec) -> WorldSnapshot:
        herds = sorted(name for name, ref in world.refs.items() if ref.entity is not None)
        if herds and not self.options.embedded:
            raise WorldError(
                Reason.UNSUPPORTED_WORLD,
                f"animals to hunt ({', '.join(herds)}) are spawned by gencoord's embedded server only; "
                "leave --host out to run this task",
            )
        self._players = player_names([agent.name for agent in world.agents])
        self._names = {player: agent for agent, player in self._players.items()}
        agents = tuple(self._players.values())
        if self._bridge is None or not self._bridge.alive or (agents != self._agents and not self._join(agents)):
            self._start(agents)
        assert self._bridge is not None
        self._world = world
        layout = lay_out(world, self.game, self.options.origin)
        # another layout: the last one's blocks (refs, resources) may stand where this one has none
        self._stale = self._layout.clear if self._layout is not None and self._layout != layout else []
        self._layout = layout
        self._credits: dict[str, dict[str, Items]] = {}
        self._crafted: dict[str, Items] = {}
        self._seen_containers = {name: dict(world.contents.get(name, {})) for name in self._containers()}
        began = time.perf_counter()
        try:
            self._bridge.call("reset", self._reset_request(world), RESET_TIMEOUT_S)
        except WorldError as error:
            if error.reason not in BROKEN_WORLD:
                raise
            self._start(agents)  # a bot or the server died since the last episode: one fresh world
            assert self._bridge is not None
            self._bridge.call("reset", self._reset_request(world), RESET_TIMEOUT_S)
        self._fresh = False
        self._walled = []
        self._zero = time.perf_counter()
        for ref in sorted(world.blocked):
            self.change(BlockRoute(ref))
        for station, seconds in sorted(world.busy_until.items()):
            self.change(OccupyStation(station, seconds))
        self.timings["reset_s"] = time.perf_counter() - began
        self._zero = time.perf_counter()
        return self.snapshot()

    def change(self, change: WorldChange) -> None:
        """Make a gate anomaly physical: a wall round a ref (no bot digs, so only the opening on the
        far side lets one in), a station that opens for nobody, a resource area dug out, items taken
        by ``/clear``."""
        assert self._bridge is not None and self._layout is not None and self._world is not None
        agent, ref = named_in(change)
        if agent is not None and agent not in self._players:
            raise WorldError(Reason.UNKNOWN_AGENT, f"{agent} is not in this world")
        if ref is not None and ref not in self._layout.refs:
            raise WorldError(Reason.UNKNOWN_REF, f"{ref} does not exist in this world")
        args: dict[str, Any]
        if isinstance(change, BlockRoute):
            starts = {tuple(int(c) for c in shift(a.position, self.options.origin)) for a in self._world.agents}
            cells = self._layout.wall(change.ref, starts)  # type: ignore[arg-type]
            if cells:
                self._walled.append(bounds(cells))
            args = {"kind": "wall", "ref": change.ref, "cells": [list(c) for c in cells]}
        elif isinstance(change, DepleteSource):
            args = {"kind": "deplete", "source": change.source}
        elif isinstance(change, OccupyStation):
            args = {"kind": "occupy", "station": change.station, "seconds": round(change.seconds, 1)}
        elif isinstance(change, LoseThrow):
            args = {"kind": "lose_throw", "player": self._players[change.giver]}
        else:
            args = {"kind": "clear", "player": self._players[change.agent], "item": change.item, "count": change.count}
        self._bridge.call("change", args, RESET_TIMEOUT_S)

    def _reset_request(self, world: WorldSpec) -> dict[str, Any]:
        assert self._layout is not None
        clear = self._layout.clear if self._fresh else self._layout.site_boxes() + self._walled + self._stale
        return reset_request(world, self._layout, self._players, self.options.origin, self.game, clear)

    def run(self, program: Program, start: int, stop: int, on_handoff: HandoffHook | None = None) -> list[ActionRecord]:
        assert self._world is not None and self._bridge is not None
        cascade = Cascade(program, start, stop)
        judged = set(program.handoffs) if on_handoff is not None else set()
        waiting = list(cascade.span)
        settled: set[int] = set()  # finished, failed or cancelled
        running: dict[Future[_Done], int] = {}
        records: list[ActionRecord] = []
        with ThreadPoolExecutor(max_workers=max(1, len(self._players)), thread_name_prefix="agent") as pool:
            while waiting or running:
                for index in [i for i in waiting if all(w in settled for w in cascade.waits_on[i])]:
                    waiting.remove(index)
                    if cascade.cancelled(index):
                        settled.add(index)
                    else:
                        running[pool.submit(self._timed, program.actions[index], index in judged)] = index
                if not running:
                    continue
                finished, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in finished:
                    index = running.pop(future)
                    done = future.result()
                    action = program.actions[index]
                    records.append(ActionRecord(index, action, done.began, done.ended, done.failure, done.after))
                    if done.failure is None:
                        self._account(action)
                    # a failed hand-over is judged too: it delivered what it did
                    if (
                        on_handoff is not None
                        and index in judged
                        and not on_handoff(index, *done.around, done.delivered)
                    ):
                        cascade.stop(index)
                    if done.failure is not None:
                        cascade.stop(index)
                    settled.add(index)
        with contextlib.suppress(WorldError):  # a drop still in the air lands now; a lost one shows in the snapshot
            self._bridge.call("settle", {}, OBSERVE_TIMEOUT_S)
        return sorted(records, key=lambda record: record.index)

    def snapshot(self) -> WorldSnapshot:
        assert self._world is not None and self._bridge is not None and self._layout is not None
        seen = self._bridge.call("observe", {}, OBSERVE_TIMEOUT_S)
        bots = {self._names.get(player, player): bot for player, bot in seen["bots"].items()}
        origin = self.options.origin
        positions: dict[str, Position] = {
            name: (bot["position"][0] - origin[0], bot["position"][1] - origin[1], bot["position"][2] - origin[2])
            for name, bot in bots.items()
        }
        bot_inventories = {name: counts(bot["inventory"]) for name, bot in bots.items()}
        bot_sites = {site: counts(items) for site, items in seen["seen"]["sites"].items()}
        for name, items in seen["seen"]["containers"].items():
            self._seen_containers[name] = counts(items)
        server = seen.get("server")
        discrepancies: list[str] = []
        if seen.get("server_error"):
            discrepancies.append(f"no ground truth, the bots' last view instead: {seen['server_error']}")
        bot_blocks = read_cells(seen["seen"].get("blocks") or {})
        blocks = bot_blocks if server is None else read_cells(server.get("blocks") or {})
        if server is None:
            inventories, containers, sites = bot_inventories, dict(self._seen_containers), bot_sites
        else:
            players = server["players"]
            inventories = {
                name: counts(players.get(self._players.get(name, name), {}).get("inventory", {})) for name in bots
            }
            by_position = {tuple(int(c) for c in key.split(",")): items for key, items in server["containers"].items()}
            containers = {
                name: counts(by_position.get(tuple(self._layout.refs[name]["position"]), {}))  # type: ignore[arg-type]
                for name in self._containers()
            }
            sites = {site: counts(items) for site, items in server["sites"].items()}
            discrepancies += differences("inventory", bot_inventories, inventories)
            discrepancies += differences("site", bot_sites, sites)
            discrepancies += differences("container", dict(seen["seen"]["containers"]), containers)
            discrepancies += [
                f"{site}: bots see {bot_blocks.get(site, {}).get(cell, 'air')} at {cell}, the server has {name}"
                for site, cells in blocks.items()
                for cell, name in cells.items()
                if bot_blocks.get(site, {}).get(cell) != name
            ][:20]
        return WorldSnapshot(
            clock_s=time.perf_counter() - self._zero,
            positions=positions,
            inventories=inventories,
            containers=containers,
            sites=sites,
            credits={holder: {a: dict(i) for a, i in by.items()} for holder, by in self._credits.items()},
            crafted={agent: dict(items) for agent, items in self._crafted.items()},
            discrepancies=tuple(discrepancies),
            blocks=blocks,
        )

    def close(self) -> None:
        if self._bridge is not None:
            if self._bridge.alive:
                with contextlib.suppress(WorldError):
                    self._bridge.call("close", {}, 10.0)
            self._bridge.close()
        self._bridge = None
        self._world = None

    # ------------------------------------------------------------------ helpers
    def _start(self, agents: tuple[str, ...]) -> None:
        if self._bridge is not None:
            self._bridge.close()
        began = time.perf_counter()
        self._bridge = self._bridge_factory()
        options = self.options
        args: dict[str, Any] = {"embedded": options.embedded, "version": options.version, "agents": list(agents)}
        if not options.embedded:
            args |= {"host": options.host, "port": options.port}
        try:
            started = self._bridge.call("start", args, START_TIMEOUT_S)
        except WorldError:
            self._bridge.close()
            self._bridge = None
            raise
        self._agents = agents
        self._fresh = True
        self.timings |= {
            "bridge_s": time.perf_counter() - began,
            "server_s": float(started.get("server_s", 0.0)),
            "login_s": float(started.get("login_s", 0.0)),
        }
        pid = started.get("server_pid")
        self.server_pid = int(pid) if pid is not None else None  # the embedded server's process
        if options.view_port is not None:
            self._bridge.call("view", {"port": options.view_port}, START_TIMEOUT_S)
            self.view_url = f"http://127.0.0.1:{options.view_port}"
            print(f"gencoord: watch the Minecraft world at {self.view_url}", file=sys.stderr, flush=True)

    def _join(self, agents: tuple[str, ...]) -> bool:
        """Bring another team onto the running server (bots leave and join; nothing restarts).
        False when that cannot be done here: a view follows the first bot, so it starts afresh."""
        assert self._bridge is not None
        if self.options.view_port is not None:
            return False
        began = time.perf_counter()
        try:
            self._bridge.call("team", {"agents": list(agents)}, START_TIMEOUT_S)
        except WorldError:
            return False
        self._agents = agents
        self.timings["login_s"] = time.perf_counter() - began
        return True

    def _containers(self) -> list[str]:
        assert self._world is not None
        return [name for name, ref in self._world.refs.items() if ref.kind == "container"]

    def _refuse(self, action: Action) -> ActionFailure | None:
        """The checks the simulator makes from the spec alone, with its codes and words."""
        assert self._world is not None
        names = {agent.name: agent for agent in self._world.agents}
        if action.agent not in names:
            return ActionFailure(Reason.UNKNOWN_AGENT, f"{action.agent} is not in this world")
        if action.name in names[action.agent].forbidden_actions:
            return ActionFailure(Reason.WORKCELL_CANNOT, f"{action.agent}'s workcell cannot {action.name}")
        if isinstance(action, GiveItem) and action.to not in names:
            return ActionFailure(Reason.UNKNOWN_AGENT, f"{action.to} is not in this world")
        if isinstance(action, GoTo) and action.target_kind == "agent" and action.target not in names:
            return ActionFailure(Reason.UNKNOWN_AGENT, f"{action.target} is not in this world")
        needed = ref_of(action)
        if needed is not None:
            name, kind = needed
            ref = self._world.refs.get(name)
            if ref is None:
                return ActionFailure(Reason.UNKNOWN_REF, f"{name} does not exist in this world")
            if kind and ref.kind != kind:
                return ActionFailure(Reason.WRONG_REF_KIND, f"{name} is a {ref.kind}, not a {kind}")
        return None

    def _timed(self, action: Action, around: bool) -> _Done:
        """One action on its agent's thread; with ``around``, every agent's inventory just before and after."""
        began = time.perf_counter() - self._zero
        failure, after, seen, delivered = self._act(action, around)
        return _Done(began, time.perf_counter() - self._zero, failure, after, seen, delivered)

    def _act(
        self, action: Action, around: bool
    ) -> tuple[ActionFailure | None, dict[str, Items], tuple[dict[str, Items], dict[str, Items]], int | None]:
        assert self._bridge is not None
        nothing: tuple[dict[str, Items], dict[str, Items]] = ({}, {})
        refused = self._refuse(action)
        if refused is not None:
            return refused, {}, nothing, 0 if isinstance(action, GiveItem) else None
        fields = asdict(action)
        for key in ("agent", "to") + (
            ("target",) if isinstance(action, GoTo) and action.target_kind == "agent" else ()
        ):
            if key in fields:
                fields[key] = self._players[fields[key]]
        request = {"action": {"name": action.name, **fields}, "around": around}
        try:
            answer = self._bridge.call("act", request, ACT_TIMEOUT_S)
        except WorldError as error:
            return ActionFailure(error.reason, error.message), {}, nothing, None
        failure = answer.get("failure")
        inventories = self._by_agent(answer.get("inventories") or {})
        seen = answer.get("around") or {}
        observed = (self._by_agent(seen.get("before") or {}), self._by_agent(seen.get("after") or {}))
        delivered = int(answer["delivered"]) if isinstance(answer.get("delivered"), int) else None
        if failure:
            wait = failure.get("retry_after_s")
            code, message = str(failure["code"]), str(failure["message"])
            return ActionFailure(code, message, None if wait is None else float(wait)), inventories, observed, delivered
        return None, inventories, observed, delivered

    def _by_agent(self, by_player: Mapping[str, Mapping[str, Any]]) -> dict[str, Items]:
        return {self._names.get(player, player): counts(items) for player, items in by_player.items()}

    def _account(self, action: Action) -> None:
        """Credits and crafting tallies: who put what where (the world does not record it)."""
        if isinstance(action, Deposit):
            held = self._credits.setdefault(action.container, {}).setdefault(action.agent, {})
            held[action.item] = held.get(action.item, 0) + action.count
        elif isinstance(action, PlaceBlock | PlaceAt):
            placed = action.item if isinstance(action, PlaceBlock) else action.block
            held = self._credits.setdefault(action.site, {}).setdefault(action.agent, {})
            held[placed] = held.get(placed, 0) + 1
        elif isinstance(action, CraftItem):
            recipe = self.game.recipe(action.item, action.material)
            made = (recipe.count if recipe is not None else 1) * action.runs
            tally = self._crafted.setdefault(action.agent, {})
            tally[action.item] = tally.get(action.item, 0) + made
