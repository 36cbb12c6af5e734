"""Loading priors from TOML: the package default, or a user file layered on it.

A user file with ``extends = "default"`` is deep-merged over the default prior, so a
new skill, key, template or grounding reference needs a few lines and no code.
Without ``extends`` the file must be a complete prior.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from gencoord._config import parse_toml, read_text, validated
from gencoord.errors import GencoordError, Location, PriorError
from gencoord.prior.compose import compose
from gencoord.prior.contract import check_proposal
from gencoord.prior.gamedata import GameData
from gencoord.prior.model import PriorDocument
from gencoord.prior.prior import Prior
from gencoord.reasons import Reason

DEFAULT_FILES = ("keys.toml", "skills.toml", "grounding.toml", "templates.toml")
TEAM_FILE = "team.toml"
_DATA = resources.files("gencoord.prior") / "data"


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _read_toml(text: str, origin: str) -> dict[str, Any]:
    return parse_toml(text, origin, PriorError)


def _default_document() -> dict[str, Any]:
    doc: dict[str, Any] = {}
    for name in DEFAULT_FILES:
        doc = _merge(doc, _read_toml((_DATA / name).read_text(encoding="utf-8"), name))
    return doc


def _build(raw: dict[str, Any], origin: str, data_dir: Path) -> Prior:
    document = validated(PriorDocument, raw, origin, PriorError, Reason.INVALID_SCHEMA)
    game_path = data_dir / document.game_data
    if not game_path.is_file():
        game_path = Path(str(_DATA / document.game_data))
    try:
        game = GameData.load(game_path)
    except (OSError, ValueError, KeyError) as exc:
        raise PriorError(
            Reason.INVALID_GAME_DATA, f"{origin}: cannot load game data {document.game_data!r}: {exc}"
        ) from None
    prior = Prior(document, game, origin)
    _validate_semantics(prior, origin)
    return prior


def _validate_semantics(prior: Prior, origin: str) -> None:
    """Checks that need the loaded game data and the contract: items exist, templates compose."""
    for name, ref in prior.document.grounding.refs.items():
        if ref.block is not None and not prior.game.is_item(ref.block):
            raise PriorError(
                Reason.INVALID_SCHEMA, f"{origin}: grounding.refs.{name}.block: unknown item {ref.block!r}"
            )
    for name, skill in prior.skills.items():
        if skill.station_block is not None and not prior.game.is_item(skill.station_block):
            raise PriorError(
                Reason.INVALID_SCHEMA, f"{origin}: skills.{name}.station_block: unknown item {skill.station_block!r}"
            )
    agents = prior.default_episode.agents
    for template, spec in prior.templates.items():
        episode = prior.episode(template)
        for binding in spec.bindings:
            try:
                proposal = compose(prior, template, binding, sender=agents[0], receiver=agents[1])
                check_proposal(proposal, agents[0], prior, episode)
            except GencoordError as exc:
                raise PriorError(
                    Reason.INVALID_TEMPLATE,
                    f"{origin}: templates.{template}.bindings.{binding}: {exc}",
                    Location(section=template),
                ) from None


@cache
def default_prior() -> Prior:
    """The packaged prior: 8 skills, the paper's grounding, templates and codebook."""
    return _build(_default_document(), "default prior", Path(str(_DATA)))


@cache
def team_prior() -> Prior:
    """The default prior plus ``team.toml``: the station.place skill and a path cap for teams."""
    team = _read_toml((_DATA / TEAM_FILE).read_text(encoding="utf-8"), TEAM_FILE)
    return _build(_merge(_default_document(), team), "team prior", Path(str(_DATA)))


def load_prior(path: Path | None = None) -> Prior:
    """Load a prior file; None gives the packaged default."""
    if path is None:
        return default_prior()
    text = read_text(path, PriorError)
    raw = _read_toml(text, str(path))
    base = raw.pop("extends", None)
    if base not in (None, "default"):
        raise PriorError(Reason.INVALID_SCHEMA, f'{path}: extends must be "default" or absent, not {base!r}')
    if base == "default":
        raw = _merge(_default_document(), raw)
    return _build(raw, str(path), path.parent)
