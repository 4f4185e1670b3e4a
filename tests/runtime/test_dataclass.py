from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Callable
from typing import Any

import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxstatic as js
from jaxstatic import Static

from . import future_dataclasses as future, future_unresolved as fu

Activation = Callable[[jax.Array], jax.Array]


@js.dataclass
class Linear:
    w: jax.Array
    b: jax.Array

    def __call__(self, x: jax.Array) -> jax.Array:
        return x @ self.w + self.b


@js.dataclass
class MLP:
    layers: list[Linear]
    activation: Static[Activation]
    name: Static[str] = "mlp"
    depth: Static[int] = 2
    options: Static[dict[str, Any]] = js.field(default_factory=dict)

    def apply(self, x: jax.Array) -> jax.Array:
        for layer in self.layers:
            x = self.activation(layer(x))
        return x * self.options.get("scale", 1.0)


def linear(seed: int, n: int = 2) -> Linear:
    w = jax.random.normal(jax.random.PRNGKey(seed), (n, n))
    return Linear(w, jnp.full((n,), 0.1 * seed))


def mlp(activation: Activation = jax.nn.relu, **kwargs: Any) -> MLP:
    return MLP([linear(1), linear(2)], activation, **kwargs)


def plain_apply(params: list[tuple[jax.Array, jax.Array]], activation: Activation, x: jax.Array) -> jax.Array:
    for w, b in params:
        x = activation(x @ w + b)
    return x


X = jnp.array([1.0, -2.0])


# -- the split: Static fields are metadata, the others children --------------------------------------------------


def test_static_fields_are_metadata_and_children_are_leaves() -> None:
    model = mlp(jnp.tanh, name="a", depth=3, options={"scale": 2.0})
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(model)[0]]
    assert paths == [".layers[0].w", ".layers[0].b", ".layers[1].w", ".layers[1].b"]
    doubled = jax.tree_util.tree_map(lambda a: a * 2, model)
    assert type(doubled) is MLP
    assert (doubled.activation, doubled.name, doubled.depth, doubled.options) == (jnp.tanh, "a", 3, {"scale": 2.0})
    assert np.array_equal(doubled.layers[1].w, model.layers[1].w * 2)
    assert [f.name for f in dataclasses.fields(model)] == ["layers", "activation", "name", "depth", "options"]


def test_equal_static_values_give_equal_structures_and_one_trace_under_jax_jit() -> None:
    traces = []

    @jax.jit
    def f(model: MLP, x: jax.Array) -> jax.Array:
        traces.append(model.name)
        return model.apply(x)

    f(mlp(options={"scale": 2.0, "tags": ("x", "y")}), X)
    f(mlp(options={"scale": 2.0, "tags": ("x", "y")}), X)  # built again: equal, not identical
    assert len(traces) == 1
    f(mlp(depth=3), X)
    f(mlp(options={"scale": 2}), X)  # 2 == 2.0 in Python, but another program
    f(mlp(options={"scale": 2.0, "tags": ["x", "y"]}), X)  # a list is not a tuple
    assert len(traces) == 4
    assert jax.tree_util.tree_structure(mlp(name="b")) != jax.tree_util.tree_structure(mlp())


def test_static_callable_string_int_and_dict_values_reach_the_traced_code() -> None:
    @jax.jit
    def f(model: MLP, x: jax.Array) -> jax.Array:
        assert isinstance(model.name, str) and isinstance(model.depth, int)
        return model.apply(x) + len(model.name) + model.depth

    model = mlp(jnp.tanh, name="abc", depth=4, options={"scale": 3.0})
    params = [(layer.w, layer.b) for layer in model.layers]
    assert np.allclose(f(model, X), 3.0 * plain_apply(params, jnp.tanh, X) + 7)


# -- values that cannot be static fail when the object is built --------------------------------------------------


def test_array_in_a_static_field_is_an_error_when_built() -> None:
    with pytest.raises(js.NonStaticValueError) as err:
        MLP([], jax.nn.relu, options={"w": jnp.ones(2)})
    assert str(err.value) == (
        "MLP(): field 'options' is Static, but MLP.options['w'] is a jax.Array (float32[2]), which cannot be "
        "static: a jax.Array is not hashable, and its value is only known at run time. Drop Static[...] from the field to make it a traced child, or store a static-hashable "
        "value there (hashable, or a builtin container of hashable values)."
    )


