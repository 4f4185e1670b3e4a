"""Explaining retraces: what a compiled program depends on, and how two traces differ, per parameter.

A trace's *signature* maps each parameter to what the compiled program depends on: the frozen key of a static
value, or, for a dynamic one, its pytree structure and each leaf's shape, dtype, weak type and sharding (and, for
concrete arrays, whether they are committed to devices); and, under ``SETTINGS``, JAX's trace context (``jax.config``
flags and contexts: ``jax_enable_x64``, ``jax_default_matmul_precision``, ...): every reason ``jax.jit`` traces
again. A retrace is explained by comparing its signature with the most similar earlier one, parameter by parameter,
so the blame lands on the parameter (or the setting) that changed.

Explaining never breaks a call and its cost is bounded: choosing the most similar trace costs one equality test per
parameter and earlier trace (and, for a static value that differs, a count of the paths that differ), over the last
64 traces; only the chosen one is put in words (``_keytext``, and inside objects and pytree nodes ``_object_diff``).
Anything that fails while explaining (a user ``__eq__`` or ``__repr__`` that raises) gives a plainer explanation.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

import jax

from . import _compat
from ._freeze import shaped

# _keytext and _tree_diff (which reads jaxstatic dataclasses) put a retrace in words: loaded by the first
# explanation, not with jaxstatic (~15 ms of import time).


def describe(key: Any, limit: int | None = None) -> str:
    """``_keytext.describe``: a key as short text."""
    from . import _keytext

    return _keytext.describe(key) if limit is None else _keytext.describe(key, limit)


def diff(label: str, old: Any, new: Any) -> list[str]:
    """``_keytext.diff``: where two keys differ, in words."""
    from . import _keytext

    return _keytext.diff(label, old, new)


class LeafSig(NamedTuple):
    """One leaf of a dynamic argument, as far as compiling depends on it."""

    path: str  # inside the argument: "['w']"
    aval: str  # "float32[3]", "float32[] (weak type)", or the type name of a leaf that is not an array
    sharding: str | None  # "P('d',) over mesh d=4 (Explicit)"; None without a mesh
    placement: str | None  # concrete arrays only: "committed to TFRT_CPU_1", "uncommitted"; None when unknown


@dataclasses.dataclass(frozen=True)
class DynamicSig:
    """What a dynamic argument contributes to a compiled program: its pytree structure and leaf types."""

    treedef: Any
    leaves: tuple[LeafSig, ...]


@dataclasses.dataclass(frozen=True)
class StaticSig:
    key: Any


@dataclasses.dataclass(frozen=True)
class ContextSig:
    """JAX's trace context at a trace: the settings and contexts its caches are keyed on, by name."""

    names: tuple[str, ...]
    values: tuple[Any, ...]


Signature = Mapping[str, "DynamicSig | StaticSig | ContextSig"]

SETTINGS = "(JAX settings)"
"""The signature's entry for JAX's trace context: no parameter can be named so."""

NOTHING_SEEN = ("no argument changed in shape, dtype, weak type, pytree structure, sharding, committedness or static "
                "value, nor any JAX setting or context: JAX traced again for a reason outside them (JAX dropped the "
                "program from its own caches)")
"""Why a retrace happened when ``blame`` finds no difference and the caller knows no better reason."""


def dynamic_sig(value: Any) -> DynamicSig:
    """The signature of a dynamic argument: from tracers inside a trace, or from the concrete arguments."""
    leaves, treedef = jax.tree_util.tree_flatten_with_path(value)
    return DynamicSig(treedef, tuple(_leaf_sig(jax.tree_util.keystr(p), x) for p, x in leaves))


def call_signature(statics: Iterable[tuple[str, Any]], dynamics: Iterable[tuple[str, Any]],
                   passed: Iterable[tuple[str, Any]] = ()) -> Signature:
    """The signature of one trace: each static parameter's frozen key, each dynamic one's ``dynamic_sig``, how
    the ``passed`` ones were passed (``passed_by``), and JAX's trace context."""
    signature: dict[str, DynamicSig | StaticSig | ContextSig] = {name: StaticSig(key) for name, key in statics}
    signature.update((name, dynamic_sig(value)) for name, value in dynamics)
    signature.update(passed_by(passed))
    signature[SETTINGS] = ContextSig(*_compat.trace_context())
    return signature


