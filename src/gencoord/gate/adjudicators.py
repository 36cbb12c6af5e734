"""The gate's gray-zone adjudicator, chosen by name in a gate experiment config.

``logistic`` (the default) is the fitted fallback; ``api:<base url>#<model>`` asks any
OpenAI-compatible endpoint and ``model:<checkpoint>`` a local trained checkpoint, both
through :class:`ModelAdjudicator`, which can only ever pick ESCALATE or LOCAL and falls
back to the logistic model on anything else. One adjudicator per process and name.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

from gencoord.backends.registry import API_PREFIX, MODEL_PREFIX, api_target, checkpoint_of
from gencoord.errors import ConfigError
from gencoord.gate.config import gate_config_at
from gencoord.gate.policy import Adjudicator, LogisticAdjudicator, ModelAdjudicator
from gencoord.prior.load import default_prior

LOGISTIC = "logistic"


def check_adjudicator_name(name: str) -> str:
    if name != LOGISTIC and not name.startswith((API_PREFIX, MODEL_PREFIX)):
        raise ValueError(f"unknown adjudicator {name!r}; use logistic, api:<url>#<model> or model:<checkpoint>")
    return name


def _local_ask(checkpoint: Path) -> Callable[[str], str]:
    from gencoord.backends.local import loaded  # noqa: PLC0415  (torch loads only when a model is used)
    from gencoord.models.generate import generate  # noqa: PLC0415

    model = loaded(str(checkpoint.resolve()))
    return lambda prompt: generate(model.model, model.codec, prompt, 8)[0]


@cache
def adjudicator_for(name: str, gate_config: str | None = None) -> Adjudicator:
    """The adjudicator called ``name`` for the gate parameters at ``gate_config`` (None: the packaged ones)."""
    fallback = LogisticAdjudicator(gate_config_at(gate_config))
    check_adjudicator_name(name)
    if name == LOGISTIC:
        return fallback
    if name.startswith(API_PREFIX):
        from gencoord.backends.api import ApiBackend  # noqa: PLC0415  (openai loads only when an API is used)

        base_url, model = api_target(name.removeprefix(API_PREFIX))
        return ModelAdjudicator(ApiBackend(base_url, model, default_prior()).ask, fallback, name)
    checkpoint = checkpoint_of(name)
    assert checkpoint is not None
    if not checkpoint.exists():
        raise ConfigError("UNKNOWN_ADJUDICATOR", f"{checkpoint} holds no trained model")
    return ModelAdjudicator(_local_ask(checkpoint), fallback, name)
