"""``custom_vjp`` and ``custom_jvp`` with static parameters: the rules get the Static and NoDiff values where JAX
puts ``nondiff_argnums``.

Design: per static key, a ``jax.custom_vjp``/``jax.custom_jvp`` of the other parameters only, the static values
closed over, so JAX never sees them (they need not be hashable). Its inputs are the ones ``jax.custom_vjp`` would
resolve a call to: every non-static parameter in signature order, defaults filled in, ``*args`` extras one by one.
NoDiff values are among those inputs, because they may be tracers, which JAX refuses among ``nondiff_argnums``; the
wrappers around the user's rules hand them over at their nondiff positions, carry them to ``bwd`` beside the
residuals, and give them no cotangent (``None``, JAX's zero) and no tangent. Rules are read when they run, so
``defvjp``/``defjvp`` may be called again; a rule that ran after its call returned (``bwd`` in a backward pass)
gets static values equal to the caller's, rebuilt from the key (``KeyState.statics``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import inspect
from collections.abc import Callable, Sequence
from typing import Any, ClassVar, TypeVar

import jax
from typing_extensions import ParamSpec

from . import _lazy, _options
from ._annotations import deferring
from ._errors import (
    AnnotationError,
    missing_rule_error,
    option_error,
    rule_not_callable_error,
    rule_output_error,
    rule_signature_error,
)
from ._parts import KeyState
from ._plan import Layout, Plan
from ._transform import StaticFunction

_P = ParamSpec("_P")
_R = TypeVar("_R")
_J = TypeVar("_J", bound=Callable[..., Any])
_Kind = inspect.Parameter


@dataclasses.dataclass(frozen=True)
class Inputs:
    """The JAX-level inputs of one call shape, and where the rules' arguments come from."""

    fill: tuple[tuple[bool, Any], ...]  # per input: (True, index of the program's argument) or (False, default)
    body: tuple[int, ...]  # per program argument (the core body's order): the index of its input
    names: tuple[tuple[str, int | None], ...]  # per input: the parameter, and the position within *args
    diff: tuple[int, ...]  # inputs that get a cotangent or tangent from the rules
    nodiff: tuple[int, ...]  # NoDiff inputs
    nondiff: tuple[tuple[str, Any], ...]  # the rules' leading arguments: ("static"|"static*", name) or ("input", k)

    @classmethod
    def of(cls, plan: Plan) -> Inputs:
        layout = plan.layout
        given = dict(plan.dynamics)
        named = [n for n, src in plan.dynamics if src.kind != "varpos"]
        fill: list[tuple[bool, Any]] = []
        names: list[tuple[str, int | None]] = []
        nondiff: list[tuple[str, Any]] = []
        for name, p in layout.signature.parameters.items():
            if name in layout.static:
                nondiff.append(("static*" if p.kind is _Kind.VAR_POSITIONAL else "static", name))
                continue
            if name in layout.nodiff:
                nondiff.append(("input", sum(n in layout.nodiff for n, _ in names)))
            if p.kind is _Kind.VAR_POSITIONAL:
                src = given.get(name)
                extras = plan.nargs - src.index if src is not None else 0
                fill += [(True, len(named) + k) for k in range(extras)]
                names += [(name, k) for k in range(extras)]
            else:
                fill.append((True, named.index(name)) if name in given else (False, p.default))
                names.append((name, None))
        body = [0] * sum(is_arg for is_arg, _ in fill)
        for i, (is_arg, j) in enumerate(fill):
            if is_arg:
                body[j] = i
        nodiff = tuple(i for i, (n, _) in enumerate(names) if n in layout.nodiff)
        diff = tuple(i for i in range(len(names)) if i not in nodiff)
        return cls(tuple(fill), tuple(body), tuple(names), diff, nodiff, tuple(nondiff))

    def of_program(self, dyn: tuple[Any, ...]) -> list[Any]:
        return [dyn[v] if is_arg else v for is_arg, v in self.fill]

    def dynamic(self, inputs: Sequence[Any]) -> dict[str, Any]:
        """The inputs by parameter name, ``*args`` as a tuple, as ``Layout.assemble`` takes them."""
        out: dict[str, Any] = {}
        for (name, k), value in zip(self.names, inputs):
            if k is None:
                out[name] = value
            else:
                out[name] = (*out.get(name, ()), value)
        return out

    def nondiff_args(self, statics: dict[str, Any], kept: Sequence[Any]) -> list[Any]:
        out: list[Any] = []
        for kind, x in self.nondiff:
            if kind == "input":
                out.append(kept[x])
            elif kind == "static*":
                out.extend(statics[x])
            else:
                out.append(statics[x])
        return out

    def labels(self, which: tuple[int, ...]) -> list[str]:
        return [name if k is None else f"{name}[{k}]" for name, k in (self.names[i] for i in which)]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class CustomOptions(_options.Options):
    """``js.custom_vjp``'s and ``js.custom_jvp``'s options (``_options.Options``): the parameters JAX's
    ``nondiff_argnums`` would name, as given; they make those parameters static (``_CustomFunction._params``)."""

    nondiff_argnums: int | Sequence[int] = ()
    nondiff_argnames: str | Sequence[str] = ()


