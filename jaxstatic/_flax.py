"""``jaxstatic.dataclass`` classes registered with ``flax.serialization``, without importing flax.

``flax.serialization.to_state_dict``/``from_state_dict`` (and ``to_bytes``/``from_bytes``, and the checkpointing
built on them) look classes up in a registry by exact type; an unregistered class is an opaque leaf ("can not
serialize"). ``flax.struct`` and ``jax_dataclasses`` register theirs. A class is registered as it is registered with
JAX: its children are the state, by field name, and its ``Static`` fields are kept from the target, as
``flax.struct`` keeps its ``pytree_node=False`` fields.

Importing flax costs seconds, so jaxstatic never does. When ``flax.serialization`` is already imported, a class is
registered at once. Otherwise it waits in a weak set, and one finder at the front of ``sys.meta_path`` waits for
``flax.serialization`` to be imported: for every other module it answers ``None`` at once (a string comparison per
first import of a module, against the milliseconds an import takes); for that one it lets the other finders find
it and runs the registrations after the module has executed. It removes itself then. An import hook was chosen over
checking ``sys.modules`` at each construction or flatten: that would cost every call something, and would still miss
instances built before flax was imported.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
import types
import weakref
from collections.abc import Callable, Sequence
from typing import Any

_MODULE = "flax.serialization"
_pending: weakref.WeakKeyDictionary[type, Callable[[Any], None]] = weakref.WeakKeyDictionary()
_lock = threading.Lock()


def register(cls: type, children: tuple[str, ...], rebuild: Callable[[Any, dict[str, Any]], Any]) -> None:
    """Register ``cls`` with ``flax.serialization`` now if it is imported, else when it is."""
    install = _installer(cls, children, rebuild)
    serialization = sys.modules.get(_MODULE)
    if serialization is not None and hasattr(serialization, "register_serialization_state"):
        install(serialization)
        return
    with _lock:
        _pending[cls] = install
        if not any(isinstance(f, _Finder) for f in sys.meta_path):
            sys.meta_path.insert(0, _Finder())


def _installer(cls: type, children: tuple[str, ...],
               rebuild: Callable[[Any, dict[str, Any]], Any]) -> Callable[[Any], None]:
    def install(serialization: Any) -> None:
        def to_state_dict(x: Any) -> dict[str, Any]:
            return {name: serialization.to_state_dict(getattr(x, name)) for name in children}

        def from_state_dict(x: Any, state: dict[str, Any]) -> Any:
            state = dict(state)
            updates = {}
            for name in children:
                if name not in state:
                    raise ValueError(f"Missing field {name} in state dict while restoring an instance of "
                                     f"{cls.__name__}, at path {serialization.current_path()}")
                updates[name] = serialization.from_state_dict(getattr(x, name), state.pop(name), name=name)
            if state:
                raise ValueError(f'Unknown field(s) "{",".join(state)}" in state dict while restoring an instance '
                                 f"of {cls.__name__} at path {serialization.current_path()}")
            return rebuild(x, updates)

        serialization.register_serialization_state(cls, to_state_dict, from_state_dict, override=True)

    return install


def _flush(serialization: Any) -> None:
    with _lock:
        installs = list(_pending.values())
        _pending.clear()
        sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, _Finder)]
    for install in installs:
        install(serialization)


class _Finder(importlib.abc.MetaPathFinder):
    """Answers ``None`` for every module but ``flax.serialization``, whose loader it wraps."""

    def find_spec(self, fullname: str, path: Sequence[str] | None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != _MODULE:
            return None
        for finder in sys.meta_path:
            if finder is self or isinstance(finder, _Finder):
                continue
            find = getattr(finder, "find_spec", None)
            spec: importlib.machinery.ModuleSpec | None = find(fullname, path, target) if find is not None else None
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _Loader(spec.loader)
                return spec
        return None


class _Loader(importlib.abc.Loader):
    """The real loader, then the waiting registrations."""

    def __init__(self, loader: Any) -> None:
        self._loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        module: types.ModuleType | None = self._loader.create_module(spec)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        self._loader.exec_module(module)
        _flush(module)

    def __getattr__(self, name: str) -> Any:  # get_source, get_code, ...: the real loader's
        return getattr(self._loader, name)


__all__ = ["register"]
