"""jaxstatic: declare JAX static arguments in the signature, freeze static containers, explain every retrace."""

from ._annotations import (
    NODIFF as NODIFF,
    STATIC as STATIC,
    NoDiff as NoDiff,
    Static as Static,
    static_argnames as static_argnames,
    static_argnums as static_argnums,
)
from ._aot import Compiled as Compiled, Lowered as Lowered
from ._core import BoundMethod as BoundMethod, StaticFunction as StaticFunction
from ._errors import (
    AnnotationError as AnnotationError,
    JaxstaticError as JaxstaticError,
    NonArrayArgumentError as NonArrayArgumentError,
    NonStaticValueError as NonStaticValueError,
    OptionError as OptionError,
    RetraceError as RetraceError,
    StaticMismatchError as StaticMismatchError,
)
from ._jit import JitFunction as JitFunction, jit as jit
from ._stats import CacheInfo as CacheInfo, Retrace as Retrace, trace_report as trace_report

__all__ = [
    "NODIFF",
    "STATIC",
    "BoundMethod",
    "AnnotationError",
    "CacheInfo",
    "Compiled",
    "JaxstaticError",
    "JitFunction",
    "Lowered",
    "NonArrayArgumentError",
    "NoDiff",
    "NonStaticValueError",
    "OptionError",
    "Retrace",
    "RetraceError",
    "Static",
    "StaticFunction",
    "StaticMismatchError",
    "jit",
    "static_argnames",
    "static_argnums",
    "trace_report",
]
