"""The flat cache key, and the generated code that builds it and dispatches a call.

Cache keys are flat: ``(vid, type0, value0, type1, value1, ...)``, one pair per static parameter. An atomic value
(``type(v) in _freeze.ATOMIC``) is its own pair; any other value is ``(FROZEN, its frozen key)``. Flat keys hash and
compare faster than nested ones (measured: ~100 ns a call).

For each call shape, ``generate`` writes two functions from the same lines: ``key(args, kwargs)`` (the key alone, for
ahead-of-time objects) and the dispatcher (the key, the lookup, the call). Like attrs' generated methods, the source is
compiled under a unique file name with a ``linecache`` entry, so tracebacks and pdb show the real lines.
"""

from __future__ import annotations

import itertools
import linecache
from collections.abc import Callable
from typing import Any

from . import _freeze, _traceback
from ._plan import Plan


class _FrozenMarker:
    __slots__ = ()

    def __repr__(self) -> str:
        return "FROZEN"


FROZEN = _FrozenMarker()

FreezePair = Callable[[Any, int], tuple[Any, Any]]

_HASH_ONCE_LEN = 16


def to_pair(key: Any) -> tuple[Any, Any]:
    """The pair of a frozen key inside a flat cache key. Long containers get their hash computed once (``Hashed``);
    short ones stay plain tuples, which hash in C faster than a Python-level ``__hash__`` is called."""
    if not _freeze.is_container(key):
        return key  # type: ignore[no-any-return]
    if type(key) is not _freeze.Hashed and _freeze.size(key) >= _HASH_ONCE_LEN:
        key = _freeze.Hashed(key)
    return (FROZEN, key)


def static_keys(key: tuple[Any, ...]) -> list[Any]:
    """The frozen key of each static parameter, from a flat cache key."""
    pairs = zip(key[1::2], key[2::2])
    return [v if t is FROZEN else (t, v) for t, v in pairs]


def _constant_key(value: Any) -> Any:
    """The key of a default value that can never change (atomic, or an immutable tuple), else None."""
    try:
        key = _freeze.freeze(value)
    except _freeze.Unfreezable:
        return None
    return key if _freeze.is_immutable(key) else None


def _key_lines(plan: Plan, ns: dict[str, Any]) -> tuple[list[str], str]:
    """The statements that compute the key of a call of this shape into ``key``, and its tuple expression."""
    lines: list[str] = []
    keys = [str(plan.vid)]
    for j, (_, src) in enumerate(plan.statics):
        if src.kind == "default" and _constant_key(src.default) is not None:
            ns[f"T{j}"], ns[f"V{j}"] = to_pair(_constant_key(src.default))
            keys += [f"T{j}", f"V{j}"]
            continue
        ns[f"D{j}"] = src.default
        # A float that is neither zero nor NaN is its own exact key, as _freeze gives it: only ±0.0 and NaN
        # compare unlike their bits. Inline, it costs ~0.1 us less than freeze_pair (float statics are common).
        lines += [f"v{j} = {src.expr(f'D{j}')}", f"t{j} = type(v{j})", f"if t{j} not in ATOMIC:",
                  f"    if t{j} is not float or not v{j} or v{j} != v{j}:",
                  f"        t{j}, v{j} = freeze_pair(v{j}, {j})"]
        keys += [f"t{j}", f"v{j}"]
    return lines, f"({', '.join(keys)},)"


_counter = itertools.count()


def _compile(source: str, ns: dict[str, Any], what: str) -> None:
    filename = f"{_traceback.GENERATED}/{what} #{next(_counter)}"
    linecache.cache[filename] = (len(source), None, source.splitlines(keepends=True), filename)
    exec(compile(source, filename, "exec"), ns)


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for line in lines]


def generate(plan: Plan, namespace: dict[str, Any], function: str, entry: bool = False) -> dict[str, Callable[..., Any]]:
    """``{"key": key, "dispatch": dispatch}`` for one call shape, plus ``"entry"`` when asked.

    ``namespace`` supplies ``cache``, ``lookup`` (its bound ``get``), ``touch``, ``miss``, ``freeze_pair``,
    ``dynamic_error``, ``failed``, ``next_call``, ``reroute`` and ``general``. The dispatcher takes ``(args, kwargs)``: it counts the call, builds the
    key, looks the program up (keeping the cache's order of use when it holds more than one), and calls it with the
    dynamic values. A plan for keyword calls is found by keyword names alone, so it checks the number of positionals
    and reroutes on a mismatch. With ``entry``, also a ``__call__(self, *args, **kwargs)`` for this shape of
    positional call, which hands any other shape to ``general(self, args, kwargs)``: one Python frame per call
    instead of two (about 150 ns of the ~400 ns jaxstatic adds to a call).
    """
    ns = dict(namespace, ATOMIC=_freeze.ATOMIC, hide=_traceback.hide)
    key_lines, key_expr = _key_lines(plan, ns)
    call = ", ".join("*" + src.expr("") if src.kind == "varpos" else "**" + src.expr("") if src.kind == "varkw"
                     else src.expr("") for _, src in plan.dynamics)
    body = [*key_lines, f"key = {key_expr}", "next_call()", "fn = lookup(key)", "if fn is None:",
            "    return miss(key, args, kwargs)", "if len(cache) > 1:", "    touch(key)",
            "try:", f"    return fn({call})", "except TypeError as err:", "    raise dynamic_error(args, kwargs, err)",
            "except BaseException:", "    failed(args, kwargs)", "    raise"]
    reroute = [f"if len(args) != {plan.nargs}:", "    return reroute(args, kwargs)"] if plan.kwnames else []
    lines = ["def key(args, kwargs):", *_indent([*key_lines, f"return {key_expr}"]), "",
             "def dispatch(args, kwargs):", *_indent([*reroute, *body])]
    if entry:
        # The frame a user calls drops jaxstatic's frames from a failure's traceback (_traceback.hide).
        lines += ["", "def entry(self, *args, **kwargs):",
                  *_indent(["try:", *_indent([f"if kwargs or len(args) != {plan.nargs}:",
                                              "    return general(self, args, kwargs)", *body]),
                            "except BaseException as err:", "    hide(err)", "    raise"])]
    shape = ", ".join([f"{plan.nargs} positional", *plan.kwnames])
    _compile("\n".join(lines) + "\n", ns, f"dispatch of {function}({shape})")
    return {name: ns[name] for name in ("key", "dispatch", "entry") if name in ns}


__all__ = ["FROZEN", "FreezePair", "generate", "static_keys", "to_pair"]
