"""The static-hashable rule on values: the table shared with the plugin's tests, then each rule of the key checked
against what Python and plain JAX give, at the value level and through ``jaxstatic.jit``."""

from __future__ import annotations

import collections
import dataclasses
import gc
import math
import re
import struct
import weakref
from collections.abc import Callable
from typing import Any

import attrs
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import jaxstatic as js
from jaxstatic import Static, _shared
from jaxstatic._errors import check_static
from jaxstatic._freeze import ATOMIC, freeze, is_immutable, thaw
from jaxstatic._memo import IdentityMemo

from ..static_cases import CALL_CASES, CALL_PRELUDE, CASES, CallCase, Case, namespace

NS = namespace()


def _value(case: Case) -> Any:
    return eval(case.value, NS)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_rule_table(case: Case) -> None:
    value = _value(case)
    if case.static:
        key = check_static("f", "cfg", value)
        again = _value(case)
        assert (key == check_static("f", "cfg", again)) == (value == again)  # equal values, equal keys
        assert thaw(key) == value
    else:
        expected = rf"f\(\): parameter 'cfg' is Static, but cfg{re.escape(case.path)} is a "
        with pytest.raises(js.NonStaticValueError, match=expected):
            check_static("f", "cfg", value)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_table_hashable_column_is_plain_hash(case: Case) -> None:
    try:
        hash(_value(case))
        hashable = True
    except TypeError:
        hashable = False
    assert hashable == case.hashable


def _jit_counting(body: Callable[[jax.Array, Any], Any]) -> js.JitFunction[[jax.Array, Any], Any]:
    def f(x: jax.Array, cfg: Static[Any]) -> Any:
        return body(x, cfg)

    _shared.forget_closures()  # a function of its own: not one made before over an equal body (a hypothesis example)
    return js.jit(f)


# -- 1. dicts are keyed in insertion order; dict subclasses carry their type --------------------------------


def test_dict_order_is_part_of_the_program() -> None:
    def body(x: Any, cfg: dict[str, float]) -> Any:
        for w in cfg.values():
            x = x * w + 1
        return x

    f = _jit_counting(body)
    first, second = {"l1": 2.0, "l2": 3.0}, {"l2": 3.0, "l1": 2.0}
    assert f(jnp.ones(()), first).item() == body(1.0, first) == 10.0
    assert f(jnp.ones(()), second).item() == body(1.0, second) == 9.0
    assert f(jnp.ones(()), dict(first)).item() == 10.0
    assert f.trace_count == 2
    assert freeze(first) != freeze(second)
    words = ["relu", "gelu", "tanh", "silu", "elu"]  # sets have no order: keyed without one
    forward, backward = set(words), set(reversed(words))
    assert freeze(forward) == freeze(backward) and freeze(frozenset(words)) != freeze(forward)
    g = _jit_counting(lambda x, cfg: x + len(cfg))
    assert g(jnp.zeros(()), forward).item() == g(jnp.zeros(()), backward).item() == 5
    assert g.trace_count == 1


class _Config(dict):  # type: ignore[type-arg]
    pass


def test_dict_subclasses_are_static_with_their_type_in_the_key() -> None:
    f = _jit_counting(lambda x, cfg: x + len(cfg) + (1 if isinstance(cfg, collections.OrderedDict) else 0))
    plain, ordered, custom = {"a": 1}, collections.OrderedDict(a=1), _Config(a=1)
    assert [f(jnp.zeros(()), v).item() for v in (plain, ordered, custom, collections.OrderedDict(a=1))] == [1, 2, 1, 2]
    assert f.trace_count == 3
    lists, ints = collections.defaultdict(list, a=[1]), collections.defaultdict(int, a=[1])  # type: ignore[arg-type]
    assert lists == ints and freeze(lists) != freeze(ints)  # the default_factory is part of the key
    assert freeze(lists) == freeze(collections.defaultdict(list, a=[1]))


# -- 2. thaw rebuilds what was frozen -----------------------------------------------------------------------


