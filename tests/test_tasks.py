"""Task suites: what is private, what is paired, what is held out, what the goal demands."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from gencoord.backends import BindingComposer, RequestRealizer, RuleRequester
from gencoord.errors import ConfigError
from gencoord.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Stage
from gencoord.run.episode import run_episode
from gencoord.runtime.verify import unmet
from gencoord.tasks import (
    PAPER_POOLS,
    Split,
    SuiteDocument,
    build_episode,
    draw_pool,
    load_suites,
    paper_pool,
)
from gencoord.tasks.cluster import forward_space
from gencoord.worlds.sim import SimExecutor

FORWARD_POOLS = [name for name, (split, _) in PAPER_POOLS.items() if split is not Split.GOAL_CAPABILITY]


@pytest.mark.parametrize("name", sorted(PAPER_POOLS))
def test_paper_pools_have_the_papers_sizes_in_matched_pairs(name: str) -> None:
    pool = paper_pool(name)
    assert len(pool) == PAPER_POOLS[name][1]
    pairs: dict[str, set[str]] = {}
    for cluster in pool:
        pairs.setdefault(cluster.pair, set()).add(cluster.binding or cluster.mode or "")
    assert all(len(members) == 2 for members in pairs.values())
    assert len({cluster.id for cluster in pool}) == len(pool)


@pytest.mark.parametrize("name", FORWARD_POOLS)
def test_receiver_context_is_byte_identical_across_the_two_bindings(
    name: str, prior: Prior, suites: SuiteDocument
) -> None:
    pool = paper_pool(name)
    by_pair: dict[str, list] = {}  # type: ignore[type-arg]
    for cluster in pool:
        by_pair.setdefault(cluster.pair, []).append(cluster)
    for first, second in by_pair.values():
        assert first.binding != second.binding
        for role in (0, 1):
            one, two = (build_episode(c, role, 0, prior, suites) for c in (first, second))
            assert one.contexts[one.receiver].render() == two.contexts[two.receiver].render()
            assert one.contexts[one.sender].render() != two.contexts[two.sender].render()
            assert first.binding in one.contexts[one.sender].render()
            assert first.binding not in one.contexts[one.receiver].private.values()


def test_goal_capability_requester_view_and_initial_proposal_are_identical_within_a_pair(
    prior: Prior, suites: SuiteDocument
) -> None:
    pool = paper_pool("goal_capability")
    assert len({c.pair for c in pool}) == 20
    requester = RuleRequester(prior, suites)
    by_pair: dict[str, list] = {}  # type: ignore[type-arg]
    for cluster in pool:
        by_pair.setdefault(cluster.pair, []).append(cluster)
    for first, second in by_pair.values():
        assert {first.mode, second.mode} == {"RAW_PROCESSOR", "FINISHED_RECEIVER"}
        for role in (0, 1):
            one, two = (build_episode(c, role, 0, prior, suites) for c in (first, second))
            view_one, view_two = one.contexts[one.sender], two.contexts[two.sender]
            assert view_one.render() == view_two.render()
            opening = GenerationRequest(one.sender, Stage.REQUESTER_INITIAL, one.receiver)
            assert requester.generate(view_one, opening) == requester.generate(view_two, opening)
            assert one.contexts[one.receiver].render() != two.contexts[two.receiver].render()
            assert one.binding != two.binding  # the mode decides which branch the task needs


def test_held_out_templates_and_cross_products_never_enter_training(suites: SuiteDocument) -> None:
    training = draw_pool(Split.TRAINING, 480)
    held = set(suites.forward.held_out_templates)
    assert held and not held & {c.template for c in training}
    cross = {(c.template, c.variant.param_choice) for c in draw_pool(Split.CROSS_PRODUCT, 60)}
    seen = {(c.template, c.variant.param_choice) for c in training}
    assert cross and not cross & seen
    # every factor value of a cross-product is seen in training, only the combination is new
    seen_templates = {t for t, _ in seen}
    seen_choices = {choice for _, choice in seen}
    assert all(t in seen_templates and choice in seen_choices for t, choice in cross)
    assert {c.template for c in draw_pool(Split.HELD_OUT_TEMPLATE, 80)} == held
    assert set(forward_space(Split.IN_DISTRIBUTION, suites)) == seen


def test_the_timing_pool_shares_no_world_with_a_quality_pool() -> None:
    worlds = {name: {cluster.variant.key for cluster in paper_pool(name)} for name in PAPER_POOLS}
    for quality in ("representation", "request_intervention", "matched_backend"):
        assert not worlds["timing"] & worlds[quality], quality
    assert worlds["matched_backend"] <= worlds["request_intervention"]  # the in-distribution quality pools nest
    for training in ("training", "representation_training"):
        for evaluation in ("representation", "request_intervention", "timing", "held_out_templates"):
            assert not worlds[training] & worlds[evaluation], (training, evaluation)


def test_the_representation_pool_spans_the_papers_eight_templates_evenly(suites: SuiteDocument) -> None:
    eight = set(suites.forward.representation_templates)
    assert len(eight) == 8
    for name, per_template in (("representation", 16), ("representation_training", 60)):
        counts = Counter(cluster.template for cluster in paper_pool(name))
        assert set(counts) == eight and set(counts.values()) == {per_template}, name
    # its models train on those eight only: a template outside them stays held out from them too
    trained = {c.template for c in paper_pool("representation_training")}
    assert (
        set(suites.forward.held_out_templates) - eight
        and not (set(suites.forward.held_out_templates) - eight) & trained
    )
    cross = {(c.template, c.variant.param_choice) for c in draw_pool(Split.CROSS_PRODUCT, 60)}
    assert not cross & {(c.template, c.variant.param_choice) for c in paper_pool("representation_training")}


@pytest.mark.parametrize("size", [2, 16, 40, 96, 200])
def test_any_run_of_representation_pairs_spreads_evenly_over_the_templates(size: int) -> None:
    counts = Counter(cluster.template for cluster in draw_pool(Split.REPRESENTATION, size, seed=5))
    assert (
        max(counts.values()) - min(counts.values(), default=0) <= 2 if len(counts) == 8 else set(counts.values()) == {2}
    )


def test_pools_are_deterministic_in_the_seed() -> None:
    assert draw_pool(Split.IN_DISTRIBUTION, 40, seed=3) == draw_pool(Split.IN_DISTRIBUTION, 40, seed=3)
    assert draw_pool(Split.IN_DISTRIBUTION, 40, seed=3) != draw_pool(Split.IN_DISTRIBUTION, 40, seed=4)
    variants = {c.variant.key: repr(c.variant) for c in draw_pool(Split.IN_DISTRIBUTION, 160)}
    assert len(variants) == 80 and len(set(variants.values())) == 80  # one world per pair, no two alike


def test_pool_sizes_must_hold_whole_pairs() -> None:
    with pytest.raises(ConfigError) as caught:
        draw_pool(Split.IN_DISTRIBUTION, 7)
    assert caught.value.reason == "POOL_SIZE"
    with pytest.raises(ConfigError):
        draw_pool(Split.GOAL_CAPABILITY, 6)
    with pytest.raises(ConfigError) as unknown:
        paper_pool("nope")
    assert unknown.value.reason == "UNKNOWN_POOL"


def test_no_world_starts_with_its_goal_met_or_the_receiver_holding_the_handoff(
    prior: Prior, suites: SuiteDocument
) -> None:
    for cluster in paper_pool("request_intervention") + paper_pool("goal_capability"):
        for role in (0, 1):
            spec = build_episode(cluster, role, 0, prior, suites)
            start = SimExecutor(prior.game).reset(spec.world)
            assert unmet(spec.goal, start)
            receiver = spec.world.agent(spec.receiver).inventory
            assert not {"oak_planks", "cobblestone", "stick", "crafting_table"} & set(receiver)


def test_the_two_bindings_goal_reaching_paths_are_disjoint(prior: Prior, suites: SuiteDocument) -> None:
    """Executing the other binding's canonical commitment fulfils it but never reaches this goal."""
    for template, spec_t in suites.forward.templates.items():
        first, second = sorted(spec_t.goals)
        for active, other in ((first, second), (second, first)):
            cluster = next(
                c
                for c in draw_pool(
                    Split.HELD_OUT_TEMPLATE
                    if template in suites.forward.held_out_templates
                    else Split.VISIBILITY
                    if template in suites.forward.structure_templates
                    else Split.IN_DISTRIBUTION,
                    80,
                )
                if c.template == template and c.binding == active
            )
            for role in (0, 1):
                spec = build_episode(cluster, role, 0, prior, suites)
                backends = {
                    spec.sender: BindingComposer(prior, lambda _context, b=other: b),  # type: ignore[misc]
                    spec.receiver: RequestRealizer(prior),
                }
                wrong = run_episode(spec, backends=backends, prior=prior, suites=suites).outcome
                assert (wrong.formed, wrong.fulfilled, wrong.success) == (True, True, False), (template, active)
                assert run_episode(spec, prior=prior, suites=suites).outcome.success


def test_a_broken_suite_file_is_a_config_error(tmp_path: Path, prior: Prior) -> None:
    text = (Path(__file__).parents[1] / "src/gencoord/tasks/data/suites.toml").read_text()
    bad = tmp_path / "suites.toml"
    bad.write_text(text.replace('holder = "site_a"', 'holder = "site_z"', 1))
    with pytest.raises(ConfigError) as caught:
        load_suites(bad, prior)
    assert caught.value.reason == "INVALID_SUITE" and "site_z" in caught.value.message
    bad.write_text(text.replace("[forward.templates.CHEST_A_OR_B]", "[forward.templates.CHEST_A_OR_C]"))
    with pytest.raises(ConfigError) as unknown:
        load_suites(bad, prior)
    assert "CHEST_A_OR_C" in unknown.value.message
    bad.write_text(text.replace('name = "birch_grove"', 'name = "quarry"'))
    with pytest.raises(ConfigError) as taken:
        load_suites(bad, prior)
    assert "already taken" in taken.value.message
    bad.write_text("[forward\n")
    with pytest.raises(ConfigError) as toml:
        load_suites(bad, prior)
    assert toml.value.reason == "INVALID_TOML"
