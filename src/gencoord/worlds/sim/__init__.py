"""The embedded world: Minecraft semantics (real recipes, mining, reach, stack sizes) in-process."""

from gencoord.worlds.sim.executor import SimExecutor
from gencoord.worlds.sim.physics import Physics, default_physics

__all__ = ["Physics", "SimExecutor", "default_physics"]
