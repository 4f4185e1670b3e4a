"""The static-hashable rule as one table of cases.

Two implementations judge the rule: the runtime (``jaxstatic._freeze``) judges *values*, the mypy plugin judges
*types*. Both read this table, so they cannot drift apart. Each case gives a value expression and the declared type
of that value, both evaluated in the namespace built by ``PRELUDE``.

``static``   -- may be bound to a ``Static[...]`` parameter (hashable, or a builtin container of static values).
``hashable`` -- plain ``hash()`` succeeds: what plain ``jax.jit(static_argnames=...)`` needs.
``path``     -- for non-static cases, where the offending leaf sits inside the value, as errors print it.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import Any

SLICE_HASHABLE = sys.version_info >= (3, 12)
"""Plain ``hash()`` of a slice works from Python 3.12; jaxstatic keys slices by their parts on every Python."""

PRELUDE = """\
import collections
import dataclasses
import types
from typing import Any, Callable, Generic, NamedTuple, TypedDict, TypeVar

import attrs
import jax
import jax.numpy as jnp
import numpy as np
import numpy.typing as npt


def relu(x: Any) -> Any:
    return x


@dataclasses.dataclass(frozen=True)
class FrozenCfg:
    lr: float
    depth: int


@dataclasses.dataclass(frozen=True)
class FrozenWithList:
    layers: list[int]


@dataclasses.dataclass
class MutableCfg:
    lr: float


class NoHash:
    __hash__ = None  # type: ignore[assignment]


class Point(NamedTuple):
    x: int
    y: int


class Layers(NamedTuple):
    sizes: list[int]


class Movie(TypedDict):
    title: str
    year: int


@dataclasses.dataclass(eq=False)
class Handle:
    n: int


@dataclasses.dataclass(unsafe_hash=True)
class UnsafeHash:
    n: int


@dataclasses.dataclass
class OwnHash:
    n: int

    def __hash__(self) -> int:
        return hash(self.n)


class Registry(dict[str, Any]):
    pass


class Widths(list[int]):
    pass


class Sizes(tuple[int, ...]):
    pass


class MaskCfg(TypedDict):
    lr: float
    masks: list[int]


class AnyCfg(TypedDict):
    w: Any


class Pair(NamedTuple):
    a: int
    b: Any


Legacy = collections.namedtuple("Legacy", ["a", "b"])


class ArrayMasks(TypedDict):
    lr: float
    masks: list[jax.Array]


@attrs.frozen
class AttrsCfg:
    lr: float


@attrs.frozen
class AttrsFrozenList:
    layers: list[int]


@attrs.define
class AttrsMutable:
    lr: float


@attrs.define(eq=False)
class AttrsHandle:
    layers: list[int]


@attrs.define(unsafe_hash=True)
class AttrsUnsafe:
    lr: float
    notes: list[str] = attrs.field(hash=False)


@attrs.frozen
class AttrsNotes:
    lr: float
    notes: list[str] = attrs.field(eq=False)


class Vec:
    def __init__(self, x: float, y: float) -> None:
        self.x, self.y = x, y

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vec) and (self.x, self.y) == (other.x, other.y)


class Vec3(Vec):
    pass


class Caseless(str):
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and self.lower() == other.lower()


@dataclasses.dataclass(frozen=True)
class Noted:
    lr: float
    notes: list[str] = dataclasses.field(default_factory=list, compare=False)


@dataclasses.dataclass(frozen=True)
class Tagged:
    lr: float
    tags: dict[str, int] = dataclasses.field(default_factory=dict, hash=False)


@dataclasses.dataclass(frozen=True, eq=False)
class Extended(FrozenCfg):
    extra: list[int] = dataclasses.field(default_factory=list)


class Shape(NamedTuple):
    dims: list[int]

    def __hash__(self) -> int:
        return hash(tuple(self.dims))


T = TypeVar("T")


@dataclasses.dataclass(frozen=True)
class Box(Generic[T]):
    item: T
