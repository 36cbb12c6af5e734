"""Load any checkpoint we trained (the tiny preset or a fine-tuned Hugging Face model)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer
from transformers import PreTrainedModel, Qwen3ForCausalLM
from transformers.utils import logging as hf_logging

from gencoord.errors import ConfigError
from gencoord.train import MANIFEST
from gencoord.train.common import Codec
from gencoord.train.data import RowSpec
from gencoord.train.hf import load_checkpoint
from gencoord.train.tiny import TextCodec


@dataclass(frozen=True)
class LoadedModel:
    model: PreTrainedModel
    codec: Codec
    spec: RowSpec
    manifest: dict[str, Any]


def load_model(path: Path) -> LoadedModel:
    """The model, its codec and the row spec it was trained on; no progress bars (workers load in parallel)."""
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    manifest_path = path / MANIFEST
    if not manifest_path.exists():
        raise ConfigError("NOT_A_MODEL", f"{path}: no {MANIFEST}; train one with `gencoord train`")
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    try:
        spec = RowSpec.from_fields(manifest)
    except (KeyError, ValueError) as exc:
        raise ConfigError("BAD_MANIFEST", f"{manifest_path}: {exc}") from None
    if manifest.get("kind") == "hf":
        model, codec = load_checkpoint(path)
        model.train(False)
        return LoadedModel(model, codec, spec, manifest)
    tiny = Qwen3ForCausalLM.from_pretrained(path)
    tiny.train(False)
    return LoadedModel(tiny, TextCodec(Tokenizer.from_file(str(path / "tokenizer.json"))), spec, manifest)
