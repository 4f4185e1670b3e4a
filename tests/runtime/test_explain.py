"""Retrace explanations and error advice: right for the value at hand, never breaking a call, bounded in cost."""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import re
import struct
from collections.abc import Callable
from typing import Any, NamedTuple

import attrs
import equinox as eqx
import flax
import flax.linen
import flax.nnx
import flax.struct
import jax
import jax.numpy as jnp
import jax_dataclasses as jdc
import numpy as np
import optax
import pytest
from flax.training.train_state import TrainState
from jax.sharding import NamedSharding, PartitionSpec as P

import jaxstatic as js
from jaxstatic import Static, _explain
from jaxstatic._errors import non_array_error
from jaxstatic._explain import (
    DynamicSig,
    Signature,
    StaticSig,
    blame,
    describe,
    diff,
    dynamic_sig,
    explain,
)
from jaxstatic._freeze import freeze
from jaxstatic._object_diff import object_diff

from ._devices import CPUS


def _jit(body: Any) -> js.JitFunction[[jax.Array, Any], Any]:
    def f(x: jax.Array, cfg: Static[Any]) -> Any:
        return body(x, cfg)

    return js.jit(f)


class Strict:
    """Equality that assumes the other side is a Strict too, as user classes often do."""

    def __init__(self, n: int) -> None:
        self.n = n

    def __eq__(self, other: object) -> bool:
        return self.n == other.n  # type: ignore[attr-defined, no-any-return]

    def __hash__(self) -> int:
        return hash(self.n)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.n})"


class ArrayEq(Strict):
    def __eq__(self, other: object) -> Any:
        return np.array([True, False])

    __hash__ = Strict.__hash__


class BadRepr(Strict):
    def __repr__(self) -> str:
        raise RuntimeError("no repr")


class Counted(Strict):
    reprs = 0

    def __repr__(self) -> str:
        Counted.reprs += 1
        return f"Counted({self.n})"


# -- 7. explaining never breaks a call -------------------------------------------------------------------------


def test_an_eq_that_raises_does_not_break_the_call() -> None:
    f = _jit(lambda x, cfg: x + 1)
    assert f(jnp.ones(1), Strict(2)).tolist() == [2.0]
    assert f(jnp.ones(1), 3).tolist() == [2.0]
    assert f(jnp.ones(1), Strict(2)).tolist() == [2.0]
    assert f(jnp.ones(1), 4).tolist() == [2.0]
    assert f.trace_count == 3
    assert [str(r) for r in f.retraces] == [
        "f was traced again (trace #2) because cfg: Strict(2) (Strict) -> 3 (int)",
        "f was traced again (trace #3) because cfg: 3 -> 4",
    ]


def test_an_eq_that_returns_an_array_or_a_repr_that_raises_gives_a_plainer_text() -> None:
    f = _jit(lambda x, cfg: x + 1)
    for cfg in (ArrayEq(1), ArrayEq(2), BadRepr(1), {"k": BadRepr(2)}):
        assert f(jnp.ones(1), cfg).tolist() == [2.0]
    assert [r.changes for r in f.retraces] == [
        ("cfg: ArrayEq(1) -> ArrayEq(2)",),
        ("cfg: ArrayEq(2) (ArrayEq) -> <BadRepr object> (BadRepr)",),
        ("cfg: <BadRepr object> -> {'k': <BadRepr object>}",),
    ]


