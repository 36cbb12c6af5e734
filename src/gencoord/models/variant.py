"""What a commitment model reads and writes: its target, surface, prior view and horizon."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from gencoord.dsl.surface import SurfaceName
from gencoord.errors import ConfigError
from gencoord.prior.views import PriorView
from gencoord.reasons import Reason


class Horizon(StrEnum):
    MULTI = "multi"  # the sender commits its whole path and the request at once
    SINGLE = "single"  # one step first, the rest at the intermediate state (paper S7)


class Target(StrEnum):
    DIRECT = "direct"  # the whole record in the surface (Direct Short DSL / Direct JSON)
    FACTOR = "factor"  # the binding code; the composer writes the record


class Records(StrEnum):
    """Which supervision records a model trains on (paper Table S17 trains two Goal×Capability models)."""

    ALL = "all"  # every forward and Goal×Capability record of the training split
    REQUESTER = "requester"  # the distributed requester: initial and after-response local records
    CENTRALIZED = "centralized"  # full information: the merged local views → the joint plan
    SELF_PLAN = "self_plan"  # request removed: sender records, and the receiver's own path without a request
    COMPOSITION = "composition"  # the sender's factors (material, transform, terminal) → the library case's SELF+REQ
    TEAM = "team"  # team tasks: the lead's n-party SELF+REQ and the peers' HAVE and decision lines

    @property
    def suites(self) -> frozenset[str]:
        """The task suites whose clusters hold these records."""
        if self is Records.ALL:
            return frozenset({"forward", "goal_capability"})
        if self is Records.COMPOSITION:
            return frozenset({"composition"})
        if self is Records.TEAM:
            return frozenset({"team"})
        return frozenset({"forward" if self is Records.SELF_PLAN else "goal_capability"})


class TeamRoles(StrEnum):
    """The roles a team checkpoint is trained for: one model for every role, or one that plays a role alone."""

    EVERY = "every"
    LEAD = "lead"  # the lead's n-party SELF+REQ
    PEERS = "peers"  # the peers' HAVE and decision lines


class Templates(StrEnum):
    """Which templates a model trains on."""

    TRAINING = "training"  # every template but the held-out ones, so held-out-template runs measure transfer
    REPRESENTATION = "representation"  # the paper's eight, which its representation pool spans (Table 2)


@dataclass(frozen=True)
class ModelSpec:
    """The input and output a model was trained on; a checkpoint's manifest records it."""

    target: Target = Target.DIRECT
    surface: SurfaceName = SurfaceName.DSL
    view: PriorView = PriorView.NONE
    compact: bool = True
    horizon: Horizon = Horizon.MULTI
    records: Records = Records.ALL
    templates: Templates = Templates.TRAINING

    def fields(self) -> dict[str, str | bool]:
        """The spec as JSON values (training-data manifests and config hashes record it so)."""
        return {
            "target": self.target.value,
            "surface": self.surface.value,
            "view": self.view.value,
            "compact": self.compact,
            "horizon": self.horizon.value,
            "records": self.records.value,
            "templates": self.templates.value,
        }

    def __post_init__(self) -> None:
        if self.surface == SurfaceName.FREEFORM and (self.target is Target.FACTOR or self.horizon is Horizon.SINGLE):
            raise ConfigError(
                Reason.TARGET_SURFACE, "free-form turns are whole text: no factor target and no single-step horizon"
            )
        if self.records is Records.COMPOSITION and (
            self.surface != SurfaceName.DSL or self.target is not Target.DIRECT
        ):
            raise ConfigError(
                Reason.RECORDS_SURFACE,
                "composition records are the Direct Short DSL row: Short DSL, direct target only",
            )
        team_words = self.records is Records.TEAM and self.surface == SurfaceName.FREEFORM  # the team dialogue
        if (
            self.records is not Records.ALL
            and not team_words
            and (self.surface == SurfaceName.FREEFORM or self.horizon is Horizon.SINGLE)
        ):
            raise ConfigError(
                Reason.RECORDS_SURFACE,
                f"{self.records.value} records have no free-form turns and no single-step horizon",
            )
