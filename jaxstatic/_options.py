"""Per-argument options, checked and resolved once, when a transform is applied.

JAX resolves ``static_argnums``/``donate_argnums`` and friends when ``jax.jit`` is called (``resolve_argnums``), so a
typo fails where it is written, not at the first call. jaxstatic does the same, and turns every positional option
into parameter *names*: the program jaxstatic compiles per static key has other positions than the user's
function (static parameters are not among its arguments), so names are the one form that survives the split.

``in_axes`` (vmap/pmap), ``argnums`` (grad) and ``nondiff_argnums`` (custom_vjp) go through the same helpers.

Every option given to a transform lands in one frozen record (``Options``, extended per transform), made when the
transform is applied and read by attribute: jaxstatic's own options are its fields marked ``own``, each with its check.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import numbers
import types
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from typing_extensions import Self

from ._errors import OptionError, option_error
from ._naming import display_name

_Kind = inspect.Parameter


_NOT_TRACEABLE = ((inspect.CO_GENERATOR, "a generator function"), (inspect.CO_COROUTINE, "a coroutine function"),
                  (inspect.CO_ASYNC_GENERATOR, "an async generator function"))


def check_callable(fn: object, transform: str) -> Callable[..., Any]:
    """``fn`` itself when a JAX transform can trace it; a clear error at decoration otherwise. Cheap: a flag test
    on the code objects along ``__wrapped__``."""
    if not callable(fn):
        raise option_error(transform, None, f"expects a function, but got {_describe(fn)}",
                           "Apply it to a function, as @jaxstatic.jit or jaxstatic.jit(f, ...).")
    if isinstance(fn, staticmethod):
        # callable since Python 3.10, but bound by the transform's own __get__ it would receive the instance
        raise option_error(transform, display_name(fn.__func__), "was given a staticmethod, which it cannot bind "
                           "as one", f"Put @staticmethod above the transform: @staticmethod then @{transform} then def.")
    target: Any = fn
    for _ in range(8):  # a wrapper made with functools.wraps around a generator function is one too
        flags = getattr(getattr(target, "__code__", None), "co_flags", 0)
        for flag, kind in _NOT_TRACEABLE:
            if flags & flag:
                raise option_error(transform, display_name(fn), f"is {kind}, which JAX cannot trace",
                                   "Return arrays from a plain function; iterate or await outside it.")
        target = getattr(target, "__wrapped__", None)
        if target is None:
            break
    return fn


def _describe(value: object) -> str:
    return f"{value!r} (a {type(value).__qualname__})"


def as_tuple(value: Any) -> tuple[Any, ...]:
    """``None``, one item or a sequence of items, as a tuple."""
    if value is None:
        return ()
    return tuple(value) if isinstance(value, (tuple, list)) else (value,)


def positional(signature: inspect.Signature) -> list[str]:
    """The names of the parameters that positional indices refer to, in order."""
    return [p.name for p in signature.parameters.values() if p.kind in (_Kind.POSITIONAL_ONLY, _Kind.POSITIONAL_OR_KEYWORD)]


def names_of_argnums(function: str, signature: inspect.Signature, nums: Any, option: str) -> tuple[str, ...]:
    """The parameter names that ``option`` (``nondiff_argnums``, ...) refers to by position; a position in
    ``*args`` is refused."""
    return tuple(_positions(function, signature, nums, option, into_varargs=False))  # type: ignore[arg-type]


def argnums_into_varargs(function: str, signature: inspect.Signature, nums: Any,
                         option: str) -> tuple[str | int, ...]:
    """Like ``names_of_argnums``, but a position past the named ones is the ``*args`` extra it falls on (an int,
    counted from 0), as ``jax.jit``'s ``donate_argnums`` and ``jax.grad``'s ``argnums`` take it."""
    return tuple(_positions(function, signature, nums, option, into_varargs=True))


def program_extras(count: int, static_extras: Iterable[int]) -> tuple[int, ...]:
    """The one rule for options that reach into ``*args``, which every transform follows.

    A position given by the user (``static_argnums``, ``donate_argnums``, an entry of ``in_axes``) counts every
    positional argument of the call as the caller wrote it, static ones included, exactly as ``jax.jit`` and
    ``jax.pmap`` count them: position ``len(named) + k`` is the ``*args`` extra ``k`` (``argnums_into_varargs``), and
    ``k`` counts every extra, static ones included. The program jaxstatic builds for a call takes only the dynamic
    extras, in order: this gives, for a call with ``count`` extras of which ``static_extras`` are static, the user's
    ``k`` of each of the program's extras (program extra ``j`` is ``program_extras(...)[j]``). So a donated extra
    ``k`` is program argument ``first + program_extras(...).index(k)``, and an error names program extra ``j`` as
    ``args[program_extras(...)[j]]``, the index the caller wrote. A tuple over the dynamic arguments (``jax.jit``'s
    ``in_shardings``) gives its entries past the named parameters to these extras in this order."""
    static = frozenset(static_extras)
    return tuple(k for k in range(count) if k not in static)


def dynamic_entries(entries: tuple[Any, ...], static_extras: Iterable[int]) -> tuple[Any, ...]:
    """A tuple with one entry per ``*args`` extra as the caller counts them (``in_axes`` over every positional
    argument, as ``jax.pmap`` counts them): the entries of the program's extras, in order, those at the static extras
    left out (``program_extras``)."""
    return tuple(entries[k] for k in program_extras(len(entries), static_extras))


def program_extra(k: int, static_extras: Iterable[int]) -> int:
    """The index among a program's extras of the user's dynamic ``*args`` extra ``k``: ``program_extras(count,
    static_extras).index(k)`` for every call long enough to give it. One program serves calls of any length (those
    with the same static extras given), so a donated extra's position is this, whatever the call's length; ``jax.jit``
    leaves out a position past a call's arguments."""
    return k - sum(1 for s in frozenset(static_extras) if s < k)


