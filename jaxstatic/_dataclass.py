"""``jaxstatic.dataclass``: frozen dataclasses that are pytrees, whose ``Static[...]`` fields are metadata.

Design, and what it costs (``benchmarks/dataclass.py``):

- Which fields are static is read from the annotations (``_static_fields``), once per class: at decoration, or at
  the first construction when a forward reference cannot be resolved before.
- Static values are frozen by the static-hashable rule (``_freeze.freeze``) when the object is built, so a value
  that cannot be static fails there, naming class, field and path. Their keys, with the values, make one
  ``StaticFields`` object: the pytree's metadata. Unflatten hands it on, so what ``tree_map``, ``grad`` and ``jit``
  return shares it, and JAX compares their treedefs by identity.
- The class is registered with ``jax.tree_util.register_dataclass``, whose flatten runs in C++: children and the
  ``StaticFields`` (one hidden metadata attribute, ``__jaxstatic_aux__``) are read with ``getattr``, no Python
  frame. JAX's unflatten calls the class with that attribute as a keyword; ``__new__`` recognises it and fills
  ``__dict__`` directly, and no ``__init__`` a user can see runs (``_make_new``), so converters and checks run
  once, at construction, never on JAX's placeholder leaves, and a checker wrapped around ``__init__``
  (``@jaxtyped``, ``@beartype``) is never handed the hidden keyword. That costs a Python ``__new__`` and a
  ``__class__`` assignment per rebuilt node with Static fields: unflattening one such node measured 1.2-1.6 us
  slower than through a Python ``__init__`` (3.5 against 2.3-2.9 us, under load), while building one got faster.
  Flatten, and so the cache-hit dispatch of arguments, is untouched.
- ``__init__`` is the class's own, run between jaxstatic's steps by a twin with the same signature and
  annotations (``_init_twin``), so the checkers users put on the class check construction as they would without
  jaxstatic.
- A static value holding a ``dict``, ``list`` or ``set`` can change in place. Only instances holding one pay for
  that (``_static_values``): each flatten checks those containers, and a change gives a new ``StaticFields`` -- a
  retrace, never a stale program. Unflatten gives such fields a fresh copy rebuilt from the key, so nothing a user
  mutates can change what a treedef held in a cache says.
- A class with no static field, converter or ``__init__``/``__post_init__`` of its own is registered as the plain
  frozen dataclass it is. Measured against ``register_dataclass`` on 10- and 100-leaf models (medians, under
  load): flatten 0.95-1.00x, unflatten 1.00-1.02x, cache hits of ``jax.jit`` and ``jaxstatic.jit`` 0.99-1.01x;
  ``equinox.Module`` flattens 8-19x slower, but unflattens 1.3x faster (it skips the constructor).
"""

from __future__ import annotations

import dataclasses
import operator
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

import jax
from typing_extensions import dataclass_transform

from . import _compat, _flax
from ._errors import unset_field_message
from ._init_twin import twin
from ._static_fields import static_names
from ._static_values import (
    AUX,
    BUILDING,
    CurrentStatics,
    StaticFields,
    restore_statics,
    statics_of,
    store,
)
from ._tree_eq import tree_eq, tree_hash
from ._tree_repr import tree_repr

_T = TypeVar("_T")

STATE = "__jaxstatic_class__"  # class attribute of each decorated class: its _ClassState
_CONVERTER = "jaxstatic.converter"  # dataclasses.Field.metadata key of field(converter=...)


# ---------------------------------------------------------------------------------------------------------------
# field()


@overload
def field(*, default: _T, converter: Callable[[Any], Any] | None = None, init: bool = True, repr: bool = True,
          metadata: Mapping[Any, Any] | None = None, kw_only: bool = ...) -> _T: ...
@overload
def field(*, default_factory: Callable[[], _T], converter: Callable[[Any], Any] | None = None, init: bool = True,
          repr: bool = True, metadata: Mapping[Any, Any] | None = None, kw_only: bool = ...) -> _T: ...
