"""ContractCheck_K: typed validation of a parsed proposal against the prior and episode.

The parser only knows the grammar; this stage knows what the words mean: which keys a
skill takes, what type each value has, which agents and references exist in this
episode, which bindings are admissible, and which recipes the game has.
"""

from __future__ import annotations

from gencoord.dsl.ast import Path, Proposal, Task, Value
from gencoord.dsl.cells import block_of, parse_cells, parse_share, placed_counts
from gencoord.errors import ContractError, Location, ParseError, did_you_mean
from gencoord.prior.model import KeySpec
from gencoord.prior.prior import Prior
from gencoord.prior.public import PublicEpisode
from gencoord.reasons import Reason


def check_proposal(proposal: Proposal, agent: str, prior: Prior, episode: PublicEpisode) -> None:
    """Raise :class:`ContractError` unless ``agent``'s proposal is legal in ``episode``."""
    if agent not in episode.agents:
        raise ContractError(
            Reason.UNKNOWN_AGENT,
            f"the proposing agent {agent!r} is not in this episode{did_you_mean(agent, episode.agents)}",
        )
    check_path(proposal.self_plan, agent, "SELF", prior, episode)
    for request in proposal.peer_requests:
        where = Location(line=2, section="REQ")
        if request.target == agent:
            raise ContractError(Reason.REQUEST_TO_SELF, f"{agent!r} addresses a request to itself", where)
        if request.target not in episode.agents:
            raise ContractError(
                Reason.UNKNOWN_AGENT,
                f"request target {request.target!r} is not an agent of this episode"
                f"{did_you_mean(request.target, episode.agents)}",
                where,
            )
        check_path(request.plan, request.target, "REQ", prior, episode)


def check_path(path: Path, actor: str, section: str, prior: Prior, episode: PublicEpisode) -> None:
    for index, task in enumerate(path, start=1):
        check_task(task, actor, section, index, prior, episode)


def check_task(task: Task, actor: str, section: str, index: int, prior: Prior, episode: PublicEpisode) -> None:
    def where(key: str | None = None) -> Location:
        return Location(section=section, task_index=index, skill=task.skill, key=key)

    spec = prior.skills.get(task.skill)
    if spec is None:
        raise ContractError(Reason.UNKNOWN_SKILL, f"skill {task.skill!r} is not in the catalog", where())
    args = dict(task.args)
    allowed = prior.vocab.key_order[task.skill]
    for key, value in task.args:
        if key not in allowed:
            hint = did_you_mean(key, prior.spellings[task.skill])
            raise ContractError(
                Reason.UNKNOWN_KEY,
                f"unknown key {key!r}{hint or f'; {task.skill} takes ' + ', '.join(allowed)}",
                where(key),
            )
        problem = _value_problem(prior.keys[key], value, prior, episode)
        if problem is not None:
            raise ContractError(Reason.INVALID_VALUE, f"{key}={value!r}: {problem}", where(key))
    for key in spec.required:
        if key not in args:
            raise ContractError(Reason.MISSING_REQUIRED, f"missing required key {key!r}", where(key))
    for group in spec.one_of:
        present = [key for key in group if key in args]
        if len(present) != 1:
            reason = Reason.MISSING_ONE_OF if not present else Reason.CONFLICTING_KEYS
            raise ContractError(
                reason, f"exactly one of {', '.join(group)} must be given, found {len(present)}", where()
            )
    for key in ("to", "from"):
        if args.get(key) == actor:
            raise ContractError(Reason.SELF_HANDOFF, f"{key}={actor} names the task's own actor", where(key))
    station = args.get("station")
    if station is not None and spec.station_block is not None:
        block = episode.refs[str(station)].block
        if block != spec.station_block and block not in spec.also_at:
            wanted = " or a ".join([spec.station_block, *spec.also_at])
            raise ContractError(
                Reason.WRONG_STATION, f"station {station!r} is a {block}; {task.skill} needs a {wanted}", where()
            )
    if spec.consumes == "recipe":
        item, material = args.get("item"), args.get("input")
        if prior.game.recipe(str(item), None if material is None else str(material)) is None:
            source = f" from {material!r}" if material is not None else ""
            raise ContractError(Reason.NO_RECIPE, f"Minecraft has no crafting recipe for {item!r}{source}", where())
    if spec.consumes is not None and spec.consumes in prior.keys and prior.keys[spec.consumes].type == "cells":
        counts = placed_counts(args.get("cells"), args.get("share")) or {}
        placed = sum(counts.values())
        if args.get("q") != placed:
            what = "cell list" if "cells" in args else "share"
            raise ContractError(Reason.CELL_COUNT, f"q={args.get('q')!r}, but the {what} has {placed}", where("q"))
    binding = args.get("bind")
    if binding is not None and episode.template is not None and prior.codebook.get(str(binding)) != episode.template:
        options = ", ".join(prior.templates[episode.template].bindings)
        raise ContractError(
            Reason.INADMISSIBLE_BINDING,
            f"binding {binding!r} is not a branch of {episode.template} (admissible: {options})",
            where("bind"),
        )


def _value_problem(spec: KeySpec, value: Value, prior: Prior, episode: PublicEpisode) -> str | None:
    """Why ``value`` is not of the key's type, or None when it is."""
    kind = spec.type
    if kind == "quantity":
        if type(value) is not int:
            return "expected a positive integer"
        if not 1 <= value <= prior.max_quantity:
            return f"quantity must be between 1 and {prior.max_quantity}"
        return None
    if type(value) is not str:
        return f"expected {'an' if kind[0] in 'aei' else 'a'} {kind} name"
    if kind == "item":
        return (
            None
            if prior.game.is_item(value)
            else f"unknown Minecraft item{did_you_mean(value, prior.game.stack_sizes)}"
        )
    if kind == "agent":
        return None if value in episode.agents else f"unknown agent{did_you_mean(value, episode.agents)}"
    if kind == "ref":
        ref_kind = episode.ref_kind(value)
        if ref_kind is None:
            return f"unknown reference{did_you_mean(value, episode.refs)}"
        return None if ref_kind in spec.kinds else f"is a {ref_kind}; expected a {' or '.join(spec.kinds)}"
    if kind == "cells":
        try:
            placements = parse_cells(value)
        except ParseError as error:
            return error.message
        unplaceable = next((block for block, _ in placements if not placeable(block_of(block), prior)), None)
        return None if unplaceable is None else f"{block_of(unplaceable)!r} is not a block an item places"
    if kind == "share":
        try:
            ranges = parse_share(value)
        except ParseError as error:
            return error.message
        unplaceable = next((block for block, _, _ in ranges if not placeable(block_of(block), prior)), None)
        return None if unplaceable is None else f"{block_of(unplaceable)!r} is not a block an item places"
    if kind == "binding":
        return None if value in prior.codebook else f"not in the binding codebook{did_you_mean(value, prior.codebook)}"
    return None if value in prior.roles else f"unknown destination role (known: {', '.join(prior.roles)})"


def placeable(block: str, prior: Prior) -> bool:
    """Whether an item of that name places a block of that name (stone does; water and wall_torch do not)."""
    return prior.game.is_item(block) and block in prior.game.blocks
