"""``jaxstatic.jit``: ``jax.jit`` with static parameters declared by ``Static[...]``, frozen and explained.

Design: one ``jax.jit``-compiled program per frozen static key (``_parts.Programs``), with no static arguments at JAX's level.
The program reads its static values at trace time, so JAX never holds them in its process-wide caches:
``clear_cache()`` or dropping the function releases them. ``jax.jit``'s per-argument options keep ``jax.jit``'s
meaning and are re-indexed, by parameter name, onto each program's arguments.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import re
import threading
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Concatenate, TypeVar, overload

import jax
from jax.sharding import PartitionSpec
from typing_extensions import ParamSpec, Self

from . import _donate, _options
from ._errors import option_error, unknown_options_error
from ._parts import KeyState
from ._plan import Layout, Plan
from ._transform import BoundMethod, StaticFunction

if TYPE_CHECKING:
    from jax.stages import Traced

    from ._aot import Lowered

_P = ParamSpec("_P", contravariant=True)  # type: ignore[misc]  # a callable's parameters: see _transform
_P2 = ParamSpec("_P2")
_R = TypeVar("_R")
_R2 = TypeVar("_R2")
_T = TypeVar("_T")


@functools.cache
def _jax_jit_options() -> frozenset[str]:
    # Every parameter but the function: keyword-only since JAX 0.7, positional-or-keyword before.
    params = list(inspect.signature(jax.jit).parameters.values())[1:]
    return frozenset(p.name for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD))


_DEPRECATED_LOCK = threading.Lock()
_DEPRECATED = frozenset({"device", "backend"})  # options jax.jit warns about when it is applied


def _noop() -> None:
    pass


def _warn_deprecated(options: Mapping[str, Any]) -> tuple[str, ...]:
    """Give, now, the warnings ``jax.jit`` gives when it is applied with these options (``device=``, ``backend=``),
    pointing at the caller's line; their messages, which the programs built later for each static key must not
    repeat (under ``-W error`` the first call raised)."""
    given = {k: options[k] for k in _DEPRECATED if options.get(k) is not None}
    if not given:
        return ()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        jax.jit(_noop, **given)
    from ._hidden import user_stacklevel  # deprecated options alone load it

    for w in caught:
        warnings.warn(w.message, stacklevel=user_stacklevel())
    return tuple(str(w.message) for w in caught if issubclass(w.category, DeprecationWarning))


def _check_shardings(function: str, in_shardings: Any, options: Mapping[str, Any]) -> None:
    """What ``jax.jit`` refuses when it is applied, refused when ``js.jit`` is (its programs are built at calls):
    ``P.UNCONSTRAINED`` in place of a sharding or in its spec, and shardings together with ``backend=``/``device=``."""
    given = {"in_shardings": in_shardings, "out_shardings": options.get("out_shardings")}
    for option, value in given.items():
        if value is None:
            continue
        for path, leaf in jax.tree_util.tree_flatten_with_path(value)[0]:
            spec = getattr(leaf, "spec", leaf)  # a NamedSharding's spec, whose dims jax.jit checks too
            dims = getattr(spec, "partitions", spec) if isinstance(spec, PartitionSpec) else ()
            if leaf is PartitionSpec.UNCONSTRAINED or PartitionSpec.UNCONSTRAINED in dims:
                where = f" at {jax.tree_util.keystr(path)}" if path else ""
                # JAX's own sentence kept, so that a search for jax.jit's error finds this one
                raise option_error(option, function, f"holds P.UNCONSTRAINED{where}: Unconstrained dims are not "
                                   "allowed when passed to jit, as they fix no layout",
                                   "Give a Sharding, a PartitionSpec without P.UNCONSTRAINED or None there; leave a "
                                   "dimension unconstrained with jax.lax.with_sharding_constraint inside the "
                                   "function.")
        placed = [k for k in ("backend", "device") if options.get(k) is not None]
        if placed:
            raise option_error(option, function, f"is given together with {placed[0]}=, which jax.jit refuses",
                               f"Drop {placed[0]}= (deprecated) and place the program by its shardings, or drop "
                               f"{option}.")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class JitOptions(_options.Options):
    """``js.jit``'s options (``_options.Options``): ``jax.jit``'s, checked by name against the installed JAX, and
    ``strict_donation``, jaxstatic's own."""

    strict_donation: bool | None = _options.own(None, _donate.check_strict)
    """A donation XLA cannot use raises ``UnusableDonationError`` (``None``: as ``set_strict_donation`` says)."""
    in_shardings: Any = None
    """As given: laid onto each program's arguments by parameter name (``JitFunction._resolve``)."""
    deprecated: tuple[str, ...] = ()
    """The messages of the warnings ``jax.jit`` gives for these options (``device=``, ``backend=``), given once when
    ``js.jit`` is applied, which the programs built later must not give again."""

    @classmethod
    def _derived(cls, function: str, given: Mapping[str, Any]) -> dict[str, Any]:
        unknown = set(given) - _jax_jit_options() - set(_options.own_options(cls))
        if unknown:
            raise unknown_options_error("jit", function, unknown, _jax_jit_options() | set(_options.own_options(cls)))
        _check_shardings(function, given.get("in_shardings"), given)
        return {"deprecated": _warn_deprecated(given)}