"""


@dataclasses.dataclass(frozen=True)
class Case:
    id: str
    value: str
    type: str
    static: bool
    hashable: bool
    path: str = ""


CASES: tuple[Case, ...] = (
    # hashable leaves
    Case("int", "3", "int", True, True),
    Case("float", "0.5", "float", True, True),
    Case("bool", "True", "bool", True, True),
    Case("str", "'train'", "str", True, True),
    Case("none", "None", "None", True, True),
    Case("function", "relu", "Callable[[Any], Any]", True, True),
    Case("frozen_dataclass", "FrozenCfg(0.1, 2)", "FrozenCfg", True, True),
    Case("namedtuple", "Point(1, 2)", "Point", True, True),
    Case("tuple_of_ints", "(1, 2, 3)", "tuple[int, ...]", True, True),
    Case("tuple_of_functions", "(relu, relu)", "tuple[Callable[[Any], Any], ...]", True, True),
    Case("frozenset_of_str", "frozenset({'a', 'b'})", "frozenset[str]", True, True),
    Case("slice", "slice(0, 2)", "slice", True, SLICE_HASHABLE),
    Case("range", "range(3)", "range", True, True),
    Case("dict_tuple_keys", "{(1, 2): 'a'}", "dict[tuple[int, int], str]", True, False),
    # builtin containers of static values: frozen by jaxstatic, rejected by plain jax.jit
    Case("dict_of_ints", "{'a': 1, 'b': 2}", "dict[str, int]", True, False),
    Case("dict_of_functions", "{'fn': relu, 'act': relu}", "dict[str, Callable[[Any], Any]]", True, False),
    Case("list_of_ints", "[1, 2, 3]", "list[int]", True, False),
    Case("set_of_str", "{'a', 'b'}", "set[str]", True, False),
    Case("nested_dict_list", "{'layers': [1, 2], 'sizes': [3]}", "dict[str, list[int]]", True, False),
    Case("tuple_with_list", "(1, [2, 3])", "tuple[int, list[int]]", True, False),
    Case("list_of_frozen_dataclasses", "[FrozenCfg(0.1, 2)]", "list[FrozenCfg]", True, False),
    Case("namedtuple_with_list", "Layers([1, 2])", "Layers", True, False),
    Case("frozenset_of_tuples", "frozenset({(1, 2)})", "frozenset[tuple[int, int]]", True, True),
    Case("dataclass_eq_false", "Handle(1)", "Handle", True, True),
    Case("dataclass_unsafe_hash", "UnsafeHash(1)", "UnsafeHash", True, True),
    Case("dataclass_own_hash", "OwnHash(1)", "OwnHash", True, True),
    Case("union_with_a_static_member", "3", "int | jax.Array", True, True),
    Case("typed_dict", "Movie(title='x', year=1)", "Movie", True, False),
    Case("typed_dict_call", "MaskCfg(lr=0.1, masks=[])", "MaskCfg", True, False),
    # subclasses of builtin containers: frozen like their base, the class kept in the key
    Case("ordered_dict", "collections.OrderedDict(lr=0.1, act=relu)", "collections.OrderedDict[str, Any]", True, False),
    Case("default_dict", "collections.defaultdict(list, {'a': [1]})", "collections.defaultdict[str, list[int]]",
         True, False),
    Case("counter", "collections.Counter('abc')", "collections.Counter[str]", True, False),
    Case("dict_subclass", "Registry(lr=0.1, layers=[1, 2])", "Registry", True, False),
    Case("list_subclass", "Widths([64, 64])", "Widths", True, False),
    Case("tuple_subclass", "Sizes((1, 2))", "Sizes", True, True),
    Case("namedtuple_call_with_list", "Pair(1, [2])", "Pair", True, False),
    Case("collections_namedtuple_with_list", "Legacy(1, [2])", "Legacy", True, False),
    # no array in it: an empty list of arrays is static (a variable of the type may hold some)
    Case("typed_dict_empty_array_list", "ArrayMasks(lr=0.1, masks=[])", "ArrayMasks", True, False),
    # attrs classes hash as attrs generates: from the fields when eq and frozen, by identity when eq=False
    Case("attrs_frozen", "AttrsCfg(0.1)", "AttrsCfg", True, True),
    Case("attrs_eq_false", "AttrsHandle([1])", "AttrsHandle", True, True),
    Case("attrs_field_out_of_hash", "AttrsUnsafe(0.1, ['a'])", "AttrsUnsafe", True, True),
    Case("attrs_field_eq_false", "AttrsNotes(0.1, ['a'])", "AttrsNotes", True, True),
    # fields out of a dataclass's hash, a hash inherited from a frozen base, a named tuple's own __hash__
    Case("dataclass_field_compare_false", "Noted(0.1, ['a'])", "Noted", True, True),
    Case("dataclass_field_hash_false", "Tagged(0.1, {'a': 1})", "Tagged", True, True),
    Case("dataclass_inherited_hash", "Extended(0.1, 2, [3])", "Extended", True, True),
    Case("namedtuple_own_hash", "Shape([1, 2])", "Shape", True, True),
    # generic holders: judged by what they hold
    Case("generic_holder", "Box(3)", "Box[int]", True, True),
    Case("nested_generic_holder", "Box(Box('a'))", "Box[Box[str]]", True, True),
    # never static
    Case("numpy_array", "np.zeros(3)", "npt.NDArray[np.float64]", False, False, ""),
    Case("jax_array", "jnp.zeros(3)", "jax.Array", False, False, ""),
    Case("dict_with_array", "{'weights': jnp.zeros(3)}", "dict[str, jax.Array]", False, False, "['weights']"),
    Case("list_of_arrays", "[jnp.zeros(2), jnp.ones(2)]", "list[jax.Array]", False, False, "[0]"),
    Case("tuple_with_array", "(1, jnp.ones(2))", "tuple[int, jax.Array]", False, False, "[1]"),
    Case("mutable_dataclass", "MutableCfg(0.1)", "MutableCfg", False, False, ""),
    Case("hash_none_class", "NoHash()", "NoHash", False, False, ""),
    Case("frozen_dataclass_with_list", "FrozenWithList([1])", "FrozenWithList", False, False, ""),
    Case("dict_with_mutable_dataclass", "{'cfg': MutableCfg(0.1)}", "dict[str, MutableCfg]", False, False, "['cfg']"),
    Case("nested_array", "{'a': [1, {'w': np.ones(2)}]}", "dict[str, list[Any]]", False, False, "['a'][1]['w']"),
    Case("ordered_dict_with_array", "collections.OrderedDict(w=jnp.zeros(3))", "collections.OrderedDict[str, jax.Array]",
         False, False, "['w']"),
    Case("dict_subclass_with_array", "Registry(w=jnp.zeros(3))", "Registry", False, False, "['w']"),
    Case("typed_dict_with_array", "AnyCfg(w=jnp.zeros(3))", "AnyCfg", False, False, "['w']"),
    Case("namedtuple_call_with_array", "Pair(1, jnp.zeros(3))", "Pair", False, False, "[1]"),
    Case("deque", "collections.deque([1, 2])", "collections.deque[int]", False, False, ""),
    # look-alikes of builtin containers: their classes set __hash__ to None, and nothing freezes them
    Case("user_dict", "collections.UserDict(lr=0.1)", "collections.UserDict[str, float]", False, False, ""),
    Case("user_list", "collections.UserList([1])", "collections.UserList[int]", False, False, ""),
    Case("simple_namespace", "types.SimpleNamespace(lr=0.1)", "types.SimpleNamespace", False, False, ""),
    Case("mapping_proxy", "types.MappingProxyType({'lr': 0.1})", "types.MappingProxyType[str, float]", False, False,
         ""),
    Case("attrs_frozen_with_list", "AttrsFrozenList([1])", "AttrsFrozenList", False, False, ""),
    Case("attrs_define", "AttrsMutable(0.1)", "AttrsMutable", False, False, ""),
    # a class defining __eq__ without __hash__ gets __hash__ = None from Python, and so do its subclasses
    Case("eq_without_hash", "Vec(1.0, 2.0)", "Vec", False, False, ""),
    Case("eq_without_hash_inherited", "Vec3(1.0, 2.0)", "Vec3", False, False, ""),
    Case("str_subclass_eq_without_hash", "Caseless('Adam')", "Caseless", False, False, ""),
    Case("generic_holder_of_list", "Box([1])", "Box[list[int]]", False, False, ""),
    Case("nested_generic_holder_with_array", "Box(Box(jnp.zeros(3)))", "Box[Box[jax.Array]]", False, False,
         ".item.item"),
)
"""In ``nested_array`` and the ``*_with_array`` calls the declared type holds ``Any``: the plugin finds the array by
judging the literal's items, or the values a container's constructor stores."""


def namespace() -> dict[str, Any]:
    """Run ``PRELUDE`` and return its globals, for evaluating ``Case.value``."""
    ns: dict[str, Any] = {}
    exec(PRELUDE, ns)
    return ns


CALL_PRELUDE = """\
import functools
from typing import Any

