"""Worlds that execute compiled actions: the embedded simulator, and (later) real Minecraft."""
