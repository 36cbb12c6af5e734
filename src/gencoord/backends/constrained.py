"""Grammar-constrained decoding for local models (xgrammar): one grammar per kind of message.

The grammar is built from the prior, the agent's own context and what arrived, so a
constrained model can only write what its reader parses:

* a Short DSL record (a pair episode's, or a team lead's n-party SELF+REQ): skills of the
  catalog, each with its own keys, and values grounded in the episode — its agent ids, the
  episode's refs, the template's binding codes, the items the task or its recipes name, and
  numbers; a team lead's crafts and table placings are whole steps of the plan its prompt
  lists, its gatherings name what the plan needs from the world, and each agent's hand-overs
  go to another agent;
* a team peer's supply answer: ``HAVE`` with asked items its bag holds, each at most once, at
  most as many as it holds, then skills it cannot use;
* a team peer's decision: ``ACCEPT``, ``COUNTER`` naming an item with a count no larger than its
  bag's, or ``REJECT`` naming a skill it cannot use;
* a gate helper's answer: the gate's ``ACCEPT``, ``COUNTER`` and ``REJECT`` with their reasons,
  counts no larger than what it can spare.

A peer's own bag and skills are in its context, so its grammar keeps it from claiming what it
does not hold (as a lead's hand-over of a held item names at most what the bag holds): which
items it reports, how many, and whether it accepts stay the model's. Every output then parses;
whether it is the right message is still up to the model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from functools import cache, lru_cache
from typing import Any

import xgrammar as xgr
from tokenizers import Tokenizer
from transformers import PreTrainedTokenizerFast

from gencoord.dsl.serialize import format_task
from gencoord.errors import GencoordError
from gencoord.models.codec import TextCodec
from gencoord.models.load import LoadedModel
from gencoord.planning.drafts import DELIVER_SKILL, PLACE_SKILL, making
from gencoord.planning.feasibility import CRAFT_SKILL, GATHER_SKILL, TABLE, closure_items, planning_game
from gencoord.prior.ledger import consumption
from gencoord.prior.prior import Prior
from gencoord.protocol.generation import GenerationRequest, Stage
from gencoord.tasks.context import LocalContext
from gencoord.tasks.team import ANY
from gencoord.tasks.world import source_ref


def _alternatives(values: set[str]) -> str:
    return " | ".join(f'"{value}"' for value in sorted(values)) or '"-"'


def _items(prior: Prior) -> set[str]:
    paths = [p for spec in prior.templates.values() for b in spec.bindings.values() for p in (b.sender, b.receiver)]
    found = {m for path in paths for m in re.findall(r"(?:item|input)=([a-z_]+)", path)}
    return found | {ref.block for ref in prior.default_episode.refs.values() if ref.block}


def _subset(name: str, values: Sequence[str], each: Callable[[str], str], separator: str = '" "') -> list[str]:
    """Rules for a non-empty ordered subset of ``values`` joined by ``separator`` (a literal, or "" for none):
    none twice, in order.

    ``name_i`` is the subset that starts at or after value ``i``; ``each`` writes one value's part.
    """
    last = len(values) - 1
    rules = []
    for index, value in enumerate(values):
        part = each(value)
        if index == last:
            rules.append(f"{name}_{index} ::= {part}")
        else:
            rules.append(
                f"{name}_{index} ::= {part} ({separator} {name}_{index + 1})? | {name}_{index + 1}".replace("( ", "(")
            )
    return rules


def _quoted(value: str) -> str:
    return f'"{value}"'


POSITIVE = "[1-9] [0-9]? [0-9]? [0-9]? [0-9]? [0-9]?"
"""A count past :data:`HELD_COUNTS` in a peer's answer: positive, no leading zero, six digits at most."""


def have_grammar(asked: Sequence[str], bag: Mapping[str, int], blocked: Sequence[str]) -> str:
    """EBNF for a team peer's ``HAVE`` answer to a question that asked for ``asked``, from its ``bag``: an asked
    item it holds, at most as many as it holds; then skills among those it cannot use (``blocked``)."""
    items = sorted(item for item in set(asked) if bag.get(item, 0) > 0)
    cannot = sorted(set(blocked))
    lines = ['root ::= "HAVE " ' + ('(held | "-")' if items else '"-"') + (' (" CANNOT " skill_0)?' if cannot else "")]
    if items:
        lines.append("held ::= item_0")
        lines += _subset("item", items, lambda item: f'"{item}=" {_up_to(bag[item])}')
    lines += _subset("skill", cannot, _quoted)
    return "\n".join(lines) + _numbers(bag)


