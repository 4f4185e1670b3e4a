"""Equinox modules in messages: a module holding arrays beside functions and names can be neither traced nor static
as a whole, so the errors about one name it and give the fixes that work (``eqx.filter_jit``, or ``eqx.partition``
with the static half ``Static``). Equinox is never imported here: a value cannot hold a module unless it is."""

from __future__ import annotations

import sys
from typing import Any

import jax

from . import _freeze


def is_module(value: Any) -> bool:
    """An ``equinox.Module`` (without importing equinox: a value cannot be one unless it is imported)."""
    eqx = sys.modules.get("equinox")
    return eqx is not None and isinstance(value, eqx.Module)


def module_around(value: Any, leaf: object, param: str) -> tuple[str, Any] | None:
    """The outermost ``equinox.Module`` in ``value`` (itself included) that holds ``leaf`` and an array, with its
    path; None without one."""
    if value is None or "equinox" not in sys.modules:
        return None
    try:
        nodes = jax.tree_util.tree_flatten_with_path(value, is_leaf=is_module)[0]
    except Exception:  # a message is being built: never fail it
        return None
    for path, node in nodes:
        if is_module(node):
            leaves = jax.tree_util.tree_leaves(node)
            if any(x is leaf for x in leaves) and any(map(_freeze.is_array, leaves)):
                return param + jax.tree_util.keystr(path), node
    return None


def holds_other_values(module: Any) -> bool:
    return not all(map(_freeze.is_array, jax.tree_util.tree_leaves(module)))


def mixed(where: str, module: Any) -> str:
    what = "arrays beside other values (functions, names)" if holds_other_values(module) else "arrays"
    return f"{where} is an equinox Module ({_freeze.type_name(module)}) holding {what}"


def split_fix(where: str, dynamic: bool) -> str:
    here = "pass `arrays` here and `rest` to a Static parameter" if dynamic else (
        "pass `rest` here and `arrays` to a parameter that is not Static")
    return (f"Pass it to a function wrapped with eqx.filter_jit, which traces its arrays and keeps the rest static; "
            f"or split it with `arrays, rest = eqx.partition({where}, eqx.is_array)`, {here}, and rebuild it "
            "inside with `eqx.combine(arrays, rest)`.")


__all__ = ["holds_other_values", "is_module", "mixed", "module_around", "split_fix"]
