# Partial stubs for jax: the transforms below keep the signature of the function they wrap.
# Every other name is re-exported from where the runtime module imports it, so it keeps jax's
# own inline types; that block is generated from the installed jax by tools/gen_jax_stubs.py.

from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, Protocol, overload, type_check_only

from jax._src.stages import Lowered, Traced
from jax._src.typing import DeprecatedArg
from jax.custom_derivatives import custom_jvp as custom_jvp, custom_vjp as custom_vjp
from typing_extensions import Concatenate, ParamSpec, Self, TypeVar

_P = ParamSpec("_P")
# Contravariant, as a callable's parameters are: a function of named parameters is also one of positional-only
# ones. pyrefly and ty need it to bind `self` in `_JitWrapped.__get__`; mypy and pyright infer it already.
_P_contra = ParamSpec("_P_contra", contravariant=True)  # type: ignore[misc]
_Q = ParamSpec("_Q")
_R = TypeVar("_R")
_S = TypeVar("_S")
_T = TypeVar("_T")
_R_co = TypeVar("_R_co", covariant=True)

@type_check_only
class _NoFunction: ...

# `jit(fun)` binds _JitR to fun's return type; `jit(**options)` leaves it at the Any default, which
# selects the decorator overload of `_JitWrapped.__call__` below. Any, not a marker class: a checker
# that types `functools.partial(jax.jit, ...)` from typeshed's `partial` alone (pyrefly) fixes the
# result before the function is known, and its calls must then be unchecked rather than wrongly typed.
_JitR = TypeVar("_JitR", default=Any)

@type_check_only
class _JitWrapped(Protocol[_P_contra, _R_co]):
    # Applying the options-only form of `jit` to a function.
    @overload
    def __call__(self: _JitWrapped[..., _NoFunction], fun: Callable[_Q, _T], /) -> _JitWrapped[_Q, _T]: ...
    # Calls are checked against the wrapped function.
    @overload
    def __call__(self, /, *args: _P_contra.args, **kwargs: _P_contra.kwargs) -> _R_co: ...
    # The staging methods also accept ShapeDtypeStruct in place of arrays, so they take anything.
    def lower(self, *args: object, **kwargs: object) -> Lowered: ...
    def trace(self, *args: object, **kwargs: object) -> Traced: ...
    def eval_shape(self, *args: object, **kwargs: object) -> Any: ...
    def clear_cache(self) -> None: ...
    # `@jax.jit` on a method: attribute access through an instance binds `self`.
    @overload
    def __get__(self, instance: None, owner: type[Any] | None = None, /) -> Self: ...
    @overload
    def __get__(
        self: _JitWrapped[Concatenate[_S, _Q], _T], instance: _S, owner: type[Any] | None = None, /
    ) -> _JitWrapped[_Q, _T]: ...

@type_check_only
class _PmapWrapped(Protocol[_P, _R_co]):
    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R_co: ...
    def lower(self, *args: object, **kwargs: object) -> Lowered: ...

# One signature, not overloads: mypy's functools.partial support gives up on overloaded
# functions, and `functools.partial(jax.jit, static_argnames=...)` is a common decorator.
def jit(
    fun: Callable[_P, _JitR] = ...,
    /,
    *,
    in_shardings: Any = ...,
    out_shardings: Any = ...,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Iterable[str] | None = None,
    donate_argnums: int | Sequence[int] | None = None,
    donate_argnames: str | Iterable[str] | None = None,
    keep_unused: bool = False,
    device: object = None,  # a jax.Device, which has no static type
    backend: str | None = None,
    inline: bool = False,
    compiler_options: dict[str, Any] | None = None,
) -> _JitWrapped[_P, _JitR]: ...
def pmap(
    fun: Callable[_P, _R],
    axis_name: Hashable | None = None,
    *,
    in_axes: int | Sequence[Any] | None = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: int | Iterable[int] = (),
    devices: Sequence[object] | None = None,
    backend: str | None = None,
    axis_size: int | None = None,
    donate_argnums: int | Iterable[int] = (),
) -> _PmapWrapped[_P, _R]: ...
def checkpoint(
    fun: Callable[_P, _R],
    *,
    prevent_cse: bool | Sequence[bool] = True,
    policy: Callable[..., bool] | None = None,
    static_argnums: int | tuple[int, ...] = (),
    static_argnames: str | Iterable[str] = (),
    concrete: bool | DeprecatedArg = ...,
) -> Callable[_P, _R]: ...
def remat(
    fun: Callable[_P, _R],
    *,
    prevent_cse: bool = True,
    policy: Callable[..., bool] | None = None,
    static_argnums: int | tuple[int, ...] = (),
    concrete: bool | DeprecatedArg = ...,
) -> Callable[_P, _R]: ...