def _numbers(bag: Mapping[str, int]) -> str:
    """The ``number`` rule a count past :data:`HELD_COUNTS` refers to (see :func:`_up_to`), where a bag needs it."""
    return f"\nnumber ::= {POSITIVE}\n" if any(count > HELD_COUNTS for count in bag.values()) else "\n"


def _counter(items: set[str], bag: Mapping[str, int]) -> str:
    """The counter alternative of a decision: ``COUNTER reason=SHORT item=… have=…`` naming one of ``items`` and
    at most as many as ``bag`` holds of it (0 when none), or nothing when no item is named."""
    each = [f'"{item} have=" ' + (f'("0" | {_up_to(bag[item])})' if bag.get(item, 0) > 0 else '"0"') for item in items]
    if not each:
        return ""
    return ' | "COUNTER reason=SHORT item=" (' + " | ".join(f"({part})" for part in sorted(each)) + ")"


def response_grammar(items: set[str], bag: Mapping[str, int], blocked: Sequence[str]) -> str:
    """EBNF for a team peer's decision on a projection that names ``items`` (with its own bag's): a counter
    names at most what its bag holds, a rejection a skill it cannot use."""
    reject = ' | "REJECT reason=BLOCKED_SKILL skill=" (' + _alternatives(set(blocked)) + ")" if blocked else ""
    return 'root ::= "ACCEPT reason=CAN_DO"' + _counter(items, bag) + reject + _numbers(bag)


def help_grammar(items: set[str], spare: Mapping[str, int]) -> str:
    """EBNF for a gate helper's answer to an escalation that names ``items`` (with what it can ``spare``)."""
    cannot = ' | "REJECT reason=CANNOT_SUPPLY item=" (' + _alternatives(items) + ")" if items else ""
    return (
        'root ::= "ACCEPT reason=ALREADY_PLANNED" | "ACCEPT reason=CAN_SUPPLY" | "REJECT reason=NOT_READY"'
        + _counter(items, spare)
        + cannot
        + _numbers(spare)
    )


def grammar_for(prior: Prior, context: LocalContext, request: GenerationRequest) -> str:
    """The grammar of the message ``request`` asks of this agent."""
    delivered = request.delivered_request or ""
    named = set(re.findall(r"(?:item|input)=([a-z0-9_]+)", delivered)) | set(context.inventory)
    if request.stage is Stage.TEAM_HAVE:
        return have_grammar(delivered.split(" ")[1:], context.inventory, context.blocked)
    if request.stage is Stage.TEAM_RESPONSE:
        return response_grammar(named | _path_uses(prior, context.agent, delivered), context.inventory, context.blocked)
    if request.stage is Stage.GATE_HELP:
        return help_grammar(named, context.inventory)
    return dsl_grammar(prior, context)


def _path_uses(prior: Prior, agent: str, delivered: str) -> set[str]:
    """What the path a projection asks of ``agent`` consumes: a recipe's other ingredients go unnamed in its text,
    and a peer short of one must be able to name it. None when the projection does not parse."""
    try:
        proposal = prior.parse(delivered)
    except GencoordError:
        return set()
    mine = next((request.plan for request in proposal.peer_requests if request.target == agent), ())
    return {item for task in mine for item in consumption(task, prior)}


def dsl_grammar(prior: Prior, context: LocalContext) -> str:
    """EBNF for one agent's Short DSL record, grounded in its context."""
    agents = {context.agent, context.peer}
    items = _items(prior)
    fixed: dict[str, dict[str, list[str]]] = {}
    if context.team is not None:  # a team lead names any teammate, and any item the task, its bags or recipes hold
        team = context.team
        agents = {agent.name for agent in team.agents}
        items |= {team.goal.item, *team.world.resources}
        items |= {item for agent in team.agents for item in agent.inventory}
        items |= set(closure_items(planning_game(team, prior), team.goal.item, not team.world.crafting_table))
        fixed = plan_steps(prior, context)
    codes = set(context.branches) or set(prior.codebook)
    kinds = {
        "agent": _alternatives(agents),
        "ref": _alternatives(set(context.refs)),
        "code": _alternatives(codes),
        "item": _alternatives(items),
        "number": "[1-9] [0-9]? [0-9]? [0-9]?",  # bounded: the prior caps quantities (2304)
    }
    key_kind = {"bind": "code", "q": "number", "item": "item", "input": "item", "to": "agent", "from": "agent"}
    if context.team is None:
        root = 'root ::= "SELF " ("-" | path) "\\nREQ " ("-" | agent " " path)'
        return "\n".join([root, *_path_rules(prior, "", key_kind), *_kinds(kinds)]) + "\n"
    # a team lead may address every peer, once each, in the order the codec writes them (the n-party extension);
    # each agent's path has its own rules: a hand-over in it names another agent (the contract's SELF_HANDOFF)
    peers = sorted(agents - {context.agent})
    owners = {agent: f"a{number}" for number, agent in enumerate(sorted(agents))}
    lines = [
        f'root ::= "SELF " ("-" | path{owners[context.agent]}) ' + ('("\\nREQ -" | req_0)' if peers else '"\\nREQ -"'),
        *_subset("req", peers, lambda peer: f'"\\nREQ {peer} " path{owners[peer]}', separator=""),
    ]
    for agent, owner in owners.items():
        others = agents - {agent}
        if others:
            kinds[f"agent{owner}"] = _alternatives(others)
        handing = key_kind | {"to": f"agent{owner}", "from": f"agent{owner}"}
        lines += _path_rules(prior, owner, handing, fixed.get(agent), shared=owner == "a0", hands_over=bool(others))
    return "\n".join(lines + _kinds(kinds)) + "\n"


