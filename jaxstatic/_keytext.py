"""Static keys as text: a key rendered as the value it was frozen from, and the differences between two keys.

Both read the key's tokens without rebuilding the value, so their cost is bounded however large the value: rendering
stops at a few dozen characters, and two keys are compared entry by entry in C before the few entries that differ
are put in words (a fraction of a second for two 1e6-entry dicts, measured by ``benchmarks/explain.py``). Neither
raises: a user ``__repr__`` or ``__eq__`` that fails gives a plainer text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from itertools import chain, compress, islice
from operator import is_not, ne
from typing import Any

from ._keys import (
    ATTRS,
    FACTORY,
    HEAD,
    MAP,
    PACKED,
    REC,
    SEQ,
    SET,
    SLICE,
    Exemplar,
    Frozen,
    Hashed,
    Kind,
    item_span,
    safe_repr,
    thaw_leaf,
    unpacked,
)
from ._object_diff import object_diff, sides

_LIMIT = 60  # characters of one rendered value
_MAX_CHANGES = 5  # lines about one value before "and N more changes"
_WIDE = 1000  # characters of a value rendered to find where two differ


def describe(key: Any, limit: int = _LIMIT) -> str:
    """The value a key was frozen from, as short text (``{'lr': 0.1, 'depth': 2}``), rendered from the key without
    rebuilding the value: the cost is bounded by ``limit``, whatever the size of the value."""
    tokens, i = _cursor(key)
    try:
        return _render(tokens, i, limit)
    except Exception:
        return f"<{_type_label(tokens[i + 3] if type(tokens[i]) is Kind else tokens[i])} value>"


def _cursor(key: Any) -> tuple[tuple[Any, ...], int]:
    """A key as a token stream and the index of its item (a leaf pair is a two-token stream)."""
    if type(key) is Hashed:
        key = key.key
    return key, 1 if type(key) is Frozen else 0


def _render(tokens: tuple[Any, ...], i: int, limit: int) -> str:
    pieces: list[str] = []
    total = 0
    for piece in _pieces(tokens, i, limit):
        pieces.append(piece)
        total += len(piece)
        if total > limit:
            break
    text = "".join(pieces)
    return text if len(text) <= limit else text[: limit - 3] + "..."


Frame = list[Any]  # [text before child k, closer, child count, children done, skip the last child]


def _pieces(tokens: tuple[Any, ...], i: int, limit: int) -> Iterator[str]:
    """The text of the item at ``tokens[i]``, piece by piece, so the caller can stop early."""
    stack: list[Frame] = []
    while True:
        tok = tokens[i]
        if type(tok) is Kind and type(tokens[i + 4]) is int and tokens[i + 4] == PACKED:
            yield from _pieces(unpacked(tokens, i, limit // 2 + 1), 0, limit)  # enough entries to pass the limit
            i += item_span(tokens, i)
        elif type(tok) is Kind:
            kind, _, n, t, extra = tokens[i : i + HEAD]
            i += HEAD
            if kind is SET:
                yield _set_text(t, tokens[i], limit)
                i += 1
            else:
                opener, before, closer, count, skip = _frame(kind, t, extra, n)
                yield opener
                if count > skip:
                    stack.append([before, closer, count, 0, skip])
                    yield before(0)
                    continue
                if skip:
                    i += item_span(tokens, i)
                yield closer
        elif type(tok) is Exemplar:  # a record's last child: no text
            i += 1
        else:
            yield safe_repr(thaw_leaf(tok, tokens[i + 1]), limit)
            i += 2
        while stack:
            frame = stack[-1]
            frame[3] += 1
            if frame[3] < frame[2] - frame[4]:
                yield frame[0](frame[3])
                break
            if frame[4]:
                i += item_span(tokens, i)
            stack.pop()
            yield frame[1]
        else:
            return


def _frame(kind: Kind, t: type, extra: Any, n: int) -> tuple[str, Callable[[int], str], str, int, int]:
    """How a node renders: opener, the text before child k, closer, child count, children left unrendered."""
    name = _type_label(t)
    if kind is REC:
        return f"{name}(", lambda k: "" if k >= n else (", " if k else "") + f"{extra[k]}=", ")", n + 1, 0
    if kind is SLICE:
        return "slice(", _commas, ")", 3, 0
    skip = extra & ATTRS
    if kind is MAP:
        if t is dict:
            return "{", _dict_sep, "}", 2 * n, 0
        if extra & FACTORY:  # the factory, then the entries: defaultdict(<class 'list'>, {'a': [1]})
            before = lambda k: "" if k == 0 else ", {" if k == 1 else _dict_sep(k - 1)  # noqa: E731
            return f"{name}(", before, "})" if n else ", {})", 2 * n + 1 + skip, skip
        return f"{name}({{", _dict_sep, "})", 2 * n + skip, skip
    if t is list or t is tuple:
        return ("[", _commas, "]", n, 0) if t is list else ("(", _commas, ",)" if n == 1 else ")", n, 0)
    fields = getattr(t, "_fields", None)
    if fields is not None and len(fields) == n:
        return f"{name}(", lambda k: (", " if k else "") + f"{fields[k]}=", ")", n + skip, skip
    inner = "[]" if issubclass(t, list) else "()"
    return f"{name}({inner[0]}", _commas, inner[1] + ")", n + skip, skip


def _commas(k: int) -> str:
    return ", " if k else ""


def _dict_sep(k: int) -> str:
    return "" if k == 0 else ": " if k % 2 else ", "


def _set_text(t: type, keys: frozenset[Any], limit: int) -> str:
    items = sorted(describe(k, limit) for k, _ in zip(keys, range(8)))
    inner = ", ".join(items) + (", ..." if len(keys) > len(items) else "")
    if t is set:
        return "{" + inner + "}" if keys else "set()"
    return f"{_type_label(t)}({{{inner}}})" if keys else f"{_type_label(t)}()"


def _type_label(t: Any) -> str:
    return getattr(t, "__name__", None) or type(t).__name__


def diff(label: str, old: Any, new: Any) -> list[str]:
    """Where two keys differ, at most a few lines per difference: ``["cfg['lr']: 0.1 -> 0.2"]``; empty when equal.

    Never raises: a comparison or rendering that fails gives one plain line for the whole value.
    """
    (a, i), (b, j) = _cursor(old), _cursor(new)
    try:
        out: list[str] = []
        _diff_items(label, a, i, b, j, out)
        return out
    except Exception:
        return [f"{label}: {describe(old)} -> {describe(new)}"]


def _diff_items(label: str, a: tuple[Any, ...], i: int, b: tuple[Any, ...], j: int, out: list[str]) -> None:
    span = item_span(a, i)
    if span == item_span(b, j) and a[i : i + span] == b[j : j + span]:
        return
    node_a, node_b = type(a[i]) is Kind, type(b[j]) is Kind
    if node_a and node_b and a[i] is b[j] and a[i + 3] is b[j + 3]:
        parts_a, parts_b = _leaf_parts(a, i), _leaf_parts(b, j)
        if parts_a is not None and parts_b is not None:
            if a[i] is MAP:
                _diff_leaf_map(label, parts_a, parts_b, out)
                return
            if a[i + 2] == b[j + 2]:
                (ta, va), (tb, vb) = parts_a, parts_b
                changed = _changed(ta, va, tb, vb)
                names = _field_names(a[i + 3], a[i + 2]) or range(a[i + 2])
                _report(label, _flat(_leaf_changes(_child(label, names[k]), ta[k], va[k], tb[k], vb[k])
                                     for k in changed), len(changed), out)
                return
    if node_a and node_b:
        (a, i), (b, j) = (unpacked(a, i), 0), (unpacked(b, j), 0)
    if not node_a and not node_b:
        out.extend(_leaf_changes(label, a[i], a[i + 1], b[j], b[j + 1]))
        return
    if node_a and node_b and a[i] is b[j] and a[i + 3] is b[j + 3] and a[i + 4] == b[j + 4]:
        if a[i] is MAP:
            _diff_map(label, a, i, b, j, out)
            return
        if a[i] is not SET and a[i] is not MAP and a[i + 2] == b[j + 2]:
            _diff_seq(label, a, i, b, j, out)
            return
    out.append(_whole_change(label, a, i, b, j))


def _whole_change(label: str, a: tuple[Any, ...], i: int, b: tuple[Any, ...], j: int) -> str:
    wide_a, wide_b = _render(a, i, _WIDE), _render(b, j, _WIDE)
    # cut around the first difference, not before it; from the start when none shows in the first _WIDE characters
    old, new = sides(wide_a, wide_b, _LIMIT) if wide_a != wide_b else (_render(a, i, _LIMIT), _render(b, j, _LIMIT))
    ta, tb = (t[k + 3] if type(t[k]) is Kind else t[k] for t, k in ((a, i), (b, j)))
    if wide_a == wide_b or (old.endswith("...") and new.endswith("...")):
        if ta is not tb:
            return f"{label}: {old} ({_type_label(ta)}) -> {new} ({_type_label(tb)})"
        if type(a[i]) is Kind and a[i + 2] != b[j + 2]:
            return f"{label}: {old} -> {new} (length {a[i + 2]} -> {b[j + 2]})"
    return f"{label}: {old} -> {new}"


def _leaf_changes(label: str, ta: type, va: Any, tb: type, vb: Any) -> list[str]:
    """Where two leaves differ: field by field for objects that have parts (``_object_diff``), by bits for numbers
    that print alike."""
    if ta is tb and type(va) is bytes and ta is not bytes:  # a float, complex or numpy scalar keyed by its bits
        old, new = safe_repr(thaw_leaf(ta, va)), safe_repr(thaw_leaf(tb, vb))
        if old == new:
            return [f"{label}: {old} -> {new} (bits 0x{va.hex()} -> 0x{vb.hex()})"]
    return object_diff(label, thaw_leaf(ta, va), thaw_leaf(tb, vb))


def _diff_seq(label: str, a: tuple[Any, ...], i: int, b: tuple[Any, ...], j: int, out: list[str]) -> None:
    kind, t, extra, n = a[i], a[i + 3], a[i + 4], a[i + 2]
    names: Any = (extra if kind is REC else (".start", ".stop", ".step") if kind is SLICE
             else _field_names(t, n) or range(n))

    def child_label(k: int) -> str:
        if k >= n:
            return f"{label}.__dict__"
        return f"{label}{names[k]}" if kind is SLICE else _child(label, names[k])

    _diff_children(child_label, _children(a, i), a, _children(b, j), b, out, label)


def _field_names(t: type, n: int) -> tuple[str, ...] | None:
    """A named tuple's field names (``opt.init``, ``cfg.depth``), when it has one per entry."""
    fields = getattr(t, "_fields", None)
    return fields if isinstance(fields, tuple) and len(fields) == n else None