import jax
import jax.numpy as jnp

import jaxstatic as js
from jaxstatic import Static


def train_step(x: jax.Array, cfg: Static[Any]) -> jax.Array:
    return x


step = js.jit(train_step)


def with_options(x: jax.Array, **options: Static[Any]) -> jax.Array:
    return x


options_step = js.jit(with_options)
jit_static = functools.partial(jax.jit, donate_argnums=0, static_argnames="mode")


@jit_static
def apply(x: jax.Array, mode: Any) -> jax.Array:
    return x


x = jnp.zeros(2)
"""


_ALIASES = """\
from typing import TypeVar
from typing_extensions import TypeAliasType
T = TypeVar("T")
StaticCfg = TypeAliasType("StaticCfg", Static[Any])
StaticList = TypeAliasType("StaticList", Static[list[T]], type_params=(T,))
Widths = TypeAliasType("Widths", dict[str, Any])
def aliased(x: jax.Array, cfg: StaticCfg) -> jax.Array: return x
def sized(x: jax.Array, sizes: StaticList[Any]) -> jax.Array: return x
def widened(x: jax.Array, widths: Static[Widths]) -> jax.Array: return x
def listed(x: jax.Array, cfgs: list[StaticCfg]) -> jax.Array: return x
alias_step, sizes_step, widths_step, listed_step = js.jit(aliased), js.jit(sized), js.jit(widened), js.jit(listed)"""


@dataclasses.dataclass(frozen=True)
class CallCase:
    """A call whose shape decides which value a static parameter gets: ``setup`` runs first (after
    ``CALL_PRELUDE``), then ``call``; ``static``: the runtime accepts it."""

    id: str
    setup: str
    call: str
    static: bool


CALL_CASES: tuple[CallCase, ...] = (
    # splats whose type or spelling says exactly what lands on the static parameter
    CallCase("kwargs_typed_dict_of_arrays", 'kwargs: dict[str, dict[str, jax.Array]] = {"cfg": {"w": jnp.ones(2)}}',
             "step(jnp.zeros(2), **kwargs)", False),
    CallCase("kwargs_literal_with_array", "", 'step(jnp.zeros(2), **{"cfg": {"mask": jnp.ones(2)}})', False),
    CallCase("args_tuple_with_array", 'args: tuple[jax.Array, dict[str, jax.Array]] = (x, {"w": jnp.ones(2)})',
             "step(*args)", False),
    CallCase("kwargs_typed_dict_of_ints", 'kwargs: dict[str, int] = {"cfg": 1}', "step(jnp.zeros(2), **kwargs)", True),
    CallCase("args_tuple_of_static", "args: tuple[jax.Array, int] = (x, 3)", "step(*args)", True),
    # values collected by **options: Static[Any]
    CallCase("options_collect_an_array", "", "options_step(jnp.zeros(2), mask=jnp.ones(2))", False),
    CallCase("options_literal_splat_with_array", "", 'options_step(jnp.zeros(2), **{"mask": jnp.ones(2)})', False),
    CallCase("options_collect_static", "", 'options_step(jnp.zeros(2), depth=2, act="relu")', True),
    CallCase("options_splat_dict_of_arrays", 'opts: dict[str, jax.Array] = {"mask": jnp.ones(2)}',
             "options_step(jnp.zeros(2), **opts)", False),
    CallCase("options_splat_dict_of_ints", 'opts: dict[str, int] = {"depth": 2}', "options_step(jnp.zeros(2), **opts)",
             True),
    # functools.partial(jax.jit, ...) kept in a module variable and used as a decorator
    CallCase("partial_variable_list", "", 'apply(jnp.zeros(2), mode=["train"])', False),
    CallCase("partial_variable_str", "", 'apply(jnp.zeros(2), mode="train")', True),
    # type aliases (TypeAliasType; type statements read the same): only an alias at the top of a type marks it
    CallCase("alias_of_static_with_array", _ALIASES, 'alias_step(x, {"w": jnp.ones(2)})', False),
    CallCase("alias_of_static_hashable", _ALIASES, 'alias_step(x, {"depth": 2})', True),
    CallCase("generic_alias_of_static_with_array", _ALIASES, "sizes_step(x, [jnp.ones(2)])", False),
    CallCase("static_of_alias_with_array", _ALIASES, 'widths_step(x, {"w": jnp.ones(2)})', False),
    CallCase("alias_inside_a_list_is_traced", _ALIASES, "listed_step(x, [jnp.ones(2)])", True),
)
"""Calls judged by the runtime (tests/runtime/test_freeze.py) and the plugin (``test_call_shapes.yml``)."""