def test_unhashable_value_in_a_static_field_names_its_path() -> None:
    class Unhashable:
        __hash__ = None  # type: ignore[assignment]

    with pytest.raises(js.NonStaticValueError, match=r"^MLP\(\): field 'options' is Static, but "
                       r"MLP\.options\['fns'\]\[1\] is a .*Unhashable, which cannot be static: its class sets "
                       r"__hash__ = None"):
        MLP([], jax.nn.relu, options={"fns": (jnp.sin, Unhashable())})


def test_replace_checks_again() -> None:
    model = mlp()
    assert dataclasses.replace(model, depth=5).depth == 5
    with pytest.raises(js.NonStaticValueError, match=r"MLP\.name is a jax\.Array"):
        dataclasses.replace(model, name=jnp.ones(1))


# -- no stale programs ---------------------------------------------------------------------------------------------


def test_static_container_changed_in_place_retraces_under_jax_jit() -> None:
    traces = []

    @jax.jit
    def f(model: MLP, x: jax.Array) -> jax.Array:
        traces.append(dict(model.options))
        return model.apply(x)

    model = mlp(options={"scale": 2.0})
    base = f(mlp(), X)
    assert np.allclose(f(model, X), 2 * base)
    model.options["scale"] = 3.0
    assert np.allclose(f(model, X), 3 * base)  # not the program compiled for 2.0
    model.options["scale"] = 2.0
    assert np.allclose(f(model, X), 2 * base)  # equal to the first again: its program
    assert traces == [{}, {"scale": 2.0}, {"scale": 3.0}]


def test_a_rebuilt_object_never_shares_a_mutable_static_with_the_cache() -> None:
    model = mlp(options={"scale": 2.0})
    leaves, treedef = jax.tree_util.tree_flatten(model)
    rebuilt = jax.tree_util.tree_unflatten(treedef, leaves)
    assert rebuilt.options == {"scale": 2.0} and rebuilt.options is not model.options
    rebuilt.options["scale"] = 5.0  # changes that object only, never what the treedef says
    assert jax.tree_util.tree_unflatten(treedef, leaves).options == {"scale": 2.0}
    assert jax.tree_util.tree_structure(rebuilt) != treedef
    assert jax.tree_util.tree_structure(model) == treedef


def test_changed_in_place_to_hold_an_array_is_an_error_at_the_next_flatten() -> None:
    model = mlp(options={"scale": 2.0})
    model.options["scale"] = jnp.ones(1)
    with pytest.raises(js.NonStaticValueError, match=r"MLP\.options\['scale'\] is a jax\.Array \(float32\[1\]\) "
                       r"\(changed in place after the object was built\)"):
        jax.tree_util.tree_leaves(model)


# -- transforms --------------------------------------------------------------------------------------------------


def test_grad_keeps_the_static_fields_and_matches_plain_jax() -> None:
    model = mlp(jnp.tanh, options={"scale": 2.0})

    def loss(m: MLP) -> jax.Array:
        return jnp.sum(m.apply(X) ** 2)

    grads = jax.grad(loss)(model)
    params = [(layer.w, layer.b) for layer in model.layers]
    expected = jax.grad(lambda p: jnp.sum((2.0 * plain_apply(p, jnp.tanh, X)) ** 2))(params)
    assert type(grads) is MLP
    assert (grads.activation, grads.options) == (jnp.tanh, {"scale": 2.0})
    for layer, (gw, gb) in zip(grads.layers, expected):
        assert np.allclose(layer.w, gw) and np.allclose(layer.b, gb)
    assert np.allclose(jax.jit(jax.grad(loss))(model).layers[0].w, expected[0][0])


def test_vmap_over_a_stacked_model() -> None:
    model = mlp(jnp.tanh)
    stacked = jax.tree_util.tree_map(lambda a: jnp.stack([a, 2 * a]), model)
    out = jax.vmap(lambda m, x: m.apply(x), in_axes=(0, None))(stacked, X)
    assert np.allclose(out[1], jax.tree_util.tree_map(lambda a: 2 * a, model).apply(X))