class _CustomFunction(StaticFunction[_P, _R]):
    _counts_traces = False
    _shares = False  # its rules are defined after it is made: two made from one function may differ
    _define: ClassVar[str]
    _roles: ClassVar[tuple[str, ...]]
    _options_type: ClassVar[type[_options.Options]] = CustomOptions
    _opts: CustomOptions

    def __init__(self, fn: Callable[_P, _R], *, nondiff_argnums: int | Sequence[int] = (),
                 nondiff_argnames: str | Sequence[str] = ()) -> None:
        self._rules: tuple[Callable[..., Any], ...] | None = None
        super().__init__(fn, {"nondiff_argnums": nondiff_argnums, "nondiff_argnames": nondiff_argnames})

    def _checks_at_decoration(self) -> bool:
        """Always: a custom rule is defined once per function, so reading the annotations now costs nothing that
        matters, and a ``**kwargs`` parameter fails where it is written."""
        return True

    def _params(self) -> _options.ParamOptions:
        """``nondiff_argnums``/``nondiff_argnames`` make their parameters static, as in JAX."""
        if self._known_params is None:
            params = super()._params()
            opts = self._opts
            extra = (*_options.names_of_argnums(self._name, self._signature(), opts.nondiff_argnums, "nondiff_argnums"),
                     *_options.check_argnames(self._name, self._signature(), opts.nondiff_argnames, "nondiff_argnames"))
            self._known_params = dataclasses.replace(params, static=params.static | frozenset(extra))
        return self._known_params

    def _resolve(self, layout: Layout) -> None:
        for name, p in layout.signature.parameters.items():
            if p.kind is _Kind.VAR_KEYWORD:
                raise option_error(self._transform_name, self._name, f"has a **{name} parameter, which the rules "
                                   "cannot take by position", "Give those values as named parameters.")
            if p.kind is _Kind.VAR_POSITIONAL and name in layout.nodiff:
                raise option_error(self._transform_name, self._name, f"marks *{name} NoDiff", "Mark it Static, "
                                   "or give the NoDiff values as named parameters.")
        if self._rules is not None:
            self._check_rules(layout, *self._rules)

    def _define_rules(self, *rules: Callable[..., Any]) -> None:
        """Check the rules against the signature now when the annotations resolve (else at the first call)."""
        for role, rule in zip(self._roles, rules):
            if not callable(rule):
                raise rule_not_callable_error(self._transform_name, self._name, role, rule)
        with contextlib.suppress(AnnotationError), deferring():
            self._check_rules(self._layout(), *rules)
        self._rules = rules

    def _check_rules(self, layout: Layout, *rules: Callable[..., Any]) -> None:
        raise NotImplementedError

    def _pickled_state(self) -> Any:
        return self._rules

    def __setstate__(self, state: Any) -> None:
        if state is not None:
            self._define_rules(*state)

    def _nondiff_labels(self, layout: Layout) -> list[str] | None:
        """The names of the rules' leading arguments, or None when a static ``*args`` makes their number vary."""
        params = layout.signature.parameters
        names = [n for n in params if n in layout.static or n in layout.nodiff]
        if any(params[n].kind is _Kind.VAR_POSITIONAL for n in names):
            return None
        return names

    def _check_rule(self, role: str, rule: Callable[..., Any], labels: list[str], keywords: list[str],
                    fix: str) -> None:
        """``rule`` must take the call jaxstatic makes; else an error showing that call and what does not fit."""
        try:
            signature = _lazy.signature(rule)
        except (TypeError, ValueError):  # no signature to read (some builtins): JAX's own error at the call
            return
        try:
            signature.bind(*labels, **dict.fromkeys(keywords))
            return
        except TypeError as err:
            why = str(err)
        if role == "fwd":  # its arguments are the function's parameters: name the first one it cannot take
            culprit = next((labels[k - 1] for k in range(1, len(labels) + 1) if not _binds(signature, labels[:k], [])),
                           None) or next((k for k in keywords if not _binds(signature, labels, [k])), None)
            why += f": it cannot take {culprit!r}" if culprit else ""
        name = getattr(rule, "__name__", role)
        call = f"{role}({', '.join([*labels, *(f'{k}=...' for k in keywords)])})"
        raise rule_signature_error(self._transform_name, self._name, role, f"{name}{_options._plain(signature)}",
                                   call, why, fix)

    def _build(self, plan: Plan, body: Callable[..., Any], state: KeyState) -> Callable[..., Any]:
        self._rules_or_error()
        varpos = next((src for _, src in plan.dynamics if src.kind == "varpos"), None)
        if varpos is None:
            return self._custom(plan, body, state)
        # A static key holds which parameters were given, not how many *args extras: one key serves calls with any
        # number of them. The rules take one input per extra, so each number of extras gets a custom rule of its
        # own, as jax.custom_vjp resolves every call anew; reusing another number's would drop or misplace inputs.
        named = sum(src.kind != "varpos" for _, src in plan.dynamics)
        programs: dict[int, Callable[..., Any]] = {}

        def program(*dyn: Any) -> Any:
            found = programs.get(len(dyn))
            if found is None:
                shape = dataclasses.replace(plan, nargs=varpos.index + len(dyn) - named)
                found = programs.setdefault(len(dyn), self._custom(shape, body, state))
            return found(*dyn)

        return program

    def _custom(self, plan: Plan, body: Callable[..., Any], state: KeyState) -> Callable[..., Any]:
        """The program of one call shape (a fixed number of ``*args`` extras): JAX's custom rule of its inputs."""
        raise NotImplementedError

    def _rules_or_error(self) -> tuple[Callable[..., Any], ...]:
        if self._rules is None:
            raise missing_rule_error(self._transform_name, self._name, self._define)
        return self._rules

    def _primal(self, inputs: Inputs, body: Callable[..., Any]) -> Callable[..., Any]:
        """The function of all inputs that JAX's custom_vjp/custom_jvp wraps; it calls the core's body."""
        order = inputs.body

        def primal(*values: Any) -> Any:
            return body(*[values[i] for i in order])

        primal.__name__, primal.__qualname__ = body.__name__, body.__qualname__
        if hasattr(body, "__wrapped__"):  # JAX's debug info: the user's line, where the function has code of its own
            primal.__wrapped__ = body.__wrapped__  # type: ignore[attr-defined]
        primal.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
            [_Kind(f"{n}_{k}" if k is not None else n, _Kind.POSITIONAL_ONLY) for n, k in inputs.names])
        return primal


