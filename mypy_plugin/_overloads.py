"""An ``@overload``ed function through ``js.jit``: ``js.jit(learning_rate)`` keeps every overload.

A jitted function's type is a generic class of the function's parameters and result (``JitFunction[P, R]``), and
one instance holds one signature: mypy solves ``P`` and ``R`` from the first overload, so a call matching another is
refused. The plugin gives ``js.jit``'s result as the overloads themselves, each item falling back to
``JitFunction`` of that item's signature: calls pick their overload as calls of the function do, and attributes
(``trace_count``, ``lower``) are the class's (``lower`` takes the first overload's arguments). Only where the result
is exactly ``JitFunction`` over the first overload's signature; anything else (a generic overload, whose type
variables one instance cannot hold) is left as mypy infers it.
"""

from __future__ import annotations

from mypy.types import CallableType, Instance, Overloaded, Parameters, Type, get_proper_type


def _signature_of(item: CallableType) -> Parameters:
    return Parameters(item.arg_types, item.arg_kinds, item.arg_names)


def _same(left: Type, right: Type) -> bool:
    return get_proper_type(left) == get_proper_type(right)


def kept(function: Type, returned: Type) -> Type | None:
    """``returned`` (the transform's result over ``function``) as one item per overload of ``function``, or
    ``None`` when ``function`` is not overloaded or ``returned`` is not the class over its first signature."""
    overloaded = get_proper_type(function)
    result = get_proper_type(returned)
    if not isinstance(overloaded, Overloaded) or not isinstance(result, Instance) or len(result.args) != 2:
        return None
    items = overloaded.items
    if any(item.variables for item in items):
        return None  # a generic overload: one instance cannot hold its type variables
    first = items[0]
    params, ret = result.args
    proper_params = get_proper_type(params)
    if not isinstance(proper_params, Parameters) or not _same(ret, first.ret_type):
        return None
    if proper_params.arg_types != first.arg_types or proper_params.arg_kinds != first.arg_kinds:
        return None
    return Overloaded([item.copy_modified(fallback=result.copy_modified(args=[_signature_of(item), item.ret_type]))
                       for item in items])