def test_jit_method_retraces_on_static_fields_and_explains_them() -> None:
    traces = []

    @js.dataclass
    class Net:
        layers: list[Linear]
        activation: Static[Activation]
        options: Static[dict[str, float]] = js.field(default_factory=dict)

        @js.jit
        def __call__(self, x: jax.Array) -> jax.Array:
            traces.append(self.activation)
            for layer in self.layers:
                x = self.activation(layer(x))
            return x * self.options.get("scale", 1.0)

    layers = [linear(1), linear(2)]
    relu_net = Net(layers, jax.nn.relu, {"scale": 2.0})
    params = [(layer.w, layer.b) for layer in layers]
    assert np.allclose(relu_net(X), 2.0 * plain_apply(params, jax.nn.relu, X))
    Net(layers, jax.nn.relu, {"scale": 2.0})(X)  # equal: no trace
    tanh_net = Net(layers, jnp.tanh, {"scale": 2.0})
    assert np.allclose(tanh_net(X), 2.0 * plain_apply(params, jnp.tanh, X))
    tanh_net.options["scale"] = 3.0
    assert np.allclose(tanh_net(X), 3.0 * plain_apply(params, jnp.tanh, X))
    assert traces == [jax.nn.relu, jnp.tanh, jnp.tanh]
    assert [str(r) for r in Net.__call__.retraces] == [
        "Net.__call__ was traced again (trace #2) because self.activation: relu -> tanh",
        "Net.__call__ was traced again (trace #3) because self.options['scale']: 2.0 -> 3.0",
    ]


def test_retrace_explanation_names_a_nested_static_field() -> None:
    @js.dataclass
    class Block:
        w: jax.Array
        mode: Static[str]

    @js.jit
    def run(blocks: dict[str, Any]) -> jax.Array:  # js.jit cannot resolve local names
        return sum(b.w.sum() if b.mode == "sum" else b.w.max() for b in blocks["main"])

    run({"main": [Block(jnp.ones(2), "sum"), Block(jnp.ones(2), "sum")]})
    run({"main": [Block(jnp.ones(2), "sum"), Block(jnp.ones(2), "max")]})
    assert run.retraces[-1].changes == ("blocks['main'][1].mode: 'sum' -> 'max'",)


@js.dataclass
class Config:
    depth: Static[int]
    rate: float


@js.dataclass
class Config2:
    rate: float
    options: Static[dict[str, int]]


def test_a_dataclass_as_a_static_value() -> None:
    @js.jit
    def f(x: jax.Array, cfg: Static[Config]) -> jax.Array:
        return x * cfg.rate * cfg.depth

    assert f(X, Config(2, 0.5)).tolist() == [1.0, -2.0]
    f(X, Config(2, 0.5))
    assert f.trace_count == 1
    with pytest.raises(js.NonStaticValueError, match=r"unhashable MLP: MLP\.layers\[0\]\.w is a jax\.Array "
                       r"\(float32\[2,2\]\)\. An instance holding arrays is a pytree"):
        js.jit(_scale_by)(X, mlp())

    @js.dataclass
    class Outer:
        w: jax.Array
        config: Static[Config2]  # would key programs on an object whose dict can change: refused when built

    with pytest.raises(js.NonStaticValueError, match=r"^Outer\(\): field 'config' is Static, but Outer\.config is "
                       r"a .*Config2, which cannot be static: hashing it fails \(unhashable Config2: "
                       r"Config2\.options is a dict, which can change in place"):
        Outer(X, Config2(1.0, {"a": 1}))


def _scale_by(x: jax.Array, model: Static[MLP]) -> jax.Array:
    return x * model.depth


# -- equality, hashing, repr -------------------------------------------------------------------------------------


def test_equality_compares_values_and_never_raises() -> None:
    model = mlp(options={"scale": 2.0})
    assert model == mlp(options={"scale": 2.0})  # other arrays objects, equal values
    assert model != mlp(options={"scale": 3.0})
    assert model != mlp(jnp.tanh, options={"scale": 2.0})
    assert model != jax.tree_util.tree_map(lambda a: a + 1, model)
    assert model != "mlp"

    @jax.jit
    def f(m: MLP) -> jax.Array:
        assert (m == m) is True and (m == model) is False  # tracers compare by identity: no traced bool
        return m.apply(X)

    f(model)