HELD_COUNTS = 64
"""A hand-over of a held item names at most what the bag holds, written out up to this many (beyond: any count)."""


def plan_steps(prior: Prior, context: LocalContext) -> dict[str, dict[str, list[str]]]:
    """Per agent of a team lead's view, its crafts, table placings, gatherings and hand-overs as EBNF alternatives.

    A craft is one of the prompt's ``step`` lines, written whole: its recipe, quantity and
    selecting input are the game's (the contract's ``NO_RECIPE`` cannot occur) and copied, not
    composed. The table is put down by an agent the view says holds one (by anyone, when the
    plan crafts it). A gathering names an item the plan needs from the world, with its own
    source, in any quantity (the dig may be shared out). An agent hands over, to another agent,
    what its bag holds (at most as many as it holds, as far as the lead knows) or what the plan
    makes or gathers, and the goal to its holder. Who runs each, and how many change hands, stays
    the model's.
    """
    team = context.team
    assert team is not None
    made = making(team, prior)
    steps = made.steps if made is not None else ()
    crafts = [_quoted(format_task(step)) for step in steps if step.skill == CRAFT_SKILL]
    place = [_quoted(format_task(step)) for step in steps if step.skill == PLACE_SKILL]
    gathered = sorted(set(made.needs) & set(team.world.resources)) if made is not None else []
    obtain = [f'"{GATHER_SKILL}(q=" number ",item={item},loc={source_ref(item)})"' for item in gathered]
    results = sorted({str(step.get("item")) for step in steps if step.skill == CRAFT_SKILL} | set(gathered))
    names = {agent.name for agent in team.agents}
    tables = {agent.name for agent in team.agents if agent.inventory.get(TABLE, 0)}
    fixed = {}
    for agent in team.agents:
        owner = f"agent{_owner(sorted(names), agent.name)}"
        handed = []
        if len(names) > 1:
            handed += [
                f'"{DELIVER_SKILL}(q=" {_up_to(count)} ",item={item},to=" {owner} ")"'
                for item, count in sorted(agent.inventory.items())
            ]
            handed += [f'"{DELIVER_SKILL}(q=" number ",item={item},to=" {owner} ")"' for item in results]
        if team.goal.holder not in names and team.goal.holder != ANY:
            handed.append(f'"{DELIVER_SKILL}(q=" number ",dst={team.goal.holder},item={team.goal.item})"')
        fixed[agent.name] = {
            CRAFT_SKILL: crafts,
            PLACE_SKILL: place if not tables or agent.name in tables else [],
            GATHER_SKILL: obtain,
            DELIVER_SKILL: handed,
        }
    return fixed


def _owner(agents: list[str], agent: str) -> str:
    """The suffix of ``agent``'s rules (``a0``, ``a1`` … in sorted order)."""
    return f"a{agents.index(agent)}"


def _up_to(count: int) -> str:
    if count > HELD_COUNTS:
        return "number"
    return "(" + " | ".join(f'"{n}"' for n in range(1, count + 1)) + ")"


def _kinds(kinds: dict[str, str]) -> list[str]:
    return [f"{name} ::= {rule}" for name, rule in kinds.items()]


