"""The experiment kinds gencoord ships, one folder each (its config and kind in ``kind.py``, its tables beside it):
pair episodes, the gate, team tasks, composition."""
