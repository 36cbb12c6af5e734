"""Real Minecraft: Mineflayer bots driven over a Node bridge, on our embedded server or yours."""

from gencoord.worlds.mineflayer.bridge import Bridge, NodeBridge, node_ready
from gencoord.worlds.mineflayer.executor import MinecraftExecutor
from gencoord.worlds.mineflayer.server_options import ServerOptions

__all__ = ["Bridge", "MinecraftExecutor", "NodeBridge", "ServerOptions", "node_ready"]