def _child(label: str, name: str | int) -> str:
    return f"{label}[{name}]" if type(name) is int else f"{label}.{name}"


def _diff_children(child_label: Callable[[int], str], pa: list[int], a: tuple[Any, ...], pb: list[int],
                   b: tuple[Any, ...], out: list[str], label: str) -> None:
    if _leaves_only(a, pa) and _leaves_only(b, pb):  # compare all pairs in C, render only the few that differ
        pairs_a = zip(a[pa[0] : pa[-1] + 2 : 2], a[pa[0] + 1 : pa[-1] + 2 : 2])
        pairs_b = zip(b[pb[0] : pb[-1] + 2 : 2], b[pb[0] + 1 : pb[-1] + 2 : 2])
        changed = list(compress(range(len(pa)), map(ne, pairs_a, pairs_b)))
    else:
        changed = [k for k, (p, q) in enumerate(zip(pa, pb))
                   if a[p : p + item_span(a, p)] != b[q : q + item_span(b, q)]]
    for k in changed[:_MAX_CHANGES]:
        _diff_items(child_label(k), a, pa[k], b, pb[k], out)
    if len(changed) > _MAX_CHANGES:
        out.append(f"{label}: and {len(changed) - _MAX_CHANGES} more changes")


def _children(tokens: tuple[Any, ...], i: int) -> list[int]:
    """Where each child of the node at ``tokens[i]`` starts (a record's exemplar left out)."""
    start, end = i + HEAD, i + HEAD + tokens[i + 1]
    count = tokens[i + 2] * (2 if tokens[i] is MAP else 1)
    if tokens[i + 1] == 2 * count:
        return list(range(start, end, 2))
    out = []
    while start < end:
        if type(tokens[start]) is not Exemplar:
            out.append(start)
        start += item_span(tokens, start)
    return out


