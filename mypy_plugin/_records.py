"""What a class's definition says about its hash, written into the class while mypy analyses it.

Python decides a class's ``__hash__`` in ways mypy's types do not show: ``@dataclass`` and attrs generate one from
the fields (or set it to None) according to their options, a class body defining ``__eq__`` without ``__hash__``
gets ``__hash__ = None``, and a field declared ``field(compare=False)``/``attrs.field(eq=False)`` is left out of
the generated hash. These are read from the class body here, while it exists (a class loaded from mypy's cache has
none), and kept in the class: how it hashes as a plugin-generated attribute (``RECORD``; being in the symbol
table, a change of options changes the class's snapshot, which dmypy follows), the rest in ``TypeInfo.metadata``
(serialized with the class).

Anything not written as a literal (``eq=EQ``, ``hash=flag()``) makes the answer ``UNKNOWN``: silence.
"""

from __future__ import annotations

from typing import Final

from mypy.nodes import (
    MDEF,
    AssignmentStmt,
    CallExpr,
    ClassDef,
    Decorator,
    Expression,
    ExpressionStmt,
    FuncDef,
    MemberExpr,
    NameExpr,
    OverloadedFuncDef,
    PassStmt,
    Statement,
    SymbolTableNode,
    TypeInfo,
    Var,
)
from mypy.plugin import ClassDefContext
from mypy.types import LiteralType

from ._fullnames import ATTRS_FROZEN_MAKERS, NEVER_STATIC_PACKAGES

RECORD: Final = "__jaxstatic_hash__"
"""The plugin-generated class attribute that says how a ``@dataclass`` or attrs class hashes."""

PYTREE_METADATA: Final = "jaxstatic_dataclass"
"""The key of ``TypeInfo.metadata`` that marks a class decorated with ``jaxstatic.dataclass``."""

HASH_NONE_METADATA: Final = "jaxstatic_hash_none"
"""Marks a class whose body assigns ``__hash__ = None`` (``{"assigned": True}``) or defines ``__eq__`` without
``__hash__`` (``{"eq": True}``): Python sets ``__hash__`` to None for both."""

UNHASHED_METADATA: Final = "jaxstatic_unhashed"
"""The fields a class declares out of its generated hash (``field(compare=False)``, ``attrs.field(eq=False)``)."""

ATTRS_METADATA: Final = "jaxstatic_attrs"
"""Marks a class decorated by attrs (its messages name attrs, not dataclasses)."""

# How a class hashes. INHERIT: ``@dataclass(eq=False)`` leaves ``__hash__`` to the bases.
NONE: Final = "none"
FIELDS: Final = "fields"
PYTREE: Final = "pytree"  # a frozen ``jaxstatic.dataclass``: hashes its leaves and its static fields as they are
TRUSTED: Final = "trusted"
INHERIT: Final = "inherit"
UNKNOWN: Final = "unknown"

_UNSURE: Final = object()
"""An option given as something other than ``True``/``False``/``None``."""


def record_dataclass(ctx: ClassDefContext, *, pytree: bool = False) -> None:
    """Write into a ``@dataclass`` class how it hashes (mypy's own metadata keeps only ``frozen``).

    ``pytree``: a ``jaxstatic.dataclass``, frozen by default, whose hash (when ``eq`` and ``frozen``) is its
    leaves' and static fields'. One that defines ``__eq__`` without ``__hash__`` gets ``__hash__ = None`` from
    Python, which mypy does not model: unsure, stay silent.
    """
    options = _options(ctx.reason, {"eq": True, "frozen": pytree, "unsafe_hash": False})
    if options is None or (pytree and _defines(ctx.cls.info, "__eq__") and not _defines(ctx.cls.info, "__hash__")):
        mode = UNKNOWN
    elif options["unsafe_hash"] or (options["eq"] and options["frozen"]):
        mode = PYTREE if pytree else FIELDS
    else:
        mode = NONE if options["eq"] else INHERIT
    _write(ctx, mode)
    _record_unhashed(ctx, in_hash=("hash", "compare"))
    if pytree:
        ctx.cls.info.metadata[PYTREE_METADATA] = {"converted": _converted_fields(ctx)}