def _positions(function: str, signature: inspect.Signature, nums: Any, option: str,
               into_varargs: bool) -> list[str | int]:
    names = positional(signature)
    has_varargs = any(p.kind is _Kind.VAR_POSITIONAL for p in signature.parameters.values())
    out: list[str | int] = []
    for i in as_tuple(nums):
        i = _index(function, option, i)
        if into_varargs and has_varargs and i >= len(names):
            out.append(i - len(names))
            continue
        if not -len(names) <= i < len(names):
            where = (" or beyond, into *args" if has_varargs else "")
            raise option_error(
                option, function,
                f"contains {i}, but {function}{_plain(signature)} has {len(names)} positional parameter(s){where}",
                f"Use an index below {len(names)}, or name the parameter.")
        out.append(names[i])
    return out


def _index(function: str, option: str, i: Any) -> int:
    if isinstance(i, bool) or not isinstance(i, numbers.Integral):  # numpy integers too, as jax takes them
        raise option_error(option, function, f"contains {_describe(i)}", "Give parameter positions as ints.")
    return int(i)


def check_argnames(function: str, signature: inspect.Signature, names: Any, option: str,
                   keywords: bool = False) -> tuple[str, ...]:
    """``names`` as a tuple, each naming a parameter of the function (not ``*args``/``**kwargs`` themselves); with
    ``keywords``, where the function has ``**kwargs``, also any other name: an entry of ``**kwargs`` (as
    ``jax.jit``'s ``static_argnames``/``donate_argnames`` take them)."""
    params = signature.parameters
    out = tuple(as_tuple(names) if not isinstance(names, str) else (names,))
    into_kwargs = keywords and any(p.kind is _Kind.VAR_KEYWORD for p in params.values())
    for name in out:
        if not isinstance(name, str):
            raise option_error(option, function, f"contains {_describe(name)}", "Give parameter names as strings.")
        p = params.get(name)
        if p is None and into_kwargs:
            continue
        if p is None or p.kind in (_Kind.VAR_POSITIONAL, _Kind.VAR_KEYWORD):
            close = difflib.get_close_matches(name, list(params), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise option_error(option, function,
                               f"names {name!r}, which is not a parameter of {function}{_plain(signature)}{hint}",
                               "Name one of its parameters.")
    return out


def _plain(signature: inspect.Signature) -> str:
    """``(x, n=2)``: a signature without annotations, as messages print it."""
    return str(signature.replace(parameters=[p.replace(annotation=_Kind.empty) for p in signature.parameters.values()],
                                 return_annotation=inspect.Signature.empty))


def check_max_traces(function: str, value: Any) -> int | None:
    if value is None or (type(value) is int and value >= 0):
        return value
    raise option_error("max_traces", function, f"is {_describe(value)}",
                       "Give None (no limit) or an int >= 0, the number of traces allowed.")


JAX_JIT_CACHE_SIZE = 8192
"""The default bound of a function's compiled programs: the capacity of ``jax.jit``'s own C++ dispatch cache
(``pjit.make_jit_cpp_cache(8192)`` in jax 0.10)."""


def check_cache_size(function: str, value: Any) -> int:
    if type(value) is int and value >= 1:
        return value
    raise option_error("cache_size", function, f"is {_describe(value)}",
                       f"Give an int >= 1, the number of compiled programs kept (default {JAX_JIT_CACHE_SIZE}).")


def own(default: Any, check: Callable[[str, Any], Any]) -> Any:
    """A field of a record that is one of jaxstatic's own options (one JAX does not have), with its check:
    ``check(function, value given)`` gives the value kept, or raises ``OptionError``. The fields so marked are the
    transform's own options (``own_options``): taken out before JAX sees the rest, compared with an unknown
    option's name, and held to ``js.jit``'s typed overloads, docstring and guide (``tests/docs/test_own_options.py``)."""
    return dataclasses.field(default=default, metadata={"check": check})


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Options:
    """A transformed function's options, made once when the transform is applied (``make``), as ``jax.jit`` parses
    its own into one ``PjitInfo``, and read by attribute from then on. Frozen: nothing read at decoration can change
    under what was built from it. Each transform extends it with its own fields and names its record
    (``StaticFunction._options_type``); ``StaticFunction`` keeps it as ``_opts``, and its statistics read it too
    (``TraceStats.options``), so an option that changes counting reaches them through the record alone. What is
    later resolved against the signature (``ParamOptions``, entries by parameter name) is derived from it, kept apart."""

    function: str
    """The function's name, as messages give it."""
    jax: Mapping[str, Any]
    """JAX's options that each program is given as they are: what the fields below did not take."""
    static_argnums: Any = None
    """JAX's options naming parameters, as given: resolved to names (``resolve_param_options``), never passed on."""
    static_argnames: Any = None
    donate_argnums: Any = None
    donate_argnames: Any = None
    max_traces: int | None = own(None, check_max_traces)
    """``RetraceError`` instead of a trace past this many (``None``: no limit)."""
    cache_size: int = own(JAX_JIT_CACHE_SIZE, check_cache_size)
    """The programs kept, least recently used evicted past it."""

    @classmethod
    def make(cls, function: str, given: dict[str, Any]) -> Self:
        """The record of the options ``given`` to a transform of ``function``: each field's value popped out of
        ``given`` (an own option checked, its default where not given), those ``_derived`` works out, and the rest
        JAX's (``jax``): JAX never sees an own option (one left would also take the exact-key lane away)."""
        values = cls._derived(function, given)
        for name, default, check in _fields(cls):
            if name in values:
                continue
            if check is not None:
                values[name] = check(function, given.pop(name, default))
            elif name in given:
                values[name] = given.pop(name)
        return cls(function=function, jax=types.MappingProxyType(dict(given)), **values)

    @classmethod
    def _derived(cls, function: str, given: Mapping[str, Any]) -> dict[str, Any]:
        """What a transform checks of ``given`` as a whole when it is applied, and the fields it works out from it
        (a record's fields not given as options): none here."""
        return {}


_Field = tuple[str, Any, Callable[[str, Any], Any] | None]
_FIELDS: dict[type[Options], tuple[_Field, ...]] = {}  # per record class, read once (a race makes the same tuple)


def _fields(record: type[Options]) -> tuple[_Field, ...]:
    """``(name, default, check)`` of each field a record takes from the options given (``check``: an own one's)."""
    found = _FIELDS.get(record)
    if found is None:
        found = _FIELDS[record] = tuple((f.name, f.default, f.metadata.get("check")) for f in dataclasses.fields(record)
                                        if f.name not in ("function", "jax"))
    return found


def own_options(record: type[Options]) -> Mapping[str, Any]:
    """A record's own options (its fields made by ``own``), by name, with their defaults: what the transform takes
    that JAX does not."""
    return {name: default for name, default, check in _fields(record) if check is not None}


@dataclasses.dataclass(frozen=True)
class ParamOptions:
    """Options that refer to parameters, by name: derived from the record's (``Options.static_argnums``...) and
    the signature, once (``StaticFunction._params``), so kept beside the record, not in it."""

    static: frozenset[str]  # from static_argnums/static_argnames (annotations add to these later)
    donate: tuple[str, ...]  # in signature order
    donate_extras: frozenset[int] = frozenset()  # *args extras donated by position (0 is the first extra)
    static_extras: frozenset[int] = frozenset()  # *args extras made static by position
    static_keywords: frozenset[str] = frozenset()  # **kwargs entries made static by name
    donate_keywords: frozenset[str] = frozenset()  # **kwargs entries donated by name


ANY_CALL = inspect.Signature([_Kind("args", _Kind.VAR_POSITIONAL), _Kind("kwargs", _Kind.VAR_KEYWORD)])
"""The signature taken for a callable whose own cannot be read (``dict``, some builtins), as ``jax.jit`` calls
them: any arguments, passed on as they are."""


def resolve_param_options(options: Options, signature: inspect.Signature | None) -> ParamOptions:
    """Check ``static_argnums/argnames`` and ``donate_argnums/argnames`` against the signature, by name.
    ``signature`` is None for a callable whose signature cannot be read (``dict``, some builtins): its arguments are
    taken as ``*args, **kwargs``, and ``donate_argnames`` cannot be told from positions (as in ``jax.jit``)."""
    function = options.function
    if signature is None:
        if options.donate_argnames is not None:
            raise option_error("donate_argnames", function, "names parameters, but its signature cannot be read",
                               "Donate by position (donate_argnums).")
        signature = ANY_CALL
    statics = argnums_into_varargs(function, signature, _jit_argnums(signature, options.static_argnums),
                                   "static_argnums")
    static_names = check_argnames(function, signature, options.static_argnames, "static_argnames", keywords=True)
    donated = argnums_into_varargs(function, signature, _jit_argnums(signature, options.donate_argnums),
                                   "donate_argnums")
    donate_names = check_argnames(function, signature, options.donate_argnames, "donate_argnames", keywords=True)
    params = signature.parameters
    donate = {n for n in (*donated, *donate_names) if isinstance(n, str) and n in params}
    both = (set(static_names) & set(donate_names)) - set(params)
    if both:  # a **kwargs entry both static and donated: refused, as a parameter is (JitFunction._resolve)
        check_not_static(function, sorted(both), frozenset(both), "donate_argnames")
    return ParamOptions(
        frozenset(n for n in (*statics, *static_names) if isinstance(n, str) and n in params),
        tuple(n for n in params if n in donate), frozenset(k for k in donated if isinstance(k, int)),
        frozenset(k for k in statics if isinstance(k, int)), frozenset(set(static_names) - set(params)),
        frozenset(set(donate_names) - set(params)))


def _jit_argnums(signature: inspect.Signature, nums: Any) -> Any:
    """``nums`` less the negative positions before the first parameter of a function with ``*args``, which
    ``jax.jit`` accepts (counting from the end of each call's arguments); jaxstatic counts negative positions from
    the end of the named parameters, so no call reaches these."""
    if not any(p.kind is _Kind.VAR_POSITIONAL for p in signature.parameters.values()):
        return nums
    first = -len(positional(signature))
    return tuple(i for i in as_tuple(nums) if not (isinstance(i, numbers.Integral) and not isinstance(i, bool)
                                                   and i < first))


def check_not_static(function: str, names: Iterable[str], static: frozenset[str], option: str) -> None:
    """A per-parameter option that makes no sense for a Static parameter (donation, a mapped axis, argnums)."""
    for name in names:
        if name in static:
            raise option_error(option, function, f"names {name!r}, which is Static",
                               f"A Static value is not an array; drop {name!r} from {option}, or make it dynamic.")


def per_parameter(function: str, signature: inspect.Signature, value: Any, option: str, static: frozenset[str],
                  *, over_all: bool = False, into_varargs: bool = False) -> dict[str, Any] | None:
    """A per-argument option given as a tuple over the non-static positional parameters (jax's meaning), with
    ``over_all`` also a tuple over all positional parameters (its entries at Static ones are ignored), or a dict by
    parameter name; ``None`` when ``value`` is neither (one value for every argument). With ``into_varargs``, a
    tuple's entries past the named parameters are those of the dynamic ``*args`` extras, in order (``jax.jit``'s
    ``in_shardings`` gives entry i to positional argument i): a tuple under the name of ``*args``."""
    if isinstance(value, Mapping):
        check_argnames(function, signature, tuple(value), option)
        return dict(value)
    if not isinstance(value, (tuple, list)):
        return None
    names = positional(signature)
    dynamic = [n for n in names if n not in static]
    varargs = next((p.name for p in signature.parameters.values() if p.kind is _Kind.VAR_POSITIONAL), None)
    if into_varargs and varargs is not None and varargs not in static:
        found = into_extras(names, static, tuple(value), varargs, over_all=over_all)
        if found is not None:
            return found
    if len(value) == len(dynamic):
        return dict(zip(dynamic, value))
    if over_all and len(value) == len(names):
        return dict(zip(names, value))
    into = f", then one per *{varargs} extra" if into_varargs and varargs is not None and varargs not in static else ""
    raise option_error(option, function,
                       f"has {len(value)} entries, but {function} has {len(dynamic)} non-static positional "
                       f"parameter(s) {dynamic}", f"Give one entry per parameter in {dynamic}{into}, or a dict by "
                       "name.")


def into_extras(names: list[str], static: frozenset[str], value: tuple[Any, ...], varargs: str, *,
                over_all: bool) -> dict[str, Any] | None:
    """A tuple over a call's positional arguments, entry i for argument i (``jax.jit``'s ``in_shardings``,
    ``jax.pmap``'s and ``jax.vmap``'s ``in_axes``, ``jax.shard_map``'s ``in_specs``), for a function with a dynamic
    ``*args`` named ``varargs``: the entries of the named positional parameters ``names`` (with ``over_all``, of all
    of them where those at the ``static`` ones are ``None``, as JAX counts every positional argument; else of the
    dynamic ones), then those of the extras, as one tuple under ``varargs``. ``None`` where ``value`` is too short."""
    if over_all and len(value) >= len(names) and all(v is None for n, v in zip(names, value) if n in static):
        return {**dict(zip(names, value)), varargs: value[len(names):]}
    dynamic = [n for n in names if n not in static]
    if len(value) >= len(dynamic):
        return {**dict(zip(dynamic, value)), varargs: value[len(dynamic):]}
    return None


__all__ = ["ANY_CALL", "JAX_JIT_CACHE_SIZE", "OptionError", "Options", "ParamOptions", "argnums_into_varargs",
           "as_tuple", "check_argnames", "check_cache_size", "check_callable", "check_max_traces", "check_not_static",
           "dynamic_entries", "into_extras", "names_of_argnums", "own", "own_options", "per_parameter", "positional",
           "program_extra", "program_extras", "resolve_param_options"]
