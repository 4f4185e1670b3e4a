"""jaxstatic's public API as a user's type checker sees it; checked by mypy and pyright, never run.

Lines marked ``# type: ignore`` must be errors: both checkers are run so that an unneeded ignore
fails. The ``reveal_type`` lines are read by tests/test_stubs.py, which expects the wrapped
function's parameter names in what each checker reveals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

import jax
import jax.numpy as jnp
from typing_extensions import assert_type, reveal_type

import jaxstatic as js

x = jnp.ones(3)


def scale(x: jax.Array, n: js.Static[int]) -> jax.Array:
    return x * n


# `Static[T]` is `Annotated[T, STATIC]`: the marker can be written out too.
def scale_annotated(x: jax.Array, n: Annotated[int, js.STATIC]) -> jax.Array:
    return x * n


assert_type(js.jit(scale_annotated)(x, 2), jax.Array)


jitted = js.jit(scale)
reveal_type(jitted)
as_function: js.JitFunction[[jax.Array, int], jax.Array] = jitted
not_as_function: js.JitFunction[[jax.Array, str], jax.Array] = jitted  # type: ignore
assert_type(jitted(x, 2), jax.Array)
jitted(x, "2")  # type: ignore
jitted(x)  # type: ignore
as_callable: Callable[[jax.Array, int], jax.Array] = jitted


@js.jit(max_traces=4)
def configured(x: jax.Array, n: js.Static[int] = 1) -> jax.Array:
    return x * n


reveal_type(configured)
assert_type(configured(x), jax.Array)
assert_type(configured(x, n=3), jax.Array)
configured(x, m=3)  # type: ignore

lowered: js.Lowered[[jax.Array, int], jax.Array] = jitted.lower(x, 2)
compiled: js.Compiled[[jax.Array, int], jax.Array] = lowered.compile()
assert_type(compiled(x, 2), jax.Array)
compiled(x, "2")  # type: ignore
assert_type(jitted.trace_count, int)
assert_type(jitted.cache_info(), js.CacheInfo)
assert_type(jitted.retraces, tuple[js.Retrace, ...])
assert_type(jitted.clear_cache(), None)
assert_type(js.trace_report(), str)
assert_type(js.static_argnames(scale), tuple[str, ...])
assert_type(js.static_argnums(scale), tuple[int, ...])


class Model:
    @js.jit
    def apply(self, x: jax.Array, n: js.Static[int]) -> jax.Array:
        return x * n


assert_type(Model().apply(x, 2), jax.Array)
Model().apply(x, "2")  # type: ignore
bound: js.JitMethod[[jax.Array, int], jax.Array] = Model().apply
as_bound_method: js.BoundMethod[[jax.Array, int], jax.Array] = bound
assert_type(bound.trace_count, int)
assert_type(bound.lower(x, 2).compile()(x, 2), jax.Array)

# jaxstatic functions compose with jax's transforms.
assert_type(jax.vmap(jitted, in_axes=(0, None))(x, 2), jax.Array)


def handle(error: js.JaxstaticError) -> tuple[type[TypeError], ...]:
    return (
        js.AnnotationError,
        js.NonArrayArgumentError,
        js.NonStaticValueError,
        js.StaticMismatchError,
    )


retrace_error: type[RuntimeError] = js.RetraceError

# js.vmap keeps the signature, so calls are checked and it composes with js.jit either way round.
vmapped = js.vmap(scale, in_axes=(0, None))
as_vmapped: js.VmapFunction[[jax.Array, int], jax.Array] = vmapped
assert_type(vmapped(x, 2), jax.Array)
vmapped(x, "2")  # type: ignore
assert_type(js.jit(js.vmap(scale))(x, 2), jax.Array)
assert_type(js.vmap(js.jit(scale))(x, n=2), jax.Array)


@js.vmap(in_axes={"x": 0})
def shifted(x: jax.Array, by: js.Static[float] = 1.0) -> jax.Array:
    return x + by


assert_type(shifted(x), jax.Array)
assert_type(shifted.cache_info(), js.CacheInfo)

# jaxstatic.dataclass: type checkers read the constructor without the plugin (dataclass_transform), frozen default.
@js.dataclass
class Layer:
    w: jax.Array
    activation: js.Static[Callable[[jax.Array], jax.Array]]
    scale: js.Static[float] = 1.0
    tags: js.Static[tuple[str, ...]] = js.field(default_factory=tuple)
    bias: jax.Array = js.field(default=x, converter=jnp.asarray)


layer = Layer(x, jnp.tanh)
assert_type(layer.scale, float)
assert_type(layer.tags, tuple[str, ...])
Layer(x, jnp.tanh, 2.0, ("a",), bias=x)
Layer(x)  # type: ignore
Layer(x, jnp.tanh, scale="big")  # type: ignore
layer.scale = 2.0  # type: ignore


@js.dataclass(frozen=False, kw_only=True)
class Settable:
    w: jax.Array


settable = Settable(w=x)
settable.w = x
Settable(x)  # type: ignore