def test_retrace_for_new_shapes_sees_the_callers_order_and_types() -> None:
    seen: list[Any] = []

    def body(x: Any, cfg: Any) -> Any:
        seen.append(cfg)
        return x + sum(cfg["sizes"])

    f = _jit_counting(body)
    cfg = collections.OrderedDict([("z", 1), ("sizes", (1, 2)), ("a", collections.defaultdict(list, k=[0.5]))])
    f(jnp.ones(2), cfg)
    again = collections.OrderedDict([("z", 1), ("sizes", (1, 2)), ("a", collections.defaultdict(list, k=[0.5]))])
    assert f(jnp.ones(3), again).tolist() == [4.0] * 3  # the same program key, a new shape: traced again
    assert f.trace_count == 2
    rebuilt = seen[1]
    assert rebuilt is not cfg and rebuilt is not again
    assert type(rebuilt) is collections.OrderedDict and list(rebuilt) == ["z", "sizes", "a"]
    assert type(rebuilt["a"]) is collections.defaultdict and rebuilt["a"].default_factory is list
    assert rebuilt == cfg


# -- 3. floats are keyed by their bits ----------------------------------------------------------------------


_OTHER_NAN = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]


@pytest.mark.parametrize("wrap", [lambda s: s, lambda s: {"s": [s]}, lambda s: (1, s)], ids=["bare", "dict", "tuple"])
def test_signed_zeros_compile_separately(wrap: Callable[[Any], Any]) -> None:
    def sign(x: Any, cfg: Any) -> Any:
        s = cfg if isinstance(cfg, float) else cfg["s"][0] if isinstance(cfg, dict) else cfg[1]
        return jnp.copysign(x, s)

    f = _jit_counting(sign)
    assert f(jnp.ones(()), wrap(0.0)).item() == math.copysign(1.0, 0.0) == 1.0
    assert f(jnp.ones(()), wrap(-0.0)).item() == math.copysign(1.0, -0.0) == -1.0
    assert f.trace_count == 2


def test_nans_with_the_same_bits_share_one_program() -> None:
    f = _jit_counting(lambda x, cfg: x + 1)
    for _ in range(3):
        f(jnp.ones(1), float("nan"))
        f(jnp.ones(1), {"clip": float("nan")})
    assert f.trace_count == 2
    f(jnp.ones(1), _OTHER_NAN)  # another NaN payload: other bits
    assert f.trace_count == 3
    assert freeze(float("nan")) == freeze(float("nan")) != freeze(_OTHER_NAN)


@pytest.mark.parametrize(("a", "b"), [
    (complex(1.0, 0.0), complex(1.0, -0.0)),
    (np.float32(0.0), np.float32(-0.0)),
    (np.complex64(0.0), np.complex64(complex(0.0, -0.0))),
    (np.float64(0.0), np.float64(-0.0)),
], ids=["complex", "float32", "complex64", "float64"])
def test_complex_and_numpy_scalars_are_keyed_by_type_and_bits(a: Any, b: Any) -> None:
    assert a == b and freeze(a) != freeze(b)
    assert freeze({"k": a}) != freeze({"k": b}) and freeze([a]) == freeze([type(a)(a)])
    assert freeze(type(a)(float("nan"))) == freeze(type(a)(float("nan")))
    assert type(thaw(freeze(b))) is type(b) and np.asarray(thaw(freeze(b))).tobytes() == np.asarray(b).tobytes()


# -- 4. records -----------------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Cfg:
    n: Any
    name: str = "cfg"


@attrs.frozen
class AttrsCfg:
    n: Any


@dataclasses.dataclass(frozen=True)
class Loose:
    n: Any

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Loose) and other.n == self.n

    def __hash__(self) -> int:
        return hash(self.n)