@overload
def field(*, converter: Callable[[Any], Any] | None = None, init: bool = True, repr: bool = True,
          metadata: Mapping[Any, Any] | None = None, kw_only: bool = ...) -> Any: ...
def field(*, default: Any = dataclasses.MISSING, default_factory: Any = dataclasses.MISSING,
          converter: Callable[[Any], Any] | None = None, init: bool = True, repr: bool = True,
          metadata: Mapping[Any, Any] | None = None, kw_only: Any = dataclasses.MISSING) -> Any:
    """A field of a ``jaxstatic.dataclass``: ``dataclasses.field`` plus ``converter``.

    ``converter`` is applied to the field's value (given or default) once, when the object is built, before
    ``__post_init__``; never when JAX rebuilds the object from its leaves. Whether a field is static is decided
    by its annotation (``Static[...]``), not here.
    """
    meta = dict(metadata or {})
    if converter is not None:
        meta[_CONVERTER] = converter
    return dataclasses.field(default=default, default_factory=default_factory, init=init, repr=repr,
                             metadata=meta, kw_only=kw_only)


# ---------------------------------------------------------------------------------------------------------------
# One decorated class


class _ClassState:
    """What jaxstatic knows about one decorated class. The static/child split is resolved at most once."""

    def __init__(self, cls: type, frozen: bool) -> None:
        self.cls, self.frozen = cls, frozen
        self.fields = dataclasses.fields(cls)
        self.converters = tuple((f.name, f.metadata[_CONVERTER]) for f in self.fields if _CONVERTER in f.metadata)
        self.repr_fields = tuple(f.name for f in self.fields if f.repr)
        self.unset: tuple[str, ...] = ()  # fields an __init__ may leave unassigned: custom ones, init=False
        self.registered = False
        self.children: tuple[str, ...] = ()
        self.statics: tuple[str, ...] = ()
        self.empty = StaticFields((), (), (), ())
        self.get_statics: Callable[[Any], tuple[Any, ...]] = lambda o: ()

    def resolve(self, final: bool) -> bool:
        """Split the fields. Before the first instance exists (``final=False``) only when every annotation's
        outermost part resolves: a forward reference may name an alias defined later in the module."""
        names = [f.name for f in self.fields]
        statics = static_names(self.cls, names, final)
        if statics is None:
            return False
        self.statics, self.children = statics, tuple(n for n in names if n not in statics)
        self.get_statics = _getter(statics)
        return True

    def plain(self, body: dict[str, Any], init: bool) -> bool:
        """No static field, converter, ``__post_init__`` or own ``__init__``: then the class is registered as
        the plain frozen dataclass it is, and costs exactly what ``register_dataclass`` costs; JAX's unflatten
        calling its generated ``__init__`` runs no code of the user's."""
        return (init and not self.statics and not self.converters and all(f.init for f in self.fields)
                and "__init__" not in body and not hasattr(self.cls, "__post_init__"))

    def register(self, plain: bool = False) -> None:
        with _REGISTERING:
            if not self.registered:  # another thread may have built the first instance too
                _register(self.cls, self.children, self.statics, plain)
                _flax.register(self.cls, self.children, _replace if plain else _rebuild)
                self.registered = True


_REGISTERING = threading.Lock()


def _register(cls: type, children: tuple[str, ...], statics: tuple[str, ...], plain: bool) -> None:
    """``register_dataclass`` with the children as data fields and the hidden attribute as the only metadata
    field (none for a plain class).

    JAX's unflatten passes them to the class by keyword (``__init__`` recognises the hidden one), and its
    registration checks that they are exactly the ``__init__`` fields less ``drop_fields``. For that check only,
    the hidden attribute is listed as a field and fields outside ``__init__`` are marked as inside; ``fields()``,
    ``replace()`` and ``asdict()`` never see either.
    """
    if plain:
        jax.tree_util.register_dataclass(cls, data_fields=children, meta_fields=[])
        return
    fields: dict[str, Any] = cls.__dict__["__dataclass_fields__"]
    outside = [f for f in fields.values() if not f.init]
    fields[AUX] = dataclasses.fields(dataclasses.make_dataclass("Metadata", [(AUX, StaticFields)]))[0]
    try:
        for f in outside:
            f.init = True
        _compat.register_dataclass(cls, data_fields=children, meta_fields=[AUX], drop_fields=statics)
    finally:
        del fields[AUX]
        for f in outside:
            f.init = False


