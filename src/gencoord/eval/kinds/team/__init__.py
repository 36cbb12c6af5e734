"""Team-task experiments (gencoord tasks run): the kind, its tables and its traces."""
