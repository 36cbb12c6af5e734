"""``python -m gencoord.cli``: the same as the ``gencoord`` command."""

from gencoord.cli import main

main()
