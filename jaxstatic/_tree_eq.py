"""Equality and hashing for ``jaxstatic.dataclass`` instances, which hold arrays: never JAX's ambiguous-truth error.

``==`` compares structure (static fields included, by the static rule) and leaf values; ``hash()`` exists only for
instances without arrays, which makes those usable as static values and the others a clear error there.
"""

from __future__ import annotations

from typing import Any

import jax
import jax.core
import numpy as np

from . import _freeze
from ._errors import NonStaticValueError, unhashable_instance_message
from ._static_values import StaticFields


def tree_eq(self: Any, other: Any) -> Any:
    """Equal when of the same class, with equal static fields (by the static rule: strict types), the same
    structure, and equal leaves: identical, or arrays of equal shape, dtype and contents (compared on the host, so
    it waits for them; NaN is unequal to itself), or other leaves of one type that compare equal. Tracers compare
    by identity only: ``==`` never raises JAX's ambiguous-truth error and never makes a traced bool."""
    if type(other) is not type(self):
        return NotImplemented
    if self is other:
        return True
    leaves, treedef = jax.tree_util.tree_flatten(self)
    other_leaves, other_treedef = jax.tree_util.tree_flatten(other)
    structure: Any = treedef  # PyTreeDef's stub declares no __eq__
    return structure == other_treedef and all(map(_same_leaf, leaves, other_leaves))


def _same_leaf(a: Any, b: Any) -> bool:
    if a is b:
        return True
    if isinstance(a, jax.core.Tracer) or isinstance(b, jax.core.Tracer):
        return False
    try:  # anything may be a leaf: a comparison that fails, or is not a truth value, means unequal
        if _freeze.is_array(a) or _freeze.is_array(b):
            return (_freeze.is_array(a) and _freeze.is_array(b) and a.shape == b.shape and a.dtype == b.dtype
                    and bool(np.array_equal(np.asarray(a), np.asarray(b))))
        return type(a) is type(b) and bool(a == b)
    except Exception:
        return False


def tree_hash(self: Any) -> int:
    """Instances without array leaves hash by structure and leaves, so they can be static values. The others
    raise ``NonStaticValueError`` (a ``TypeError``, as for any unhashable object), saying why: one holding arrays
    is a dynamic pytree; one whose Static fields hold a ``dict``, ``list`` or ``set`` could change its hash in
    place, and a program keyed on it would then go stale."""
    leaves, treedef = jax.tree_util.tree_flatten(self)
    owner = type(self).__name__
    if any(map(_freeze.is_array, leaves)):
        path, leaf = next((p, x) for p, x in jax.tree_util.tree_flatten_with_path(self)[0] if _freeze.is_array(x))
        raise NonStaticValueError(unhashable_instance_message(
            owner, owner + jax.tree_util.keystr(path), _freeze.type_name(leaf)))
    mutable = _mutable_static(treedef)
    if mutable is not None:
        raise NonStaticValueError(unhashable_instance_message(
            owner, mutable[0], mutable[1], mutable=True))
    return hash((treedef, *leaves))


def _mutable_static(treedef: Any) -> tuple[str, str] | None:
    """``("Cfg.options", "dict")``: a Static field holding a mutable container, anywhere in the tree."""
    node = treedef.node_data()
    if node is not None and node[1] and type(node[1][0]) is StaticFields and node[1][0].mutable:
        s = node[1][0]
        i = s.mutable[0]
        return f"{node[0].__name__}.{s.names[i]}", _freeze.type_name(s.values[i])
    return next(filter(None, map(_mutable_static, treedef.children())), None)


__all__ = ["tree_eq", "tree_hash"]
