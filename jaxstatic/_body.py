"""The body JAX traces for one static key of a jaxstatic function.

It rebuilds the user's call from the dynamic values JAX passes and the static values of the key: the caller's own
objects on the first trace, equal values rebuilt from the key (``_freeze.thaw``) on retraces for new shapes. It counts
and explains the trace (jit and pmap; vmap and grad leave that to a jit above them), and hands JAX the user's
function name, source line and parameter names (JAX reads them from ``__wrapped__`` and ``__signature__``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from . import _codegen, _explain, _freeze, _naming
from ._compat import jit_disabled
from ._parts import KeyState, Transform
from ._plan import Plan
from ._stats import TraceStats


def traced_body(transform: Transform, stats: TraceStats, why_again: Callable[[Any], str], plan: Plan,
                state: KeyState) -> Callable[..., Any]:
    """The function JAX traces for one static key of ``transform``: it rebuilds the user's call from the
    dynamic values. It holds the transform, which holds the user's function weakly where the function is shared
    (``_shared``), never a handle; ``why_again(key)`` says why a key traces again (``Programs.why_again``)."""
    layout, key = plan.layout, state.key
    from . import _hidden  # loaded by the first program built, not with jaxstatic

    label = f"jaxstatic.{transform._transform_name}"
    named, varpos, varkw = _dynamic_names(plan)
    labels = [name for name, _ in plan.statics]
    counts = transform._counts_traces

    def body(*dyn: Any, **dynkw: Any) -> Any:
        # the function itself, unless a decorator hides Static parameters; read at each trace (a call runs
        # through an object holding it), never held by the program
        fn = transform._traced_fn()
        call = _hidden.explaining(fn, layout.static, label)
        statics = state.statics(plan)
        dynamic: dict[str, Any] = dict(zip(named, dyn))
        if varpos is not None:
            dynamic[varpos] = dyn[len(named):]
        if varkw is not None:
            dynamic[varkw] = dynkw
        call_args, call_kwargs = layout.assemble(dynamic, statics, defaults=False, keywords=plan.by_keyword)
        if not counts:
            return call(*call_args, **call_kwargs)
        if jit_disabled() or getattr(state.local, "eager", False):  # eager: shard_map's body over concrete shards
            return stats.run_eagerly(call, call_args, call_kwargs)
        signature = _explain.call_signature(zip(labels, _codegen.static_keys(key)), dynamic.items(),
                                            plan.dynamics if layout.keyword_variants else ())
        before = _containers(statics)
        # counted in the body itself (``TraceStats.tracing``), as the lane's body is
        with stats.tracing(signature, why_again(key)):
            out = call(*call_args, **call_kwargs)
        state.traced = True
        transform._after_trace(fn)
        if before:
            _changed_by_body(stats, statics, before)
        return out

    _naming.name_program(body, transform._fn, transform._name, _program_signature(named, varpos, varkw))
    return body


def _containers(statics: dict[str, Any]) -> dict[str, Any]:
    """The keys of the static values a body could change in place (containers, objects): frozen before it runs."""
    out = {}
    for name, value in statics.items():
        if type(value) not in _freeze.ATOMIC:
            try:
                out[name] = _freeze.freeze(value)
            except Exception:  # checked when the call was keyed: nothing to compare with then
                continue
    return out


def _changed_by_body(stats: TraceStats, statics: dict[str, Any], before: dict[str, Any]) -> None:
    """A body that wrote into its own static value (``config["NUM_UPDATES"] = ...``): the caller's value no longer
    matches the key its program was made for. Told now, and the retrace it causes is put on the body."""
    for name, old in before.items():
        try:
            new = _freeze.freeze(statics[name])
            if new != old:
                stats.changed_by_body(name, old, new)
        except Exception:  # a value the body made unfreezable: the next call says so itself
            continue


def _dynamic_names(plan: Plan) -> tuple[list[str], str | None, str | None]:
    """The parameters a program's body takes, as JAX passes them: the named ones, ``*args``, ``**kwargs``."""
    params = plan.layout.signature.parameters
    named = [n for n in plan.variant if params[n].kind not in (params[n].VAR_POSITIONAL, params[n].VAR_KEYWORD)]
    varpos = next((n for n in plan.variant if params[n].kind is params[n].VAR_POSITIONAL), None)
    varkw = next((n for n in plan.variant if params[n].kind is params[n].VAR_KEYWORD), None)
    return named, varpos, varkw


def _program_signature(named: list[str], varpos: str | None, varkw: str | None) -> inspect.Signature:
    """The signature of a program's body: the dynamic parameters, by the user's names, as JAX's errors print them."""
    kind = inspect.Parameter
    params = [kind(n, kind.POSITIONAL_OR_KEYWORD) for n in named]
    if varpos is not None:
        params.append(kind(varpos, kind.VAR_POSITIONAL))
    if varkw is not None:
        params.append(kind(varkw, kind.VAR_KEYWORD))
    return inspect.Signature(params)


__all__ = ["traced_body"]