class JitFunction(StaticFunction[_P, _R]):
    """A function compiled by ``jaxstatic.jit``. Call it like the function it wraps.

    Besides calls: ``trace_count``, ``retraces``, ``cache_info()``, ``clear_cache()``, and, like ``jax.jit``'s
    objects, ``lower(*args, **kwargs)``, ``trace(*args, **kwargs)`` and ``eval_shape(*args, **kwargs)`` with static
    values given as plain Python values.
    """

    _transform_name = "jit"
    _eager_without_jit = True
    _options_type: ClassVar[type[_options.Options]] = JitOptions
    _opts: JitOptions

    def __init__(self, fn: Callable[_P, _R], **options: Any) -> None:
        self._by_name: dict[str, Any] | None = None  # derived: in_shardings by parameter, once they are known
        super().__init__(fn, options)

    def _checks_at_decoration(self) -> bool:
        return self._opts.in_shardings is not None

    def _resolve(self, layout: Layout) -> None:
        # Donate[...] marks join donate_argnums/donate_argnames, once the Static parameters are known
        params = self._known_params = _donate.with_declared(self._fn, self._name, layout.signature,
                                                            layout.static, self._params())
        varargs = [n for n, p in layout.signature.parameters.items() if p.kind is p.VAR_POSITIONAL]
        _options.check_not_static(self._name, [*params.donate, *(varargs if params.donate_extras else ())],
                                  layout.static, "donate_argnums/donate_argnames")
        for k in sorted(params.donate_extras & params.static_extras):
            _options.check_not_static(self._name, [f"{varargs[0]}[{k}]"], frozenset([f"{varargs[0]}[{k}]"]),
                                      "donate_argnums")
        self._by_name = _options.per_parameter(self._name, layout.signature, self._opts.in_shardings,
                                               "in_shardings", layout.static, into_varargs=True)

    def _takes_lane(self) -> bool:
        # Options of jax.jit's besides the static ones would need re-indexing onto the lane's program: not taken;
        # nor by a jit over a js.vmap or js.pmap, to which the call's keywords are passed as keywords (``_plan``).
        return (self._opts.in_shardings is None and not self._params().donate and not self._opts.jax
                and not self._layout().keyword_variants)

    def _lane_program(self, body: Callable[..., Any], argnums: tuple[int, ...], argnames: tuple[str, ...]) -> Any:
        return jax.jit(body, static_argnums=argnums, static_argnames=argnames)

    def _build(self, plan: Plan, body: Callable[..., Any], state: KeyState) -> Callable[..., Any]:
        options = dict(self._opts.jax)
        pairs = self._donated(plan)
        if pairs:
            options["donate_argnums"] = tuple(i for i, _ in pairs)
        if plan.dynamics and plan.dynamics[-1][1].kind == "varkw" and self._params().donate_keywords:
            # **kwargs entries donated by name: the program takes them by keyword, as jax.jit donates them
            options["donate_argnames"] = tuple(sorted(self._params().donate_keywords))
        if self._by_name is not None:
            options["in_shardings"] = self._in_shardings_of(plan)
        elif self._opts.in_shardings is not None:
            options["in_shardings"] = self._opts.in_shardings
        if not self._opts.deprecated:
            program = jax.jit(body, **options)
        else:
            # Warned at decoration, as jax.jit warns: not again per program (each static key is one). catch_warnings
            # swaps the process-wide filters, so jaxstatic's own builds take turns; only options JAX deprecates come
            # here.
            with _DEPRECATED_LOCK, warnings.catch_warnings():
                for message in self._opts.deprecated:
                    warnings.filterwarnings("ignore", message=re.escape(message), category=DeprecationWarning)
                program = jax.jit(body, **options)
        if not pairs:
            return program
        return _donate.recording(program, self._name, pairs, self._opts.strict_donation)

    def _donated(self, plan: Plan) -> list[tuple[int, str]]:
        """The program's donated positions with what each is called: the named parameters donated, then the
        ``*args`` extras donated, each at its place among the program's extras (``_options.program_extra``: the
        user counts static extras, the program does not take them), named as the caller wrote it (``args[2]``).
        The program serves calls of other lengths too: positions past a call's arguments donate nothing."""
        params = self._params()
        program_args = [(name, src) for name, src in plan.dynamics if src.kind != "varkw"]
        pairs = [(i, name) for i, (name, src) in enumerate(program_args) if src.kind != "varpos" and name in params.donate]
        if program_args and program_args[-1][1].kind == "varpos":
            name, first = program_args[-1][0], len(program_args) - 1
            pairs += [(first + _options.program_extra(k, plan.layout.static_extras), f"{name}[{k}]")
                      for k in sorted(params.donate_extras)]
        return pairs

    def _in_shardings_of(self, plan: Plan) -> tuple[Any, ...]:
        """``in_shardings`` by parameter, one entry per argument of the program of this call shape: the named
        values', then one per ``*args`` extra (those a tuple gave past the named parameters, in order, as ``jax.jit``
        gives entry i to positional argument i; ``jax.jit`` refuses a call with other extras than entries)."""
        assert self._by_name is not None
        entries: list[Any] = []
        for name, src in plan.dynamics:
            if src.kind == "varpos":
                extras = self._by_name.get(name)
                entries += extras if extras is not None else [None] * (plan.nargs - src.index - len(src.skip))
            elif src.kind != "varkw":
                entries.append(self._by_name.get(name))
        return tuple(entries)

    # -- ahead of time, and jax.jit's other entry points -----------------------------------------------------

    def lower(self, *args: _P.args, **kwargs: _P.kwargs) -> Lowered[_P, _R]:
        """Lower for these arguments (ahead of time); ``.compile()`` gives a callable with this signature."""
        from ._aot import Compilation, Lowered  # ahead of time alone loads it

        plan, key, lowered = self._core._with_program("lower", args, kwargs)
        core = self._core
        return Lowered(Compilation(self._name, plan, key, lambda a, k: core._plan_and_code(a, k)[0], core._key), lowered)

    def trace(self, *args: _P.args, **kwargs: _P.kwargs) -> Traced:
        """Trace for these arguments, as ``jax.jit(f).trace``: JAX's ``Traced`` (``.jaxpr``, ``.lower()``), whose
        ``args_info`` is laid out as this call gave its arguments."""
        from ._aot import ArgsLaidOut  # ahead of time alone loads it

        plan, _, traced = self._core._with_program("trace", args, kwargs)
        return ArgsLaidOut(traced, plan)  # JAX's Traced, laid out as the call was

    def eval_shape(self, *args: _P.args, **kwargs: _P.kwargs) -> Any:
        """The shapes and dtypes of the result for these arguments, without running anything."""
        return self._core._with_program("eval_shape", args, kwargs)[2]

    if TYPE_CHECKING:  # typed as StaticFunction.__get__ (which says why), binding to a JitMethod; the same at run time
        @overload
        def __get__(  # type: ignore[misc]  # mypy: the erased self type is a callable, a supertype of the class
            self: Callable[Concatenate[type[_T], _P2], _R2], instance: None, owner: type[_T]
        ) -> JitMethod[_P2, _R2]: ...
        @overload
        def __get__(self, instance: None, owner: type | None = None) -> Self: ...
        @overload
        def __get__(
            self: Callable[Concatenate[_T, _P2], _R2], instance: _T, owner: type | None = None
        ) -> JitMethod[_P2, _R2]: ...
        @overload
        def __get__(self, instance: object, owner: type | None = None) -> Self: ...
        def __get__(self, instance: object, owner: type | None = None) -> Any: ...


