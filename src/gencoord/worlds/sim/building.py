"""The simulator's building actions: placing and breaking blueprint cells, pillaring up, stepping aside, digging down.

A builder places or breaks only within reach of a block it stands on, walks as
``worlds/standing.py`` says a player walks, and never places into a teammate's body.
"""

from __future__ import annotations

from gencoord.dsl.cells import Cell
from gencoord.reasons import Reason
from gencoord.worlds.actions import BreakAt, DigDown, Pillar, PlaceAt, StepAside
from gencoord.worlds.placing import offset, supported, two_high
from gencoord.worlds.sim.state import RefusedError, SimState, add, take
from gencoord.worlds.spec import BuildSite
from gencoord.worlds.standing import JUMP_S, REACH, body_cells, choose_stand, feet_cell, feet_position, reaches


class BuildingActions(SimState):
    """Handlers of PlaceAt, BreakAt, Pillar, StepAside and DigDown."""

    def _build_site(self, name: str) -> BuildSite:
        assert self._world is not None
        site = self._world.builds.get(name)
        if site is None:
            self._ref(name, "site")  # unknown, or not a site
            raise RefusedError(Reason.NOT_A_BUILD_SITE, f"{name} is a site without exact cells")
        return site

    def _place_at(self, action: PlaceAt, began: float) -> float:
        site = self._build_site(action.site)
        standing = self.blocks[action.site]
        cells = [action.cell, offset(action.cell, (0, 1, 0))] if two_high(action.block) else [action.cell]
        where = ",".join(map(str, action.cell))
        if not all(site.contains(cell) for cell in cells):
            raise RefusedError(Reason.OUTSIDE_SITE, f"cell {where} is outside {action.site}")
        taken = next((cell for cell in cells if cell in standing), None)
        if taken is not None:
            raise RefusedError(Reason.CELL_TAKEN, f"{standing[taken]} already stands at {action.site} cell {where}")
        if not supported(action.cell, action.block, standing):
            raise RefusedError(
                Reason.NO_SUPPORT, f"{action.block} at {action.site} cell {where} has no face to go against"
            )
        self._refuse_occupied(action.agent, site, cells, f"{action.site} cell {where}")
        if self.inventories[action.agent].get(action.block, 0) < 1:  # refused before any walking
            take(self.inventories[action.agent], action.block, 1, action.agent)
        walked = self._stand_within_reach(action.agent, action.site, action.cell, action.block, action.stand, True)
        take(self.inventories[action.agent], action.block, 1, action.agent)
        self.terrains[action.site].place(cells, action.block)
        add(self.sites[action.site], action.block, 1)
        self._credit(action.site, action.agent, action.block, 1)
        return began + walked + self._ticks(self.physics.place_ticks)

    def _refuse_occupied(self, agent: str, site: BuildSite, cells: list[Cell], where: str) -> None:
        """Vanilla places no block where a body is: a teammate standing in the cells must have stepped aside."""
        for other in self.positions:
            feet = self._feet(other, site)
            if other != agent and (feet in cells or offset(feet, (0, 1, 0)) in cells):
                raise RefusedError(Reason.CELL_OCCUPIED, f"{other} stands in {where}")

    def _feet(self, agent: str, site: BuildSite) -> Cell:
        return feet_cell(self.positions[agent], site)

    def _stand_within_reach(
        self, agent: str, site_name: str, cell: Cell, block: str, planned: Cell | None, placing: bool
    ) -> float:
        """Seconds ``agent`` walks to a stand within reach of ``cell`` (the planned one if it can get there)."""
        site = self._build_site(site_name)
        terrain = self.terrains[site_name]
        start = self._feet(agent, site)
        filled = body_cells(cell, block) if placing else frozenset()
        stand = None
        if planned is not None and reaches(cell, filled)(planned):
            stand = terrain.walk_to(start, lambda feet: feet == planned)
        stand = stand or choose_stand(terrain, start, cell, block, placing)
        if stand is None:
            where = ",".join(map(str, cell))
            raise RefusedError(
                Reason.NO_STAND,
                f"{agent} can walk to nowhere within reach of {site_name} cell {where} (reach {REACH}; "
                "it walks, steps up one block and drops at most four)",
            )
        self.positions[agent] = feet_position(stand.feet, site)
        return stand.moves / self.physics.walk_blocks_per_s + stand.climbs * JUMP_S

    def _break_at(self, action: BreakAt, began: float) -> float:
        """Break scaffolding: the block must stand there; its drop falls where it stood (nobody's bag)."""
        standing = self.blocks[action.site]
        self._build_site(action.site)
        where = ",".join(map(str, action.cell))
        found = standing.get(action.cell)
        if found != action.block:
            raise RefusedError(
                Reason.NOTHING_TO_BREAK, f"{action.site} cell {where} holds {found or 'air'}, not {action.block}"
            )
        ticks = self._break_ticks(action.block)
        walked = self._stand_within_reach(action.agent, action.site, action.cell, action.block, action.stand, False)
        self.terrains[action.site].remove(action.cell)
        take(self.sites[action.site], action.block, 1, action.site)
        return began + walked + self._ticks(ticks)

    def _break_ticks(self, block: str) -> int:
        ticks = self.physics.break_ticks.get(block)
        if ticks is None:
            raise RefusedError(Reason.NOT_SCAFFOLDING, f"{block} is not a block scaffolding is made of")
        return ticks

    def _pillar(self, action: Pillar, began: float) -> float:
        """Walk into ``cell``, jump, and place the block under the feet: the agent stands one higher."""
        site = self._build_site(action.site)
        terrain = self.terrains[action.site]
        where = ",".join(map(str, action.cell))
        head_room = offset(action.cell, (0, 2, 0))
        if not terrain.standable(action.cell) or not terrain.passable(head_room):
            raise RefusedError(Reason.NO_STAND, f"{action.agent} cannot stand and jump at {action.site} cell {where}")
        stand = terrain.walk_to(self._feet(action.agent, site), lambda feet: feet == action.cell)
        if stand is None:
            raise RefusedError(Reason.NO_STAND, f"{action.agent} can walk to no way up at {action.site} cell {where}")
        self._refuse_occupied(action.agent, site, [action.cell, head_room], f"{action.site} cell {where}")
        take(self.inventories[action.agent], action.block, 1, action.agent)
        terrain.place([action.cell], action.block)
        add(self.sites[action.site], action.block, 1)
        self.positions[action.agent] = feet_position(offset(action.cell, (0, 1, 0)), site)
        walked = stand.moves / self.physics.walk_blocks_per_s + stand.climbs * JUMP_S
        return began + walked + JUMP_S + self._ticks(self.physics.place_ticks)

    def _step_aside(self, action: StepAside, began: float) -> float:
        """Walk to the cell the plan names, out of a teammate's way."""
        site = self._build_site(action.site)
        terrain = self.terrains[action.site]
        stand = terrain.walk_to(self._feet(action.agent, site), lambda feet: feet == action.feet)
        if stand is None:
            where = ",".join(map(str, action.feet))
            raise RefusedError(Reason.NO_STAND, f"{action.agent} can walk to no way out at {action.site} cell {where}")
        self.positions[action.agent] = feet_position(stand.feet, site)
        return began + stand.moves / self.physics.walk_blocks_per_s + stand.climbs * JUMP_S

    def _dig_down(self, action: DigDown, began: float) -> float:
        """Break the block under the feet; the agent drops onto what is below, and the drop with it into its bag."""
        site = self._build_site(action.site)
        where = ",".join(map(str, action.cell))
        if self._feet(action.agent, site) != offset(action.cell, (0, 1, 0)):
            raise RefusedError(Reason.NO_STAND, f"{action.agent} is not standing on {action.site} cell {where}")
        if self.blocks[action.site].get(action.cell) != action.block:
            raise RefusedError(Reason.NOTHING_TO_BREAK, f"{action.site} cell {where} holds no {action.block}")
        ticks = self._break_ticks(action.block)
        terrain = self.terrains[action.site]
        terrain.remove(action.cell)
        take(self.sites[action.site], action.block, 1, action.site)
        landed = action.cell
        while not terrain.standable(landed) and landed[1] > 0:
            landed = offset(landed, (0, -1, 0))
        self.positions[action.agent] = feet_position(landed, site)
        add(self.inventories[action.agent], action.block, 1)
        return began + self._ticks(ticks + self.physics.pickup_delay_ticks // 4)
