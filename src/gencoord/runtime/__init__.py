"""From a resolved commitment to verified work: materialize → compile → (execute) → verify.

Import from the modules (``gencoord.runtime.materialize`` …): the package itself stays
empty so that protocol and runtime modules can import each other's types without cycles.
"""
