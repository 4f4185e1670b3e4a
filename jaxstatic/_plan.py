"""How calls bind to parameters: a ``Layout`` per function, a ``Plan`` per call shape.

A call shape is the number of positional arguments and the keyword names. Everything about binding that shape --
which values are static, which dynamic, which defaults fill the gaps -- is worked out once, by ``inspect``, when the
shape is first seen. What is left for every later call is generated code (``_codegen``) that indexes
``args``/``kwargs`` directly.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable, Mapping
from typing import Any

from ._annotations import find_static_params

_Kind = inspect.Parameter


@dataclasses.dataclass(frozen=True)
class Source:
    """Where a parameter's value comes from in one call shape."""

    kind: str  # "arg" | "kw" | "default" | "varpos" | "varkw"
    index: int = 0  # "arg": position; "varpos": first extra position
    names: tuple[str, ...] = ()  # "kw": (name,); "varkw": extra keyword names
    default: Any = None  # "default": the value
    skip: tuple[int, ...] = ()  # "varpos": positions of extras that are static (static_argnums into *args)

    def get(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
        if self.kind == "arg":
            return args[self.index]
        if self.kind == "kw":
            return kwargs[self.names[0]]
        if self.kind == "varpos":
            if self.skip:
                return tuple(a for i, a in enumerate(args[self.index:], self.index) if i not in self.skip)
            return args[self.index :]
        if self.kind == "varkw":
            return {n: kwargs[n] for n in self.names}
        return self.default

    def expr(self, slot: str) -> str:
        """Python source for the value, in generated code; ``slot`` names a constant for defaults."""
        if self.kind == "arg":
            return f"args[{self.index}]"
        if self.kind == "kw":
            return f"kwargs[{self.names[0]!r}]"
        if self.kind == "varpos":
            if self.skip:
                return f"tuple(a for i, a in enumerate(args[{self.index}:], {self.index}) if i not in {set(self.skip)!r})"
            return f"args[{self.index}:]"
        if self.kind == "varkw":
            return "{" + ", ".join(f"{n!r}: kwargs[{n!r}]" for n in self.names) + "}"
        return slot


@dataclasses.dataclass(frozen=True)
class Layout:
    """The static/dynamic split of one function's parameters."""

    function: str
    signature: inspect.Signature
    static: frozenset[str]  # parameter names, variadic ones included when their extras are static

    nodiff: frozenset[str] = frozenset()  # NoDiff parameters: dynamic, never differentiated
    # static_argnums into *args (0: its first extra) and static_argnames of **kwargs entries, as jax.jit takes them;
    # a call's static extra is labelled "args[0]", a static entry by its keyword
    static_extras: tuple[int, ...] = ()
    static_keywords: frozenset[str] = frozenset()
    # whether a dynamic value passed by keyword selects another program than passed by position (js.vmap, js.pmap:
    # as JAX's, they map a keyword argument over axis 0), which its variant then says; the call is then rebuilt as it
    # was made (``assemble``), for a transform over one of them
    keyword_variants: bool = False

    @classmethod
    def of(cls, fn: Callable[..., Any], function: str, signature: inspect.Signature,
           extra_static: frozenset[str], transform: str = "jaxstatic.jit", *, extras: frozenset[int] = frozenset(),
           keywords: frozenset[str] = frozenset(), keyword_variants: bool = False) -> Layout:
        """Read ``fn``'s annotations (``AnnotationError`` when they do not resolve) and add ``extra_static``, the
        names given by ``static_argnums``/``static_argnames``, and ``extras``/``keywords``, the ``*args`` extras and
        ``**kwargs`` entries they name. ``transform`` is named by ``HiddenStaticWarning``; ``keyword_variants``
        where ``fn`` is a transform that maps a keyword argument otherwise (an inner ``js.vmap``)."""
        params = find_static_params(fn, function, signature)
        static = set(params.names) | set(extra_static)
        for p in signature.parameters.values():
            if (p.kind is _Kind.VAR_POSITIONAL and params.var_positional) or (
                p.kind is _Kind.VAR_KEYWORD and params.var_keyword
            ):
                static.add(p.name)
        from . import _hidden  # loaded by the first layout read, not with jaxstatic

        _hidden.warn_if_hidden(fn, static, transform)
        return cls(function, signature, frozenset(static), params.nodiff - static, tuple(sorted(extras)),
                   frozenset(keywords), keyword_variants)

    def assemble(self, dynamic: Mapping[str, Any], statics: Mapping[str, Any], *, defaults: bool = True,
                 keywords: tuple[str, ...] | None = None) -> tuple[list[Any], dict[str, Any]]:
        """Rebuild the call of the user's function from its parts, by parameter name. ``defaults=False`` leaves out
        a keyword-only parameter at its default, as the call left it out: a wrapper that reports its wrapped
        function's signature (``jax.shard_map``'s, over ``jnp.dot``'s ``precision=``) may take no such keyword.
        ``keywords``: see ``as_called``."""
        if keywords is not None:
            return self.as_called(dynamic, statics, keywords, defaults)
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for name, p in self.signature.parameters.items():
            given = statics if name in statics else dynamic
            if p.kind is _Kind.VAR_POSITIONAL:
                extras = list(given.get(name, ()))
                for k in self.static_extras:  # increasing: each lands at its own position
                    if f"{name}[{k}]" in statics:
                        extras.insert(k, statics[f"{name}[{k}]"])
                args.extend(extras)
            elif p.kind is _Kind.VAR_KEYWORD:
                kwargs.update(given.get(name, {}))
                kwargs.update((n, statics[n]) for n in self.static_keywords if n in statics)
            else:  # an absent parameter gets its default here, just as if the call had left it out
                value = given.get(name, p.default)
                if p.kind is _Kind.KEYWORD_ONLY:
                    if defaults or value is not p.default:
                        kwargs[name] = value
                else:
                    args.append(value)
        return args, kwargs

    def as_called(self, dynamic: Mapping[str, Any], statics: Mapping[str, Any], keywords: tuple[str, ...],
                  defaults: bool) -> tuple[list[Any], dict[str, Any]]:
        """``assemble``, with the call rebuilt as it was made, for a function that maps an argument passed by keyword
        otherwise (an inner ``js.vmap``): ``keywords`` (``Plan.by_keyword``) names the parameters the call passed by
        keyword, and from the first of them, or the first left out, each named parameter is passed by keyword or
        left out (no ``*args`` extra can follow them in a call)."""
        args, kwargs = self.assemble(dynamic, statics, defaults=defaults)
        named = [p for p in self.signature.parameters.values() if p.kind in (_Kind.POSITIONAL_ONLY,
                                                                             _Kind.POSITIONAL_OR_KEYWORD)]
        start = next((i for i, p in enumerate(named) if p.kind is _Kind.POSITIONAL_OR_KEYWORD and (
            p.name in keywords or (p.name not in statics and p.name not in dynamic))), None)
        if start is None:
            return args, kwargs
        moved = {p.name: args[i] for i, p in enumerate(named[start:], start)
                 if defaults or p.name in statics or p.name in dynamic}
        return args[:start], {**moved, **kwargs}


class _Pos(int):
    """Placeholder for a positional argument while binding a call shape."""


class _Kw(str):
    """Placeholder for a keyword argument while binding a call shape."""


@dataclasses.dataclass(frozen=True)
class Plan:
    """One call shape of one function: where each static and dynamic value comes from."""

    layout: Layout
    statics: tuple[tuple[str, Source], ...]  # in signature order: the key's order
    dynamics: tuple[tuple[str, Source], ...]  # present dynamic values, in signature order
    variant: tuple[str, ...]  # names of the dynamic parameters given
    vid: int  # a small number per variant: the first item of every cache key
    nargs: int
    kwnames: tuple[str, ...]
    # the dynamic parameters this shape passes by keyword, where that selects the program (Layout.keyword_variants)
    by_keyword: tuple[str, ...] | None = None

    @classmethod
    def bind(cls, layout: Layout, nargs: int, kwnames: tuple[str, ...], variants: dict[tuple[str, ...], int]) -> Plan:
        try:
            bound = layout.signature.bind(*map(_Pos, range(nargs)), **{k: _Kw(k) for k in kwnames})
        except TypeError:
            raise arity_error(layout.function, layout.signature, nargs, kwnames) from None
        statics: list[tuple[str, Source]] = []
        dynamics: list[tuple[str, Source]] = []
        for name, p in layout.signature.parameters.items():
            src = _source(p, bound.arguments.get(name, _MISSING))
            if name in layout.static:
                statics.append((name, src if src is not None else _default_source(p)))
            elif src is not None and src.kind in ("varpos", "varkw"):
                _split_extras(layout, name, src, nargs, statics, dynamics)
            elif src is not None:
                dynamics.append((name, src))
        # variadic extras go last, so that the program's positional arguments are the named ones, then *args; those
        # given by keyword follow those given by position, by name: the order JAX flattens a call's keywords in, so
        # that the program's flat arguments are the call's as jax.jit flattens it (jax.export records that tree)
        dynamics.sort(key=lambda item: _ORDER[item[1].kind] + ((item[0],) if item[1].kind == "kw" else ()))
        variant = tuple(n for n, _ in dynamics)
        # the static extras a call gives are part of its variant: g(x, n=1) and g(x, m=1) share no program
        given = tuple(f"static {n}" for n, _ in statics if n not in layout.signature.parameters)
        by_keyword = tuple(n for n, src in dynamics if src.kind == "kw") if layout.keyword_variants else None
        vid = variants.setdefault(variant + given + tuple(f"{n}=" for n in by_keyword or ()), len(variants))
        return cls(layout, tuple(statics), tuple(dynamics), variant, vid, nargs, kwnames, by_keyword)

    def static_values(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any]:
        return {name: src.get(args, kwargs) for name, src in self.statics}

    def dynamic_values(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """Positional values for the jitted program, and the extra keywords of a dynamic ``**kwargs``."""
        pos: list[Any] = []
        kw: dict[str, Any] = {}
        for _, src in self.dynamics:
            if src.kind == "varpos":
                pos.extend(src.get(args, kwargs))
            elif src.kind == "varkw":
                kw.update(src.get(args, kwargs))
            else:
                pos.append(src.get(args, kwargs))
        return pos, kw


_MISSING = object()
_ORDER: dict[str, tuple[Any, ...]] = {"arg": (0,), "kw": (1,), "varpos": (2,), "varkw": (3,)}


def _split_extras(layout: Layout, name: str, src: Source, nargs: int, statics: list[tuple[str, Source]],
                  dynamics: list[tuple[str, Source]]) -> None:
    """A dynamic ``*args``/``**kwargs`` of one call shape, less the extras ``static_argnums``/``static_argnames``
    make static (each a static value of its own, by position or keyword)."""
    if src.kind == "varpos":
        taken = [k for k in layout.static_extras if src.index + k < nargs]
        statics.extend((f"{name}[{k}]", Source("arg", index=src.index + k)) for k in taken)
        if len(taken) < nargs - src.index:
            dynamics.append((name, dataclasses.replace(src, skip=tuple(src.index + k for k in taken))))
        return
    keys = sorted(n for n in src.names if n in layout.static_keywords)  # one key order, whatever the call's
    statics.extend((n, Source("kw", names=(n,))) for n in keys)
    rest = tuple(n for n in src.names if n not in layout.static_keywords)
    if rest:
        dynamics.append((name, dataclasses.replace(src, names=rest)))


def _source(p: inspect.Parameter, bound: Any) -> Source | None:
    if bound is _MISSING:
        return None
    if p.kind is _Kind.VAR_POSITIONAL:
        return Source("varpos", index=int(bound[0])) if bound else None
    if p.kind is _Kind.VAR_KEYWORD:
        return Source("varkw", names=tuple(bound)) if bound else None
    if isinstance(bound, _Kw):
        return Source("kw", names=(str(bound),))
    return Source("arg", index=int(bound))


def _default_source(p: inspect.Parameter) -> Source:
    if p.kind is _Kind.VAR_POSITIONAL:
        return Source("default", default=())
    if p.kind is _Kind.VAR_KEYWORD:
        return Source("default", default={})
    return Source("default", default=p.default)


def arity_error(function: str, signature: inspect.Signature, nargs: int, kwnames: tuple[str, ...]) -> TypeError:
    """Python's own message for a call that does not fit the signature ("f() missing 1 required positional
    argument: 'n'"), got by making that call on an empty function with the same parameters."""
    params = [p.replace(annotation=_Kind.empty, default=_DEFAULT if p.default is not p.empty else p.empty)
              for p in signature.parameters.values()]
    name = function.rpartition(".")[2] if function.rpartition(".")[2].isidentifier() else "f"
    ns: dict[str, Any] = {"_D": _DEFAULT}
    exec(f"def {name}{signature.replace(parameters=params, return_annotation=_Kind.empty)}: pass", ns)
    try:
        ns[name](*range(nargs), **dict.fromkeys(kwnames))
    except TypeError as err:
        return TypeError(str(err).replace(f"{name}()", f"{function}()", 1))
    return TypeError(f"{function}(): the arguments do not fit {signature}")


class _Default:
    def __repr__(self) -> str:
        return "_D"


_DEFAULT = _Default()
