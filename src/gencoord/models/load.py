"""Load any checkpoint we trained (the tiny preset or a fine-tuned Hugging Face model)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from tokenizers import Tokenizer
from transformers import PreTrainedModel, Qwen3ForCausalLM
from transformers.utils import logging as hf_logging

from gencoord.errors import ConfigError
from gencoord.models.codec import Codec, HfCodec, TextCodec
from gencoord.models.manifest import CheckpointManifest
from gencoord.models.pretrained import ChatCodec, load_base, load_folder, peft_quietly, provenance
from gencoord.models.variant import ModelSpec
from gencoord.reasons import Reason


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
    model, tokenizer = load_folder(path)
    return model, HfCodec(tokenizer)


def adapted(path: Path, manifest: CheckpointManifest) -> tuple[Any, ChatCodec]:
    """A pretrained base with the checkpoint's LoRA adapter merged in (merged: decoding costs what the base's does).

    The base must be the file the adapter was trained on: a different digest is refused, since an
    adapter on other weights writes other text.
    """
    from peft import PeftModel  # noqa: PLC0415  (peft loads only for an adapter)

    if manifest.base is None:
        raise ConfigError(Reason.BAD_MANIFEST, f"{path}: a LoRA checkpoint must name its base")
    trained_on = (manifest.provenance or {}).get("sha256")
    found = provenance(manifest.base).get("sha256")
    if trained_on is not None and found != trained_on:
        raise ConfigError(
            Reason.BASE_MISMATCH,
            f"{path} was trained on {manifest.base} with sha256 {trained_on[:12]}…, but the installed file's is "
            f"{str(found)[:12]}…",
        )
    base, tokenizer = load_base(manifest.base)
    with peft_quietly():
        model = PeftModel.from_pretrained(base, path).merge_and_unload()
    model.train(False)
    return model, ChatCodec(tokenizer)


def load_model(path: Path | str) -> LoadedModel:
    """The model, its codec and manifest; no progress bars (workers load in parallel)."""
    path = Path(path)
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    manifest = CheckpointManifest.read(path)
    if manifest.kind == "lora":
        return LoadedModel(*adapted(path, manifest), manifest)
    if manifest.kind == "hf":
        model, codec = load_pretrained(path)
        model.train(False)
        return LoadedModel(model, codec, manifest)
    tiny = Qwen3ForCausalLM.from_pretrained(path)
    tiny.train(False)
    return LoadedModel(tiny, TextCodec(Tokenizer.from_file(str(path / "tokenizer.json"))), manifest)


def export_merged(checkpoint: Path, out: Path) -> Path:
    """A LoRA checkpoint merged into its base, written as a plain Hugging Face folder (safetensors, the tokenizer
    with its chat template) that any OpenAI-compatible server loads: ``transformers serve``, vLLM."""
    manifest = CheckpointManifest.read(checkpoint)
    if manifest.kind != "lora":
        raise ConfigError(
            Reason.NOT_AN_ADAPTER, f"{checkpoint} is a {manifest.kind} checkpoint; only an adapter is merged"
        )
    model, codec = adapted(checkpoint, manifest)
    out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(out)
    codec.tokenizer.save_pretrained(out)
    return out