def test_hash_only_without_arrays() -> None:
    @js.dataclass
    class Schedule:
        rate: float
        kind: Static[str]

    assert hash(Schedule(0.1, "cos")) == hash(Schedule(0.1, "cos"))
    assert len({Schedule(0.1, "cos"), Schedule(0.1, "cos"), Schedule(0.1, "lin")}) == 2
    with pytest.raises(TypeError, match=r"^unhashable MLP: MLP\.layers\[0\]\.w is a jax\.Array"):
        hash(mlp())

    @js.dataclass
    class Holder:
        schedule: Schedule
        tags: Static[tuple[str, ...]] = ()

    schedule = Schedule(0.1, "cos")
    assert hash(Holder(schedule, ("a",))) == hash(Holder(Schedule(0.1, "cos"), ("a",)))
    with pytest.raises(js.NonStaticValueError, match=r"^unhashable Holder: Config2\.options is a dict, which can "
                       r"change in place, so the instance has no fixed hash and cannot be a static value\. Store a "
                       r"tuple or frozenset there, or pass the instance to a parameter that is not Static\.$"):
        hash(Holder(Config2(1.0, {"a": 1})))


def test_repr_is_a_readable_tree() -> None:
    assert repr(mlp(options={"scale": 2.0})) == (
        "MLP(\n"
        "  layers=[Linear(w=f32[2,2], b=weak_f32[2]), Linear(w=f32[2,2], b=weak_f32[2])],\n"
        "  activation=<function relu>,\n"
        "  name='mlp',\n"
        "  depth=2,\n"
        "  options={'scale': 2.0},\n"
        ")"
    )
    assert repr(Linear(jnp.ones((2, 2)), np.zeros(2, np.int32))) == "Linear(w=f32[2,2], b=i32[2](numpy))"
    assert "activation=relu" in str(jax.tree_util.tree_structure(mlp()))


# -- declaring classes -------------------------------------------------------------------------------------------


def test_inherited_fields_keep_their_kind() -> None:
    @js.dataclass
    class Base:
        w: jax.Array
        kind: Static[str]

    @js.dataclass
    class Child(Base):
        b: jax.Array
        scale: Static[float] = 1.0

    child = Child(jnp.ones(2), "k", jnp.zeros(2), 2.0)
    leaves, treedef = jax.tree_util.tree_flatten(child)
    assert [leaf.tolist() for leaf in leaves] == [[1.0, 1.0], [0.0, 0.0]]
    rebuilt = jax.tree_util.tree_unflatten(treedef, leaves)
    assert type(rebuilt) is Child and (rebuilt.kind, rebuilt.scale) == ("k", 2.0)
    assert jax.tree_util.tree_structure(Child(jnp.ones(2), "k", jnp.zeros(2), 3.0)) != treedef

    class Undecorated(Base):
        pass

    with pytest.raises(TypeError, match=r"^Undecorated inherits from the jaxstatic dataclass Base but is not "
                       r"decorated itself, so JAX would treat it as a leaf\. Decorate it with @jaxstatic\.dataclass\.$"):
        Undecorated(jnp.ones(2), "k")


def test_postponed_annotations_forward_references_and_inheritance() -> None:
    spec = future.Spec(2.0)
    leaf = future.Node(jnp.ones(2), (), jnp.add, spec)
    tree = future.Labelled(jnp.ones(2), (leaf, leaf), jnp.multiply, spec, label="root", extra=jnp.zeros(1))
    assert jax.tree_util.tree_structure(tree).num_leaves == 4  # values of tree, both leaves, and extra
    doubled = jax.jit(lambda t: jax.tree_util.tree_map(lambda a: 2 * a, t))(tree)
    assert (doubled.combine, doubled.spec, doubled.label) == (jnp.multiply, spec, "root")
    assert np.allclose(jax.jit(future.Node.total)(tree), tree.total())
    with pytest.raises(js.NonStaticValueError, match=r"^Node\(\): field 'combine' is Static"):
        future.Node(jnp.ones(2), (), {"f": jnp.ones(1)}, spec)  # type: ignore[arg-type]


def test_classes_inside_functions_with_postponed_annotations() -> None:
    @js.dataclass
    class Inner:
        w: jax.Array
        act: Static[Activation]

    @js.dataclass
    class Outer:
        inner: Inner  # a name get_type_hints cannot resolve from here
        blocks: list[Inner]
        mode: Static[str]

    outer = Outer(Inner(jnp.ones(1), jnp.sin), [], "m")
    assert jax.tree_util.tree_structure(outer).num_leaves == 1
    assert jax.tree_util.tree_map(lambda a: a, outer).mode == "m"