class JitMethod(BoundMethod[_P, _R]):
    """``obj.method`` for a jitted method: called as the method is, and ``lower``, ``trace`` and ``eval_shape`` bind
    ``obj`` too. Typed as the method without ``self``: ``JitMethod[[jax.Array, int], jax.Array]``."""

    def lower(self, *args: _P.args, **kwargs: _P.kwargs) -> Lowered[_P, _R]:
        """Lowered for ``obj``: its ``compile()`` is called without ``obj``, as the method is."""
        return self.func.lower(*self.args, *args, **kwargs).bind(*self.args)  # type: ignore[attr-defined, no-any-return]

    def trace(self, *args: _P.args, **kwargs: _P.kwargs) -> Traced:
        return self.func.trace(*self.args, *args, **kwargs)  # type: ignore[attr-defined, no-any-return]

    def eval_shape(self, *args: _P.args, **kwargs: _P.kwargs) -> Any:
        return self.func.eval_shape(*self.args, *args, **kwargs)  # type: ignore[attr-defined]


JitFunction._method_type = JitMethod
_OWN_DEFAULTS = dict(_options.own_options(JitOptions))


# The options are typed one by one, so that a misspelt one (``max_trace=3``) is reported by every checker: jaxstatic's
# own and every keyword of ``jax.jit`` (``abstracted_axes``: JAX before 0.7), with ``jax.jit``'s types (``device``, a
# ``jax.Device``, as Any: pyright cannot resolve jaxlib's class). The
# implementation takes ``**jax_options`` and checks the names against the installed JAX when it is called.
@overload
def jit(fn: Callable[_P, _R], /, *, max_traces: int | None = None, cache_size: int = ...,
        strict_donation: bool = ...,
        in_shardings: Any = ..., out_shardings: Any = ..., static_argnums: int | Sequence[int] | None = ...,
        static_argnames: str | Iterable[str] | None = ..., donate_argnums: int | Sequence[int] | None = ...,
        donate_argnames: str | Iterable[str] | None = ..., keep_unused: bool = ..., device: Any | None = ...,
        backend: str | None = ..., inline: bool = ..., compiler_options: dict[str, Any] | None = ...,
        abstracted_axes: Any | None = ...) -> JitFunction[_P, _R]: ...
