"""Unseen binding cross-products (v1 S15 / v2 Table S25): held-out combinations of binding factors.

A forward binding fixes three factors of the receiver's part: the material it is handed,
the transform it applies (a crafted item, or none) and the terminal its part ends at (a
container, a build site, or its own inventory). The task library's bindings are the
observed complete cases. A cross-product combines factor values that each occur in some
binding into a case no binding has, and keeps it when it is legal in the shared prior
(the recipe exists; what a site receives is a block). Each evaluated cluster instantiates
one such case in a fresh in-distribution world, with its own quantities.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gencoord.prior.compose import compose
from gencoord.prior.prior import Prior
from gencoord.runtime.verify import Requirement
from gencoord.tasks.cluster import Split, draw_pool
from gencoord.tasks.instances import EpisodeSpec, build_episode
from gencoord.tasks.suites import SuiteDocument

HOLD = "hold"  # the terminal of a part that ends with the item in the receiver's own inventory
FIRST_WORLD = 30_000  # the worlds are drawn far past every in-distribution pool's
CROSS_PRODUCT_CLUSTERS = 60


@dataclass(frozen=True, slots=True)
class Factors:
    material: str
    transform: str | None
    terminal: str

    @property
    def name(self) -> str:
        return f"{self.material}>{self.transform or 'none'}>{self.terminal}"


def _factors_of(prior: Prior, template: str, binding: str) -> Factors | None:
    params = prior.templates[template].params
    proposal = compose(prior, template, binding, sender="s", receiver="r", params=params)
    request = proposal.request
    given = [task for task in proposal.self_plan if task.get("to") == "r"]
    if request is None or not given:
        return None
    crafted = [str(task.get("item")) for task in request.plan if task.skill == "craft.item"]
    last = request.plan[-1]
    terminal = last.get("dst") or last.get("site") or (HOLD if last.skill == "craft.item" else None)
    if terminal is None:
        return None
    return Factors(str(given[0].get("item")), crafted[0] if crafted else None, str(terminal))


def observed_cases(prior: Prior, suites: SuiteDocument) -> dict[Factors, tuple[str, str]]:
    """The complete cases of the forward task library: factors → (template, binding)."""
    cases: dict[Factors, tuple[str, str]] = {}
    for template in suites.forward.library:
        for binding in sorted(prior.templates[template].bindings):
            factors = _factors_of(prior, template, binding)
            if factors is not None:
                cases.setdefault(factors, (template, binding))
    return cases


def _legal(factors: Factors, prior: Prior) -> bool:
    item = factors.transform or factors.material
    if factors.transform is not None and prior.game.recipe(factors.transform, factors.material) is None:
        return False
    if factors.transform is None and factors.terminal == HOLD:
        return False  # nothing to do: the receiver already holds what it is handed
    site = prior.default_episode.ref_kind(factors.terminal) == "site"
    return not site or item in prior.game.blocks


def unseen_cross_products(prior: Prior, suites: SuiteDocument) -> tuple[Factors, ...]:
    """Legal factor combinations no binding of the library spells out, in a fixed order."""
    seen = observed_cases(prior, suites)
    materials = sorted({f.material for f in seen})
    transforms = sorted({f.transform for f in seen}, key=lambda t: t or "")
    terminals = sorted({f.terminal for f in seen})
    combos = (
        Factors(material, transform, terminal)
        for material in materials
        for transform in transforms
        for terminal in terminals
    )
    return tuple(f for f in combos if f not in seen and _legal(f, prior))


@dataclass(frozen=True)
class CompositionCase:
    """One cluster: a cross-product, the count of its final item, and the episode it runs in."""

    index: int
    factors: Factors
    count: int  # how many of the final item the receiver's part must leave at the terminal
    handed: int  # how much material the sender hands over for that
    spec: EpisodeSpec


def composition_case(
    index: int,
    role: int,
    seed: int,
    prior: Prior,
    suites: SuiteDocument,
    factors: Factors | None = None,
    worlds: Split = Split.IN_DISTRIBUTION,
) -> CompositionCase:
    """Cluster ``index``: cross-product ``index`` (cycling), in a world and quantity of its own.

    ``factors`` instantiates another combination in that cluster's world (an observed case,
    say); ``worlds`` draws the world from another split's namespace (training rows come from
    the training split's worlds, so no evaluated world is trained on). Both agents' task line
    holds the case's quantities: how much the sender hands over and how many the goal needs.
    """
    combos = unseen_cross_products(prior, suites)
    factors = factors or combos[index % len(combos)]
    world_cluster = draw_pool(worlds, 2, seed, suites, FIRST_WORLD + index)[0]
    base = build_episode(world_cluster, role, seed, prior, suites)
    rounds = 1 + (index // len(combos)) % 2  # the second pass over the combinations doubles the quantity
    if factors.transform is None:
        count = handed = 4 * rounds
    else:
        recipe = prior.game.recipe(factors.transform, factors.material)
        assert recipe is not None  # legal combinations have their recipe
        count = recipe.count * rounds
        handed = recipe.needs(count)[factors.material]
    item = factors.transform or factors.material
    holder = base.receiver if factors.terminal == HOLD else factors.terminal
    kind = {"container": "container_contains", "site": "site_has"}.get(
        prior.default_episode.ref_kind(factors.terminal) or "", "inventory_contains"
    )
    goal = (Requirement(kind, holder, item, count),)  # type: ignore[arg-type]
    private = {
        "material": factors.material,
        "transform": factors.transform or "none",
        "terminal": factors.terminal,
        "terminal_kind": prior.default_episode.ref_kind(factors.terminal)
        or HOLD,  # public in the prior; a model reads it
    }
    params = {"count": count, "handed": handed}
    contexts = {
        agent: replace(
            context, template=None, branches=(), params=params, private=private if agent == base.sender else {}
        )
        for agent, context in base.contexts.items()
    }
    spec = replace(
        base,
        binding=None,
        params=params,
        public=replace(base.public, template=None),
        goal=goal,
        contexts=contexts,
    )
    return CompositionCase(index, factors, count, handed, spec)
