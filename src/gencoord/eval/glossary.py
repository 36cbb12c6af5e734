"""The abbreviations reports use, each spelled out once at the top of the report that uses it.

A report lists only the ones its own tables and figures use, so a reader meets every
short name explained without a page of definitions they do not need.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

GLOSSARY: dict[str, str] = {
    "G": "goal reached: the original task's success, the goal holding in the world at the end",
    "C": "commitment formed and checked",
    "H": "every hand-over verified in the world (giver down, receiver up)",
    "T": "the terminal predicate held",
    "F": "every committed action ran",
    "CI": "confidence interval",
    "pp": "percentage points",
    "B": "bytes on the wire",
    "REQ": "the request one agent sends its peer (the Short DSL's REQ)",
    "TTC": "time to commitment: wall time from the first generation to the dispatch plan",
    "V(30)": "the goal reached within 30 s of time to commitment plus world time",
    "V(60)": "the goal reached within 60 s of time to commitment plus world time",
    "tok": "tokens",
    "ep": "episode",
    "TSR": "task success rate: episodes whose goal held",
    "CS": "completion steps: executor actions of all agents until the goal's nodes were done",
    "LRR": "local resolution rate: issues resolved locally (recovered or skipped) over issues not made moot",
    "UER": "unnecessary escalation rate: escalations the counterfactual oracle says were not needed",
    "ECR": "effective communication rate: escalations whose request was fulfilled",
    "DSL": "domain-specific language (gencoord's Short DSL of SELF and REQ commitments)",
    "DAG": "directed acyclic graph (the dispatch plan's task order)",
}


def _pattern(term: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w(]){re.escape(term)}(?![\w(])")


_PATTERNS = {term: _pattern(term) for term in GLOSSARY}


def used_terms(texts: Iterable[str]) -> dict[str, str]:
    """The glossary entries that occur, as whole words, in ``texts`` (in the glossary's order)."""
    joined = "\n".join(texts)
    return {term: meaning for term, meaning in GLOSSARY.items() if _PATTERNS[term].search(joined)}