def test_frozen_records_are_strict_at_every_depth() -> None:
    f = _jit_counting(lambda x, cfg: x * cfg.n)
    x = jnp.arange(3, dtype=jnp.int32)
    assert f(x, Cfg(1)).dtype == (x * Cfg(1).n).dtype == jnp.int32
    assert f(x, Cfg(1.0)).dtype == (x * Cfg(1.0).n).dtype == jnp.float32  # equal records, other field types
    assert f(x, Cfg(1)).dtype == jnp.int32  # an equal record, built again: reused
    assert f.trace_count == 2
    assert freeze(Cfg((1, 2))) != freeze(Cfg((1, 2.0))) and freeze(Cfg(-0.0)) != freeze(Cfg(0.0))
    assert freeze(AttrsCfg(1)) != freeze(AttrsCfg(1.0)) and freeze(AttrsCfg(1)) == freeze(AttrsCfg(1))
    assert thaw(freeze(Cfg(2))) == Cfg(2)
    assert freeze(Loose(1)) == freeze(Loose(1.0))  # a record with its own __eq__/__hash__ is trusted with them
    with pytest.raises(js.NonStaticValueError, match=r"^f\(\): parameter 'cfg' is Static, but cfg\['c'\] is a "
                                                      r".*Cfg, which cannot be static: hashing it fails"):
        check_static("f", "cfg", {"c": Cfg([1, 2])})  # a record must still be hashable


# -- 5. slices and ranges -------------------------------------------------------------------------------------


def test_slices_are_static_keyed_by_start_stop_step() -> None:
    f = _jit_counting(lambda x, s: x[s])
    x = jnp.arange(6)
    assert f(x, slice(1, 5, 2)).tolist() == x[1:5:2].tolist() == [1, 3]
    assert f(x, slice(1, 5, 2)).tolist() == [1, 3]
    assert f(x, slice(None, 2)).tolist() == [0, 1]
    assert f.trace_count == 2
    assert freeze(slice(1, 2)) != freeze(slice(True, 2)) and thaw(freeze(slice(1, None))) == slice(1, None)


def test_equal_ranges_with_other_bounds_compile_separately() -> None:
    assert range(0) == range(5, 5)
    f = _jit_counting(lambda x, r: x + r.start)
    assert [f(jnp.zeros(()), r).item() for r in (range(0), range(5, 5), range(0))] == [0, 5, 0]
    assert f.trace_count == 2


# -- 6. cycles and depth --------------------------------------------------------------------------------------


def test_a_value_that_contains_itself_is_named_with_its_path() -> None:
    layers: list[Any] = [1, 2]
    layers.append({"parent": layers})
    f = _jit_counting(lambda x, cfg: x)
    with pytest.raises(js.NonStaticValueError) as info:
        f(jnp.ones(1), {"layers": layers})
    assert str(info.value) == (
        "f(): parameter 'cfg' is Static, but cfg['layers'][2]['parent'] is cfg['layers'] itself: a value that "
        "contains itself has no finite key, so it cannot be static. Break the cycle (refer to the container by a "
        "name or an index), or pass it through a parameter that is not Static."
    )


def _nested(depth: int) -> Any:
    value: Any = 5
    for _ in range(depth):
        value = (value,)
    return value


def test_ten_thousand_levels_of_tuples() -> None:
    def depth(_: Any, v: Any) -> int:
        n = 0
        while isinstance(v, tuple):
            n, v = n + 1, v[0]
        return n + int(v)

    f = _jit_counting(lambda x, v: x + depth(x, v))
    deep, same = _nested(10_000), _nested(10_000)
    assert f(jnp.zeros(()), deep).item() == 10_005
    assert f(jnp.zeros(()), same).item() == 10_005  # an equal copy: found, not retraced
    assert f(jnp.zeros(3), same).tolist() == [10_005] * 3  # a new shape: the body gets the value rebuilt
    assert f.trace_count == 2
    assert freeze(deep) == freeze(same) and depth(None, thaw(freeze(deep))) == 10_005


# -- 12. nothing process-wide keeps user classes alive ------------------------------------------------------


