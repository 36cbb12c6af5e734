"""The gate's parameters (``data/gate.toml``), validated; a user file may replace them."""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, PositiveFloat, PositiveInt, model_validator

from gencoord._config import load_model, read_text
from gencoord.errors import ConfigError
from gencoord.reasons import Reason

FEATURES = ("C", "R", "I", "L", "H")


class Weights(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    C: float
    R: float
    I: float  # noqa: E741  (the paper's name for downstream impact)
    L: float
    H: float
    bias: float = 0.0


class Thresholds(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    low: float
    high: float

    @model_validator(mode="after")
    def _ordered(self) -> Thresholds:
        if not self.low < self.high:
            raise ValueError(f"thresholds must satisfy low < high, got {self.low} and {self.high}")
        return self


class LogisticSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    features: list[str] = Field(min_length=1)
    weights: list[float]
    bias: float = 0.0

    @model_validator(mode="after")
    def _matched(self) -> LogisticSpec:
        if len(self.features) != len(self.weights):
            raise ValueError("adjudicator features and weights differ in length")
        return self


class GateConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    quick_cost: PositiveInt
    cooldown: PositiveInt
    window: PositiveInt
    patience: PositiveInt
    max_history: PositiveInt
    action_window_s: PositiveFloat = 2.0  # a round's action window in seconds: thinking time is counted in these
    weights: Weights
    thresholds: Thresholds
    adjudicator: LogisticSpec


def parse_gate_config(text: str, origin: str) -> GateConfig:
    return load_model(GateConfig, text, origin, ConfigError, Reason.INVALID_GATE)


def load_gate_config(path: Path) -> GateConfig:
    return parse_gate_config(read_text(path, ConfigError), str(path))


@cache
def default_gate_config() -> GateConfig:
    text = (resources.files("gencoord.gate") / "data" / "gate.toml").read_text(encoding="utf-8")
    return parse_gate_config(text, "gate.toml")


@cache
def gate_config_at(path: str | None) -> GateConfig:
    """The gate parameters a config names (``gate_config``), or the packaged ones; read once per process."""
    return default_gate_config() if path is None else load_gate_config(Path(path))