def _leaves_only(tokens: tuple[Any, ...], starts: list[int]) -> bool:
    """Every child a leaf: each takes two tokens, the last one too."""
    return (bool(starts) and starts[-1] - starts[0] == 2 * (len(starts) - 1)
            and type(tokens[starts[-1]]) is not Kind and type(tokens[starts[0]]) is not Kind)


def _diff_map(label: str, a: tuple[Any, ...], i: int, b: tuple[Any, ...], j: int, out: list[str]) -> None:
    """Entries changed, removed and added, by key; a change of order alone is said as such."""
    (fa, ea, xa), (fb, eb, xb) = _map_parts(a, i), _map_parts(b, j)
    before, after = dict(ea), dict(eb)
    changed = [k for k, v in ea if k in after and after[k] != v]
    removed = [k for k, _ in ea if k not in after]
    added = [k for k, _ in eb if k not in before]
    if not (changed or removed or added) and fa == fb and xa == xb:
        old, new = ([describe(k, 20) for k, _ in e[:6]] for e in (ea, eb))
        out.append(f"{label}: key order {_listed(old, len(ea))} -> {_listed(new, len(eb))}")
        return
    if fa != fb:
        _diff_items(f"{label}.default_factory", fa, 0, fb, 0, out)
    if xa != xb:
        _diff_items(f"{label}.__dict__", xa, 0, xb, 0, out)
    for k in changed[:_MAX_CHANGES]:
        _diff_items(f"{label}[{describe(k)}]", before[k], 0, after[k], 0, out)
    lines = chain((f"{label}[{describe(k)}]: removed" for k in removed),
                  (f"{label}[{describe(k)}]: added ({describe(after[k])})" for k in added))
    _report(label, lines, len(removed) + len(added), out, shown=min(len(changed), _MAX_CHANGES),
            more=max(len(changed) - _MAX_CHANGES, 0))


