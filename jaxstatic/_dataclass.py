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
  frame. JAX's unflatten calls the class with that attribute as a keyword; ``__init__`` recognises it and fills
  ``__dict__`` directly, so converters and checks run once, at construction, never on JAX's placeholder leaves.
- A static value holding a ``dict``, ``list`` or ``set`` can change in place. Only instances holding one pay for
  that: they keep no ``__jaxstatic_aux__`` of their own, so reading it falls through to a class-level descriptor
  that freezes those fields again and makes a new ``StaticFields`` when they changed -- a retrace, never a stale
  program. Unflatten gives such fields a fresh copy rebuilt from the key, so nothing a user mutates can change what
  a treedef held in a cache says.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import operator
import threading
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, overload

import jax
import jax.core
from typing_extensions import dataclass_transform

from . import _freeze
from ._errors import NonStaticValueError, static_field_message
from ._static_fields import static_names, static_names_by_head
from ._tree_eq import tree_eq, tree_hash
from ._tree_repr import callable_name, tree_repr

_T = TypeVar("_T")

AUX = "__jaxstatic_aux__"  # the metadata attribute JAX reads; in __dict__ when the instance's statics cannot change
_LAST = "__jaxstatic_last__"  # where an instance whose statics can change keeps its latest StaticFields
_SNAPSHOT = "__jaxstatic_snapshot__"  # ...and the entries of those containers when _LAST was made
_BUILDING = "__jaxstatic_building__"  # in __dict__ while __init__ runs
STATE = "__jaxstatic_class__"  # class attribute of each decorated class: its _ClassState
_CONVERTER = "jaxstatic.converter"  # dataclasses.Field.metadata key of field(converter=...)
_REGISTER_OPTIONS = inspect.signature(jax.tree_util.register_dataclass).parameters