def _path_rules(
    prior: Prior,
    owner: str,
    key_kind: dict[str, str],
    fixed: dict[str, list[str]] | None = None,
    shared: bool = True,
    hands_over: bool = True,
) -> list[str]:
    """``path<owner>``: up to the codec's path length of tasks, each a catalog skill with its keys in order.

    Each key at most once, in the skill's canonical order (the codec rejects duplicates); a
    skill in ``fixed`` is written only as one of its alternatives there (none: not at all).
    A skill whose keys do not depend on the owner keeps one shared rule set, written where
    ``shared`` says; a skill that names another agent is left out where there is none (``hands_over``).
    """
    fixed = fixed or {}
    tasks = [' " > " '.join([f"task{owner}"] * n) for n in range(1, prior.vocab.max_path_tasks + 1)]
    lines = [f"path{owner} ::= " + " | ".join(f"({t})" for t in tasks)]
    names = []
    for index, (skill, spec) in enumerate(sorted(prior.skills.items())):
        keys = list(spec.args)
        if skill in fixed:
            if fixed[skill]:
                names.append(f"t{index}{owner}")
                lines.append(f"t{index}{owner} ::= " + " | ".join(fixed[skill]))
            continue
        mine = owner if {"to", "from"} & set(keys) else ""
        if mine and not hands_over:
            continue
        names.append(f"t{index}{mine}")
        if not mine and not shared:
            continue
        rule_name = f"k{index}{mine}"
        for position, key in enumerate(keys):
            pair, rest = f'"{key}=" {key_kind.get(key, "ref")}', f"{rule_name}_{position + 1}"
            rule = pair if position == len(keys) - 1 else f'{pair} ("," {rest})? | {rest}'
            lines.append(f"{rule_name}_{position} ::= {rule}")
        lines.append(f't{index}{mine} ::= "{skill}(" {rule_name}_0 ")"')
    lines.append(f"task{owner} ::= " + " | ".join(names))
    return lines


@cache
def _tokenizer_info(tokenizer_json: str) -> Any:
    tokenizer = Tokenizer.from_str(tokenizer_json)
    fast = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tokenizer, eos_token="[EOS]", pad_token="[PAD]", unk_token="[UNK]"
    )
    return xgr.TokenizerInfo.from_huggingface(fast, vocab_size=tokenizer.get_vocab_size())


@cache
def _hf_compiler(tokenizer: Any, vocab_size: int) -> Any:
    """One grammar compiler per Hugging Face tokenizer (reading a 49k vocabulary takes a while); it caches
    the grammars it compiles. ``vocab_size``: the model's logits, which may be padded past the tokenizer's."""
    return xgr.GrammarCompiler(xgr.TokenizerInfo.from_huggingface(tokenizer, vocab_size=vocab_size))


@cache
def _compiled(tokenizer_json: str, grammar: str) -> Any:
    return xgr.GrammarCompiler(_tokenizer_info(tokenizer_json)).compile_grammar(grammar)


def logits_processor(
    loaded: LoadedModel, prior: Prior, context: LocalContext, request: GenerationRequest, prompt: str
) -> Any:
    """A fresh xgrammar logits processor for one generation from ``prompt`` (it keeps matcher state).

    A tiny codec reads a prompt's names outside its vocabulary as name slots; for this prompt
    each bound slot is the text of its name, so the grammar lets the model write a name by
    copying its slot, as it learned to, rather than a character at a time.
    """
    grammar = grammar_for(prior, context, request)
    codec = loaded.codec
    if not isinstance(codec, TextCodec):
        compiler = _hf_compiler(codec.tokenizer, loaded.model.config.vocab_size)  # type: ignore[attr-defined]
        return xgr.contrib.hf.LogitsProcessor(compiler.compile_grammar(grammar))
    tokenizer_json = codec.tokenizer.to_str()
    bound = codec.for_prompt(prompt)
    if not bound.names:
        return xgr.contrib.hf.LogitsProcessor(_compiled(tokenizer_json, grammar))
    names = tuple(sorted(bound.names.items(), key=lambda pair: pair[1]))
    return xgr.contrib.hf.LogitsProcessor(_compiled_with_names(tokenizer_json, names, grammar, codec.eos))


@lru_cache(maxsize=64)  # one per prompt's names: a run's many tasks must not keep every compiled grammar
def _compiled_with_names(tokenizer_json: str, names: tuple[tuple[str, int], ...], grammar: str, eos: int) -> Any:
    """The grammar compiled for a vocabulary whose bound slots read as their names."""
    tokenizer = Tokenizer.from_str(tokenizer_json)
    size = tokenizer.get_vocab_size()
    vocabulary = [tokenizer.id_to_token(index) or "" for index in range(size)]
    for name, slot in names:
        vocabulary[slot] = name
    info = xgr.TokenizerInfo(vocabulary, xgr.VocabType.RAW, vocab_size=size, stop_token_ids=[eos])
    return xgr.GrammarCompiler(info).compile_grammar(grammar)
