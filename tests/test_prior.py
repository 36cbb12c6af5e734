"""The executable prior: loading, validation, extension, and the contract check."""

from __future__ import annotations

from pathlib import Path

import pytest

from gencoord.dsl import Proposal
from gencoord.errors import ContractError, PriorError
from gencoord.prior import Prior, check_proposal, compose, load_prior
from tests.conftest import ACTIVE_SENDER


def test_default_prior_has_the_paper_catalog(prior: Prior) -> None:
    assert sorted(prior.skills) == sorted(
        [
            "control.wait",
            "resource.obtain",
            "resource.deliver",
            "craft.item",
            "transform.supply_input",
            "transform.supply_fuel",
            "transform.collect_output",
            "build.component",
        ]
    )
    assert len(prior.codebook) == 28 and prior.codebook["WORK_BRANCH"] == "ACTIVE_ORDER_BRANCH"
    assert prior.game.game_version == "1.21.4" and prior.game.is_item("oak_planks")
    families = {spec.family for spec in prior.templates.values()}
    paper = {"P1_DESTINATION", "P2_RECIPE", "P3_ALLOCATION", "P4_BRANCH", "GOAL_CAPABILITY"}
    assert families == paper | {"S9_POST_HANDOFF_TRANSFORM", "S9_PRE_HANDOFF_TRANSFORM"}


def test_recipes_come_from_game_data(prior: Prior) -> None:
    table = prior.game.recipe("crafting_table", "oak_planks")
    stick = prior.game.recipe("stick", "oak_planks")
    chest = prior.game.recipe("chest", "oak_planks")
    assert table is not None and table.needs(1) == {"oak_planks": 4} and table.grid == 2
    assert stick is not None and stick.needs(4) == {"oak_planks": 2} and stick.needs(5) == {"oak_planks": 4}
    assert chest is not None and chest.grid == 3
    assert prior.game.recipe("stone_axe", "oak_planks") is None


def _reject(prior: Prior, text: str, agent: str = "agent_b", template: str | None = None) -> ContractError:
    with pytest.raises(ContractError) as caught:
        check_proposal(prior.parse(text), agent, prior, prior.episode(template))
    return caught.value


def test_issue_example_message(prior: Prior) -> None:
    error = _reject(
        prior,
        "SELF -\nREQ agent_a resource.obtain(q=1,item=stick) > resource.deliver(q=8,item=oak_planks,dest=order_chest)",
    )
    assert str(error) == "CONTRACT_REJECT at REQ task 2 (resource.deliver): unknown key 'dest'; did you mean 'dst'?"


@pytest.mark.parametrize(
    ("text", "reason", "key"),
    [
        ("SELF resource.obtain(q=0,item=oak_planks)\nREQ -", "INVALID_VALUE", "q"),
        ("SELF resource.obtain(q=-3,item=oak_planks)\nREQ -", "INVALID_VALUE", "q"),
        ("SELF resource.obtain(q=2.0,item=oak_planks)\nREQ -", "INVALID_VALUE", "q"),
        ('SELF resource.obtain(q="2",item=oak_planks)\nREQ -', "INVALID_VALUE", "q"),
        ("SELF resource.obtain(q=true,item=oak_planks)\nREQ -", "INVALID_VALUE", "q"),
        ("SELF resource.obtain(q=99999,item=oak_planks)\nREQ -", "INVALID_VALUE", "q"),
        ("SELF resource.obtain(q=2,item=oak_plank)\nREQ -", "INVALID_VALUE", "item"),
        ("SELF resource.obtain(q=2)\nREQ -", "MISSING_REQUIRED", "q"),
        ("SELF resource.deliver(q=2,item=stick,to=agent_c)\nREQ -", "INVALID_VALUE", "to"),
        ("SELF resource.deliver(q=2,item=stick,to=agent_b)\nREQ -", "SELF_HANDOFF", "to"),
        ("SELF resource.deliver(q=2,item=stick,dst=crafting_station)\nREQ -", "INVALID_VALUE", "dst"),
        ("SELF resource.deliver(q=2,item=stick,dst=nowhere)\nREQ -", "INVALID_VALUE", "dst"),
        ("SELF craft.item(bind=NOPE,q=1,item=stick)\nREQ -", "INVALID_VALUE", "bind"),
        ("SELF resource.deliver(q=2,item=stick,dst=order_chest,dst_role=moon)\nREQ -", "INVALID_VALUE", "dst_role"),
    ],
)
def test_typed_argument_rejections(prior: Prior, text: str, reason: str, key: str) -> None:
    error = _reject(prior, text)
    assert error.reason == reason
    if reason != "MISSING_REQUIRED":
        assert error.location.key == key


