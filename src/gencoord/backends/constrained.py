"""Grammar-constrained decoding of the Short DSL for local models (xgrammar).

The grammar is built from the prior and the agent's own context, so a constrained model
can only write skills of the catalog, each with its own keys, and values grounded in the
episode: its own agent ids, the episode's refs, the template's binding codes, the items
the task structure names, and numbers. Every output then parses; whether it is the right
commitment is still up to the model.
"""

from __future__ import annotations

import re
from functools import cache
from typing import Any

import xgrammar as xgr
from tokenizers import Tokenizer
from transformers import PreTrainedTokenizerFast

from gencoord.models.codec import TextCodec
from gencoord.models.load import LoadedModel
from gencoord.prior.prior import Prior
from gencoord.tasks.context import LocalContext


def _alternatives(values: set[str]) -> str:
    return " | ".join(f'"{value}"' for value in sorted(values)) or '"-"'


def _items(prior: Prior) -> set[str]:
    paths = [p for spec in prior.templates.values() for b in spec.bindings.values() for p in (b.sender, b.receiver)]
    found = {m for path in paths for m in re.findall(r"(?:item|input)=([a-z_]+)", path)}
    return found | {ref.block for ref in prior.default_episode.refs.values() if ref.block}


def dsl_grammar(prior: Prior, context: LocalContext) -> str:
    """EBNF for one agent's Short DSL record, grounded in its context."""
    agents = {context.agent, context.peer}
    items = _items(prior)
    if context.team is not None:  # a team lead names any teammate and any item the task or its bags hold
        agents = {agent.name for agent in context.team.agents}
        items |= {context.team.goal.item, *context.team.world.resources}
        items |= {item for agent in context.team.agents for item in agent.inventory}
    codes = set(context.branches) or set(prior.codebook)
    kinds = {
        "agent": _alternatives(agents),
        "ref": _alternatives(set(context.refs)),
        "code": _alternatives(codes),
        "item": _alternatives(items),
        "number": "[1-9] [0-9]? [0-9]? [0-9]?",  # bounded: the prior caps quantities (2304)
    }
    key_kind = {"bind": "code", "q": "number", "item": "item", "input": "item", "to": "agent", "from": "agent"}
    paths = [' " > " '.join(["task"] * n) for n in range(1, prior.vocab.max_path_tasks + 1)]
    # a team lead may address every peer: one REQ line each (the n-party extension)
    requests = '("\\nREQ -" | ("\\nREQ " agent " " path)+)' if context.team else '"\\nREQ " ("-" | agent " " path)'
    root = f'root ::= "SELF " ("-" | path) {requests}'
    lines = [
        root,
        "path ::= " + " | ".join(f"({p})" for p in paths),  # the codec's path length limit
        "task ::= " + " | ".join(f"t{i}" for i in range(len(prior.skills))),
    ]
    for index, (skill, spec) in enumerate(sorted(prior.skills.items())):
        # each key at most once, in the skill's canonical order: the codec rejects duplicates
        keys = list(spec.args)
        for position, key in enumerate(keys):
            pair = f'"{key}=" {key_kind.get(key, "ref")}'
            rest = f"k{index}_{position + 1}"
            rule = pair if position == len(keys) - 1 else f'{pair} ("," {rest})? | {rest}'
            lines.append(f"k{index}_{position} ::= {rule}")
        lines.append(f't{index} ::= "{skill}(" k{index}_0 ")"')
    lines += [f"{name} ::= {rule}" for name, rule in kinds.items()]
    return "\n".join(lines) + "\n"


@cache
def _tokenizer_info(tokenizer_json: str) -> Any:
    tokenizer = Tokenizer.from_str(tokenizer_json)
    fast = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tokenizer, eos_token="[EOS]", pad_token="[PAD]", unk_token="[UNK]"
    )
    return xgr.TokenizerInfo.from_huggingface(fast, vocab_size=tokenizer.get_vocab_size())


@cache
def _compiled(tokenizer_json: str, grammar: str) -> Any:
    return xgr.GrammarCompiler(_tokenizer_info(tokenizer_json)).compile_grammar(grammar)


def logits_processor(loaded: LoadedModel, prior: Prior, context: LocalContext) -> Any:
    """A fresh xgrammar logits processor for one generation (it keeps matcher state)."""
    if not isinstance(loaded.codec, TextCodec):
        tokenizer = loaded.codec.tokenizer  # type: ignore[attr-defined]
        info = xgr.TokenizerInfo.from_huggingface(tokenizer)
        return xgr.contrib.hf.LogitsProcessor(xgr.GrammarCompiler(info).compile_grammar(dsl_grammar(prior, context)))
    tokenizer_json = loaded.codec.tokenizer.to_str()
    return xgr.contrib.hf.LogitsProcessor(_compiled(tokenizer_json, dsl_grammar(prior, context)))