def record_attrs(ctx: ClassDefContext, maker: str) -> None:
    """Write into an attrs class how it hashes, as attrs decides it: ``hash``/``unsafe_hash`` when given, else
    generated from the fields when ``eq`` and frozen (a frozen base counts), ``None`` when ``eq`` alone, the
    bases' hash when not ``eq``. A body defining ``__eq__`` or ``__hash__`` changes what the newer API does
    (``auto_detect``): unsure, silent."""
    info = ctx.cls.info
    given = _options(ctx.reason, {"eq": None, "cmp": None, "frozen": None, "hash": None, "unsafe_hash": None})
    frozen = given is not None and (
        bool(given["frozen"]) or (given["frozen"] is None and maker in ATTRS_FROZEN_MAKERS)
    )
    if given is None or _defines(info, "__eq__") or _defines(info, "__hash__"):
        mode = UNKNOWN
    else:
        hash_ = given["unsafe_hash"] if given["unsafe_hash"] is not None else given["hash"]
        eq = next((given[k] for k in ("eq", "cmp") if given[k] is not None), True)
        if hash_ is not None:
            mode = FIELDS if hash_ else INHERIT
        elif not eq:
            mode = INHERIT
        elif frozen:
            mode = FIELDS
        else:
            # A frozen attrs base makes the subclass frozen too, and then hashable: unsure which, silent.
            mode = UNKNOWN if _frozen_attrs_base(info) else NONE
    _write(ctx, mode)
    _record_unhashed(ctx, in_hash=("hash", "eq", "cmp"))
    info.metadata[ATTRS_METADATA] = {"maker": maker, "frozen": frozen}


def record_hash_none(ctx: ClassDefContext) -> None:
    """Remember in the class's metadata that its body assigns ``__hash__ = None``, or defines ``__eq__`` without
    ``__hash__`` (Python then sets ``__hash__`` to None).

    The ``Var`` mypy makes of ``__hash__ = None`` may have no type: before mypy 1.16 it never gets one (the checker
    stops at the incompatible override of ``object.__hash__``), and on any mypy a call site can be checked before
    the class body. The class body itself is gone when the class comes from mypy's cache; its metadata is not.
    Runs while mypy analyses the class, before any call site is checked: the name ``None`` is not resolved yet,
    but no class can rebind it. Stubs (typeshed's C types define ``__eq__`` and hash all the same) and the
    standard library's, jax's and numpy's classes are left as they are declared.
    """
    metadata = ctx.cls.info.metadata
    found = _hash_none_in(ctx.cls.defs.body)
    # A class decorator may add ``__hash__`` (dataclasses' own choice is recorded by its hook): only classes
    # without one are judged by ``__eq__``. Tested last: most classes define no ``__eq__``.
    if found == "eq" and (_declared_only(ctx) or any(_named(d) != "dataclass" for d in ctx.cls.decorators)):
        found = None
    if found is not None:
        metadata[HASH_NONE_METADATA] = {found: True}
    elif HASH_NONE_METADATA in metadata:
        del metadata[HASH_NONE_METADATA]  # dmypy analyses an edited class again


def _hash_none_in(body: list[Statement]) -> str | None:
    eq = False
    plain = True  # every statement read: no ``__hash__`` hidden in an ``if`` or a ``try``
    for stmt in body:  # every class mypy analyses, typeshed's among them: the cheap tests first
        if isinstance(stmt, AssignmentStmt):
            rvalue = stmt.rvalue
            if _assigns(stmt, "__hash__"):
                return "assigned" if isinstance(rvalue, NameExpr) and rvalue.name == "None" else None
        elif isinstance(stmt, (FuncDef, Decorator, OverloadedFuncDef)):
            if stmt.name == "__hash__":
                return None
            eq = eq or stmt.name == "__eq__"
        elif not isinstance(stmt, _PLAIN_STATEMENTS):
            plain = False
    return "eq" if eq and plain else None


_PLAIN_STATEMENTS: Final = (ExpressionStmt, PassStmt, ClassDef)


def _named(expr: Expression) -> str | None:
    """The name a decorator is written with (``dataclass`` in ``@dataclasses.dataclass(eq=False)``): read before
    mypy has resolved it."""
    target = expr.callee if isinstance(expr, CallExpr) else expr
    return target.name if isinstance(target, (NameExpr, MemberExpr)) else None


def _declared_only(ctx: ClassDefContext) -> bool:
    """A class whose definition is not the code that runs: a stub, or a library whose C types the stubs
    describe."""
    module = ctx.cls.info.module_name
    return module.partition(".")[0] in NEVER_STATIC_PACKAGES or ctx.api.is_stub_file


def _write(ctx: ClassDefContext, mode: str) -> None:
    info = ctx.cls.info
    var = Var(RECORD, LiteralType(mode, ctx.api.named_type("builtins.str")))
    var.info = info
    var._fullname = f"{info.fullname}.{RECORD}"
    var.is_classvar = True
    info.names[RECORD] = SymbolTableNode(MDEF, var, plugin_generated=True)