def test_one_of_and_recipe_and_station_rules(prior: Prior) -> None:
    assert _reject(prior, "SELF resource.deliver(q=2,item=stick)\nREQ -").reason == "MISSING_ONE_OF"
    both = "SELF resource.deliver(q=2,item=stick,to=agent_a,dst=order_chest)\nREQ -"
    assert _reject(prior, both).reason == "CONFLICTING_KEYS"
    no_recipe = _reject(prior, "SELF craft.item(q=1,input=oak_planks,item=stone_axe)\nREQ -")
    assert no_recipe.reason == "NO_RECIPE" and "no crafting recipe for 'stone_axe'" in no_recipe.message
    wrong = _reject(prior, "SELF transform.supply_fuel(q=1,item=coal,station=crafting_station)\nREQ -")
    assert wrong.reason == "WRONG_STATION"


def test_request_target_rules(prior: Prior) -> None:
    assert _reject(prior, "SELF -\nREQ agent_b control.wait(q=1)").reason == "REQUEST_TO_SELF"
    unknown = _reject(prior, "SELF -\nREQ agent_x control.wait(q=1)")
    assert unknown.reason == "UNKNOWN_AGENT" and "agent_" in unknown.message
    assert _reject(prior, "SELF -\nREQ agent_a control.wait(q=1)", agent="mallory").reason == "UNKNOWN_AGENT"


def test_bindings_are_admissible_only_within_the_episode_template(prior: Prior) -> None:
    check_proposal(prior.parse(ACTIVE_SENDER), "agent_b", prior, prior.episode("ACTIVE_ORDER_BRANCH"))
    error = _reject(prior, ACTIVE_SENDER, template="CHEST_A_OR_B")
    assert error.reason == "INADMISSIBLE_BINDING" and "CHEST_A, CHEST_B" in error.message


def test_composer_spells_the_paper_record(prior: Prior) -> None:
    proposal = compose(prior, "ACTIVE_ORDER_BRANCH", "WORK_BRANCH", sender="agent_b", receiver="agent_a")
    assert prior.serialize(proposal) == ACTIVE_SENDER
    assert isinstance(proposal, Proposal)


def test_extending_the_prior_needs_no_code(tmp_path: Path) -> None:
    extra = tmp_path / "mine.toml"
    extra.write_text(
        'extends = "default"\n'
        '[grounding]\nagents = ["agent_a", "agent_b", "agent_c"]\n'
        '[grounding.refs.barn]\nkind = "container"\nblock = "barrel"\nposition = [1, 64, 1]\n'
        '[skills."resource.inspect"]\ndoc = "Look at a location."\nargs = ["loc"]\nrequired = ["loc"]\n'
    )
    mine = load_prior(extra)
    proposal = mine.parse("SELF resource.inspect(loc=barn)\nREQ agent_c resource.deliver(q=1,item=stick,dst=barn)")
    check_proposal(proposal, "agent_a", mine, mine.default_episode)


@pytest.mark.parametrize(
    ("content", "reason", "fragment"),
    [
        ("this is = not toml [", "INVALID_TOML", ""),
        ('extends = "default"\n[limits]\nmax_quantity = -1\n', "INVALID_SCHEMA", "limits.max_quantity"),
        ('extends = "default"\n[skills."x.y"]\ndoc = "d"\nargs = ["nope"]\n', "INVALID_SCHEMA", "unknown key 'nope'"),
        ('extends = "other"\n', "INVALID_SCHEMA", "extends"),
        (
            'extends = "default"\n[templates.ACTIVE_ORDER_BRANCH.bindings.WORK_BRANCH]\n'
            'sender = "resource.obtain(q={q},item=oak_plank)"\nreceiver = "control.wait(q=1)"\n',
            "INVALID_TEMPLATE",
            "WORK_BRANCH",
        ),
        (
            'extends = "default"\n[grounding.refs.x]\nkind = "site"\nblock = "unobtainium"\nposition = [0, 0, 0]\n',
            "INVALID_SCHEMA",
            "unobtainium",
        ),
    ],
)
def test_broken_priors_fail_at_load_with_the_field(tmp_path: Path, content: str, reason: str, fragment: str) -> None:
    path = tmp_path / "broken.toml"
    path.write_text(content)
    with pytest.raises(PriorError) as caught:
        load_prior(path)
    assert caught.value.reason == reason and fragment in str(caught.value)


def test_missing_prior_file(tmp_path: Path) -> None:
    with pytest.raises(PriorError) as caught:
        load_prior(tmp_path / "absent.toml")
    assert caught.value.reason == "UNREADABLE"
