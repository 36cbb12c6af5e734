"""Task-structure views (paper S9): what each projection shows, what a symbolic reader recovers
from it, and the visibility experiment end to end."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gencoord.backends.families import parse_backend
from gencoord.backends.registry import backend_fits, backend_set
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.eval.config import find_experiment, load_experiment, parse_experiment
from gencoord.eval.experiment import plan_run
from gencoord.eval.kinds.episodes.config import EpisodeExperimentConfig
from gencoord.eval.report import write_report
from gencoord.eval.runner import RECORDS, create_run, run_experiment
from gencoord.prior import Prior
from gencoord.prior.model import BindingSpec
from gencoord.prior.views import STEP_SEPARATOR, PriorView, projected_paths, stages_of, view_lines
from gencoord.protocol.generation import GenerationRequest, Stage
from gencoord.tasks import SuiteDocument
from gencoord.tasks.cluster import Split, draw_pool, paper_pool
from gencoord.tasks.instances import build_episode
from gencoord.tasks.suites import default_suites, load_suites

SHOWN = (PriorView.FULL, PriorView.SKELETON, PriorView.NODE)


def _forward_bindings(prior: Prior, suites: SuiteDocument) -> list[tuple[str, str]]:
    return [(t, b) for t in sorted(suites.forward.templates) for b in sorted(prior.templates[t].bindings)]


def _steps(paths: BindingSpec) -> Counter[str]:
    return Counter([*paths.sender.split(STEP_SEPARATOR), *paths.receiver.split(STEP_SEPARATOR)])


def _recovered(paths: BindingSpec, view: PriorView) -> bool:
    return projected_paths(paths, view) == (paths.sender, paths.receiver)


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_every_view_is_a_rearrangement_of_the_bindings_nodes(data: st.DataObject, prior: Prior) -> None:
    template, binding = data.draw(st.sampled_from(_forward_bindings(prior, default_suites())))
    paths = prior.templates[template].bindings[binding]
    assert _recovered(paths, PriorView.FULL)
    for view in (PriorView.SKELETON, PriorView.NODE):
        sender, receiver = projected_paths(paths, view)
        assert _steps(BindingSpec(sender=sender, receiver=receiver)) == _steps(paths)


@settings(max_examples=60, deadline=None)
@given(data=st.data(), seed=st.integers(0, 10_000))
def test_skeleton_and_node_readings_do_not_depend_on_the_hidden_order(
    data: st.DataObject, seed: int, prior: Prior
) -> None:
    """The views are answer-independent: reordering what a view hides changes neither it nor its reading."""
    template, binding = data.draw(st.sampled_from(_forward_bindings(prior, default_suites())))
    paths = prior.templates[template].bindings[binding]
    stages, rng = stages_of(paths), random.Random(seed)

    def shuffled(steps: tuple[str, ...]) -> list[str]:
        return rng.sample(list(steps), len(steps))

    within = BindingSpec(
        sender=STEP_SEPARATOR.join([*shuffled(stages.before), *stages.handoff, *shuffled(stages.after)]),
        receiver=STEP_SEPARATOR.join(shuffled(stages.receiver)),
    )
    assert projected_paths(within, PriorView.SKELETON) == projected_paths(paths, PriorView.SKELETON)
    nodes = shuffled(stages.nodes)
    cut = rng.randint(1, len(nodes) - 1)
    anyhow = BindingSpec(sender=STEP_SEPARATOR.join(nodes[:cut]), receiver=STEP_SEPARATOR.join(nodes[cut:]))
    assert projected_paths(anyhow, PriorView.NODE) == projected_paths(paths, PriorView.NODE)


def test_each_view_shows_less_of_the_same_structure(prior: Prior, suites: SuiteDocument) -> None:
    for template in suites.forward.templates:
        full, skeleton, node = (view_lines(prior, template, view) for view in SHOWN)
        for binding, paths in sorted(prior.templates[template].bindings.items()):
            line = next(text for text in full if text.startswith(f"{binding}:"))
            assert paths.sender in line and paths.receiver in line
            for shown in (skeleton, node):
                text = next(text for text in shown if text.startswith(f"{binding}:"))
                assert STEP_SEPARATOR not in text and all(step in text for step in _steps(paths))
            assert "SELF" not in next(text for text in node if text.startswith(f"{binding}:"))
    assert view_lines(prior, None, PriorView.NODE)[0].startswith("skills: ")
    assert view_lines(prior, "CHEST_A_OR_B", PriorView.NONE) == []


def test_the_unseen_motifs_need_the_order_a_skeleton_hides(prior: Prior, suites: SuiteDocument) -> None:
    """The motif templates are what their names say, read from their paths, not assumed."""
    motifs = suites.forward.visibility_motifs
    for template in motifs["unseen_post_handoff_transform"]:
        for paths in prior.templates[template].bindings.values():
            assert len(stages_of(paths).receiver) > 1 and "craft.item" in stages_of(paths).receiver[0]
    for template in motifs["unseen_pre_handoff_transform"]:
        for paths in prior.templates[template].bindings.values():
            assert any("craft.item" in step for step in stages_of(paths).before)
    training = {c.template for c in paper_pool("training")}
    assert not training & set(suites.forward.structure_templates)
    assert set(motifs["familiar_post_handoff_branch"]) <= training


def test_a_view_suffix_names_what_a_backend_set_is_shown() -> None:
    viewed = parse_backend("model:ckpt/a@skeleton")
    assert (viewed.family.name, viewed.target, viewed.view) == ("model", "ckpt/a", PriorView.SKELETON)
    both = parse_backend("factorized-rule+realizer@node")
    assert (both.base, both.receiver, both.view) == ("factorized-rule", "realizer", PriorView.NODE)
    with pytest.raises(ConfigError, match="unknown backend 'rule@sideways'"):
        parse_backend("rule@sideways")
    with pytest.raises(ConfigError) as caught:
        backend_set("rule@sideways")
    assert caught.value.reason == "UNKNOWN_BACKEND" and "@<full|skeleton|node>" in caught.value.message
    assert not backend_fits("factorized-rule@full", False, SurfaceName.FREEFORM)
    assert backend_fits("factorized-rule@full", False, SurfaceName.DSL)


def test_a_suite_cannot_train_on_a_visibility_template(tmp_path: Path, prior: Prior) -> None:
    text = (Path(__file__).parents[1] / "src/gencoord/tasks/data/suites.toml").read_text()
    bad = tmp_path / "suites.toml"
    bad.write_text(text.replace('held_out_templates = ["DEPOT_OR_ORDER",', 'held_out_templates = ["CRAFT_THEN_BUILD",'))
    with pytest.raises(ConfigError) as caught:
        load_suites(bad, prior)
    assert caught.value.reason == "INVALID_SUITE" and "CRAFT_THEN_BUILD" in caught.value.message
    bad.write_text(
        text.replace('structure_templates = ["CRAFT_THEN_BUILD", ', 'structure_templates = ["CHEST_A_OR_B", ')
    )
    with pytest.raises(ConfigError) as orphan:
        load_suites(bad, prior)
    assert "CHEST_A_OR_B" in orphan.value.message


def _run(config: EpisodeExperimentConfig, tmp_path: Path) -> tuple[Path, list[dict[str, object]]]:
    run_dir = create_run(config, tmp_path)
    assert run_experiment(config, run_dir, workers=1).lost == 0
    return run_dir, [json.loads(line) for line in (run_dir / RECORDS).read_text().splitlines()]


def test_the_factorized_rule_succeeds_exactly_where_its_view_gives_the_paths_back(
    tmp_path: Path, prior: Prior, suites: SuiteDocument
) -> None:
    config = parse_experiment(
        'name = "views"\nkind = "visibility"\npool = "visibility"\nclusters = 24\nconditions = ["request"]\n'
        'backends = ["factorized-rule@full", "factorized-rule@skeleton", "factorized-rule@node"]\nroles = [0, 1]\n'
    )
    run_dir, records = _run(config, tmp_path)
    assert len(records) == 24 * 2 * 3 and {r["split"] for r in records} == {Split.VISIBILITY.value}
    assert {suites.forward.motif_of(str(r["template"])) for r in records} == set(suites.forward.visibility_motifs)
    for record in records:
        view = parse_backend(str(record["backend_set"])).view
        assert view is not None
        paths = prior.templates[str(record["template"])].bindings[str(record["binding"])]
        outcome = record["outcome"]
        assert isinstance(outcome, dict) and outcome["G"] == _recovered(paths, view), record["job"]
    report = write_report(run_dir)
    table = next(t for t in report.all_tables if t.key == "visibility")
    full = next(row for row in table.rows if row[0] == "factorized rule · full view")
    assert full[1:3] == ["factorized_rule", "full"] and all(cell.startswith("100.0% (100.0%)") for cell in full[3:])
    assert (run_dir / "figures" / "visibility.png").stat().st_size > 0


def test_a_shown_view_reaches_the_model_input(prior: Prior, suites: SuiteDocument) -> None:
    spec = build_episode(paper_pool("visibility")[0], 0, 0, prior, suites)
    team = backend_set("factorized-rule@skeleton")(spec, False, prior, suites)
    ask = GenerationRequest(spec.sender, Stage.SENDER_INITIAL, spec.receiver)
    context = spec.contexts[spec.sender]
    assert context.prior_view is None
    shown = team[spec.sender].generate(context, ask).text
    plain = backend_set("factorized-rule")(spec, False, prior, suites)[spec.sender].generate(context, ask).text
    paths = prior.templates[spec.cluster.template].bindings[str(spec.binding)]
    assert (shown == plain) == _recovered(paths, PriorView.SKELETON)


@pytest.mark.slow
def test_the_shipped_visibility_experiment_runs_reduced_with_its_models(tmp_path: Path) -> None:
    config = load_experiment(find_experiment("visibility"))
    assert isinstance(config, EpisodeExperimentConfig)
    reduced = config.model_copy(update={"clusters": 2, "seeds": [config.seeds[-1]]})  # one pair of clusters
    run_dir, records = _run(reduced, tmp_path)
    assert len(records) == len(plan_run(reduced).jobs) == 2 * 2 * (3 + 3 + 3)
    report = write_report(run_dir)
    table = next(t for t in report.all_tables if t.key == "visibility")
    methods = {(row[1], row[2]) for row in table.rows}
    assert methods == {(m, v.value) for m in ("factorized_rule", "dsl", "freeform") for v in SHOWN}


def test_a_suite_without_motifs_has_no_visibility_pool(suites: SuiteDocument) -> None:
    bare = suites.model_copy(update={"forward": suites.forward.model_copy(update={"visibility_motifs": {}})})
    with pytest.raises(ConfigError) as caught:
        draw_pool(Split.VISIBILITY, 6, suites=bare)
    assert caught.value.reason == "NO_VISIBILITY_MOTIFS"
