"""A static value checked against ``T`` of its ``Static[T]`` annotation, when a new static value is seen.

A static value is used as it is: a list given to ``l2_norm_clip: Static[float]`` is frozen and compiled for, and the
body then fails deep inside JAX (``unsupported operand type(s) for /: 'BatchTracer' and 'list'``) or, worse, computes
something else. jaxstatic checks each static value against its declared type on a cache miss -- never on a hit,
where the value is one already seen -- and issues ``StaticTypeWarning`` once per function and parameter;
``warnings.filterwarnings("error", category=jaxstatic.StaticTypeWarning)`` makes it an error.

The check is typeguard's ``check_type``: deterministic (every item of a container is checked, so a warning does not
depend on which item a sampler happened to pick), and PEP 484's numeric tower (an ``int`` for a ``float``) is
accepted, NumPy's scalars too (``np.int64(3)`` for ``Static[int]``, as ``jax.jit`` takes it: code moved from
``static_argnums`` to ``Static[int]`` keeps running where a count arrives as a NumPy integer). ``Static[Any]`` and ``Static[object]`` accept anything; a hint typeguard cannot check is skipped, never
reported (a false alarm costs more than a missed one), and so is a ``T`` that does not resolve (imported only under
``if TYPE_CHECKING:``): the parameter is static all the same. Parameters made static by ``static_argnames`` have no ``T``.

Cost: nothing on the cache-hit path; on a miss, one ``check_type`` per static value (microseconds, against the
milliseconds of a trace), after one read of the annotations per function.
"""

from __future__ import annotations

import contextlib
import re
import reprlib
import warnings
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Final, get_args

import numpy as np

from . import _lazy
from ._annotations import expanded, function_hints, is_static_annotation, unwrap
from ._errors import StaticTypeWarning, static_type_message

_Types = dict[str, tuple[Any, str]]  # parameter -> (T, "one" | "each" (*args) | "values" (**kwargs))

# per function: the annotations object read, and what it declares (read again once the annotations are replaced, as
# autoreload or a debugger does)
_types: weakref.WeakKeyDictionary[Any, tuple[object, _Types]] = weakref.WeakKeyDictionary()
_warned: weakref.WeakKeyDictionary[Any, set[str]] = weakref.WeakKeyDictionary()
_ANYTHING = (Any, object)
_repr = reprlib.Repr()
_repr.maxstring = _repr.maxother = 60


def check(fn: Callable[..., Any], function: str, statics: Mapping[str, Any]) -> None:
    """Warn about each value of ``statics`` (by parameter name) that is not an instance of its ``Static[T]``.

    Called on a cache miss with the caller's own values. A stack of transforms reads the same function, so it
    warns once for it (keyed by the function that declares the annotations).
    """
    target = unwrap(fn)
    types = _declared(target)
    for name, value in statics.items():
        declared = types.get(name)
        if declared is None or declared[0] in _ANYTHING:
            continue
        reason = _mismatch(value, *declared)
        if reason is None or not _first(target, name):
            continue
        from ._hidden import user_stacklevel  # a warning's path alone loads it

        warnings.warn(StaticTypeWarning(static_type_message(function, name, _type_text(declared[0]),
                                                            _repr.repr(value), reason)),
                      stacklevel=user_stacklevel())


def _declared(target: Any) -> _Types:
    """``T`` of each ``Static[T]`` parameter of ``target``, read once per function (none when they do not read)."""
    try:
        read, declared = _types[target]
        if read is _lazy.token(target):
            return declared
    except (KeyError, TypeError):
        pass
    found: _Types = {}
    try:
        hints = function_hints(target, "")  # a Static[T] whose T does not resolve: Static[Any], not checked
        parameters = _lazy.signature(target).parameters
    except Exception:  # the layout read them already; whatever else fails here is no reason to fail a call
        hints, parameters = {}, {}  # type: ignore[assignment]
    for name, hint in hints.items():
        p = parameters.get(name)
        if p is None or not is_static_annotation(hint):
            continue
        how = "each" if p.kind is p.VAR_POSITIONAL else "values" if p.kind is p.VAR_KEYWORD else "one"
        try:
            found[name] = (expanded(get_args(hint)[0]), how)  # Static[Alias]: the alias's value is checked
        except NameError:  # an alias whose value cannot be read yet: not checked
            continue
    with contextlib.suppress(TypeError):  # not weakly referable: read again on the next miss
        _types[target] = _lazy.token(target), found
    return found


def declared_types(fn: Callable[..., Any]) -> dict[str, Any]:
    """``T`` of each ``Static[T]`` parameter of the function behind ``fn`` (``_declared``, read once per function)."""
    return {name: declared for name, (declared, _) in _declared(unwrap(fn)).items()}


def _mismatch(value: Any, declared: Any, how: str) -> str | None:
    """typeguard's reason why ``value`` is not a ``declared``, or ``None`` when it is (or cannot be checked)."""
    from typeguard import CollectionCheckStrategy, TypeCheckError

    items = value if how == "each" else value.values() if how == "values" else (value,)
    for item in items:
        if _numpy_scalar_of(item, declared):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # typeguard's own warnings about hints it cannot check
                check_type(item, declared, collection_check_strategy=CollectionCheckStrategy.ALL_ITEMS)
        except TypeCheckError as err:
            return re.sub(r"\s+", " ", str(err)).strip()
        except Exception:  # a hint typeguard does not handle: silent, never a false alarm
            return None
    return None


_NUMPY_KINDS: Final = {bool: "b", int: "biu", float: "biuf", complex: "biufc"}
"""The NumPy scalar kinds each builtin number accepts, following the numeric tower (``bool`` < ``int`` < ...)."""


def _numpy_scalar_of(value: Any, declared: Any) -> bool:
    """Whether ``value`` is a NumPy scalar of the builtin number type ``declared`` (``np.int64`` for ``int``)."""
    kinds = _NUMPY_KINDS.get(declared) if isinstance(declared, type) else None
    return kinds is not None and isinstance(value, np.generic) and value.dtype.kind in kinds


def check_type(value: Any, expected: Any, **options: Any) -> Any:
    """typeguard's ``check_type``, imported by the first check, not with jaxstatic (~8 ms of import time that a
    program without ``Static[T]`` values to check never needs)."""
    import typeguard

    return typeguard.check_type(value, expected, **options)


def _first(target: Any, name: str) -> bool:
    """Whether this is the first mismatch reported for ``target``'s parameter ``name``."""
    try:
        seen = _warned.setdefault(target, set())
    except TypeError:
        return True
    if name in seen:
        return False
    seen.add(name)
    return True


def _type_text(hint: Any) -> str:
    """``float``, ``list[float]``, ``Callable[[jax.Array], jax.Array]``: the type as it is written."""
    if isinstance(hint, type) and not get_args(hint):
        return hint.__qualname__ if hint.__module__ == "builtins" else f"{hint.__module__}.{hint.__qualname__}"
    return re.sub(r"\b(?:typing|collections\.abc|typing_extensions)\.", "", repr(hint))


__all__ = ["declared_types", "check"]
