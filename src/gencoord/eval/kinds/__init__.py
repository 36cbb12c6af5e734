"""The experiment kinds gencoord ships, one module each: pair episodes, the gate, team tasks, composition."""