def _rebuild(o: Any, children: dict[str, Any]) -> Any:
    """``o`` with other children and the same static fields, built as JAX's unflatten builds it (no ``__init__``)."""
    return type(o)(**children, **{AUX: getattr(o, AUX)})


def _replace(o: Any, children: dict[str, Any]) -> Any:
    return dataclasses.replace(o, **children)


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A tuple of the named attributes, built in C (``attrgetter``) for two names or more."""
    if len(names) >= 2:
        return operator.attrgetter(*names)
    if len(names) == 1:
        get = operator.attrgetter(names[0])
        return lambda o: (get(o),)
    return lambda o: ()


# ---------------------------------------------------------------------------------------------------------------
# Building an instance: converters, then the static check and keys


def _convert(o: Any, state: _ClassState) -> None:
    for name, converter in state.converters:
        object.__setattr__(o, name, converter(getattr(o, name)))


def _make_init(state: _ClassState, init: Callable[..., None]) -> Callable[..., None]:
    """The class's ``__init__`` with assignment opened before it and the object finished after it, under the
    same signature (``_init_twin``), so that ``@beartype`` or ``@jaxtyped`` put on the class still check it."""
    cls = state.cls

    def start(self: Any) -> None:
        if type(self) is cls:  # else super().__init__() from a subclass, which finishes the object itself
            self.__dict__[BUILDING] = True

    def finish(self: Any) -> None:
        if type(self) is not cls:
            return
        d = self.__dict__
        if not state.registered:
            state.resolve(final=True)
            state.register()
        if state.unset:
            _take_class_attributes(self, d, state)
        if d.pop(BUILDING) and state.converters:  # still True: __post_init__ did not run the converters
            _convert(self, state)
        store(d, statics_of(self, state))

    return twin(init, cls, start, finish)


def _take_class_attributes(o: Any, d: dict[str, Any], state: _ClassState) -> None:
    """A field a custom ``__init__`` left unassigned takes the value a class attribute gives it (as in Equinox:
    ``config = ["a", "b"]`` in a subclass over an inherited field); one without any value is an error now, not at
    the first flatten."""
    for name in state.unset:
        if name not in d:
            try:
                d[name] = getattr(o, name)
            except AttributeError:
                raise TypeError(unset_field_message(_name(state.cls), name)) from None


def _make_new(state: _ClassState) -> staticmethod[..., Any]:
    """``__new__``, which rebuilds the object when JAX's unflatten calls the class (``cls(**children,
    __jaxstatic_aux__=...)``) without running any ``__init__`` a user or a checker can see.

    ``type.__call__`` runs the ``__init__`` of the type of what ``__new__`` returns. So the rebuilt object is
    returned as an instance of a hidden subclass whose ``__init__`` only turns it into an instance of the class
    itself (``__class__`` assignment, allowed between a class and a subclass of the same layout). The class's own
    ``__init__``, and whatever ``@jaxtyped``, ``@beartype`` or typeguard wrapped it in, never sees JAX's
    placeholder leaves or the hidden keyword. The hidden subclass is made once, at decoration; like any
    subclass it runs the class's ``__init_subclass__`` and shows in ``__subclasses__()``.
    """
    cls = state.cls
    previous: Any = cls.__new__
    rebuilt = _rebuilt_class(cls)

    def __new__(klass: type, *args: Any, **kwargs: Any) -> Any:
        if AUX in kwargs and klass is cls:  # JAX's unflatten: the children by name, and the metadata
            o: Any = object.__new__(rebuilt)
            d = o.__dict__
            d.update(kwargs)
            if state.statics:  # read here: a forward reference may resolve them at the first instance
                restore_statics(d, state.statics)
            return o
        return object.__new__(klass) if previous is object.__new__ else previous(klass, *args, **kwargs)

    return staticmethod(__new__)


def _rebuilt_class(cls: type) -> type:
    def __init__(self: Any, **kwargs: Any) -> None:
        object.__setattr__(self, "__class__", cls)

    __init__.__jaxstatic_guard__ = None  # type: ignore[attr-defined]  # not an undecorated subclass
    return type(cls)(cls.__name__, (cls,), {"__init__": __init__, "__module__": cls.__module__,
                                           "__qualname__": cls.__qualname__, STATE: cls.__dict__[STATE]})


def _make_post_init(cls: type, user: Callable[..., None] | None) -> Callable[..., None]:
    """Converters before the user's ``__post_init__``, so that it sees converted values."""

    def __post_init__(self: Any, *initvars: Any) -> None:
        d = self.__dict__
        if type(self) is cls and d.get(BUILDING):
            _convert(self, cls.__dict__[STATE])
            d[BUILDING] = False  # converted
        if user is not None:
            user(self, *initvars)

    __post_init__.__jaxstatic_user__ = user  # type: ignore[attr-defined]
    return __post_init__


