"""jaxstatic: declare JAX static arguments in the signature, freeze static containers, explain every retrace."""

from typing import TYPE_CHECKING, Any

from . import _public
from ._annotations import (
    NODIFF as NODIFF,
    STATIC as STATIC,
    NoDiff as NoDiff,
    Static as Static,
    static_argnames as static_argnames,
    static_argnums as static_argnums,
)
from ._donate import (
    DONATE as DONATE,
    DeletedArrayError as DeletedArrayError,
    Donate as Donate,
    UnusableDonationError as UnusableDonationError,
    donate_argnames as donate_argnames,
    donate_argnums as donate_argnums,
    set_strict_donation as set_strict_donation,
)
from ._errors import (
    AnnotationError as AnnotationError,
    HiddenStaticWarning as HiddenStaticWarning,
    JaxstaticError as JaxstaticError,
    MissingArgumentError as MissingArgumentError,
    NonArrayArgumentError as NonArrayArgumentError,
    NonStaticValueError as NonStaticValueError,
    OptionError as OptionError,
    RetraceError as RetraceError,
    RuleError as RuleError,
    StaticMismatchError as StaticMismatchError,
    StaticTypeWarning as StaticTypeWarning,
)
from ._jit import JitFunction as JitFunction, JitMethod as JitMethod, jit as jit
from ._stats import CacheInfo as CacheInfo, Retrace as Retrace, trace_report as trace_report
from ._transform import BoundMethod as BoundMethod, StaticFunction as StaticFunction

if TYPE_CHECKING:
    from . import testing as testing
    from ._ad import (
        CheckpointFunction as CheckpointFunction,
        CustomJVPFunction as CustomJVPFunction,
        CustomVJPFunction as CustomVJPFunction,
        GradFunction as GradFunction,
        ValueAndGradFunction as ValueAndGradFunction,
        checkpoint as checkpoint,
        custom_jvp as custom_jvp,
        custom_vjp as custom_vjp,
        grad as grad,
        remat as remat,
        value_and_grad as value_and_grad,
    )
    from ._aot import Compiled as Compiled, Lowered as Lowered
    from ._dataclass import dataclass as dataclass, field as field
    from ._shard_map import ShardMapFunction as ShardMapFunction, shard_map as shard_map
    from ._vmap_pmap import (
        PmapFunction as PmapFunction,
        VmapFunction as VmapFunction,
        pmap as pmap,
        vmap as vmap,
    )

# Loaded when first used (``_public.LAZY_MODULES`` says why); the names and modules are those ``_public`` declares.
_LAZY = {name: module for name, module in _public.modules().items() if module in _public.LAZY_MODULES}


def __getattr__(name: str) -> Any:
    import importlib

    if name in _public.SUBMODULES:
        return importlib.import_module(f".{name}", __name__)
    if name not in _LAZY:
        raise AttributeError(f"module 'jaxstatic' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)  # this package's, as loaded
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY, *_public.SUBMODULES})


__all__ = [
    "DONATE",
    "NODIFF",
    "STATIC",
    "BoundMethod",
    "AnnotationError",
    "CacheInfo",
    "CheckpointFunction",
    "Compiled",
    "HiddenStaticWarning",
    "CustomJVPFunction",
    "CustomVJPFunction",
    "DeletedArrayError",
    "Donate",
    "GradFunction",
    "JaxstaticError",
    "JitFunction",
    "JitMethod",
    "Lowered",
    "MissingArgumentError",
    "NonArrayArgumentError",
    "NoDiff",
    "NonStaticValueError",
    "OptionError",
    "PmapFunction",
    "Retrace",
    "RetraceError",
    "RuleError",
    "ShardMapFunction",
    "Static",
    "StaticFunction",
    "StaticMismatchError",
    "StaticTypeWarning",
    "UnusableDonationError",
    "ValueAndGradFunction",
    "checkpoint",
    "custom_jvp",
    "custom_vjp",
    "grad",
    "VmapFunction",
    "dataclass",
    "donate_argnames",
    "donate_argnums",
    "field",
    "jit",
    "remat",
    "set_strict_donation",
    "pmap",
    "shard_map",
    "static_argnames",
    "static_argnums",
    "testing",
    "trace_report",
    "value_and_grad",
    "vmap",
]
