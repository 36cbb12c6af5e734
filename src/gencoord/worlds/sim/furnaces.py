"""The simulator's furnaces and smokers: loading, fuel burning at vanilla speed, collecting the output."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from gencoord.reasons import Reason
from gencoord.worlds.actions import FurnaceCollect, FurnaceLoad
from gencoord.worlds.sim.physics import TICKS_PER_S
from gencoord.worlds.sim.state import RefusedError, SimState, add, take


@dataclass
class Furnace:
    recipes: dict[str, str]  # input → output: a smoker takes food only
    ticks_per_item: int
    input_item: str | None = None
    input_count: int = 0
    fuel_ticks: int = 0
    output_item: str | None = None
    output_count: int = 0
    busy_since: float | None = None


class FurnaceActions(SimState):
    """Handlers of FurnaceLoad and FurnaceCollect, over each station's furnace."""

    furnaces: dict[str, Furnace]

    def _new_furnace(self, smoker: bool, fuel: Mapping[str, int]) -> Furnace:
        """A furnace, or a smoker (food only, twice as fast, fuel burning twice as fast), with its fuel slot filled."""
        physics = self.physics
        per_item = physics.smoke_ticks_per_item if smoker else physics.smelt_ticks_per_item
        furnace = Furnace(dict(physics.smoking if smoker else physics.smelting), per_item)
        # a smoker gets half the items out of each fuel: its per-item time is half, so halve the burn
        scale = per_item / physics.smelt_ticks_per_item
        furnace.fuel_ticks = sum(int(physics.fuel_ticks[item] * scale) * count for item, count in fuel.items())
        return furnace

    def _furnace(self, station: str, agent: str) -> Furnace:
        where = self._ref(station, "station")
        furnace = self.furnaces.get(station)
        if furnace is None:
            raise RefusedError(Reason.WRONG_STATION, f"{station} is not a furnace or a smoker")
        self._within_reach(agent, where, station)
        return furnace

    def _advance(self, furnace: Furnace, now: float) -> None:
        """Smelt what the elapsed time and the fuel allow, then idle or keep going."""
        per_item = furnace.ticks_per_item
        if furnace.busy_since is not None:
            elapsed = int((now - furnace.busy_since) * TICKS_PER_S + 1e-6)  # ticks, clear of float rounding
            done = min(furnace.input_count, elapsed // per_item, furnace.fuel_ticks // per_item)
            if done and furnace.input_item is not None:
                furnace.output_item = furnace.recipes[furnace.input_item]
                furnace.output_count += done
                furnace.input_count -= done
                furnace.fuel_ticks -= done * per_item
                furnace.busy_since += self._ticks(done * per_item)
        can_work = furnace.input_count > 0 and furnace.fuel_ticks >= per_item
        if not can_work:
            furnace.busy_since = None
        elif furnace.busy_since is None:
            furnace.busy_since = now

    def _furnace_load(self, action: FurnaceLoad, began: float) -> float:
        furnace = self._furnace(action.station, action.agent)
        self._advance(furnace, began)
        held = self.inventories[action.agent]
        if action.slot == "input":
            if action.item not in furnace.recipes:
                raise RefusedError(Reason.NOT_SMELTABLE, f"{action.item} does not cook or smelt at {action.station}")
            if furnace.input_item not in (None, action.item) and furnace.input_count:
                raise RefusedError(Reason.SLOT_OCCUPIED, f"{action.station}'s input holds {furnace.input_item}")
            take(held, action.item, action.count, action.agent)
            furnace.input_item = action.item
            furnace.input_count += action.count
        else:
            burn = self.physics.fuel_ticks.get(action.item)
            if burn is None:
                raise RefusedError(Reason.NOT_FUEL, f"{action.item} is not a furnace fuel")
            take(held, action.item, action.count, action.agent)
            furnace.fuel_ticks += int(burn * furnace.ticks_per_item / self.physics.smelt_ticks_per_item) * action.count
        ended = began + self._transfer_ticks(action.item, action.count)
        self._advance(furnace, ended)
        return ended

    def _furnace_collect(self, action: FurnaceCollect, began: float) -> float:
        furnace = self._furnace(action.station, action.agent)
        self._advance(furnace, began)
        ready = began
        short = action.count - furnace.output_count
        if short > 0:
            per_item = furnace.ticks_per_item
            possible = min(furnace.input_count, furnace.fuel_ticks // per_item)
            if possible < short or furnace.busy_since is None:
                raise RefusedError(
                    Reason.FURNACE_SHORT,
                    f"{action.station} can make {furnace.output_count + possible} {action.item}, "
                    f"{action.count} requested",
                )
            ready = furnace.busy_since + self._ticks(short * per_item)
            self._advance(furnace, ready)
        if furnace.output_item != action.item:
            raise RefusedError(Reason.WRONG_OUTPUT, f"{action.station} makes {furnace.output_item}, not {action.item}")
        held = self.inventories[action.agent]
        self._make_room(held, action.item, action.count, action.agent, self.physics.inventory_slots)
        furnace.output_count -= action.count
        add(held, action.item, action.count)
        return max(began, ready) + self._transfer_ticks(action.item, action.count)
