"""``python -m jaxstatic.migrate PATH... [--diff] [--check]``: move JAX code to ``Static[...]`` and ``Donate[...]``
annotations.

The migration tool: its own package, over LibCST (``pip install 'jaxstatic[migrate]'``), which the runtime never
imports and which imports nothing of the runtime's. ``_cli`` runs the rules over files (``_files`` reads them and
follows imports), each rule a module (``_jit``: ``static_argnums``/``static_argnames``; ``_dataclass``: flax and
chex dataclasses; ``_donate``: ``donate_argnums``), over what they share (``_common``).
"""

from ._entry import main as main

__all__ = ["main"]
