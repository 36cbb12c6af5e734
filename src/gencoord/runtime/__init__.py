"""From a resolved commitment to something executable: materialization (compile and verify follow)."""

from gencoord.runtime.materialize import check_plan, materialize
from gencoord.runtime.plan import Condition, DispatchPlan, HandoffCheck, Place, PlannedTask

__all__ = ["Condition", "DispatchPlan", "HandoffCheck", "Place", "PlannedTask", "check_plan", "materialize"]
