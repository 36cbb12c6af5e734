"""Task kinds are the fifth registry: a plugin adds a kind of goal in two files, a task model and its kind.

The toy kind here is a delivery: some items must end in a chest. Its task model says how it is
read and checked, its kind how it is judged, run and recorded; gencoord's runner for crafting
does the work, since a delivery is a crafting goal held by a chest.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

import pytest

from gencoord import TaskBase, TaskKind, read_task_file, register_task_format, register_task_kind, run_task, task_record
from gencoord.backends.registry import team_players
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.prior.load import team_prior
from gencoord.prior.prior import Prior
from gencoord.run.kinds import TASK_KINDS, Judgement, task_kind
from gencoord.run.team import run_team_task
from gencoord.run.team_choices import TeamMode
from gencoord.tasks.task_format import TaskFileFormat
from gencoord.tasks.team import TeamAgent, TeamTask, check_agents, check_item


class DeliveryTask(TaskBase):
    """``count`` of ``item`` in the order chest by the end."""

    task_kind: ClassVar[str] = "delivery"
    item: str
    count: int

    def checked(self, prior: Prior, origin: str = "") -> DeliveryTask:
        check_item(self.item, prior, f"{origin}: task {self.id}: item")
        return self.model_copy(update={"agents": check_agents(self.agents, prior, f"task {self.id}")})

    def as_crafting(self) -> TeamTask:
        goal = {"item": self.item, "count": self.count, "holder": "order_chest"}
        return TeamTask.model_validate({"id": self.id, "agents": [a.model_dump() for a in self.agents], "goal": goal})


def _run(task: Any, prior: Any, mode: Any, surface: Any, team: Any, executor: Any) -> Any:
    done = run_team_task(
        task.as_crafting(),
        prior,
        mode=mode,
        surface=surface,
        lead_backend=team.lead,
        peer_backend=team.peers,
        executor=executor,
    )
    return replace(done, task=task)


DELIVERY = TaskKind(
    "delivery",
    lambda task, prior: Judgement(True, None, ""),
    _run,
    lambda task: {"chest": "order_chest", "item": task.item, "count": task.count},
    lambda task: f"{task.count} {task.item} in the order chest",
    lambda task: {"items": str(task.count)},
    commitment="crafting",  # its lead writes a crafting commitment: whoever leads crafting may lead it
)


class Deliveries(TaskFileFormat):
    name = "deliveries"
    description = "a 'deliveries' list"

    def detects(self, document: Any) -> bool:
        return isinstance(document, dict) and "deliveries" in document

    def entries(self, document: Any, origin: str) -> list[tuple[str, Any]]:
        return [(raw["id"], raw) for raw in document["deliveries"]]

    def task(self, task_id: str, raw: Any, origin: str) -> Any:
        return DeliveryTask.model_validate(raw)


@pytest.fixture(scope="module", autouse=True)
def _registered() -> None:
    if "delivery" not in TASK_KINDS.names():
        register_task_kind(DELIVERY)
        register_task_format(Deliveries())


def test_a_plugin_kind_of_goal_is_read_checked_run_and_recorded(tmp_path: Path) -> None:
    path = tmp_path / "deliveries.json"
    bags = [{"name": "ann", "inventory": {"oak_log": 1}}, {"name": "ben"}]
    path.write_text(
        json.dumps(
            {
                "deliveries": [
                    {"id": "planks", "item": "oak_planks", "count": 4, "agents": bags},
                    {"id": "typo", "item": "oak_plank", "count": 4, "agents": bags},
                ]
            }
        )
    )
    loaded = read_task_file(path)
    assert [task.id for task in loaded.tasks] == ["planks"]
    assert loaded.refused[0].code == "UNKNOWN_ITEM" and "oak_planks" in loaded.refused[0].message
    (task,) = loaded.tasks
    assert task_kind(task) is DELIVERY
    result = run_task(task)
    assert result.success, (result.code, result.message)
    record = task_record(result, str(path))
    assert record["task"] == "planks" and record["goal"] == {"chest": "order_chest", "item": "oak_planks", "count": 4}


def test_the_shipped_kinds_are_registered_by_name_and_a_kind_is_registered_once() -> None:
    assert {"crafting", "cooking", "construction", "delivery"} <= set(TASK_KINDS.names())
    with pytest.raises(ConfigError) as twice:
        register_task_kind(replace(DELIVERY, describe=lambda task: "again"))
    assert twice.value.reason == "DUPLICATE_PLUGIN"
    with pytest.raises(ConfigError) as unknown:
        TASK_KINDS.get("deliveri")
    assert unknown.value.reason == "UNKNOWN_NAME" and "delivery" in unknown.value.message


TINY = Path(__file__).parents[1] / "src" / "gencoord" / "experiments" / "checkpoints" / "tiny-team"
KITCHEN = Path(__file__).parent / "fixtures" / "cooking" / "kitchen.json"


def test_a_lead_leads_only_the_kinds_whose_commitments_its_family_writes() -> None:
    """A trained model writes crafting commitments: it leads a delivery (whose commitment is crafting's), while a
    kind with its own commitment, and a cooking task, are refused by name before anything runs; the planner
    writes every kind's."""
    prior = team_prior()
    model = team_players(f"lead=constrained:{TINY},peers=rule", prior)
    assert model.commitments == frozenset({"crafting"}) and team_players("planner", prior).commitments is None
    bags = [TeamAgent(name="ann", inventory={"oak_log": 1}), TeamAgent(name="ben")]
    task = DeliveryTask(id="planks", item="oak_planks", count=4, agents=bags)
    led = DELIVERY.play(task, prior, TeamMode.PRIVATE, SurfaceName.DSL, model, None)
    assert led.code != "UNSUPPORTED_BACKEND" and any(g.stage == "team_lead" for g in led.generations)
    own = replace(DELIVERY, commitment="")  # a kind that declares a commitment of its own
    refused = own.play(task, prior, TeamMode.PRIVATE, SurfaceName.DSL, model, None)
    assert refused.code == "UNSUPPORTED_BACKEND" and not refused.wire.messages and not refused.generations
    assert "cannot lead delivery tasks: its family writes only crafting commitments" in str(refused.message)
    assert "a family that writes delivery's" in str(refused.message)
    assert own.play(task, prior, TeamMode.PRIVATE, SurfaceName.DSL, team_players("planner", prior), None).success
    cooking = read_task_file(KITCHEN).tasks[0]
    kitchen = run_task(cooking, team=f"lead=constrained:{TINY},peers=rule")
    assert kitchen.code == "UNSUPPORTED_BACKEND" and not kitchen.wire.messages
    assert kitchen.lead == task_kind(cooking).lead(cooking) and "cannot lead cooking tasks" in str(kitchen.message)