@overload
def jit(fn: None = None, /, *, max_traces: int | None = None, cache_size: int = ...,
        strict_donation: bool = ...,
        in_shardings: Any = ..., out_shardings: Any = ..., static_argnums: int | Sequence[int] | None = ...,
        static_argnames: str | Iterable[str] | None = ..., donate_argnums: int | Sequence[int] | None = ...,
        donate_argnames: str | Iterable[str] | None = ..., keep_unused: bool = ..., device: Any | None = ...,
        backend: str | None = ..., inline: bool = ..., compiler_options: dict[str, Any] | None = ...,
        abstracted_axes: Any | None = ...) -> Callable[[Callable[_P, _R]], JitFunction[_P, _R]]: ...
def jit(fn: Callable[_P, _R] | None = None, /, **options: Any) -> Any:
    """Compile ``fn`` with JAX; parameters annotated ``Static[...]`` are static.

    Static values may be anything static-hashable (hashable, or builtin containers of such), so a ``dict`` config
    works; equal values share one compiled program. Every ``jax.jit`` option is accepted with ``jax.jit``'s meaning
    and checked now: ``static_argnums``/``static_argnames`` add to the annotations (a position past the named
    parameters is that ``*args`` extra, a name of no parameter that ``**kwargs`` entry, as in ``jax.jit``);
    ``donate_argnums``/``donate_argnames`` name dynamic parameters; ``in_shardings`` is one sharding, a tuple over the non-static
    positional parameters (as in ``jax.jit``; entries past them go to the ``*args`` extras), or a dict by parameter
    name.

    ``max_traces`` (``None`` or an int >= 0) raises ``RetraceError`` instead of tracing past that many times;
    ``cache_size`` bounds the programs kept (least recently used evicted; default 8192, ``jax.jit``'s own bound).
    ``strict_donation`` (``True``) makes a donation XLA cannot use an ``UnusableDonationError`` instead of JAX's
    warning. These three are jaxstatic's own (``JitOptions``' fields made by ``_options.own``); JAX never sees them.

    The returned ``JitFunction`` is called like ``fn`` and offers ``trace_count``, ``retraces``, ``cache_info()``,
    ``clear_cache()``, ``lower(...)``, ``trace(...)`` and ``eval_shape(...)``.
    """
    if fn is None:
        return functools.partial(jit, **options)
    # jaxstatic's own options spelled out, defaults included: js.jit(f) made again with max_traces=None is the same
    return JitFunction(fn, **{**_OWN_DEFAULTS, **options})


__all__ = ["JitFunction", "JitMethod", "JitOptions", "jit"]
