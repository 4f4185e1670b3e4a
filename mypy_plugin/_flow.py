"""Where a value donated by a call is read again, in the statements of the function (or module) that makes the call.

A small forward scan over mypy's statement tree, not a data-flow solver: it answers only when the answer is sure.
Within the statement holding the call, a read Python evaluates after the call (``step(params)["w"] + params["w"]``)
is a use after donation (``_Order``). From that statement it walks the rest of its block, then the rest of each
enclosing block; a read of the donated name (or attribute path, ``self.params``) before a rebinding is one too. In a
loop, a donation not rebound by the end of the body is followed into the next iteration, from the top of the body to
the donating statement (the call's own argument included). Reading an array's metadata (``s.shape``, ``.dtype``,
``.ndim``, ``.size``, ``jnp.shape(s)``) reads no buffer and is no read here.
Silent, because unsure, on: a rebinding or ``del`` inside a compound statement (one branch may rebind it), a ``try``
around the call, ``break``/``continue``/``return``/``raise`` on the way, a nested function or lambda (it runs later),
and for an attribute path any other use of its base (a method of ``self`` may rebind ``self.params``). Aliases and
values put into containers are not followed at all.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final, NamedTuple

from mypy.nodes import (
    AssertTypeExpr,
    AssignmentStmt,
    Block,
    BreakStmt,
    BytesExpr,
    CallExpr,
    CastExpr,
    ClassDef,
    ComparisonExpr,
    ComplexExpr,
    ContinueStmt,
    Decorator,
    DelStmt,
    DictExpr,
    EllipsisExpr,
    Expression,
    ExpressionStmt,
    FloatExpr,
    ForStmt,
    FuncDef,
    FuncItem,
    IfStmt,
    IndexExpr,
    IntExpr,
    LambdaExpr,
    ListExpr,
    MemberExpr,
    NameExpr,
    Node,
    OperatorAssignmentStmt,
    OpExpr,
    RaiseStmt,
    ReturnStmt,
    SetExpr,
    SliceExpr,
    StarExpr,
    Statement,
    StrExpr,
    SymbolNode,
    TryStmt,
    TupleExpr,
    UnaryExpr,
    WhileStmt,
    WithStmt,
)

__all__ = ["Read", "key_of", "made_once", "reads_after"]

_METADATA: Final = frozenset({"shape", "dtype", "ndim", "size"})
"""Attributes of an array read from its abstract value, which outlives the buffers: ``s.shape`` works after ``s``
was donated (and ``jnp.shape(s)``, ``np.ndim(s)``, ... read the same attribute)."""
_METADATA_PACKAGES: Final = frozenset({"numpy", "jax"})


def _metadata_read(node: Expression, key: tuple[str, ...]) -> bool:
    """``s.shape`` or ``jnp.shape(s)`` for the donated ``s``: no buffer is read."""
    if isinstance(node, MemberExpr):
        return node.name in _METADATA and key_of(node.expr) == key
    callee = node.callee if isinstance(node, CallExpr) else None
    return (isinstance(node, CallExpr) and isinstance(callee, MemberExpr) and callee.name in _METADATA
            and callee.fullname.partition(".")[0] in _METADATA_PACKAGES and len(node.args) == 1
            and key_of(node.args[0]) == key)


def key_of(expr: Expression) -> tuple[str, ...] | None:
    """``("params",)`` for ``params``, ``("self", "params")`` for ``self.params``; ``None`` for anything else."""
    parts: list[str] = []
    for _ in range(8):
        if isinstance(expr, NameExpr):
            return (expr.name, *reversed(parts))
        if not isinstance(expr, MemberExpr):
            return None
        parts.append(expr.name)
        expr = expr.expr
    return None


class Read(NamedTuple):
    node: Expression
    later_iteration: bool  # read in the next iteration of a loop that donates it


class _Uses:
    """Reads of ``key`` in source order; whether something else touches its base (for attribute paths); whether
    ``key`` is bound (assigned, deleted, a loop or ``with`` target). A walk of its own over mypy's nodes, by their
    ``__match_args__`` (mypy's visitor classes are compiled traits, which a plugin cannot subclass)."""

    def __init__(self, key: tuple[str, ...]) -> None:
        self.key, self.reads, self.binds, self.unsure = key, list[Expression](), False, False

    def walk(self, node: object) -> None:
        if isinstance(node, list):
            for item in node:
                self.walk(item)
            return
        if not isinstance(node, Node) or (isinstance(node, SymbolNode) and not isinstance(node, Statement)):
            return  # what a name refers to (a Var, a class's TypeInfo) is not part of the code read here
        handler = getattr(self, f"_{type(node).__name__}", None)
        if handler is not None:
            handler(node)
            return
        fields = getattr(node, "__match_args__", None)
        if not isinstance(fields, tuple):
            self.unsure = True  # a node this walk cannot see into
            return
        for name in fields:
            self.walk(getattr(node, name, None))

    def _NameExpr(self, o: NameExpr) -> None:
        if o.name != self.key[0]:
            return
        if len(self.key) == 1:
            self.reads.append(o)
        else:
            self.unsure = True  # the base itself, used bare: passed on, stored, ...

    def _MemberExpr(self, o: MemberExpr) -> None:
        if _metadata_read(o, self.key):
            return
        if len(self.key) > 1 and key_of(o) == self.key:
            self.reads.append(o)
        elif not (len(self.key) == 2 and isinstance(o.expr, NameExpr) and o.expr.name == self.key[0]):
            self.walk(o.expr)  # ``self.other`` is another attribute of the base: not walked into

    def _CallExpr(self, o: CallExpr) -> None:
        if _metadata_read(o, self.key):
            return
        callee = o.callee
        if len(self.key) > 1 and isinstance(callee, MemberExpr) and key_of(callee.expr) == self.key[:1]:
            self.unsure = True  # ``self.update()`` may rebind ``self.params``
        self.walk(callee)
        self.walk(o.args)

    def _LambdaExpr(self, o: LambdaExpr) -> None:
        pass  # runs later, if at all

    def _FuncDef(self, o: FuncDef) -> None:
        self.binds = self.binds or o.name == self.key[0]  # its body runs later, if at all

    def _Decorator(self, o: Decorator) -> None:
        self.binds = self.binds or o.func.name == self.key[0]

    def _ClassDef(self, o: ClassDef) -> None:
        self.binds = self.binds or o.name == self.key[0]

    def _AssignmentStmt(self, o: AssignmentStmt) -> None:
        self.walk(o.rvalue)
        for lvalue in o.lvalues:
            self._target(lvalue)

    def _OperatorAssignmentStmt(self, o: OperatorAssignmentStmt) -> None:
        self.walk(o.rvalue)
        self.walk(o.lvalue)  # ``x += 1`` reads x
        self._target(o.lvalue)

    def _ForStmt(self, o: ForStmt) -> None:
        self.walk(o.expr)
        self._target(o.index)
        self.walk(o.body)
        self.walk(o.else_body)

    def _WithStmt(self, o: WithStmt) -> None:
        for expr, target in zip(o.expr, o.target):
            self.walk(expr)
            if target is not None:
                self._target(target)
        self.walk(o.body)

    def _TryStmt(self, o: TryStmt) -> None:
        self.walk(o.body)
        for types, var, handler in zip(o.types, o.vars, o.handlers):
            self.walk(types)
            if var is not None:
                self._target(var)
            self.walk(handler)
        self.walk(o.else_body)
        self.walk(o.finally_body)

    def _DelStmt(self, o: DelStmt) -> None:
        self._target(o.expr)

    def _PassStmt(self, o: Node) -> None:
        pass  # reads and binds nothing (nor do ``break`` and ``continue``: where they lead, the scan decides)

    _BreakStmt = _ContinueStmt = _PassStmt

    def _Import(self, o: Node) -> None:
        self.unsure = True  # may bind the name

    _ImportFrom = _ImportAll = _Import

    def _target(self, target: Expression) -> None:
        if isinstance(target, (TupleExpr, ListExpr)):
            for item in target.items:
                self._target(item)
        elif isinstance(target, StarExpr):
            self._target(target.expr)
        elif key_of(target) is not None and self.key[:len(key_of(target) or ())] == key_of(target):
            self.binds = True  # the name, or the base of the path, is bound again
        elif isinstance(target, IndexExpr):
            self.walk(target.index)  # ``params["w"] = ...`` replaces an entry, reading no buffer
            self._base(target.base)
        elif isinstance(target, MemberExpr):
            self._base(target.expr)

    def _base(self, base: Expression) -> None:
        if len(self.key) > 1 and key_of(base) == self.key[:1]:
            return  # ``self.count = ...``: another attribute
        if len(self.key) > 1 and key_of(base) is not None and self.key[:len(key_of(base) or ())] == key_of(base):
            self.unsure = True  # ``self.params["w"] = ...``: changes the donated value's entries


def _uses(node: Node, key: tuple[str, ...]) -> _Uses:
    found = _Uses(key)
    found.walk(node)
    return found


_EXITS: Final = (ReturnStmt, RaiseStmt, BreakStmt, ContinueStmt)


class _Stop(Exception):
    pass


def _scan(stmts: Sequence[Statement], key: tuple[str, ...]) -> Expression | None:
    """The first read of ``key`` in ``stmts`` before a rebinding; raises ``_Stop`` when the walk ends (rebound,
    left, or unsure)."""
    for stmt in stmts:
        uses = _uses(stmt, key)
        compound = isinstance(stmt, (IfStmt, ForStmt, WhileStmt, WithStmt, TryStmt, Block)) or \
            type(stmt).__name__ == "MatchStmt"
        if compound and (uses.binds or uses.unsure):
            header = _header_read(stmt, key)
            if header is not None:
                return header
            raise _Stop
        if uses.unsure and not uses.reads:
            raise _Stop
        if uses.reads:
            return uses.reads[0]
        if uses.binds or isinstance(stmt, _EXITS) or _surely_leaves(stmt):
            raise _Stop
    return None


def _surely_leaves(stmt: Statement) -> bool:
    """Whether ``stmt`` always leaves the loop (or function) it is in: an exit, a ``with`` or ``try`` whose body
    ends in one, an ``if`` each branch of which does. An exit in one branch only may not be taken: the donation is
    followed past it, as a rebinding in one branch is not (a loop that breaks once done still runs the iterations
    before)."""
    if isinstance(stmt, (BreakStmt, ReturnStmt, RaiseStmt)):
        return True
    if isinstance(stmt, Block):
        return any(map(_surely_leaves, stmt.body))
    if isinstance(stmt, (WithStmt, TryStmt)):
        return _surely_leaves(stmt.body)
    if isinstance(stmt, IfStmt):
        return stmt.else_body is not None and all(map(_surely_leaves, [*stmt.body, stmt.else_body]))
    return False


def _header_read(stmt: Statement, key: tuple[str, ...]) -> Expression | None:
    """A read in what a compound statement evaluates first: an ``if``'s first test, a loop's iterable or test."""
    first = stmt.expr[0] if isinstance(stmt, IfStmt) else stmt.expr if isinstance(stmt, (ForStmt, WhileStmt)) \
        else None
    if isinstance(first, Node):
        reads = _uses(first, key).reads
        return reads[0] if reads else None
    return None


class _Level(NamedTuple):
    stmts: list[Statement]
    at: int
    owner: Statement | None  # the compound statement whose block this is; None for the function's body
    block: Block | None


def _contains(node: Node, target: Node) -> bool:
    """Whether ``target`` lies within ``node``'s source span."""
    end_line = node.end_line if node.end_line is not None else node.line
    end_column = node.end_column if node.end_column is not None else 10**9
    start, stop, at = (node.line, node.column), (end_line, end_column), (target.line, target.column)
    return start <= at < stop or (at == start and node is target)


def _blocks(stmt: Statement) -> Iterator[Block]:
    if isinstance(stmt, IfStmt):
        yield from stmt.body
        if stmt.else_body is not None:
            yield stmt.else_body
    elif isinstance(stmt, (ForStmt, WhileStmt)):
        yield stmt.body
        if stmt.else_body is not None:
            yield stmt.else_body
    elif isinstance(stmt, WithStmt):
        yield stmt.body
    elif isinstance(stmt, TryStmt):
        yield stmt.body
        yield from stmt.handlers
        if stmt.else_body is not None:
            yield stmt.else_body
        if stmt.finally_body is not None:
            yield stmt.finally_body
    elif isinstance(stmt, Block):
        yield stmt


def _path(stmts: list[Statement], call: CallExpr, owner: Statement | None,
          block: Block | None) -> list[_Level] | None:
    """The blocks from ``stmts`` down to the statement that holds ``call``, outermost first."""
    for i, stmt in enumerate(stmts):
        if not _contains(stmt, call):
            continue
        here = _Level(stmts, i, owner, block)
        for inner in _blocks(stmt):
            if _contains(inner, call):
                deeper = _path(inner.body, call, stmt, inner)
                return None if deeper is None else [here, *deeper]
        return [here]
    return None


def reads_after(body: list[Statement], call: CallExpr, key: tuple[str, ...]) -> Read | None:
    """The first read of ``key`` after ``call`` donated it, in the statements ``body`` (a function's or module's)."""
    path = _path(body, call, None, None)
    if path is None:
        return None
    held = path[-1].stmts[path[-1].at]
    value = held.rvalue if isinstance(held, AssignmentStmt) else held.expr if isinstance(
        held, (ExpressionStmt, ReturnStmt)) else None
    same = None if value is None else _Order(call, key).first_read(value)
    if same is not None:  # ``total = step(params)["w"] + params["w"]``: the same statement reads it after the call
        return Read(same, False)
    if not isinstance(held, (AssignmentStmt, ExpressionStmt)):
        return None  # the call in an ``if`` test, a ``with`` item, a ``return``, ...: not followed
    if _uses(held, key).binds:
        return None  # ``state = step(state, batch)``
    try:
        for level in reversed(path):
            read = _scan(level.stmts[level.at + 1:], key)
            if read is not None:
                return Read(read, False)
            again = _next_iteration(level, key)
            if again is not None:
                return again
            if isinstance(level.owner, TryStmt) or level.owner is None:
                return None
    except _Stop:
        return None
    return None


class _Order:
    """Reads of ``key`` that Python evaluates after ``call``, inside one expression: followed only through the
    expressions whose order of evaluation is their order in the source (calls, operators, comparisons, subscripts,
    attributes, displays); a conditional, ``and``/``or``, a comprehension, a lambda or an assignment expression on
    the way, or the base of an attribute path used bare, makes the answer unsure, and unsure is silent."""

    _ORDERED: Final = {
        CallExpr: ("callee", "args"), OpExpr: ("left", "right"), ComparisonExpr: ("operands",),
        UnaryExpr: ("expr",), IndexExpr: ("base", "index"), TupleExpr: ("items",), ListExpr: ("items",),
        SetExpr: ("items",), StarExpr: ("expr",), SliceExpr: ("begin_index", "end_index", "stride"),
        CastExpr: ("expr",), AssertTypeExpr: ("expr",),
    }
    _LEAVES: Final = (IntExpr, StrExpr, BytesExpr, FloatExpr, ComplexExpr, EllipsisExpr)

    def __init__(self, call: CallExpr, key: tuple[str, ...]) -> None:
        self.call, self.key, self.after = call, key, False

    def first_read(self, expr: Expression) -> Expression | None:
        try:
            return self._visit(expr)
        except _Stop:
            return None

    def _visit(self, node: object) -> Expression | None:
        if isinstance(node, list):
            for item in node:
                found = self._visit(item)
                if found is not None:
                    return found
            return None
        if node is None or isinstance(node, self._LEAVES):
            return None
        if node is self.call:  # its own arguments are read before it runs: the runtime names a double use
            self.after = True
            return None
        if isinstance(node, (NameExpr, MemberExpr)) and key_of(node) == self.key:
            return node if self.after else None
        if isinstance(node, (MemberExpr, CallExpr)) and _metadata_read(node, self.key):
            return None
        if isinstance(node, NameExpr):
            if node.name == self.key[0] and self.after:
                raise _Stop  # the base of ``self.params`` used bare: a method may read the attribute
            return None
        if isinstance(node, MemberExpr):
            return self._visit(node.expr)
        if isinstance(node, DictExpr):
            return self._visit([part for pair in node.items for part in pair])
        if isinstance(node, OpExpr) and node.op in ("and", "or"):
            raise _Stop
        fields = self._ORDERED.get(type(node))
        if fields is None:
            raise _Stop
        return self._visit([getattr(node, name) for name in fields])


def _next_iteration(level: _Level, key: tuple[str, ...]) -> Read | None:
    """A loop around the donating statement that never rebinds ``key``: the first read of its next iteration."""
    loop = level.owner
    if not isinstance(loop, (ForStmt, WhileStmt)) or level.block is not loop.body:
        return None
    header = _Uses(key)  # a ``for`` target rebinds the name each iteration; the body is scanned below, in order
    if isinstance(loop, ForStmt):
        header._target(loop.index)
    else:
        header.walk(loop.expr)
    if header.binds or header.unsure:
        return None
    if isinstance(loop, WhileStmt):
        test = _uses(loop.expr, key).reads
        if test:
            return Read(test[0], True)
    try:
        read = _scan(level.stmts[:level.at + 1], key)
    except _Stop:
        return None
    return None if read is None else Read(read, True)


def body_of(scope: FuncItem | None, module_defs: list[Statement]) -> list[Statement] | None:
    """The statements a call is made in: its function's body, or the module's."""
    if scope is None:
        return module_defs
    if isinstance(scope, LambdaExpr):
        return None
    return scope.body.body


def made_once(body: list[Statement], name: str, call: CallExpr) -> Expression | None:
    """What the local ``name`` holds where ``call`` is made: the value of the one statement of ``body`` (a
    function's) that binds it, an assignment at the top of the body before the call; ``None`` when the body binds it
    anywhere else (a branch, a loop, a ``with``, an import)."""
    made = None
    for stmt in body:
        uses = _uses(stmt, (name,))
        if not (uses.binds or uses.unsure):
            continue
        if made is not None or not (isinstance(stmt, AssignmentStmt) and len(stmt.lvalues) == 1
                                    and isinstance(stmt.lvalues[0], NameExpr) and stmt.lvalues[0].name == name):
            return None
        made = stmt
    end = (made.end_line or made.line) if made is not None else None
    return made.rvalue if made is not None and end is not None and end < call.line else None
