"""The escalation gate of the Gated Coordination paper: when an agent should coordinate at all."""
