"""Retraces explained at the field that changed, for the objects the ecosystem passes: NamedTuples, Equinox modules,
flax structs and ``TrainState``, jax_dataclasses, optax transformations, attrs classes, nnx graphdefs.

Each case is tested with the real library, and each retrace is checked to be real (``jax.jit`` traces again too).
The libraries are the ``tests`` extra's; the runs on the oldest and newest JAX (``tools/ci_floor.sh``,
``tools/ci_newest.sh``, ``tools/ci_py314.sh``) install only some of them, and skip this module without them."""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import re
from collections.abc import Callable
from typing import Any, NamedTuple

import attrs
import equinox as eqx
import jax
import jax.numpy as jnp
import pytest

import jaxstatic as js
from jaxstatic import Static
from jaxstatic._explain import (
    diff,
)
from jaxstatic._freeze import freeze
from jaxstatic._object_diff import object_diff

from .test_explain import ArrayEq, BadRepr, Strict

flax = pytest.importorskip("flax")
pytest.importorskip("flax.linen")
pytest.importorskip("flax.nnx")
pytest.importorskip("flax.struct")
jdc = pytest.importorskip("jax_dataclasses")
optax = pytest.importorskip("optax")
TrainState = pytest.importorskip("flax.training.train_state").TrainState


# -- the objects the ecosystem passes, explained at the field that changed --------------------------------------


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
    assert diff("cfg", freeze(old), freeze(new)) == ["cfg.n: ...000000000000000000000 -> ...000000000000000000001"]


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
        ("cfg.part.n: 1 -> 2",),  # its repr fails: its attribute is named
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


def test_an_object_compared_by_identity_whose_fields_cannot_be_read_is_named_with_the_fix() -> None:
    assert object_diff("cfg", Unreadable(1), Unreadable(2)) == [
        "cfg: a new Unreadable object on each call, and Unreadable compares by identity (it defines no __eq__); make "
        "it once, or give Unreadable __eq__ and __hash__"]


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
