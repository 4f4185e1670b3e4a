"""Naming what changed between two tree structures, for retrace explanations: ``self.activation: relu -> tanh``.

A ``jaxstatic.dataclass`` keeps its static fields in its treedef, so a changed static field shows up as a changed
structure. Walking both treedefs side by side names it field by field. Any other structure (a flax ``struct`` or
``jax_dataclasses`` static field, a ``register_dataclass`` meta field, an optax transformation inside a
``TrainState``, a dict that gained a key) is rebuilt with its leaves' types in place of the arrays and the two are
walked as objects (``_object_diff``). Runs only when a retrace is explained.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import jax

from ._dataclass import STATE
from ._keys import safe_repr
from ._keytext import diff
from ._object_diff import StandIn, object_diff, sides
from ._static_values import StaticFields
from ._tree_repr import callable_name


def treedef_changes(label: str, old: Any, new: Any) -> list[str]:
    """``["self.activation: relu -> tanh"]`` when two structures differ only in static fields of jaxstatic
    dataclasses; empty when anything else differs (the caller then shows both structures)."""
    out: list[str] = []
    return out if _walk(label, old, new, out) and out else []


def structure_changes(label: str, old: Any, old_leaves: Any, new: Any, new_leaves: Any) -> list[str]:
    """``["state.tx.update: a new function object on each call (...)"]``, ``["s['b']: added (float32[1])"]``: where
    two structures differ, found by rebuilding each with its leaves' types in place of the arrays and walking both
    (``_object_diff``): field by field for dataclasses (flax, jax_dataclasses, Equinox, ``register_dataclass``),
    by key path for any other node, metadata included. Empty when a structure cannot be rebuilt that way."""
    try:
        a = old.unflatten([_Leaf(leaf.aval) for leaf in old_leaves])
        b = new.unflatten([_Leaf(leaf.aval) for leaf in new_leaves])
    except Exception:  # a user-defined node may refuse placeholder leaves
        return []
    return object_diff(label, a, b, rebuilt=True)


def structure_text(label: str, old: Any, new: Any) -> str:
    """``s: pytree structure ...CustomNode(Odd[(2,)]... -> ...CustomNode(Odd[(3,)]...``: two structures that cannot be
    walked, each cut around the first difference."""
    before, after = sides(safe_repr(old, 2000), safe_repr(new, 2000), 120)
    return f"{label}: pytree structure {before} -> {after}"


class _Leaf(StandIn):
    """A dynamic leaf as compiling sees it (``float32[3]``), standing in for the array it was."""

    __slots__ = ("aval",)

    def __init__(self, aval: str) -> None:
        self.aval = aval

    def __eq__(self, other: object) -> bool:
        return type(other) is _Leaf and other.aval == self.aval

    def __hash__(self) -> int:
        return hash(self.aval)

    def __repr__(self) -> str:
        return self.aval


def _walk(label: str, old: Any, new: Any, out: list[str]) -> bool:
    """Append the differences below this node; False when one cannot be named field by field."""
    if old == new:
        return True
    a, b = old.node_data(), new.node_data()
    kids, new_kids = old.children(), new.children()
    if a is None or b is None or a[0] is not b[0] or len(kids) != len(new_kids):
        return False
    state = a[0].__dict__.get(STATE) if isinstance(a[0], type) else None
    if state is not None:  # a jaxstatic dataclass: its metadata is (StaticFields,), or () without Static fields
        if a[1]:
            out.extend(_static_changes(label, a[1][0], b[1][0]))
        labels = [f"{label}.{n}" for n in state.children]
    elif a[1] != b[1]:
        return False
    else:
        labels = _child_labels(label, old)
    return all(_walk(lab, x, y, out) for lab, x, y in zip(labels, kids, new_kids))


def _static_changes(label: str, old: StaticFields, new: StaticFields) -> Iterator[str]:
    for i, name in enumerate(old.names):
        if old.key[i] != new.key[i]:
            before, after = callable_name(old.values[i]), callable_name(new.values[i])
            if before and after and before != after:
                yield f"{label}.{name}: {before} -> {after}"
            else:
                yield from diff(f"{label}.{name}", old.key[i], new.key[i])


def _child_labels(label: str, treedef: Any) -> list[str]:
    """The key paths of a node's children (``['w']``, ``[0]``, ``.weight``), found by rebuilding the node with
    placeholder leaves and flattening it one level (with public calls that every supported JAX has); ``[i]`` when
    its type cannot be rebuilt that way."""
    n = len(treedef.children())
    try:
        node = treedef.unflatten(range(treedef.num_leaves))
        keyed = jax.tree_util.tree_flatten_with_path(node, is_leaf=lambda x: x is not node)[0]
        if len(keyed) != n:
            raise ValueError(f"{len(keyed)} keys for {n} children")
        return [label + jax.tree_util.keystr(path) for path, _ in keyed]
    except Exception:  # a user-defined node may refuse placeholder leaves
        return [f"{label}[{i}]" for i in range(n)]


__all__ = ["structure_changes", "structure_text", "treedef_changes"]