def _guard_subclasses(base: type) -> classmethod[Any, ..., None]:
    """``__init_subclass__``: a subclass gets an ``__init__`` that refuses to build an undecorated class, which JAX
    would take for a leaf; decorating the subclass removes it again (``_unguard``)."""
    previous = base.__dict__.get("__init_subclass__")

    def __init_subclass__(sub: type, **kwargs: Any) -> None:
        own = sub.__dict__.get("__init__")
        if not hasattr(own, "__jaxstatic_guard__"):
            sub.__init__ = _refusing_init(sub, base, own)  # type: ignore[misc]
        if previous is not None:
            previous.__func__(sub, **kwargs)
        else:
            super(base, sub).__init_subclass__(**kwargs)  # type: ignore[arg-type]  # a class held in a variable

    return classmethod(__init_subclass__)


def _refusing_init(sub: type, base: type, own: Callable[..., None] | None) -> Callable[..., None]:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if STATE not in type(self).__dict__:
            raise TypeError(f"{_name(type(self))} inherits from the jaxstatic dataclass {_name(base)} but is not "
                            "decorated itself, so JAX would treat it as a leaf. Decorate it with "
                            "@jaxstatic.dataclass.")
        if own is not None:
            own(self, *args, **kwargs)
        else:
            super(sub, self).__init__(*args, **kwargs)  # type: ignore[arg-type]  # a class held in a variable

    __init__.__jaxstatic_guard__ = own  # type: ignore[attr-defined]
    return __init__


def _unguard(cls: type) -> None:
    init: Any = cls.__dict__.get("__init__")
    if hasattr(init, "__jaxstatic_guard__"):
        own = init.__jaxstatic_guard__
        if own is None:
            del cls.__init__  # type: ignore[misc]
        else:
            cls.__init__ = own  # type: ignore[misc]


def _name(cls: type) -> str:
    return cls.__qualname__.rpartition("<locals>.")[2]


def _make_setattr(state: _ClassState) -> tuple[Callable[..., None], Callable[..., None]]:
    """Assignment is open while ``__init__`` runs (``self.x = ...`` in a custom ``__init__``), then closed when
    frozen; on a class with ``frozen=False``, assigning a static field freezes its value again."""

    def __setattr__(self: Any, name: str, value: Any) -> None:
        d = self.__dict__
        if BUILDING not in d:
            if state.frozen:
                raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
            object.__setattr__(self, name, value)
            if name in state.statics:
                store(d, statics_of(self, state))
            return
        object.__setattr__(self, name, value)

    def __delattr__(self: Any, name: str) -> None:
        if state.frozen and BUILDING not in self.__dict__:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        object.__delattr__(self, name)

    return __setattr__, __delattr__


# ---------------------------------------------------------------------------------------------------------------
# The decorator


def _repr(self: Any) -> str:
    return tree_repr(self, lambda o: type(o).__dict__[STATE].repr_fields)