def _binds(signature: inspect.Signature, args: list[str], keywords: list[str]) -> bool:
    try:
        signature.bind_partial(*args, **dict.fromkeys(keywords))
    except TypeError:
        return False
    return True


def _program(custom: Callable[..., Any], inputs: Inputs) -> Callable[..., Any]:
    def program(*dyn: Any) -> Any:
        return custom(*inputs.of_program(dyn))

    return program


class CustomVJPFunction(_CustomFunction[_P, _R]):
    """A function with a custom VJP, made by ``jaxstatic.custom_vjp``; define it with ``defvjp(fwd, bwd)``."""

    _transform_name = "custom_vjp"
    _define = "defvjp(fwd, bwd)"
    _roles = ("fwd", "bwd")

    def defvjp(self, fwd: Callable[_P, tuple[_R, Any]], bwd: Callable[..., tuple[Any, ...]]) -> None:
        """``fwd`` takes the same parameters as the function and returns ``(output, residuals)``;
        ``bwd(*nondiff, residuals, g)`` takes the Static and NoDiff values in signature order, the residuals and
        the output cotangent, and returns a tuple with one cotangent per other parameter (``None`` for zero)."""
        self._define_rules(fwd, bwd)

    def _check_rules(self, layout: Layout, *rules: Callable[..., Any]) -> None:
        fwd, bwd = rules
        params = layout.signature.parameters.values()
        self._check_rule("fwd", fwd, [p.name for p in params if p.kind in (_Kind.POSITIONAL_ONLY,
                                                                             _Kind.POSITIONAL_OR_KEYWORD)],
                         [p.name for p in params if p.kind is _Kind.KEYWORD_ONLY],
                         f"fwd takes the same parameters as {self._name}, Static ones included.")
        labels = self._nondiff_labels(layout)
        if labels is not None:
            self._check_rule("bwd", bwd, [*labels, "residuals", "g"], [], _fix("bwd", labels, "the residuals and "
                                                                              "the output cotangent", "custom_vjp"))

    def _custom(self, plan: Plan, body: Callable[..., Any], state: KeyState) -> Callable[..., Any]:
        inputs, layout = Inputs.of(plan), plan.layout
        custom = jax.custom_vjp(self._primal(inputs, body))

        def fwd(*values: Any) -> Any:
            args, kwargs = layout.assemble(inputs.dynamic(values), state.statics(plan))
            pair = self._rules_or_error()[0](*args, **kwargs)
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise rule_output_error(self._transform_name, self._name, "fwd", _describe(pair),
                                        "fwd returns a pair (output, residuals)")
            return pair[0], (tuple(values[i] for i in inputs.nodiff), pair[1])

        def bwd(saved: Any, g: Any) -> tuple[Any, ...]:
            kept, residuals = saved
            cts = self._rules_or_error()[1](*inputs.nondiff_args(state.statics(plan), kept), residuals, g)
            return self._cotangents(inputs, cts)

        custom.defvjp(fwd, bwd)
        return _program(custom, inputs)

    def _cotangents(self, inputs: Inputs, cts: Any) -> tuple[Any, ...]:
        """The user's cotangents (one per differentiable input) placed among the inputs, ``None`` at NoDiff ones."""
        if isinstance(cts, list):
            cts = tuple(cts)
        if not isinstance(cts, tuple) or len(cts) != len(inputs.diff):
            names = inputs.labels(inputs.diff)
            raise rule_output_error(self._transform_name, self._name, "bwd", _describe(cts),
                                    f"{self._name} has {len(names)} differentiable input(s) {names}: return a "
                                    "tuple with one cotangent per input, in that order (None for zero); Static and "
                                    "NoDiff parameters get none")
        out: list[Any] = [None] * len(inputs.names)
        for i, ct in zip(inputs.diff, cts):
            out[i] = ct
        return tuple(out)