def test_a_static_field_whose_type_is_imported_only_for_type_checking_stays_static() -> None:
    m = fu.Model(jnp.ones(2))
    assert jax.tree_util.tree_leaves(m) == [m.w]
    g = jax.grad(lambda m: jnp.sum(m.w / m.temperature))(m)
    trained = jax.tree_util.tree_map(lambda p, g: p - 0.5 * g, m, g)
    assert trained.temperature == 2.0 and trained.w.tolist() == [0.75, 0.75]
    with pytest.raises(js.NonStaticValueError, match=r"^Model\(\): field 'temperature' is Static, but "
                       r"Model\.temperature is a jax\.Array"):
        fu.Model(jnp.ones(2), jnp.ones(1))  # type: ignore[arg-type]


def test_static_fields_spelled_every_way_stay_static_when_their_types_do_not_resolve() -> None:
    s = fu.Spelled(jnp.ones(2), jnp.ones(1), 1.0, 2.0, 3.0, 4, ("a",), 5.0)  # type: ignore[arg-type]
    assert jax.tree_util.tree_leaves(s) == [s.w, s.aux]
    assert jax.tree_util.tree_structure(s) == jax.tree_util.tree_structure(jax.tree_util.tree_map(lambda a: -a, s))
    assert fu.Spelled.__jaxstatic_class__.statics == ("a", "b", "c", "d", "e", "f", "g")  # type: ignore[attr-defined]


def test_a_static_field_naming_a_class_defined_later_in_the_function() -> None:
    flagged: Any = fu.local_forward_reference()
    assert jax.tree_util.tree_leaves(flagged) == [flagged.w]
    assert jax.tree_util.tree_map(lambda a: 2 * a, flagged).flags == (True, False)


def test_defaults_factories_and_converters() -> None:
    calls = []

    def to_array(value: Any) -> jax.Array:
        calls.append(value)
        return jnp.asarray(value, jnp.float32)

    @js.dataclass
    class Layer:
        w: jax.Array = js.field(converter=to_array)
        tags: Static[tuple[str, ...]] = js.field(default=("a",), converter=tuple)
        extra: Static[list[int]] = js.field(default_factory=list)

        def __post_init__(self) -> None:
            assert isinstance(self.w, jax.Array)  # converted first
            calls.append("post_init")

    layer = Layer([1, 2], ["x"])  # type: ignore[arg-type]
    assert layer.w.dtype == jnp.float32 and layer.tags == ("x",) and layer.extra == []
    assert calls == [[1, 2], "post_init"]
    jax.tree_util.tree_map(lambda a: object(), layer)  # placeholder leaves: no converter, no __post_init__
    jax.jit(lambda m: m.w * 2)(layer)
    assert len(calls) == 2


def test_a_field_outside_init_is_a_child_too() -> None:
    @js.dataclass
    class Norm:
        w: jax.Array
        total: jax.Array = js.field(init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "total", self.w.sum())

    norm = Norm(jnp.ones(3))
    assert [leaf.tolist() for leaf in jax.tree_util.tree_leaves(norm)] == [[1.0, 1.0, 1.0], 3.0]
    doubled = jax.tree_util.tree_map(lambda a: 2 * a, norm)  # rebuilt from its leaves: __post_init__ not run
    assert doubled.total.tolist() == 6.0


def test_frozen_by_default_and_a_custom_init() -> None:
    @js.dataclass
    class Scaled:
        w: jax.Array
        factor: Static[float]

        def __init__(self, w: Any, factor: float = 2.0) -> None:
            self.w = jnp.asarray(w)  # assignment is open while __init__ runs
            self.factor = factor

    scaled = Scaled([1.0])
    assert scaled.factor == 2.0 and jax.tree_util.tree_leaves(scaled)[0].tolist() == [1.0]
    with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'factor'"):
        scaled.factor = 3.0  # type: ignore[misc]


def test_not_frozen_assigning_a_static_field_retraces() -> None:
    @js.dataclass(frozen=False)
    class State:
        w: jax.Array
        step: Static[int]

    traces = []

    @jax.jit
    def f(s: State) -> jax.Array:
        traces.append(s.step)
        return s.w * s.step

    state = State(jnp.ones(1), 1)
    f(state)
    state.step = 2
    assert f(state).tolist() == [2.0]
    with pytest.raises(js.NonStaticValueError, match=r"State\.step is a jax\.Array"):
        state.step = jnp.ones(1)  # type: ignore[assignment]
    assert traces == [1, 2]
    with pytest.raises(TypeError, match="unhashable type: 'State'"):
        hash(state)


def softsign(x: jax.Array) -> jax.Array:
    return x / (1 + jnp.abs(x))