@overload
def dataclass(cls: type[_T], /) -> type[_T]: ...
@overload
def dataclass(*, init: bool = True, repr: bool = True, eq: bool = True, frozen: bool = True,
              match_args: bool = True, kw_only: bool = False) -> Callable[[type[_T]], type[_T]]: ...
@dataclass_transform(frozen_default=True, field_specifiers=(field, dataclasses.field))
def dataclass(cls: type[_T] | None = None, /, *, init: bool = True, repr: bool = True, eq: bool = True,
              frozen: bool = True, match_args: bool = True, kw_only: bool = False) -> Any:
    """A dataclass that is a JAX pytree: fields annotated ``Static[...]`` are metadata, the others children.

    Frozen unless ``frozen=False``; ``init``, ``repr``, ``match_args`` and ``kw_only`` as for
    ``dataclasses.dataclass``. Not offered: ``order`` (arrays have no order), ``unsafe_hash`` (see below) and
    ``slots``. A static field's value must be static-hashable (hashable, or builtin containers of such); one that
    is not raises ``NonStaticValueError`` when the object is built. Equal static values give equal tree
    structures, so ``jax.jit`` and ``jaxstatic.jit`` reuse their programs; a static container changed in place
    gives another structure, so they retrace. With ``eq`` (the default): ``==`` compares static fields, structure
    and leaf values and never raises; ``hash()`` works for frozen instances without arrays or mutable static
    containers and raises ``NonStaticValueError`` for the others. Subclasses must be decorated too.
    """
    options = {"init": init, "repr": repr, "eq": eq, "frozen": frozen, "match_args": match_args, "kw_only": kw_only}
    if cls is None:
        return lambda c: _decorate(c, **options)
    return _decorate(cls, **options)


def _decorate(cls: type[_T], *, init: bool, repr: bool, eq: bool, frozen: bool, match_args: bool,
              kw_only: bool) -> type[_T]:
    if STATE in cls.__dict__:
        raise TypeError(f"{_name(cls)} is already a jaxstatic dataclass.")
    _unguard(cls)
    body = dict(cls.__dict__)
    if _has_converters(cls, body):  # run them before the user's __post_init__
        user = body.get("__post_init__", getattr(cls, "__post_init__", None))
        cls.__post_init__ = _make_post_init(cls, getattr(user, "__jaxstatic_user__", user))  # type: ignore[attr-defined]
    cls = dataclasses.dataclass(cls, init=init, repr=False, eq=False, frozen=frozen, match_args=match_args,
                                kw_only=kw_only)
    state = _ClassState(cls, frozen)
    custom_init = not init or "__init__" in body  # else dataclasses' __init__ assigns every init field
    state.unset = tuple(f.name for f in state.fields if custom_init or not f.init)
    methods: dict[str, Any] = {STATE: state, "__init_subclass__": _guard_subclasses(cls)}
    if eq and "__eq__" not in body:
        methods["__eq__"] = tree_eq
        if "__hash__" not in body:  # like dataclasses: an object that can change has no hash
            methods["__hash__"] = tree_hash if frozen else None
    if repr and "__repr__" not in body:
        methods["__repr__"] = _repr
    resolved = state.resolve(final=False)
    plain = resolved and state.plain(body, init)
    if not plain:
        methods["__init__"] = _make_init(state, cls.__init__)
        methods[AUX] = CurrentStatics(state)
        methods["__setattr__"], methods["__delattr__"] = _make_setattr(state)
    for name, method in methods.items():
        setattr(cls, name, method)
    if not plain:
        cls.__new__ = _make_new(state)  # type: ignore[method-assign]  # after STATE and the guard: it subclasses
    if resolved:  # else at the first construction
        state.register(plain)
    return cls


def _has_converters(cls: type, body: dict[str, Any]) -> bool:
    own = [v for v in body.values() if isinstance(v, dataclasses.Field)]
    inherited = dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ()
    return any(_CONVERTER in f.metadata for f in (*own, *inherited))


__all__ = ["STATE", "dataclass", "field"]