def passed_by(dynamics: Iterable[tuple[str, Any]]) -> dict[str, StaticSig]:
    """How each named dynamic value of a call was passed, for a transform where that selects the program
    (``Layout.keyword_variants``: ``js.vmap`` and ``js.pmap`` map a value passed by keyword over axis 0), so that a
    retrace says ``y, passed by: 'position' -> 'keyword'``. ``dynamics`` as ``Plan.dynamics``."""
    return {f"{name}, passed by": StaticSig((str, "keyword" if src.kind == "kw" else "position"))
            for name, src in dynamics if src.kind in ("arg", "kw")}


def _leaf_sig(path: str, leaf: Any) -> LeafSig:
    try:
        aval = leaf.aval if isinstance(leaf, jax.core.Tracer) else _compat.typeof(leaf)
    except Exception:
        return LeafSig(path, type(leaf).__name__, None, None)
    if not hasattr(aval, "dtype"):
        return LeafSig(path, type(leaf).__name__, None, None)
    return LeafSig(path, aval_str(aval), _sharding_text(aval), _placement(leaf))


def aval_str(leaf: Any) -> str:
    """``float32[3]``, with ``(weak type)`` for Python scalars: what a dynamic leaf compiles for."""
    aval = getattr(leaf, "aval", leaf)
    if not hasattr(aval, "dtype"):
        return type(leaf).__name__
    text = shaped(aval)
    return text + " (weak type)" if getattr(aval, "weak_type", False) else text


def _sharding_text(aval: Any) -> str | None:
    sharding: Any = getattr(aval, "sharding", None)
    mesh = getattr(sharding, "mesh", None)
    if mesh is None or getattr(mesh, "empty", True):
        return None
    types = [getattr(k, "name", str(k)) for k in getattr(mesh, "axis_types", ())]
    if types and all(k == "Manual" for k in types):
        # Inside a pmap or shard_map body (pmap runs on shard_map from JAX 0.8): the per-device view, not a choice
        # the caller made, and pmap names its axis afresh on each trace.
        return None
    axes = ", ".join(f"{name}={size}" for name, size in mesh.shape.items())
    kinds = ", ".join(types)
    return f"{_compat.spec_text(sharding.spec)} over mesh {axes} ({kinds})"


def _placement(leaf: Any) -> str | None:
    if not isinstance(leaf, jax.Array) or isinstance(leaf, jax.core.Tracer):
        return None
    try:
        if not leaf.committed:
            return "uncommitted"
        devices = leaf.sharding.device_set
        return f"committed to {next(iter(devices))}" if len(devices) == 1 else f"committed to {len(devices)} devices"
    except Exception:
        return None


def _leaf_differs(a: LeafSig, b: LeafSig) -> bool:
    return (a.path != b.path or a.aval != b.aval or a.sharding != b.sharding
            or (None not in (a.placement, b.placement) and a.placement != b.placement))


def _diff_param(label: str, old: DynamicSig | StaticSig | ContextSig,
                new: DynamicSig | StaticSig | ContextSig) -> list[str]:
    if isinstance(old, ContextSig) and isinstance(new, ContextSig):
        return _context_changes(old, new)
    if isinstance(old, StaticSig) and isinstance(new, StaticSig):
        return diff(label, old.key, new.key)
    if isinstance(old, DynamicSig) and isinstance(new, DynamicSig):
        if old.treedef != new.treedef:  # a jaxstatic.dataclass's static fields are named one by one
            from . import _tree_diff

            return (_tree_diff.treedef_changes(label, old.treedef, new.treedef)
                    or _tree_diff.structure_changes(label, old.treedef, old.leaves, new.treedef, new.leaves)
                    or [_tree_diff.structure_text(label, old.treedef, new.treedef)])
        return [_leaf_change_text(label + a.path, a, b) for a, b in zip(old.leaves, new.leaves) if _leaf_differs(a, b)]
    return [f"{label}: static/dynamic split changed"]


def _context_changes(old: ContextSig, new: ContextSig) -> list[str]:
    """``the JAX setting jax_enable_x64: False -> True``: each entry of JAX's trace context that changed."""
    from ._keys import safe_repr
    from ._object_diff import sides

    if old.names != new.names:
        return ["JAX's settings and contexts changed (another set of them)"]
    return [f"the JAX {'setting' if name.startswith('jax_') else 'context'} {name}: "
            + " -> ".join(sides(safe_repr(a, 1000), safe_repr(b, 1000)))
            for name, a, b in zip(new.names, old.values, new.values) if not _same(a, b)]