def test_copy_and_pickle_keep_structure() -> None:
    model = mlp(softsign, options={"scale": 2.0})
    treedef = jax.tree_util.tree_structure(model)
    for other in (copy.copy(model), copy.deepcopy(model), pickle.loads(pickle.dumps(model))):
        assert jax.tree_util.tree_structure(other) == treedef and other == model


# -- Equinox, both ways ------------------------------------------------------------------------------------------


class Head(eqx.Module):
    body: MLP  # a jaxstatic dataclass inside an Equinox module
    scale: float = eqx.field(static=True)

    def __call__(self, x: jax.Array) -> jax.Array:
        return self.body.apply(x) * self.scale


@js.dataclass
class Wrapped:
    inner: eqx.nn.Linear  # an Equinox module inside a jaxstatic dataclass
    activation: Static[Activation]

    def apply(self, x: jax.Array) -> jax.Array:
        return self.activation(self.inner(x))


def test_dataclass_inside_an_equinox_module() -> None:
    traces = []

    def run(head: Head, x: jax.Array) -> jax.Array:
        traces.append(head.body.activation)
        return head(x)

    head = Head(mlp(), 2.0)
    params = [(layer.w, layer.b) for layer in head.body.layers]
    expected = 2.0 * plain_apply(params, jax.nn.relu, X)
    for jitted in (eqx.filter_jit(run), jax.jit(run), js.jit(run)):
        traces.clear()
        assert np.allclose(jitted(head, X), expected)
        jitted(Head(mlp(), 2.0), X)
        assert np.allclose(jitted(Head(mlp(jnp.tanh), 2.0), X), 2.0 * plain_apply(params, jnp.tanh, X))
        assert traces == [jax.nn.relu, jnp.tanh]
    moved = eqx.tree_at(lambda h: h.body.layers[0].b, head, jnp.zeros(2))
    assert moved.body.activation is jax.nn.relu and moved.body.options == {}
    assert moved.body.layers[0].b.tolist() == [0.0, 0.0]


def test_equinox_module_inside_a_dataclass() -> None:
    traces = []

    def run(w: Wrapped, x: jax.Array) -> jax.Array:
        traces.append(w.activation)
        return w.apply(x)

    inner = eqx.nn.Linear(2, 2, key=jax.random.PRNGKey(0))
    wrapped = Wrapped(inner, jnp.tanh)
    expected = jnp.tanh(inner.weight @ X + inner.bias)
    for jitted in (eqx.filter_jit(run), jax.jit(run), js.jit(run)):
        traces.clear()
        assert np.allclose(jitted(wrapped, X), expected)
        jitted(Wrapped(inner, jnp.tanh), X)
        jitted(Wrapped(inner, jnp.sin), X)
        assert traces == [jnp.tanh, jnp.sin]
    zeroed = eqx.tree_at(lambda w: w.inner.bias, wrapped, jnp.zeros(2))
    assert zeroed.activation is jnp.tanh and zeroed.inner.bias.tolist() == [0.0, 0.0]
    assert jax.tree_util.tree_map(lambda a: a, wrapped).activation is jnp.tanh
    grads = eqx.filter_grad(lambda w: run(w, X).sum())(wrapped)
    assert type(grads) is Wrapped and grads.activation is jnp.tanh


def test_a_class_attribute_over_a_static_field_with_a_custom_init_as_in_equinox() -> None:
    @js.dataclass
    class Base:
        w: jax.Array
        config: Static[list[str]] = js.field(default_factory=list)

    @js.dataclass
    class Configured(Base):
        config = ["a", "b"]  # type: ignore[assignment]  # noqa: RUF012

        def __init__(self, w: jax.Array) -> None:
            self.w = w

    model = Configured(jnp.ones(2))
    assert model.config == ["a", "b"] and jax.tree_util.tree_leaves(model) == [model.w]
    assert jax.tree_util.tree_map(lambda a: 2 * a, model).config == ["a", "b"]
    assert Base(jnp.ones(2)).config == []


def test_a_field_a_custom_init_leaves_without_any_value_is_named() -> None:
    @js.dataclass
    class Forgetful:
        w: jax.Array
        k: Static[int]

        def __init__(self, w: jax.Array) -> None:
            self.w = w

    with pytest.raises(TypeError, match=r"^Forgetful\(\): field 'k' has no value: Forgetful\.__init__ did not "
                       r"assign it, and it has no default or class attribute\. Assign self\.k = \.\.\. in "
                       r"__init__, or give the field a default\.$"):
        Forgetful(jnp.ones(2))