def _options(reason: Expression, defaults: dict[str, bool | None]) -> dict[str, bool | None] | None:
    """The decorator's options named in ``defaults``, or ``None`` when one is not a literal."""
    options = dict(defaults)
    if isinstance(reason, CallExpr):
        for name, arg in zip(reason.arg_names, reason.args):
            if name in options:
                value = _literal(arg)
                if value is _UNSURE:
                    return None
                options[name] = value if isinstance(value, bool) else None
    return options


def _record_unhashed(ctx: ClassDefContext, in_hash: tuple[str, ...]) -> None:
    """The fields the class body declares out of the generated hash: the first of ``in_hash`` given decides
    (``hash=`` over ``compare=``/``eq=``); a value that is not a literal counts as out (silence)."""
    unhashed = []
    for stmt in ctx.cls.defs.body:
        call = stmt.rvalue if isinstance(stmt, AssignmentStmt) else None
        if not isinstance(stmt, AssignmentStmt) or not isinstance(call, CallExpr):
            continue
        given = {name: _literal(arg) for name, arg in zip(call.arg_names, call.args) if name in in_hash}
        decided = next((given[k] for k in in_hash if k in given and given[k] is not None), True)
        if decided is not True:
            unhashed += [lv.name for lv in stmt.lvalues if isinstance(lv, NameExpr)]
    if unhashed:
        ctx.cls.info.metadata[UNHASHED_METADATA] = {"fields": unhashed}
    elif UNHASHED_METADATA in ctx.cls.info.metadata:
        del ctx.cls.info.metadata[UNHASHED_METADATA]


def unhashed_fields(info: TypeInfo) -> set[str]:
    """The fields of ``info`` (its own and its bases') declared out of the generated hash."""
    names: set[str] = set()
    for base in info.mro:
        data = base.metadata.get(UNHASHED_METADATA)
        fields = data.get("fields") if isinstance(data, dict) else None
        if isinstance(fields, list):
            names.update(f for f in fields if isinstance(f, str))
    return names


def _frozen_attrs_base(info: TypeInfo) -> bool:
    """A base is a frozen attrs class (by our record, written in the same pass, or by mypy's attrs plugin)."""
    for base in info.mro[1:]:
        for key in (ATTRS_METADATA, "attrs"):
            data = base.metadata.get(key)
            if isinstance(data, dict) and data.get("frozen"):
                return True
    return False


def _defines(info: TypeInfo, name: str) -> bool:
    sym = info.names.get(name)
    return sym is not None and not sym.plugin_generated


def _assigns(stmt: AssignmentStmt, name: str) -> bool:
    return any(isinstance(lv, NameExpr) and lv.name == name for lv in stmt.lvalues)


def _converted_fields(ctx: ClassDefContext) -> list[str]:
    """Fields declared with ``field(converter=...)``: the constructor's argument is not the value stored."""
    names = []
    for stmt in ctx.cls.defs.body:
        call = stmt.rvalue if isinstance(stmt, AssignmentStmt) else None
        if isinstance(stmt, AssignmentStmt) and isinstance(call, CallExpr) and "converter" in call.arg_names:
            names += [lv.name for lv in stmt.lvalues if isinstance(lv, NameExpr)]
    return names


def converted_field(info: TypeInfo, name: str) -> bool:
    """``name`` is a ``field(converter=...)`` of a ``jaxstatic.dataclass`` (or of one of its bases)."""
    for base in info.mro:
        data = base.metadata.get(PYTREE_METADATA)
        converted = data.get("converted") if isinstance(data, dict) else None
        if isinstance(converted, list) and name in converted:
            return True
    return False


def is_pytree_dataclass(info: TypeInfo) -> bool:
    """A class decorated with ``jaxstatic.dataclass`` itself."""
    return PYTREE_METADATA in info.metadata


def _literal(expr: Expression) -> bool | object | None:
    """``True``/``False``/``None`` written as such, else ``_UNSURE``."""
    if isinstance(expr, NameExpr) and expr.fullname in ("builtins.True", "builtins.False"):
        return expr.fullname == "builtins.True"
    if isinstance(expr, NameExpr) and expr.name in ("True", "False", "None") and not expr.fullname:
        return {"True": True, "False": False, "None": None}[expr.name]  # not resolved yet: nothing rebinds them
    if isinstance(expr, NameExpr) and expr.fullname == "builtins.None":
        return None
    return _UNSURE
