"""Worlds that execute compiled actions: the embedded simulator, and real Minecraft through Mineflayer."""
