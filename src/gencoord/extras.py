"""Optional dependency groups: a clear error, with the install command, when one is missing.

The learned backends and training need the ``learn`` extra (torch, transformers, …).
Without it the rest of gencoord works; asking for a model says what to install instead
of failing deep inside an import.
"""

from __future__ import annotations

from importlib.util import find_spec

from gencoord.errors import ConfigError
from gencoord.reasons import Reason

LEARN_MODULES = ("torch", "transformers", "tokenizers", "safetensors")
API_MODULES = ("openai",)
SELECTOR_MODULES = ("sklearn",)


def _missing(modules: tuple[str, ...]) -> list[str]:
    return [name for name in modules if find_spec(name) is None]


def require_learn(what: str, modules: tuple[str, ...] = LEARN_MODULES) -> None:
    """Raise ``MISSING_EXTRA`` naming ``what`` needed the ``learn`` extra, unless its modules import."""
    missing = _missing(modules)
    if missing:
        raise ConfigError(
            Reason.MISSING_EXTRA,
            f"{what} needs the 'learn' extra ({', '.join(missing)} not installed): "
            "pip install 'gencoord[learn]' (on a CPU machine, first: pip install torch --index-url "
            "https://download.pytorch.org/whl/cpu)",
        )