def _diff_leaf_map(label: str, a: tuple[Any, ...], b: tuple[Any, ...], out: list[str]) -> None:
    """``_diff_map`` for two dicts whose keys and values are all leaves, on tuples of their types, keys and values:
    no object is made per entry, so two 1e6-entry dicts are compared in a fraction of a second."""
    (kta, ka, vta, va), (ktb, kb, vtb, vb) = a, b
    if ka == kb and kta == ktb:
        same_keys = _changed(vta, va, vtb, vb)
        _report(label, _flat(_leaf_changes(f"{label}[{safe_repr(ka[p])}]", vta[p], va[p], vtb[p], vb[p])
                             for p in same_keys), len(same_keys), out)
        return
    pos_a, pos_b = dict(zip(ka, range(len(ka)))), dict(zip(kb, range(len(kb))))
    kept_a = list(compress(range(len(ka)), map(pos_b.__contains__, ka)))  # entries of a whose key b has, in C
    kept_b = list(map(pos_b.__getitem__, map(ka.__getitem__, kept_a)))
    retyped = {kept_a[k] for k in compress(range(len(kept_a)), map(is_not, map(kta.__getitem__, kept_a),
                                                                    map(ktb.__getitem__, kept_b)))}
    gone, new_keys = pos_a.keys() - pos_b.keys(), pos_b.keys() - pos_a.keys()
    removed = [*compress(range(len(ka)), map(gone.__contains__, ka)), *retyped]
    added = [*compress(range(len(kb)), map(new_keys.__contains__, kb)), *(pos_b[ka[p]] for p in retyped)]
    moved = _changed(_picked(vta, kept_a), _picked(va, kept_a), _picked(vtb, kept_b), _picked(vb, kept_b))
    changed = [(kept_a[k], kept_b[k]) for k in moved if kept_a[k] not in retyped]
    if not (removed or added or changed):
        old, new = ([safe_repr(k, 20) for k in keys[:6]] for keys in (ka, kb))
        out.append(f"{label}: key order {_listed(old, len(ka))} -> {_listed(new, len(kb))}")
        return
    lines = chain(_flat(_leaf_changes(f"{label}[{safe_repr(ka[p])}]", vta[p], va[p], vtb[q], vb[q])
                        for p, q in changed),
                  (f"{label}[{safe_repr(ka[p])}]: removed" for p in removed),
                  (f"{label}[{safe_repr(kb[q])}]: added ({safe_repr(vb[q])})" for q in added))
    _report(label, lines, len(changed) + len(removed) + len(added), out)