def test_anything_failing_while_explaining_falls_back(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(old: Signature, new: Signature) -> list[str]:
        raise RuntimeError("explaining failed")

    monkeypatch.setattr(_explain, "explain", broken)
    f = _jit(lambda x, cfg: x * cfg)
    assert f(jnp.ones(1), 2).tolist() == [2.0]
    assert f(jnp.ones(1), 3).tolist() == [3.0]
    assert f.retraces[-1].changes == ("cfg: changed (jaxstatic could not say how)",)


def test_the_thousandth_retrace_renders_no_more_than_the_second() -> None:
    history: list[Signature] = [{"cfg": StaticSig(freeze({"k": Counted(i)}))} for i in range(1000)]
    new: Signature = {"cfg": StaticSig(freeze({"k": Counted(-1)}))}
    Counted.reprs = 0
    assert blame(history[:1], new) == ["cfg['k']: Counted(0) -> Counted(-1)"]
    second = Counted.reprs
    Counted.reprs = 0
    assert blame(history, new) == ["cfg['k']: Counted(999) -> Counted(-1)"]
    assert Counted.reprs == second == 2


def test_a_large_dict_is_explained_by_rendering_only_what_changed() -> None:
    old = {f"w{i}": Counted(i) for i in range(100_000)}
    new = dict(old, w5=Counted(-5))
    del new["w7"]
    new["extra"] = Counted(0)
    Counted.reprs = 0
    assert diff("cfg", freeze(old), freeze(new)) == [
        "cfg['w5']: Counted(5) -> Counted(-5)", "cfg['w7']: removed", "cfg['extra']: added (Counted(0))"]
    assert Counted.reprs == 3
    assert len(describe(freeze(old))) == 60


# -- 8. the explanation and the advice fit the value ----------------------------------------------------------


def test_a_tuple_that_changes_length_shows_both_values() -> None:
    f = _jit(lambda x, shape: jnp.broadcast_to(x, shape))
    f(jnp.ones(()), (3,))
    f(jnp.ones(()), (3, 2))
    assert str(f.retraces[-1]) == "f was traced again (trace #2) because cfg: (3,) -> (3, 2)"


def test_a_fresh_lambda_each_call_is_named_as_such() -> None:
    f = _jit(lambda x, act: act(x))
    for _ in range(2):
        f(jnp.ones(1), lambda v: v * 2)
    (change,) = f.retraces[-1].changes
    assert change.startswith("cfg: a new function object on each call (test_a_fresh_lambda_each_call_is_named_as_"
                             "such.<locals>.<lambda>, test_explain.py:")
    assert change.endswith("); define it once")


def test_dict_order_signs_and_nan_bits_are_explained() -> None:
    other_nan = struct.unpack("<d", struct.pack("<Q", 0x7FF8000000000001))[0]
    assert diff("cfg", freeze({"a": 1, "b": 2}), freeze({"b": 2, "a": 1})) == [
        "cfg: key order ['a', 'b'] -> ['b', 'a']"]
    assert diff("s", freeze({"s": 0.0}), freeze({"s": -0.0})) == ["s['s']: 0.0 -> -0.0"]
    assert diff("c", freeze(float("nan")), freeze(other_nan)) == [
        "c: nan -> nan (bits 0x000000000000f87f -> 0x010000000000f87f)"]
    many = diff("v", freeze(tuple(range(100))), freeze(tuple(range(1, 101))))
    assert many[:2] == ["v[0]: 0 -> 1", "v[1]: 1 -> 2"] and many[-1] == "v: and 95 more changes"


def test_zero_dimensional_array_given_to_a_static_int_suggests_a_python_scalar() -> None:
    @js.jit
    def f(x: jax.Array, n: Static[int]) -> jax.Array:
        return x * n

    with pytest.raises(js.NonStaticValueError) as info:
        f(jnp.ones(1), jnp.asarray(3))  # type: ignore[arg-type]
    assert str(info.value) == (
        "f(): parameter 'n' is Static, but n is a jax.Array (int32[]), which cannot be static: a jax.Array is not "
        "hashable, and its value is only known at run time. Pass it through a parameter that is not Static, or, if "
        "it truly is a constant, pass a Python scalar instead (int(x), float(x) or x.item())."
    )
    with pytest.raises(js.NonStaticValueError, match=r"cfg\['w'\] is a numpy\.ndarray \(float64\[2\]\), which cannot "
                                                      r"be static: a numpy array is not hashable, since its contents "
                                                      r"can change in place\. .* \(tuple\(x\.tolist\(\)\)\)\.$"):
        _jit(lambda x, cfg: x)(jnp.ones(1), {"w": np.zeros(2)})


def test_non_array_inside_dynamic_kwargs_suggests_its_own_parameter() -> None:
    error = non_array_error("step", "kwargs", "kwargs['mode']", "train", in_var_keyword=True)
    assert isinstance(error, js.NonArrayArgumentError)
    assert str(error) == (
        "step(): parameter 'kwargs' collects extra keyword arguments and is not Static, so they are traced as "
        "arrays, but kwargs['mode'] is a str. Declare mode as a parameter of its own, marked Static (mode: "
        "Static[...]), rather than marking **kwargs Static, which would make the arrays passed beside it static "
        "too; or pass an array."
    )
    assert str(non_array_error("step", "act", "act", len, in_var_keyword=False)) == (
        "step(): parameter 'act' is not Static, so its value is traced as an array, but act is a function (len, "
        "a builtin_function_or_method). Mark it static where it is declared (act: Static[...]), or pass an array."
    )


# -- every reason jax.jit traces again -------------------------------------------------------------------------


@pytest.mark.skipif(not hasattr(jax.sharding, "AxisType"), reason="shardings in types need JAX 0.5.3 (AxisType)")
def test_a_sharding_change_is_explained_as_such() -> None:
    @js.jit
    def f(x: jax.Array) -> jax.Array:
        return x * 2

    mesh = jax.make_mesh((4,), ("d",), axis_types=(jax.sharding.AxisType.Explicit,), devices=CPUS[:4])
    with jax.default_device(CPUS[0]):
        f(jnp.zeros(4))
    f(jax.device_put(jnp.zeros(4), NamedSharding(mesh, P())))  # type: ignore[no-untyped-call]
    f(jax.device_put(jnp.zeros(4), NamedSharding(mesh, P("d"))))  # type: ignore[no-untyped-call]
    assert f.trace_count == 3
    assert [r.changes for r in f.retraces] == [
        ("x: sharding none (no mesh) -> P(None,) over mesh d=4 (Explicit)",),
        ("x: sharding P(None,) over mesh d=4 (Explicit) -> P('d',) over mesh d=4 (Explicit)",),
    ]


def test_committedness_weak_type_and_structure_of_concrete_arguments() -> None:
    with jax.default_device(CPUS[0]):
        uncommitted = jnp.zeros(3)
    committed = jax.device_put(jnp.zeros(3), CPUS[1])
    assert explain({"x": dynamic_sig(uncommitted)}, {"x": dynamic_sig(committed)}) == [
        f"x: uncommitted -> committed to {CPUS[1]}"]
    assert explain({"x": dynamic_sig(2.0)}, {"x": dynamic_sig(np.float32(2.0))}) == [
        "x: float32[] (weak type) -> float32[]"]
    assert explain({"p": dynamic_sig({"w": 1.0})}, {"p": dynamic_sig([1.0])}) == [
        "p: {'w': float32[] (weak type)} (dict) -> [float32[] (weak type)] (list)"]


def test_when_nothing_visible_changed_no_difference_is_made_up() -> None:
    same: Signature = {"x": dynamic_sig(jnp.zeros(3)), "n": StaticSig(freeze(1))}
    traced: Signature = {"x": DynamicSig(same["x"].treedef, tuple(leaf._replace(placement=None)  # type: ignore[union-attr]
                                                                for leaf in same["x"].leaves)), "n": same["n"]}
    assert blame([same], dict(same)) == blame([same], traced) == []  # placement unknown inside a trace: no change


@pytest.mark.parametrize("lane", [True, False], ids=["lane", "general path"])
def test_a_retrace_records_reason_agrees_with_its_changes(lane: bool) -> None:
    @js.jit
    def f(x: jax.Array, n: Static[Any]) -> jax.Array:
        return x * len(str(n))

    a, b = (2, 3) if lane else ({"n": 2}, {"n": 3})
    f(jnp.ones(1), a)
    f(jnp.ones(1), b)
    record = f.retraces[-1]
    assert record.changes == (("n: 2 -> 3",) if lane else ("n['n']: 2 -> 3",))
    assert record.reason == "the arguments differ from every earlier trace's, as changes lists"
    f.clear_cache()
    f(jnp.ones(1), a)
    assert f.retraces[-1].changes == ()
    assert f.retraces[-1].reason == "clear_cache() released the earlier programs"


# -- 9. the objects the ecosystem passes, explained at the field that changed --------------------------------------


class Config(NamedTuple):
    depth: int
    width: int


class EqxConfig(eqx.Module):
    depth: int
    act: Callable[[jax.Array], jax.Array] = jax.nn.tanh


@flax.struct.dataclass
class FlaxState:
    x: jax.Array
    n: int = flax.struct.field(pytree_node=False)


@jdc.pytree_dataclass
class JdcParams:
    x: jax.Array
    mode: jdc.Static[str]


@functools.partial(jax.tree_util.register_dataclass, data_fields=["x"], meta_fields=["n"])
@dataclasses.dataclass
class Registered:
    x: jax.Array
    n: int


@attrs.frozen
class AttrsConfig:
    depth: int
    width: int


class Schedule(NamedTuple):
    lr: float
    steps: int


@js.dataclass
class WithOptions:
    x: jax.Array
    opts: Static[dict[str, Schedule]]


class WithLayer(eqx.Module):
    layer: eqx.nn.Linear
    name: str


def _param(name: str, static: bool) -> js.JitFunction[..., Any]:
    """A fresh ``f(x, <name>)``, ``<name>`` Static or not, named as user code names it."""
    namespace: dict[str, Any] = {}
    exec(f"def f(x, {name}):\n    return x + 1", namespace)
    namespace["f"].__annotations__ = {name: Static[Any] if static else Any}
    return js.jit(namespace["f"])


def _changes(name: str, old: Any, new: Any, static: bool) -> tuple[str, ...]:
    """The explanation of the retrace that passing ``new`` after ``old`` causes; the retrace is real: ``jax.jit``
    traces again too."""
    f = _param(name, static)
    reference = jax.jit(lambda x, value: x + 1, static_argnums=(1,) if static else ())
    traced = []
    for value in (old, new):
        f(jnp.ones(2), value)
        reference(jnp.ones(2), value)
        traced.append(reference._cache_size())  # type: ignore[attr-defined]
    assert f.trace_count == 2 and traced == [1, 2]
    return f.retraces[-1].changes


def _fresh(name: str, fn: Any, fix: str = "define it once") -> str:
    code = fn.__code__
    return (f"{name}: a new function object on each call ({fn.__qualname__}, {os.path.basename(code.co_filename)}:"
            f"{code.co_firstlineno}); {fix}")


_OPTIMIZER_FIX = "define it once: build the optimizer once, outside the loop"


def test_a_named_tuple_field_is_named() -> None:
    assert _changes("cfg", Config(2, 4), Config(3, 4), static=True) == ("cfg.depth: 2 -> 3",)


def test_an_equinox_module_field_is_named_though_its_repr_is_long() -> None:
    assert _changes("cfg", EqxConfig(2, jax.nn.tanh), EqxConfig(3, jax.nn.tanh), static=True) == (
        "cfg.depth: 2 -> 3",)


def test_a_flax_struct_field_that_is_not_a_pytree_node_is_named() -> None:
    assert _changes("s", FlaxState(jnp.ones(2), 2), FlaxState(jnp.ones(2), 3), static=False) == ("s.n: 2 -> 3",)


def test_a_jax_dataclasses_static_field_is_named() -> None:
    assert _changes("p", JdcParams(jnp.ones(2), "relu"), JdcParams(jnp.ones(2), "tanh"), static=False) == (
        "p.mode: 'relu' -> 'tanh'",)


def test_a_register_dataclass_meta_field_is_named() -> None:
    assert _changes("s", Registered(jnp.ones(2), 2), Registered(jnp.ones(2), 3), static=False) == ("s.n: 2 -> 3",)


def test_an_attrs_class_field_is_named() -> None:
    assert _changes("cfg", AttrsConfig(2, 4), AttrsConfig(3, 4), static=True) == ("cfg.depth: 2 -> 3",)


def test_an_optax_optimizer_built_again_names_init_and_update_with_the_fix() -> None:
    old, new = optax.adam(1e-3), optax.adam(1e-3)
    assert _changes("opt", old, new, static=True) == (
        _fresh("opt.init", new.init, _OPTIMIZER_FIX), _fresh("opt.update", new.update, _OPTIMIZER_FIX))


def test_an_optax_chain_built_again_is_named_the_same_way() -> None:
    def make() -> optax.GradientTransformation:
        return optax.chain(optax.clip_by_global_norm(1.0), optax.sgd(0.1))

    old, new = make(), make()
    assert _changes("opt", old, new, static=True) == (
        _fresh("opt.init", new.init, _OPTIMIZER_FIX), _fresh("opt.update", new.update, _OPTIMIZER_FIX))


def test_a_train_state_rebuilt_by_a_helper_names_its_model_method_and_optimizer() -> None:
    def make_state() -> TrainState:
        model = flax.linen.Dense(2)
        params = model.init(jax.random.key(0), jnp.ones((1, 2)))
        return TrainState.create(apply_fn=model.apply, params=params, tx=optax.adam(1e-3))

    old, new = make_state(), make_state()
    assert _changes("state", old, new, static=False) == (
        "state.apply_fn: Module.apply bound to a new Dense object on each call (equal to the old one, but a bound "
        "method compares its object by identity); make the Dense once",
        _fresh("state.tx.init", new.tx.init, _OPTIMIZER_FIX),
        _fresh("state.tx.update", new.tx.update, _OPTIMIZER_FIX),
    )


def test_the_static_half_of_eqx_partition_names_the_field_that_changed() -> None:
    def rest(activation: Callable[[jax.Array], jax.Array]) -> Any:
        mlp = eqx.nn.MLP(2, 2, 4, 2, activation=activation, key=jax.random.key(0))
        return eqx.partition(mlp, eqx.is_array)[1]

    assert _changes("rest", rest(jax.nn.relu), rest(jax.nn.tanh), static=True) == ("rest.activation: relu -> tanh",)


def test_an_equinox_layer_inside_a_static_module_is_descended_into() -> None:
    def rest(use_bias: bool) -> Any:
        module = WithLayer(eqx.nn.Linear(2, 2, use_bias=use_bias, key=jax.random.key(0)), "head")
        return eqx.partition(module, eqx.is_array)[1]

    assert _changes("rest", rest(True), rest(False), static=True) == ("rest.layer.use_bias: True -> False",)


def test_a_named_tuple_inside_a_dict_inside_a_dataclass() -> None:
    old, new = ({"warmup": Schedule(0.1, steps)} for steps in (2, 3))
    assert _changes("s", WithOptions(jnp.ones(2), old), WithOptions(jnp.ones(2), new), static=False) == (
        "s.opts['warmup'].steps: 2 -> 3",)


def test_a_dict_that_gained_a_key() -> None:
    assert _changes("s", {"a": jnp.ones(1)}, {"a": jnp.ones(1), "b": jnp.ones(3)}, static=False) == (
        "s['b']: added (float32[3])",)


def test_an_nnx_graphdef_names_the_attribute_that_changed() -> None:
    def graphdef(features: int) -> Any:
        return flax.nnx.split(flax.nnx.Linear(2, features, rngs=flax.nnx.Rngs(0)))[0]

    old, new = graphdef(2), graphdef(3)
    k = [name for name, _ in new.attributes].index("out_features")
    assert _changes("gd", old, new, static=True) == (f"gd.attributes[{k}][1].value: 2 -> 3 ('out_features')",)


def test_the_two_sides_differ_where_long_reprs_differ_late() -> None:
    old, new = Strict(10**80), Strict(10**80 + 1)
    assert diff("cfg", freeze(old), freeze(new)) == ["cfg: ...000000000000000000000) -> ...000000000000000000001)"]


@dataclasses.dataclass(frozen=True)
class Holder:
    """A static object whose parts misbehave while being explained."""

    part: Any
    name: str = "h"


def test_parts_that_raise_while_explained_give_a_plainer_text() -> None:
    f = _param("cfg", static=True)
    for cfg in (Holder(Strict(1)), Holder(4), Holder(BadRepr(1)), Holder(BadRepr(2)), Holder(ArrayEq(1)),
                Holder(ArrayEq(1), "g")):
        assert f(jnp.ones(1), cfg).tolist() == [2.0]
    assert [r.changes for r in f.retraces] == [
        ("cfg.part: Strict(1) (Strict) -> 4 (int)",),
        ("cfg.part: 4 (int) -> <BadRepr object> (BadRepr)",),
        ("cfg.part: <BadRepr object> -> <BadRepr object> (another object, not equal to the first)",),
        ("cfg.part: <BadRepr object> (BadRepr) -> ArrayEq(1) (ArrayEq)",),
        ("cfg: Holder(part=ArrayEq(1), name='h') -> Holder(part=ArrayEq(1), name='g')",),  # comparing them fails
    ]


def test_a_method_bound_to_a_new_object_names_the_object() -> None:
    class Model:
        def apply(self) -> None: ...

    old, new = Model().apply, Model().apply
    assert _changes("fn", old, new, static=True) == (
        "fn: test_a_method_bound_to_a_new_object_names_the_object.<locals>.Model.apply bound to a new Model object "
        "on each call; make the Model once",)


def test_the_same_text_wherever_a_retrace_is_reported(caplog: pytest.LogCaptureFixture) -> None:
    @functools.partial(js.jit, max_traces=2)
    def step(x: jax.Array, p: JdcParams) -> jax.Array:
        return x + p.x

    change = "p.mode: 'relu' -> 'tanh'"
    with (caplog.at_level(logging.INFO, logger="jaxstatic"), pytest.raises(AssertionError) as budget,
          js.testing.expect_traces(step, at_most=1)):
        step(jnp.ones(2), JdcParams(jnp.ones(2), "relu"))
        step(jnp.ones(2), JdcParams(jnp.ones(2), "tanh"))
    assert str(step.retraces[-1]) == f"step was traced again (trace #2) because {change}"
    assert f"jit(step): trace #2, because {change}" in str(budget.value)
    assert [r.getMessage() for r in caplog.records if "#2" in r.getMessage()] == [
        f"step was traced again (trace #2) because {change}"]
    assert any(line.startswith("jit(step)") and line.endswith(f"  {change}") for line in js.trace_report().split("\n"))
    with pytest.raises(js.RetraceError, match=re.escape("step needs trace #3, because p.mode: 'tanh' -> 'gelu', ")):
        step(jnp.ones(2), JdcParams(jnp.ones(2), "gelu"))


def test_a_method_bound_to_another_configuration_names_the_field() -> None:
    def apply_fn(features: int) -> Any:
        return flax.linen.Dense(features).apply

    assert _changes("fn", apply_fn(2), apply_fn(3), static=True) == ("fn.__self__.features: 2 -> 3",)


def test_a_long_value_is_cut_around_its_first_difference() -> None:
    assert diff("v", freeze(tuple(range(30))), freeze(tuple(range(31)))) == [
        "v: ..., 25, 26, 27, 28, 29) -> ..., 25, 26, 27, 28, 29, 30)"]


class Pair:
    """A pytree node of its own: children by key path, a tag as metadata."""

    def __init__(self, inner: Any, tag: str) -> None:
        self.inner, self.tag = inner, tag


jax.tree_util.register_pytree_with_keys(
    Pair, lambda p: (((jax.tree_util.GetAttrKey("inner"), p.inner),), p.tag), lambda tag, kids: Pair(kids[0], tag))


class Unkeyed:
    def __init__(self, items: tuple[Any, ...]) -> None:
        self.items = items


jax.tree_util.register_pytree_node(Unkeyed, lambda u: (u.items, None), lambda _, kids: Unkeyed(tuple(kids)))


def test_any_pytree_node_is_descended_by_key_path_and_its_metadata_named() -> None:
    def state(n: int, tag: str = "t") -> Pair:
        return Pair(Unkeyed((jnp.ones(1), FlaxState(jnp.ones(2), n))), tag)

    assert _changes("s", state(2), state(3), static=False) == ("s.inner[<flat index 1>].n: 2 -> 3",)  # as JAX says it
    assert _changes("s", state(2), state(2, "u"), static=False) == ("s: pytree metadata 't' -> 'u'",)


@dataclasses.dataclass(eq=False)
class Unreadable:
    n: int

    def __getattribute__(self, name: str) -> Any:
        if name == "n":
            raise RuntimeError("unreadable")
        return object.__getattribute__(self, name)


def test_an_object_whose_fields_cannot_be_read_is_said_whole() -> None:
    assert object_diff("cfg", Unreadable(1), Unreadable(2)) == [
        "cfg: <Unreadable object> -> <Unreadable object> (another object, not equal to the first)"]


class Picky:
    """A pytree node whose unflatten accepts arrays only, so its structure cannot be rebuilt to be walked."""

    def __init__(self, x: Any, tag: str) -> None:
        if not isinstance(x, jax.Array | jax.core.Tracer):
            raise TypeError("arrays only")
        self.x, self.tag = x, tag


jax.tree_util.register_pytree_node(Picky, lambda p: ((p.x,), p.tag), lambda tag, kids: Picky(kids[0], tag))


def test_a_structure_that_cannot_be_rebuilt_is_shown_cut_around_its_difference() -> None:
    tag = "t" * 200
    assert _changes("s", Picky(jnp.ones(1), tag + "a"), Picky(jnp.ones(1), tag + "b"), static=False) == (
        f"s: pytree structure ...{'t' * 20}a], [*])) -> ...{'t' * 20}b], [*]))",)
