"""The gate's gray-zone adjudicator, chosen by name in a gate experiment config.

``logistic`` (the default) is the fitted fallback; ``api:<base url>#<model>`` asks any
OpenAI-compatible endpoint (``prompted:<base>`` a pretrained base this process serves) and
``model:<checkpoint>`` a local trained checkpoint, all
through :class:`ModelAdjudicator`, which can only ever pick ESCALATE or LOCAL; on anything else the
gate asks the logistic model and records that it did. One adjudicator per process and name.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

from gencoord.backends.families import parse_backend
from gencoord.backends.registry import ApiFamily, api_target
from gencoord.errors import ConfigError
from gencoord.gate.config import gate_config_at
from gencoord.gate.policy import Adjudicator, LogisticAdjudicator, ModelAdjudicator
from gencoord.prior.load import default_prior
from gencoord.reasons import Reason

LOGISTIC = "logistic"


def check_adjudicator_name(name: str) -> str:
    """``logistic``, or a backend that answers a prompt: an API or a trained checkpoint."""
    if name == LOGISTIC:
        return name
    try:
        family = parse_backend(name).family
    except ConfigError:
        family = None
    if family is None or not (family.calls_api or family.checkpoint):
        raise ValueError(
            f"unknown adjudicator {name!r}; use logistic, api:<url>#<model>, prompted:<base> or model:<checkpoint>"
        )
    return name


def _local_ask(checkpoint: Path) -> Callable[[str], str]:
    from gencoord.backends.local import loaded  # noqa: PLC0415  (torch loads only when a model is used)
    from gencoord.models.generate import generate  # noqa: PLC0415

    model = loaded(str(checkpoint.resolve()))
    return lambda prompt: generate(model.model, model.codec, prompt, 8)[0]


@cache
def adjudicator_for(name: str, gate_config: str | None = None) -> Adjudicator:
    """The adjudicator called ``name`` for the gate parameters at ``gate_config`` (None: the packaged ones)."""
    check_adjudicator_name(name)
    if name == LOGISTIC:
        return LogisticAdjudicator(gate_config_at(gate_config))
    spec = parse_backend(name)
    if isinstance(spec.family, ApiFamily):
        from gencoord.backends.api import ApiBackend  # noqa: PLC0415  (openai loads only when an API is used)

        base_url, model = api_target(spec.family.endpoint(spec.target))
        asking = ApiBackend(base_url, model, default_prior(), timeout_s=spec.family.timeout_s)
        return ModelAdjudicator(asking.ask, name)
    checkpoint = Path(str(spec.target))
    if not checkpoint.exists():
        raise ConfigError(Reason.UNKNOWN_ADJUDICATOR, f"{checkpoint} holds no trained model")
    return ModelAdjudicator(_local_ask(checkpoint), name)
