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
    """Instances without array leaves hash by structure and leaves, so they can be static values. Instances
    holding arrays raise ``NonStaticValueError`` (a ``TypeError``, as for any unhashable object), naming the
    array: such an instance is a dynamic pytree, and a static parameter given one says so."""
    leaves, treedef = jax.tree_util.tree_flatten(self)
    if any(map(_freeze.is_array, leaves)):
        owner = type(self).__name__
        path, leaf = next((p, x) for p, x in jax.tree_util.tree_flatten_with_path(self)[0] if _freeze.is_array(x))
        raise NonStaticValueError(unhashable_instance_message(
            owner, owner + jax.tree_util.keystr(path), _freeze.type_name(leaf)))
    return hash((treedef, *leaves))


__all__ = ["tree_eq", "tree_hash"]