# The gradient has the structure of the differentiated arguments, which a signature cannot
# express: it stays Any, but the call is checked against `fun`'s parameters.
def grad(
    fun: Callable[_P, object],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Hashable] = (),
) -> Callable[_P, Any]: ...

# With has_aux, `fun` returns (value, aux) and the result is ((value, aux), grads): still (_R, Any).
def value_and_grad(
    fun: Callable[_P, _R],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Hashable] = (),
) -> Callable[_P, tuple[_R, Any]]: ...

# --- generated re-exports (tools/gen_jax_stubs.py); do not edit below ---
from jax import api_util as api_util
from jax import custom_batching as custom_batching
from jax import custom_derivatives as custom_derivatives
from jax import debug as debug
from jax import distributed as distributed
from jax import dlpack as dlpack
from jax import dtypes as dtypes
from jax import errors as errors
from jax import export as export
from jax import ffi as ffi
from jax import image as image
from jax import lax as lax
from jax import lib as lib
from jax import monitoring as monitoring
from jax import nn as nn
from jax import numpy as numpy
from jax import ops as ops
from jax import profiler as profiler
from jax import random as random
from jax import scipy as scipy
from jax import sharding as sharding
from jax import stages as stages
from jax import tree as tree
from jax import tree_util as tree_util
from jax import typing as typing
from jax._src.ad_checkpoint import checkpoint_policies as checkpoint_policies
from jax._src.api import block_until_ready as block_until_ready
from jax._src.api import clear_caches as clear_caches
from jax._src.api import copy_to_host_async as copy_to_host_async
from jax._src.api import device_get as device_get
from jax._src.api import device_put as device_put
from jax._src.api import device_put_replicated as device_put_replicated
from jax._src.api import device_put_sharded as device_put_sharded
from jax._src.api import disable_jit as disable_jit
from jax._src.api import effects_barrier as effects_barrier
from jax._src.api import eval_shape as eval_shape
from jax._src.api import fwd_and_bwd as fwd_and_bwd
from jax._src.api import hessian as hessian
from jax._src.api import jacfwd as jacfwd
from jax._src.api import jacobian as jacobian
from jax._src.api import jacrev as jacrev
from jax._src.api import jvp as jvp
from jax._src.api import linear_transpose as linear_transpose
from jax._src.api import linearize as linearize
from jax._src.api import live_arrays as live_arrays
from jax._src.api import make_jaxpr as make_jaxpr
from jax._src.api import named_call as named_call
from jax._src.api import named_scope as named_scope
from jax._src.api import vjp as vjp
from jax._src.api import vmap as vmap
from jax._src.array import Shard as Shard
from jax._src.array import make_array_from_callback as make_array_from_callback
from jax._src.array import make_array_from_process_local_data as make_array_from_process_local_data
from jax._src.array import make_array_from_single_device_arrays as make_array_from_single_device_arrays
from jax._src.basearray import Array as Array
from jax._src.callback import pure_callback as pure_callback
from jax._src.config import allow_f16_reductions as allow_f16_reductions
from jax._src.config import array_garbage_collection_guard as array_garbage_collection_guard
from jax._src.config import auto_pcast as auto_pcast
from jax._src.config import check_tracer_leaks as check_tracer_leaks
from jax._src.config import checking_leaks as checking_leaks
from jax._src.config import config as config
from jax._src.config import debug_infs as debug_infs
from jax._src.config import debug_key_reuse as debug_key_reuse
from jax._src.config import debug_nans as debug_nans
from jax._src.config import default_device as default_device
from jax._src.config import default_matmul_precision as default_matmul_precision
from jax._src.config import default_prng_impl as default_prng_impl
from jax._src.config import enable_checks as enable_checks
from jax._src.config import enable_custom_prng as enable_custom_prng
from jax._src.config import enable_x64 as enable_x64
from jax._src.config import explain_cache_misses as explain_cache_misses
from jax._src.config import jax2tf_associative_scan_reductions as jax2tf_associative_scan_reductions
from jax._src.config import legacy_prng_key as legacy_prng_key
from jax._src.config import log_compiles as log_compiles
from jax._src.config import make_user_context as make_user_context
from jax._src.config import no_execution as no_execution
from jax._src.config import no_tracing as no_tracing
from jax._src.config import numpy_dtype_promotion as numpy_dtype_promotion
from jax._src.config import numpy_rank_promotion as numpy_rank_promotion
from jax._src.config import remove_size_one_mesh_axis_from_type as remove_size_one_mesh_axis_from_type
from jax._src.config import softmax_custom_jvp as softmax_custom_jvp
from jax._src.config import thread_guard as thread_guard
from jax._src.config import threefry_partitionable as threefry_partitionable
from jax._src.config import transfer_guard as transfer_guard
from jax._src.config import transfer_guard_device_to_device as transfer_guard_device_to_device
from jax._src.config import transfer_guard_device_to_host as transfer_guard_device_to_host
from jax._src.config import transfer_guard_host_to_device as transfer_guard_host_to_device
from jax._src.core import Ref as Ref
from jax._src.core import ShapeDtypeStruct as ShapeDtypeStruct
from jax._src.core import empty_ref as empty_ref
from jax._src.core import ensure_compile_time_eval as ensure_compile_time_eval
from jax._src.core import free_ref as free_ref
from jax._src.core import freeze as freeze
from jax._src.core import typeof as typeof
from jax._src.custom_derivatives import closure_convert as closure_convert
from jax._src.custom_derivatives import custom_gradient as custom_gradient
from jax._src.dtypes import float0 as float0
from jax._src.environment_info import print_environment_info as print_environment_info
from jax._src.indexing import ds as ds
from jax._src.named_sharding import NamedSharding as NamedSharding
from jax._src.partition_spec import P as P
from jax._src.pjit import reshard as reshard
from jax._src.ref import new_ref as new_ref
from jax._src.shard_map import shard_map as shard_map
from jax._src.shard_map import smap as smap
from jax._src.sharding_impls import make_mesh as make_mesh
from jax._src.sharding_impls import set_mesh as set_mesh
from jax._src.xla_bridge import default_backend as default_backend
from jax._src.xla_bridge import device_count as device_count
from jax._src.xla_bridge import devices as devices
from jax._src.xla_bridge import host_count as host_count
from jax._src.xla_bridge import host_id as host_id
from jax._src.xla_bridge import host_ids as host_ids
from jax._src.xla_bridge import local_device_count as local_device_count
from jax._src.xla_bridge import local_devices as local_devices
from jax._src.xla_bridge import process_count as process_count
from jax._src.xla_bridge import process_index as process_index
from jax._src.xla_bridge import process_indices as process_indices
from jax.version import __version__ as __version__
from jax.version import __version_info__ as __version_info__
from jaxlib.xla_client import Device as Device
from types import SimpleNamespace as _SimpleNamespace
import jax._src.api
import jax._src.core
import jax.core
import jax.experimental.compilation_cache.compilation_cache
import jax.interpreters.ad
import jax.interpreters.batching
import jax.interpreters.mlir
import jax.interpreters.partial_eval
import jax.interpreters.pxla
import jax.interpreters.xla
ad: _SimpleNamespace
memory: _SimpleNamespace
# --- end of generated re-exports ---