class StaticFields:
    """The metadata of one instance: the frozen key of each static field (in field order) and the values.

    Compared by key and hashed once. ``mutable`` lists the fields whose key can change in place (a ``dict``,
    ``list`` or ``set`` inside): they are frozen again at each flatten and rebuilt from the key at each unflatten.
    """

    __slots__ = ("_hash", "key", "mutable", "names", "values")

    def __init__(self, names: tuple[str, ...], key: tuple[Any, ...], values: tuple[Any, ...],
                 mutable: tuple[int, ...]) -> None:
        self.names, self.key, self.values, self.mutable = names, key, values, mutable
        self._hash = hash(key)

    def __eq__(self, other: object) -> bool:
        return self is other or (type(other) is StaticFields and self._hash == other._hash and self.key == other.key)

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled as names and values, frozen again when loaded: keys hold classes such as ``function`` that
        pickle cannot name, and string hashes differ between processes."""
        return _refrozen, (self.names, self.fresh_values())

    def __repr__(self) -> str:  # shown inside PyTreeDef(...)
        return "{" + ", ".join(f"{n}={callable_name(v) or _freeze.describe(k)}"
                               for n, k, v in zip(self.names, self.key, self.values)) + "}"

    def fresh_values(self) -> tuple[Any, ...]:
        """The values for a rebuilt instance: shared when immutable, rebuilt from the key when mutable."""
        if not self.mutable:
            return self.values
        values = list(self.values)
        for i in self.mutable:
            values[i] = _freeze.thaw(self.key[i])
        return tuple(values)


def _refrozen(names: tuple[str, ...], values: tuple[Any, ...]) -> StaticFields:
    keys = tuple(map(_freeze.freeze, values))
    return StaticFields(names, keys, values, tuple(i for i, k in enumerate(keys) if not _freeze.is_immutable(k)))


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
        self.registered = False
        self.children: tuple[str, ...] = ()
        self.statics: tuple[str, ...] = ()
        self.empty = StaticFields((), (), (), ())
        self.get_statics: Callable[[Any], tuple[Any, ...]] = lambda o: ()

    def resolve(self, final: bool) -> bool:
        """Split the fields. Before the first instance exists (``final=False``) only when every annotation
        resolves: a forward reference may name a class defined later in the module."""
        names = [f.name for f in self.fields]
        statics = static_names(self.cls, names)
        if statics is None:
            if not final:
                return False
            statics = static_names_by_head(self.cls, names)
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
    options = {"drop_fields": statics} if "drop_fields" in _REGISTER_OPTIONS else {}
    try:
        for f in outside:
            f.init = True
        jax.tree_util.register_dataclass(cls, data_fields=children, meta_fields=[AUX], **options)
    finally:
        del fields[AUX]
        for f in outside:
            f.init = False


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """A tuple of the named attributes, built in C (``attrgetter``) for two names or more."""
    if len(names) >= 2:
        return operator.attrgetter(*names)
    if len(names) == 1:
        get = operator.attrgetter(names[0])
        return lambda o: (get(o),)
    return lambda o: ()


class _CurrentStatics:
    """The class-level ``__jaxstatic_aux__``, read only by instances that hold none of their own: those whose
    static fields hold a mutable container, and those whose ``__init__`` has not finished."""

    def __init__(self, state: _ClassState) -> None:
        self._state = state

    def __get__(self, o: Any, owner: type | None = None) -> Any:
        if o is None:
            return self
        d = o.__dict__
        last = d.get(_LAST)
        if last is None or _BUILDING in d:
            return _statics_of(o, self._state)
        return _refresh(o, last, self._state)


# ---------------------------------------------------------------------------------------------------------------
# Building an instance: converters, then the static check and keys


def _statics_of(o: Any, state: _ClassState) -> StaticFields:
    if not state.statics:
        return state.empty
    values = state.get_statics(o)
    try:
        keys = tuple(map(_freeze.freeze, values))
    except _freeze.Unfreezable:
        for name, value in zip(state.statics, values):
            _freeze_field(state, name, value)  # raises, naming the field
        raise
    if all(map(_freeze.is_immutable, keys)):
        return StaticFields(state.statics, keys, values, ())
    mutable = tuple(i for i, k in enumerate(keys) if not _freeze.is_immutable(k))
    return StaticFields(state.statics, keys, values, mutable)


def _store(d: dict[str, Any], s: StaticFields) -> None:
    """Keep ``s`` on an instance: as its own ``__jaxstatic_aux__`` (read by JAX in C) when it cannot change,
    else beside a snapshot of its mutable containers."""
    if not s.mutable:
        d.pop(_LAST, None)
        d.pop(_SNAPSHOT, None)
        d[AUX] = s
        return
    d.pop(AUX, None)
    d[_LAST] = s
    d[_SNAPSHOT] = tuple(_snapshot(d[s.names[i]]) for i in s.mutable)


def _refresh(o: Any, last: StaticFields, state: _ClassState) -> StaticFields:
    """The metadata of an instance with mutable static containers: the same object while they hold the same
    entries (checked by identity, cheaper than freezing them again), else frozen again, and new if they changed."""
    d = o.__dict__
    values = state.get_statics(o)
    snapshots = d.get(_SNAPSHOT)
    if snapshots is not None and all(map(_unchanged, [values[i] for i in last.mutable], snapshots)):
        return last
    key = list(last.key)
    for i in last.mutable:
        key[i] = _freeze_field(state, last.names[i], values[i], " (changed in place after the object was built)")
    current = last if tuple(key) == last.key else StaticFields(last.names, tuple(key), values, last.mutable)
    _store(d, current)
    return current


def _snapshot(value: Any) -> tuple[Any, ...] | None:
    """A ``dict`` or ``list`` of atomic entries (immutable, so the same objects give the same key), with its
    entries; None for other containers, which are frozen again at each flatten."""
    atomic = _freeze.ATOMIC
    if type(value) is dict and atomic.issuperset(map(type, value)) and atomic.issuperset(map(type, value.values())):
        return value, tuple(value), tuple(value.values())
    if type(value) is list and atomic.issuperset(map(type, value)):
        return value, tuple(value), ()
    return None


def _unchanged(value: Any, snapshot: tuple[Any, ...] | None) -> bool:
    if snapshot is None or value is not snapshot[0] or len(value) != len(snapshot[1]):
        return False
    if type(value) is dict:
        return all(map(operator.is_, value, snapshot[1])) and all(map(operator.is_, value.values(), snapshot[2]))
    return all(map(operator.is_, value, snapshot[1]))


def _freeze_field(state: _ClassState, name: str, value: Any, when: str = "") -> Any:
    try:
        return _freeze.freeze(value)
    except _freeze.Unfreezable:
        owner = state.cls.__name__
        path, leaf = _freeze.find_unfreezable(value)
        raise NonStaticValueError(static_field_message(
            owner, name, f"{owner}.{name}{path}", _freeze.type_name(leaf), _why_not_static(leaf), when)) from None


def _why_not_static(leaf: object) -> str:
    if _freeze.is_array(leaf):
        return ("an array's contents can change while it stays the same object, so a program compiled for it "
                "would go stale")
    try:
        hash(leaf)
    except TypeError as err:
        return f"it is not hashable ({err})"
    return "it cannot be frozen"


def _restore_statics(d: dict[str, Any], names: tuple[str, ...]) -> None:
    s: StaticFields = d[AUX]
    if s.mutable:
        d.update(zip(names, s.fresh_values()))
        _store(d, s)
    else:
        d.update(zip(names, s.values))


def _convert(o: Any, state: _ClassState) -> None:
    for name, converter in state.converters:
        object.__setattr__(o, name, converter(getattr(o, name)))


def _make_init(state: _ClassState, init: Callable[..., None]) -> Callable[..., None]:
    cls = state.cls

    @functools.wraps(init)
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        if AUX in kwargs:  # JAX's unflatten: the children by name, and the metadata
            d = self.__dict__
            d.update(kwargs)
            if state.statics:
                _restore_statics(d, state.statics)
            return
        if type(self) is not cls:  # super().__init__() from a subclass, which finishes the object itself
            init(self, *args, **kwargs)
            return
        d = self.__dict__
        d[_BUILDING] = True
        init(self, *args, **kwargs)
        if not state.registered:
            state.resolve(final=True)
            state.register()
        if d.pop(_BUILDING) and state.converters:  # still True: __post_init__ did not run the converters
            _convert(self, state)
        _store(d, _statics_of(self, state))

    return __init__


def _make_post_init(cls: type, user: Callable[..., None] | None) -> Callable[..., None]:
    """Converters before the user's ``__post_init__``, so that it sees converted values."""

    def __post_init__(self: Any, *initvars: Any) -> None:
        d = self.__dict__
        if type(self) is cls and d.get(_BUILDING):
            _convert(self, cls.__dict__[STATE])
            d[_BUILDING] = False  # converted
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
        if _BUILDING not in d:
            if state.frozen:
                raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
            object.__setattr__(self, name, value)
            if name in state.statics:
                _store(d, _statics_of(self, state))
            return
        object.__setattr__(self, name, value)

    def __delattr__(self: Any, name: str) -> None:
        if state.frozen and _BUILDING not in self.__dict__:
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
    and leaf values and never raises; ``hash()`` works for frozen instances without arrays and raises
    ``NonStaticValueError`` for those with arrays. Subclasses must be decorated too.
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
        methods[AUX] = _CurrentStatics(state)
        methods["__setattr__"], methods["__delattr__"] = _make_setattr(state)
    for name, method in methods.items():
        setattr(cls, name, method)
    if resolved:  # else at the first construction
        state.register(plain)
    return cls


def _has_converters(cls: type, body: dict[str, Any]) -> bool:
    own = [v for v in body.values() if isinstance(v, dataclasses.Field)]
    inherited = dataclasses.fields(cls) if dataclasses.is_dataclass(cls) else ()
    return any(_CONVERTER in f.metadata for f in (*own, *inherited))


__all__ = ["AUX", "STATE", "StaticFields", "dataclass", "field"]
