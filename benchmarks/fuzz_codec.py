"""Coverage-guided fuzz campaign (atheris) of everything that reads untrusted text.

Every input goes through: the Short DSL decoder + contract check, the JSON surface
decoder + contract check, and the bounded-response parser + validity check. Any
exception other than a GencoordError is a crash; libFuzzer's -timeout catches hangs.

    make fuzz                      # default: 120 s
    python benchmarks/fuzz_codec.py -max_total_time=600

The campaign's counts are written to benchmarks/results/fuzz.json.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from gencoord.dsl import Proposal, parse_json
    from gencoord.errors import GencoordError
    from gencoord.prior import check_proposal, default_prior
    from gencoord.protocol import check_response, parse_response

PRIOR = default_prior()
EPISODE = PRIOR.default_episode
REQUEST = PRIOR.parse(
    "SELF -\nREQ agent_b craft.item(q=4,input=oak_planks,item=stick) > resource.deliver(q=4,dst=order_chest,item=stick)"
).request
OUT = Path(__file__).parent / "results" / "fuzz.json"
SEEDS = [
    "SELF resource.obtain(q=8,item=oak_planks) > resource.deliver(q=8,item=oak_planks,to=agent_a)\n"
    "REQ agent_a craft.item(bind=WORK_BRANCH,q=1,input=oak_planks,item=crafting_table)",
    'SELF control.wait(q=1,loc="a \\"b\\", (c)")\nREQ -',
    '{"self_plan":[],"peer_requests":[{"target":"agent_b","requested_plan":[{"skill":"control.wait","args":{"quantity":3}}]}]}',
    "COUNTER counter_offer_id=CRAFT_AT_REQUESTER_HANDOFF_FINISHED reason=FINISHED_ITEM_REQUIRED",
]
stats: dict[str, float] = {
    "inputs": 0,
    "accepted_dsl": 0,
    "accepted_json": 0,
    "accepted_response": 0,
    "started": time.time(),
}


def _check(proposal: Proposal) -> None:
    """Check as the sender that the message does not address (as `gencoord parse` does)."""
    addressed = {request.target for request in proposal.peer_requests}
    check_proposal(proposal, next((a for a in EPISODE.agents if a not in addressed), "agent_a"), PRIOR, EPISODE)


def one_input(data: bytes) -> None:
    stats["inputs"] += 1
    if stats["inputs"] % 5000 == 0:
        _report()
    try:
        _check(PRIOR.parse(data))
        stats["accepted_dsl"] += 1
    except GencoordError:
        pass
    try:
        _check(parse_json(data, PRIOR.vocab))
        stats["accepted_json"] += 1
    except GencoordError:
        pass
    try:
        assert REQUEST is not None
        check_response(parse_response(data), REQUEST, "agent_a", PRIOR)
        stats["accepted_response"] += 1
    except GencoordError:
        pass


def _report() -> None:
    """Rewritten every 5,000 inputs: libFuzzer leaves with os._exit, so no exit hook runs.

    A crash stops the campaign with a nonzero exit status and a crash-* reproducer file
    before the next rewrite; the file therefore only ever reports crash-free inputs.
    """
    report = {**stats, "seconds": round(time.time() - stats["started"], 1), "crashes": 0}
    del report["started"]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + "\n")


def main() -> None:
    corpus = Path(tempfile.mkdtemp(prefix="gencoord-fuzz-"))
    for i, seed in enumerate(SEEDS):
        (corpus / f"seed{i}").write_bytes(seed.encode())
    args = [sys.argv[0], str(corpus), "-timeout=5", "-max_len=4200", *sys.argv[1:]]
    if not any(a.startswith(("-max_total_time", "-runs")) for a in args):
        args.append("-max_total_time=120")
    atheris.Setup(args, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
