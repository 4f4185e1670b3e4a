"""Explaining retraces: what a compiled program depends on, and how two traces differ, per parameter.

A trace's *signature* maps each parameter to what the compiled program depends on: the frozen key of a static
value, or the shapes, dtypes and pytree structure of a dynamic one. A retrace is explained by comparing its signature
with the most similar earlier one, parameter by parameter, so the blame lands on the parameter that changed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

import jax

from . import _freeze, _tree_diff


@dataclasses.dataclass(frozen=True)
class DynamicSig:
    """What a dynamic argument contributes to a compiled program: its pytree structure and leaf types."""

    treedef: Any
    leaves: tuple[tuple[str, str], ...]  # (path inside the argument, "float32[3]")


@dataclasses.dataclass(frozen=True)
class StaticSig:
    key: Any


Signature = Mapping[str, "DynamicSig | StaticSig"]


def aval_str(leaf: Any) -> str:
    """``float32[3]``, with ``(weak type)`` for Python scalars: what a dynamic leaf compiles for."""
    aval = getattr(leaf, "aval", leaf)
    if not hasattr(aval, "dtype"):
        return type(leaf).__name__
    text = _freeze.shaped(aval)
    return text + " (weak type)" if getattr(aval, "weak_type", False) else text


def dynamic_sig(value: Any) -> DynamicSig:
    leaves, treedef = jax.tree_util.tree_flatten_with_path(value)
    return DynamicSig(treedef, tuple((jax.tree_util.keystr(p), aval_str(x)) for p, x in leaves))


def _diff_param(label: str, old: DynamicSig | StaticSig, new: DynamicSig | StaticSig) -> list[str]:
    if isinstance(old, StaticSig) and isinstance(new, StaticSig):
        return _freeze.diff(label, old.key, new.key)
    if isinstance(old, DynamicSig) and isinstance(new, DynamicSig):
        if old.treedef != new.treedef:  # a jaxstatic.dataclass's static fields are named one by one
            return (_tree_diff.treedef_changes(label, old.treedef, new.treedef)
                    or [f"{label}: pytree structure {old.treedef} -> {new.treedef}"])
        return [f"{label}{p}: {a} -> {b}" for (p, a), (_, b) in zip(old.leaves, new.leaves) if a != b]
    return [f"{label}: static/dynamic split changed"]


def explain(old: Signature, new: Signature) -> list[str]:
    """Per-parameter differences between two signatures."""
    out: list[str] = []
    for label in new:
        if label not in old:
            out.append(f"{label}: now given (was absent)")
        elif old[label] != new[label]:
            out.extend(_diff_param(label, old[label], new[label]) or [f"{label}: changed"])
    out.extend(f"{label}: now absent (was given)" for label in old if label not in new)
    return out


def _distance(changes: list[str]) -> int:
    """How far apart two traces are: a changed pytree structure counts more than a changed leaf."""
    return sum(2 if " pytree structure " in c else 1 for c in changes)


def blame(history: list[Signature], signature: Signature) -> list[str]:
    """The differences from the most similar earlier signature (the latest among equals)."""
    diffs = [explain(old, signature) for old in reversed(history)]
    return min(diffs, key=_distance)