class CustomJVPFunction(_CustomFunction[_P, _R]):
    """A function with a custom JVP, made by ``jaxstatic.custom_jvp``; define it with ``defjvp(jvp)``."""

    _transform_name = "custom_jvp"
    _define = "defjvp(jvp)"
    _roles = ("jvp",)

    def defjvp(self, jvp: _J) -> _J:
        """``jvp(*nondiff, primals, tangents)`` takes the Static and NoDiff values in signature order, then tuples
        of the other parameters' primals and tangents, and returns ``(output, output_tangent)``. Returns ``jvp``, so
        it works as a decorator."""
        self._define_rules(jvp)
        return jvp

    def _check_rules(self, layout: Layout, *rules: Callable[..., Any]) -> None:
        labels = self._nondiff_labels(layout)
        if labels is not None:
            self._check_rule("jvp", rules[0], [*labels, "primals", "tangents"], [],
                             _fix("jvp", labels, "the tuples of primals and tangents", "custom_jvp"))

    def _custom(self, plan: Plan, body: Callable[..., Any], state: KeyState) -> Callable[..., Any]:
        inputs = Inputs.of(plan)
        custom = jax.custom_jvp(self._primal(inputs, body))

        def jvp(primals: tuple[Any, ...], tangents: tuple[Any, ...]) -> Any:
            kept = [primals[i] for i in inputs.nodiff]
            return self._rules_or_error()[0](*inputs.nondiff_args(state.statics(plan), kept),
                                             tuple(primals[i] for i in inputs.diff),
                                             tuple(tangents[i] for i in inputs.diff))

        custom.defjvp(jvp)
        return _program(custom, inputs)


def _describe(value: Any) -> str:
    if isinstance(value, (tuple, list)):
        return f"a {type(value).__name__} of {len(value)}"
    return f"an object of type {type(value).__qualname__}"


def _fix(role: str, labels: list[str], then: str, jax_name: str) -> str:
    if not labels:
        return f"{role} takes {then}."
    return (f"{role} takes the Static and NoDiff parameters first ({', '.join(map(repr, labels))}, in signature order), then "
            f"{then}, as jax.{jax_name} passes nondiff_argnums.")


__all__ = ["CustomJVPFunction", "CustomOptions", "CustomVJPFunction", "Inputs"]