_flat = chain.from_iterable


def _picked(part: tuple[Any, ...], positions: list[int]) -> tuple[Any, ...]:
    return tuple(map(part.__getitem__, positions))


def _leaf_parts(tokens: tuple[Any, ...], i: int) -> tuple[tuple[Any, ...], ...] | None:
    """A plain dict, list or tuple whose children are all leaves, as tuples of (key types, keys,) value types and
    values, sliced in C; None for any other node."""
    kind, span, n, _, extra = tokens[i : i + HEAD]
    width = 4 if kind is MAP else 2
    if type(extra) is int and extra == PACKED:
        return tokens[i + HEAD : i + HEAD + width]
    if extra != 0 or kind not in (MAP, SEQ) or span != n * width:
        return None
    start, end = i + HEAD, i + HEAD + span
    return tuple(tokens[start + k : end : width] for k in range(width))


def _changed(ta: tuple[type, ...], va: tuple[Any, ...], tb: tuple[type, ...], vb: tuple[Any, ...]) -> list[int]:
    """Positions where two packed sequences of atomic leaves differ in value or type, found in C."""
    differ = set(compress(range(len(va)), map(ne, va, vb)))
    return sorted(differ.union(compress(range(len(ta)), map(is_not, ta, tb))))


def _report(label: str, lines: Iterator[str], total: int, out: list[str], shown: int = 0, more: int = 0) -> None:
    """At most ``_MAX_CHANGES`` lines about one value (``shown`` already given), then how many more there are."""
    room = max(_MAX_CHANGES - shown, 0)
    out.extend(islice(lines, room))
    rest = more + max(total - room, 0)
    if rest:
        out.append(f"{label}: and {rest} more changes")


def _listed(texts: list[str], total: int) -> str:
    return "[" + ", ".join(texts) + (", ...]" if total > len(texts) else "]")


Item = tuple[Any, ...]


def _map_parts(tokens: tuple[Any, ...], i: int) -> tuple[Item, list[tuple[Item, Item]], Item]:
    """A mapping node's default factory, (key, value) items in order, and instance attributes, each item as its
    own token stream (empty when absent)."""
    extra = tokens[i + 4]
    items = [tokens[p : p + item_span(tokens, p)] for p in _children(tokens, i)]
    factory: Item = ()
    attrs: Item = ()
    if extra & FACTORY:
        factory = items.pop(0)
    if extra & ATTRS:
        attrs = items.pop()
    return factory, list(zip(items[::2], items[1::2])), attrs
