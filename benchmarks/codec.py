"""Codec and protocol-core speed, measured side by side in one run.

For the paper's worked examples and every template commitment of the default prior:
  * Short DSL decode (parse) and decode + contract check, median µs per 2-line commitment;
  * the JSON surface of the same commitment: json.loads + pydantic validation (+ the same
    check), and the DSL/JSON ratio;
  * the whole core: sender decode + check, receiver decode + check, Resolve→, Materialize;
  * canonical bytes per REQ line (Short DSL) and per request object (JSON surface).
Results are printed and written to benchmarks/results/codec.json. Not a test: no
assertion on time, only measurements to compare as ratios.
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from rich.table import Table

from gencoord import __version__
from gencoord.dsl import Proposal, parse_json, request_json, request_line, serialize_json
from gencoord.dsl.json_surface import JsonProposal
from gencoord.prior import PublicEpisode, check_proposal, compose, default_prior
from gencoord.protocol import resolve_forward
from gencoord.runtime.materialize import materialize

OUT = Path(__file__).parent / "results" / "codec.json"
PAPER_EXAMPLES = [
    (
        "paper ACTIVE_ORDER_BRANCH",
        "ACTIVE_ORDER_BRANCH",
        "agent_b",
        "agent_a",
        "SELF resource.obtain(q=8,item=oak_planks) > resource.deliver(q=8,item=oak_planks,to=agent_a)\n"
        "REQ agent_a craft.item(bind=WORK_BRANCH,q=1,input=oak_planks,item=crafting_table)",
    ),
    (
        "paper stick request",
        "GC_STICK_ORDER",
        "agent_a",
        "agent_b",
        "SELF resource.obtain(q=2,item=oak_planks) > resource.deliver(q=2,item=oak_planks,to=agent_b)\n"
        "REQ agent_b craft.item(q=4,input=oak_planks,item=stick) > resource.deliver(q=4,dst=order_chest,item=stick)",
    ),
    (
        "paper stick counter",
        "GC_STICK_ORDER",
        "agent_a",
        "agent_b",
        "SELF resource.obtain(q=2,item=oak_planks) > craft.item(q=4,input=oak_planks,item=stick) > "
        "resource.deliver(q=4,item=stick,to=agent_b)\nREQ agent_b resource.deliver(q=4,dst=order_chest,item=stick)",
    ),
]


def median_us(operation: Callable[[], object], inner: int = 200, rounds: int = 31) -> float:
    """Median over rounds of the mean time of ``inner`` back-to-back calls, in µs."""
    for _ in range(inner):
        operation()
    samples = []
    for _ in range(rounds):
        start = time.perf_counter_ns()
        for _ in range(inner):
            operation()
        samples.append((time.perf_counter_ns() - start) / inner / 1000)
    return statistics.median(samples)


def main() -> None:
    prior = default_prior()
    vocab = prior.vocab
    cases = list(PAPER_EXAMPLES)
    for template, spec in prior.templates.items():
        for binding in spec.bindings:
            proposal = compose(prior, template, binding, sender="agent_a", receiver="agent_b")
            cases.append((f"{template}/{binding}", template, "agent_a", "agent_b", prior.serialize(proposal)))

    rows = []
    for name, template, sender, receiver, text in cases:
        episode = prior.episode(template)
        proposal = prior.parse(text)
        assert proposal.request is not None
        answer_text = prior.serialize(Proposal(proposal.request.plan))
        json_text = serialize_json(proposal, vocab)

        def dsl_parse(text: str = text) -> object:
            return prior.parse(text)

        def dsl_check(text: str = text, sender: str = sender, episode: PublicEpisode = episode) -> None:
            check_proposal(prior.parse(text), sender, prior, episode)

        def json_pydantic(json_text: str = json_text) -> object:
            return JsonProposal.model_validate(json.loads(json_text))

        def json_check(json_text: str = json_text, sender: str = sender, episode: PublicEpisode = episode) -> None:
            check_proposal(parse_json(json_text, vocab), sender, prior, episode)

        def core(
            text: str = text,
            answer_text: str = answer_text,
            sender: str = sender,
            receiver: str = receiver,
            episode: PublicEpisode = episode,
        ) -> object:
            sent = prior.parse(text)
            check_proposal(sent, sender, prior, episode)
            answer = prior.parse(answer_text)
            check_proposal(answer, receiver, prior, episode)
            return materialize(resolve_forward(sent, sender, answer, receiver, prior, episode), prior, episode)

        rows.append(
            {
                "case": name,
                "dsl_parse_us": median_us(dsl_parse),
                "dsl_parse_check_us": median_us(dsl_check),
                "json_loads_pydantic_us": median_us(json_pydantic),
                "json_decode_check_us": median_us(json_check),
                "core_pipeline_us": median_us(core, inner=100),
                "dsl_req_line_bytes": len(request_line(proposal.request).encode()),
                "json_request_bytes": len(request_json(proposal.request, vocab).encode()),
                "dsl_message_bytes": len(text.encode()),
                "json_message_bytes": len(json_text.encode()),
            }
        )

    def med(key: str) -> float:
        return statistics.median(row[key] for row in rows)  # type: ignore[misc]

    def mean(key: str, subset: list[dict[str, object]]) -> float:
        return statistics.fmean(row[key] for row in subset)  # type: ignore[misc]

    summary = {
        "dsl_parse_us": med("dsl_parse_us"),
        "dsl_parse_check_us": med("dsl_parse_check_us"),
        "json_loads_pydantic_us": med("json_loads_pydantic_us"),
        "json_decode_check_us": med("json_decode_check_us"),
        "core_pipeline_us": med("core_pipeline_us"),
        "ratio_dsl_parse_check_to_json_loads_pydantic": med("dsl_parse_check_us") / med("json_loads_pydantic_us"),
        "ratio_dsl_parse_check_to_json_decode_check": med("dsl_parse_check_us") / med("json_decode_check_us"),
        "mean_req_line_bytes_paper_examples": mean("dsl_req_line_bytes", rows[: len(PAPER_EXAMPLES)]),
        "mean_req_line_bytes_all": mean("dsl_req_line_bytes", rows),
        "mean_json_request_bytes_all": mean("json_request_bytes", rows),
        "paper_mean_req_payload_bytes": 76.3,
        "paper_json_request_bytes": 303.4,
    }
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(
        json.dumps(
            {
                "gencoord": __version__,
                "python": platform.python_version(),
                "machine": platform.machine(),
                "summary": summary,
                "cases": rows,
            },
            indent=2,
        )
        + "\n"
    )

    console = Console()
    table = Table(
        "case",
        "DSL parse",
        "DSL parse+check",
        "JSON loads+pydantic",
        "JSON decode+check",
        "core",
        "REQ B",
        title="µs per commitment (median)",
    )
    for row in rows:
        table.add_row(
            str(row["case"]),
            *(
                f"{row[k]:.1f}"
                for k in (
                    "dsl_parse_us",
                    "dsl_parse_check_us",
                    "json_loads_pydantic_us",
                    "json_decode_check_us",
                    "core_pipeline_us",
                )
            ),
            str(row["dsl_req_line_bytes"]),
        )
    console.print(table)
    for key, value in summary.items():
        console.print(f"{key:48s} {value:10.3f}")
    console.print(f"written to {OUT}")


if __name__ == "__main__":
    main()
