"""Hypothesis strategies: every legal object the default prior admits, and syntactic noise."""

from __future__ import annotations

from hypothesis import strategies as st

from gencoord.dsl.ast import PeerRequest, Proposal, Task, Value
from gencoord.prior import Prior

ITEMS = ["oak_planks", "cobblestone", "stick", "crafting_table", "chest", "iron_ingot", "coal", "raw_iron", "oak_log"]


def _value(prior: Prior, key: str, actor: str, others: list[str]) -> st.SearchStrategy[Value]:
    spec = prior.keys[key]
    episode = prior.default_episode
    if spec.type == "quantity":
        return st.integers(1, prior.max_quantity)
    if spec.type == "item":
        return st.sampled_from(ITEMS)
    if spec.type == "agent":
        return st.sampled_from(others)
    if spec.type == "ref":
        return st.sampled_from(sorted(n for n, r in episode.refs.items() if r.kind in spec.kinds))
    if spec.type == "binding":
        return st.sampled_from(sorted(prior.codebook))
    return st.sampled_from(prior.roles)


@st.composite
def legal_task(draw: st.DrawFn, prior: Prior, actor: str) -> Task:
    others = [a for a in prior.default_episode.agents if a != actor]
    skill = draw(st.sampled_from(sorted(prior.skills)))
    spec = prior.skills[skill]
    keys = set(spec.required)
    grouped = {k for group in spec.one_of for k in group}
    for group in spec.one_of:
        keys.add(draw(st.sampled_from(group)))
    optional = [k for k in spec.args if k not in keys and k not in grouped and k != "station"]
    keys |= set(draw(st.lists(st.sampled_from(optional), unique=True))) if optional else set()
    args: dict[str, Value] = {k: draw(_value(prior, k, actor, others)) for k in keys}
    if spec.station_block is not None and ("station" in keys or draw(st.booleans())):
        args["station"] = prior.default_episode.station_for(spec.station_block)
    if spec.consumes == "recipe":
        item = draw(st.sampled_from(["stick", "crafting_table", "chest", "oak_planks", "torch"]))
        args["item"] = item
        recipe = prior.game.recipe(item, None)
        assert recipe is not None
        if "input" in args or draw(st.booleans()):
            args["input"] = draw(st.sampled_from(sorted(recipe.ingredients)))
    return Task(skill, prior.vocab.canonical_args(skill, args))


@st.composite
def legal_proposal(draw: st.DrawFn, prior: Prior, sender: str = "agent_a") -> Proposal:
    target = next(a for a in prior.default_episode.agents if a != sender)
    self_plan = tuple(draw(st.lists(legal_task(prior, sender), min_size=0, max_size=5)))
    requests: tuple[PeerRequest, ...] = ()
    if draw(st.booleans()):
        requests = (PeerRequest(target, tuple(draw(st.lists(legal_task(prior, target), min_size=1, max_size=5)))),)
    return Proposal(self_plan, requests)


# Any primitive JSON value, including strings that need quoting and escaping.
any_value: st.SearchStrategy[Value] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(10**12), 10**12),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
    st.sampled_from(["8", "true", "null", "-", "a,b", "x)y", 'q"uote', "back\\slash", "1e5", "oak_planks"]),
)
