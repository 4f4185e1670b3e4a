"""Retrace explanations and error advice: right for the value at hand, never breaking a call, bounded in cost."""

from __future__ import annotations

import struct
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np
import pytest
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
    assert blame(history[:1], new) == ["cfg['k'].n: 0 -> -1"]
    second = Counted.reprs
    Counted.reprs = 0
    assert blame(history, new) == ["cfg['k'].n: 999 -> -1"]
    assert Counted.reprs == second == 0


def test_a_large_dict_is_explained_by_rendering_only_what_changed() -> None:
    old = {f"w{i}": Counted(i) for i in range(100_000)}
    new = dict(old, w5=Counted(-5))
    del new["w7"]
    new["extra"] = Counted(0)
    Counted.reprs = 0
    assert diff("cfg", freeze(old), freeze(new)) == [
        "cfg['w5'].n: 5 -> -5", "cfg['w7']: removed", "cfg['extra']: added (Counted(0))"]
    assert Counted.reprs == 1
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
        "hashable, and its value is only known at run time. Non-hashable static arguments are not supported. Pass "
        "it through a parameter that is not Static, or, if "
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
        ("x: sharding none (no mesh) -> P(None,) over mesh d=4 (Explicit)",
         f"the JAX setting jax_default_device: {CPUS[0]!r} -> None"),  # the first call ran under default_device
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