def _leaf_change_text(where: str, a: LeafSig, b: LeafSig) -> str:
    if a.aval != b.aval:
        return f"{where}: {a.aval} -> {b.aval}"
    if a.sharding != b.sharding:
        return f"{where}: sharding {a.sharding or 'none (no mesh)'} -> {b.sharding or 'none (no mesh)'}"
    return f"{where}: {a.placement} -> {b.placement}"


def explain(old: Signature, new: Signature) -> list[str]:
    """Per-parameter differences between two signatures (empty when nothing visible differs)."""
    out: list[str] = []
    for label in new:
        if label == SETTINGS and label not in old:  # a build's signature holds no context
            continue
        if label not in old:
            out.append(f"{label}: now given (was absent)")
        elif not _same(old[label], new[label]):
            out.extend(_diff_param(label, old[label], new[label]))
    out.extend(f"{label}: now absent (was given)" for label in old if label not in new and label != SETTINGS)
    return out


def _same(a: object, b: object) -> bool:
    """``a == b`` for signatures, false when a user ``__eq__`` inside raises or answers something not a bool."""
    try:
        return a is b or (a == b) is True
    except Exception:
        return False


def _distance(new: Signature, old: Signature) -> int:
    """How far apart two traces are, over all parameters together: each changed leaf of a dynamic value counts 1,
    each changed path of a static value 1 (``_static_distance``), a changed pytree structure or an argument given or
    left out 2."""
    far = 0
    for label in new.keys() | old.keys():
        a, b = old.get(label), new.get(label)
        if a is None or b is None:
            far += 2
        elif _same(a, b):
            continue
        elif isinstance(a, DynamicSig) and isinstance(b, DynamicSig) and a.treedef == b.treedef:
            far += sum(map(_leaf_differs, a.leaves, b.leaves))
        elif isinstance(a, StaticSig) and isinstance(b, StaticSig):
            far += _static_distance(label, a.key, b.key)
        else:
            far += 2 if isinstance(a, DynamicSig) else 1
    return far


def _static_distance(label: str, old: Any, new: Any) -> int:
    """How many leaves of a static value differ (``cfg['LR']`` and ``cfg['T']``: 2), at least 1, from equality
    tests alone (nothing put in words): a sweep's retrace is compared with the trace that differs in fewest
    settings, not the latest one. Only retraces pay it."""
    return max(1, _tokens_differ(getattr(old, "key", old), getattr(new, "key", new)))


def _tokens_differ(a: Any, b: Any) -> int:
    """Frozen keys compared leaf by leaf: a leaf is a type token and the value after it (a packed node's types and
    values are two tuples, read side by side), and differs once whether its type, its value or both changed."""
    if type(a) is not type(b) or not isinstance(a, tuple) or len(a) != len(b):
        return 0 if _same(a, b) else 1
    far, i = 0, 0
    while i < len(a):
        x, y = a[i], b[i]
        if _types(x) and _types(y) and i + 1 < len(a) and _paired(x, a[i + 1]) and _paired(y, b[i + 1]):
            far += sum(not (_same(t, u) and _same(v, w)) for t, u, v, w in zip(x, y, a[i + 1], b[i + 1]))
            i += 2
        elif isinstance(x, type) and i + 1 < len(a) and not _same(x, y):
            far, i = far + 1, i + 2  # another type: one leaf, whatever its value
        else:
            far, i = far + (0 if x is y else _tokens_differ(x, y)), i + 1
    return far


def _types(token: Any) -> bool:
    return type(token) is tuple and all(isinstance(t, type) for t in token)


def _paired(types: tuple[Any, ...], values: Any) -> bool:
    return type(values) is tuple and len(values) == len(types)


def blame(history: list[Signature], signature: Signature) -> list[str]:
    """The differences from the most similar earlier signature (the latest among equals), in words; empty when no
    difference can be seen (the caller says why: ``NOTHING_SEEN``, or a reason it knows, such as an eviction).

    Never raises: when explaining fails, the parameters that changed are named without detail.
    """
    try:
        nearest = min(reversed(history), key=functools.partial(_distance, signature))
        return explain(nearest, signature)
    except Exception:
        return _plain(history, signature)


def _plain(history: list[Signature], signature: Signature) -> list[str]:
    try:
        last = history[-1]
        changed = [label for label in signature if label not in last or not _same(last[label], signature[label])]
        return [f"{label}: changed (jaxstatic could not say how)" for label in changed]
    except Exception:
        return ["the arguments changed (jaxstatic could not say how)"]