def test_atomic_types_are_fixed_and_classes_are_not_kept() -> None:
    assert type(ATOMIC) is frozenset and float not in ATOMIC and slice not in ATOMIC

    def make() -> Any:
        class Token:
            pass

        return Token()

    token = make()
    ref = weakref.ref(type(token))
    assert freeze(token) == (type(token), token) and freeze([token]) == freeze([token])
    before = set(ATOMIC)
    del token
    gc.collect()
    assert ref() is None and set(ATOMIC) == before


def test_identity_memo_forgets_a_discarded_value() -> None:
    memo, cfg = IdentityMemo(), {"lr": 0.1}
    key = freeze(cfg)
    memo.put(cfg, ("marker", key))
    assert memo.get(cfg) == ("marker", key)
    cfg["lr"] = 0.2
    assert memo.get(cfg) is None
    memo.put(cfg, ("marker", key))
    memo.discard(cfg)
    assert memo.get(cfg) is None
    nested = {"a": [1]}
    memo.put(nested, ("marker", freeze(nested)))  # a list inside can change unseen: never remembered
    assert memo.get(nested) is None and not is_immutable(freeze(nested)) and is_immutable(freeze((1, (2.0,))))


class _Opt(collections.namedtuple("_Opt", "update apply")):
    __slots__ = ()


def test_a_dict_rebuilt_from_the_same_objects_is_found_by_its_contents_and_only_then() -> None:
    memo, lr, neg = IdentityMemo(), 0.1, -0.0

    def config(opt_update: Any = math.sin, zero: float = 0.0) -> dict[str, Any]:
        return {"lr": lr, "zero": zero, "opt": _Opt(opt_update, math.cos), "steps": 10}

    first = config()
    memo.put(first, ("marker", freeze(first)))
    assert memo.get(config()) == ("marker", freeze(first))  # a new dict and a new named tuple, the same objects
    assert memo.get(config(opt_update=math.tan)) is None  # another function inside the named tuple
    assert memo.get(config(zero=neg)) is None  # -0.0 == 0.0, but is another object (and another key)
    assert memo.get({"zero": 0.0, "lr": lr, "opt": first["opt"], "steps": 10}) is None  # another order
    memo.discard(config())
    assert memo.get(config()) is None
    with_list = {"lr": lr, "sizes": [1, 2]}  # a list inside can change unseen: never remembered by contents
    memo.put(with_list, ("marker", freeze(with_list)))
    assert memo.get({"lr": lr, "sizes": with_list["sizes"]}) is None


def test_a_config_rebuilt_on_every_call_traces_once_and_minus_zero_apart() -> None:
    @js.jit
    def f(x: jax.Array, cfg: Static[dict[str, Any]]) -> jax.Array:
        return x * cfg["opt"].update(cfg["lr"]) + cfg["zero"]

    minus = -0.0
    for _ in range(3):
        assert f(jnp.ones(1), {"lr": 0.5, "opt": _Opt(math.sin, math.cos), "zero": 0.0}).tolist() == [
            pytest.approx(math.sin(0.5))]
    assert f.trace_count == 1
    f(jnp.ones(1), {"lr": 0.5, "opt": _Opt(math.sin, math.cos), "zero": minus})
    assert f.trace_count == 2
    assert math.copysign(1.0, float(f(jnp.zeros(1) * -1.0, {"lr": 0.0, "opt": _Opt(math.sin, math.cos),
                                                              "zero": minus})[0])) == -1.0


# -- properties: keys equal exactly when values are identical in type, order and bits ----------------------


@dataclasses.dataclass(frozen=True)
class Rec:
    a: Any
    b: Any = 0


def _canon(v: Any) -> Any:
    """Identity of a value in type, order and bits, without jaxstatic."""
    t = type(v)
    if t is float:
        return (t, struct.pack("<d", v))
    if isinstance(v, dict):
        return (t, getattr(v, "default_factory", None), tuple((_canon(k), _canon(x)) for k, x in v.items()))
    if isinstance(v, (list, tuple)):
        return (t, tuple(map(_canon, v)))
    if isinstance(v, (set, frozenset)):
        return (t, frozenset(map(_canon, v)))
    if t is Rec:
        return (t, _canon(v.a), _canon(v.b))
    return (t, v)


