"""Load any checkpoint we trained (the tiny preset or a fine-tuned Hugging Face model)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedModel, Qwen3ForCausalLM
from transformers.utils import logging as hf_logging

from gencoord.errors import ConfigError
from gencoord.models.codec import Codec, HfCodec, TextCodec
from gencoord.models.manifest import CheckpointManifest
from gencoord.models.spec import ModelSpec


@dataclass(frozen=True)
class LoadedModel:
    model: PreTrainedModel
    codec: Codec
    manifest: CheckpointManifest

    @property
    def spec(self) -> ModelSpec:
        return self.manifest.spec


def device() -> torch.device:
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


def load_pretrained(path: Path) -> tuple[Any, HfCodec]:
    """A Hugging Face causal LM and its tokenizer from a local folder (bf16 on a GPU), never downloading."""
    if not (path / "config.json").exists():
        raise ConfigError("NOT_A_MODEL", f"{path} is not a Hugging Face checkpoint folder (no config.json)")
    dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model: Any = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=dtype)
    return model.to(device()), HfCodec(tokenizer)


def load_model(path: Path | str) -> LoadedModel:
    """The model, its codec and manifest; no progress bars (workers load in parallel)."""
    path = Path(path)
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    manifest = CheckpointManifest.read(path)
    if manifest.kind == "hf":
        model, codec = load_pretrained(path)
        model.train(False)
        return LoadedModel(model, codec, manifest)
    tiny = Qwen3ForCausalLM.from_pretrained(path)
    tiny.train(False)
    return LoadedModel(tiny, TextCodec(Tokenizer.from_file(str(path / "tokenizer.json"))), manifest)
