"""The checkpoint manifest: one typed object, written by training, read by serving and the registry.

It is light on purpose (pydantic and JSON only): deciding whether a checkpoint fits an
experiment's surfaces and horizons needs no torch.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from gencoord._config import validation_message
from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.models.variant import Horizon, ModelSpec, Records, Target, Templates
from gencoord.prior.views import PriorView
from gencoord.reasons import Reason

MANIFEST = "gencoord-model.json"
"""What every trained checkpoint folder holds beside the weights."""


class TrainReport(BaseModel):
    """What training measured: steps, time, loss, and greedy exact match on rows it never trained on."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    steps: int
    seconds: float
    first_loss: float
    last_loss: float
    exact_match: float | None = None  # training templates; these prompts recur in training (None: none evaluated)
    evaluated: int
    held_out_templates: float | None = None  # templates never trained on (composition: unseen cross-products)
    held_out_evaluated: int = 0


class CheckpointManifest(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: Literal["tiny", "hf", "lora"]  # lora: an adapter on a pretrained base (``base``, ``provenance``)
    target: Target
    surface: SurfaceName
    view: PriorView
    compact: bool
    horizon: Horizon = Horizon.MULTI  # manifests written before horizons existed are multi-step
    records: Records = Records.ALL  # manifests written before record sets existed trained on all
    templates: Templates = Templates.TRAINING  # manifests written before template sets existed trained on these
    seed: int
    config_sha256: str
    report: TrainReport
    versions: dict[str, str]
    base: str | None = None  # hf: the model fine-tuned; lora: the base the adapter applies to
    provenance: dict[str, str] | None = None  # lora: the base's source, licence, package, quantization, digest
    settings: dict[str, bool | int | float] | None = None  # hf: the optimizer settings; tiny: the preset (renaming …)
    rows: int | None = None  # hf: training rows
    data: str | None = None  # tiny: how rows were drawn
    data_sha256: str | None = None
    vocabulary: str | None = None  # tiny: which rows the tokenizer's vocabulary came from
    evaluation_note: str | None = None  # a later re-measurement, and why

    @classmethod
    def of(cls, spec: ModelSpec, **fields: object) -> CheckpointManifest:
        return cls.model_validate(
            {
                "target": spec.target,
                "surface": spec.surface,
                "view": spec.view,
                "compact": spec.compact,
                "horizon": spec.horizon,
                "records": spec.records,
                "templates": spec.templates,
                **fields,
            }
        )

    @property
    def spec(self) -> ModelSpec:
        return ModelSpec(self.target, self.surface, self.view, self.compact, self.horizon, self.records, self.templates)

    def write(self, folder: Path) -> Path:
        path = folder / MANIFEST
        path.write_text(self.model_dump_json(indent=2, exclude_none=True) + "\n", encoding="utf-8")
        return path

    @classmethod
    def read(cls, folder: Path) -> CheckpointManifest:
        """The manifest of a checkpoint folder, or NOT_A_MODEL / BAD_MANIFEST naming the file."""
        path = folder / MANIFEST
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(Reason.NOT_A_MODEL, f"{folder}: no {MANIFEST}; train one with `gencoord train`") from None
        except OSError as exc:
            raise ConfigError(Reason.NOT_A_MODEL, f"{path}: {exc.strerror}") from None
        except ValueError as exc:
            raise ConfigError(Reason.BAD_MANIFEST, f"{path}: not JSON ({exc})") from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(Reason.BAD_MANIFEST, f"{path}: {validation_message(exc)}") from None