def _leaves(v: Any) -> list[Any]:
    if isinstance(v, dict):
        return [x for k, w in v.items() for x in (*_leaves(k), *_leaves(w))]
    if isinstance(v, (list, tuple)):
        return [x for w in v for x in _leaves(w)]
    if isinstance(v, (set, frozenset)):
        return sorted((x for w in v for x in _leaves(w)), key=_order)
    return [v]


def _order(x: Any) -> tuple[str, bytes]:
    return repr(x), struct.pack("<d", x) if type(x) is float else b""


_floats = st.one_of(st.floats(), st.sampled_from([0.0, -0.0, math.inf, -math.inf, math.nan, _OTHER_NAN]))
_atoms = st.one_of(st.integers(-2, 2), _floats, st.booleans(), st.sampled_from(["a", "b"]), st.none())
_hashables = st.recursive(_atoms, lambda inner: st.one_of(
    st.lists(inner, max_size=3).map(tuple), st.builds(Rec, inner, inner)), max_leaves=4)
_values = st.recursive(
    st.one_of(_atoms, _hashables),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.lists(inner, max_size=3).map(tuple),
        st.dictionaries(st.sampled_from(["x", "y", "z"]), inner, max_size=3),
        st.frozensets(_hashables, max_size=3),
    ),
    max_leaves=8,
)


@st.composite
def _pairs(draw: st.DrawFn) -> tuple[Any, Any]:
    """Two values, often alike: the same value rebuilt, its dicts reordered, or another value."""
    a = draw(_values)
    how = draw(st.sampled_from(["rebuilt", "reordered", "other"]))
    return a, draw(_values) if how == "other" else _rebuild(a, how == "reordered")


def _rebuild(v: Any, reverse: bool) -> Any:
    """An equal copy of ``v``, its dicts in reverse insertion order if asked, its zeros with the other sign."""
    if isinstance(v, dict):
        items = [(k, _rebuild(x, reverse)) for k, x in v.items()]
        return dict(reversed(items) if reverse else items)
    if isinstance(v, list):
        return [_rebuild(x, reverse) for x in v]
    if type(v) is tuple:
        return tuple(_rebuild(x, reverse) for x in v)
    return -v if reverse and type(v) is float and v == 0 else v


@given(_pairs())
def test_keys_equal_exactly_when_identical_in_type_order_and_bits(pair: tuple[Any, Any]) -> None:
    a, b = pair
    assert (freeze(a) == freeze(b)) == (_canon(a) == _canon(b))
    assert (hash(freeze(a)) == hash(freeze(b))) or _canon(a) != _canon(b)


@given(_values)
def test_thaw_rebuilds_types_order_bits_and_the_leaves_themselves(value: Any) -> None:
    rebuilt = thaw(freeze(value))
    assert _canon(rebuilt) == _canon(value)
    for x, y in zip(_leaves(rebuilt), _leaves(value)):
        assert x is y or (type(x) is float and struct.pack("<d", x) == struct.pack("<d", y))


@settings(max_examples=50, deadline=None)
@given(_pairs())
def test_a_program_is_reused_exactly_when_values_are_identical(pair: tuple[Any, Any]) -> None:
    f = _jit_counting(lambda x, cfg: x + 1)
    f(jnp.ones(1), pair[0])
    f(jnp.ones(1), pair[1])
    assert f.trace_count == (1 if _canon(pair[0]) == _canon(pair[1]) else 2)


@pytest.mark.parametrize("case", CALL_CASES, ids=[c.id for c in CALL_CASES])
def test_call_table(case: CallCase) -> None:
    ns: dict[str, Any] = {}
    exec(CALL_PRELUDE + case.setup, ns)
    if case.static:
        eval(case.call, ns)
    else:  # jaxstatic's NonStaticValueError, or plain jax.jit's refusal of an unhashable static argument
        with pytest.raises((js.NonStaticValueError, ValueError), match=r"(?i)static"):
            eval(case.call, ns)
