"""Fine-grained dependencies for dmypy: a call site's verdict depends on classes defined elsewhere.

mypy derives a target's dependencies from the types it inferred, which do not say that a verdict read a class's
``__hash__``, its fields, or how ``@dataclass`` made it. The triggers the judgement consulted are added to the
module's plugin dependencies, which mypy merges when it computes the module's dependencies (after checking it, and
again whenever the module itself changes); triggered targets keep what was recorded before.
"""

from __future__ import annotations

from mypy.checker import TypeChecker


def record(api: TypeChecker, triggers: set[str]) -> None:
    """Make the target being checked depend on ``triggers`` (only where fine-grained dependencies are kept)."""
    options = api.options
    if not triggers or not (options.fine_grained_incremental or options.cache_fine_grained):
        return
    target = api.tscope.current_target()
    plugin_deps = api.tree.plugin_deps
    for trigger in triggers:
        plugin_deps.setdefault(trigger, set()).add(target)
