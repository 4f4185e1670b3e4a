"""``python -m jaxstatic.migrate``: files found, each rule run on each, the result written, diffed or checked.

Every rule is a LibCST codemod (``_jit``, ``_dataclass``); each keeps the file's formatting and
comments, adds the imports it uses (``import jaxstatic as js``, ``from jaxstatic import Static``, ``typing.Any``)
and removes those its rewrite left unused. A site a rule cannot convert safely is left as it was and reported.

Two passes: the first converts every file and collects the calls that jit a function imported from another file
given (``_files``); the second annotates those functions where all such calls agree, and converts again
the files whose calls do not, leaving those calls. Then each class converted that a class of another file
subclasses without being converted is left, and its file converted again, until none is (``_settle_classes``).
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import os
import pathlib
import re
import sys
from collections.abc import Sequence
from typing import BinaryIO, TextIO

import libcst as cst
from libcst.codemod import CodemodContext

from . import _closure, _dataclass, _donate, _jit
from ._common import ALIASES, CONVERTED, LEAVE, STRICT, Rule, Site, free_names
from ._files import (
    KEY,
    ClassInfo,
    Elsewhere,
    Key,
    Request,
    classes_of,
    leave_bases,
    python_files,
)
from ._jit import Unrecognised

RULES: tuple[type[Rule], ...] = (*_jit.RULES, *_closure.RULES, *_dataclass.RULES, *_donate.RULES, Unrecognised)


def migrate_source(source: str | bytes, path: str, elsewhere: Elsewhere | None = None, strict: bool = False
                   ) -> tuple[cst.Module, list[Site]]:
    """The module ``source`` converted by every rule, and the sites each looked at. Raises ParserSyntaxError.

    ``elsewhere``: the other files given, for functions jitted in one file and defined in another. ``strict``:
    convert only what the source proves safe (``--strict``). Converted again, leaving more, while a class it
    made a ``js.dataclass`` has a subclass in the file that is not one (``leave_bases``)."""
    leave = {} if elsewhere is None else {k: why for (p, k), why in elsewhere.leave.items() if p == path}
    classes: list[ClassInfo] | None = None
    while True:
        converted: set[Key] = set()
        module, sites = _rules(source, path, elsewhere, strict, {LEAVE: leave, CONVERTED: converted})
        if not converted:
            break
        classes = classes_of(path, source) if classes is None else classes
        more = {k: why for (_, k), why in leave_bases(classes, {(path, c) for c in converted}).items()
                if k not in leave}
        if not more:
            break
        leave = {**leave, **more}
    if elsewhere is not None:
        elsewhere.converted[path] = converted
    return module, sites


def _rules(source: str | bytes, path: str, elsewhere: Elsewhere | None, strict: bool, shared: dict[str, object]
           ) -> tuple[cst.Module, list[Site]]:
    module = cst.parse_module(source)
    sites: list[Site] = []
    text = module.code
    rules: tuple[type[Rule], ...] = (*RULES, _jit.Requested) if elsewhere and path in elsewhere.annotate else RULES
    if not any(rule.applies(text) for rule in rules):
        return module, sites  # most files of a project: parsed, and nothing more
    aliases = free_names(module)
    if isinstance(aliases, tuple):
        sites.append(Site(path, aliases[0], "JS000", False, f"the name {aliases[1]!r} and each alias tried for it "
                                                            "are bound to something else in this file"))
        return module, sites
    first = module.body[0] if module.body else None
    to_original = list(range(len(text.splitlines()) + 2))  # line of the current code -> line of the file's
    for rule in rules:
        if not rule.applies(text):
            continue
        found: list[Site] = []
        scratch = {KEY: elsewhere, STRICT: strict, ALIASES: aliases, **shared}
        module = rule(CodemodContext(filename=path, scratch=scratch), found).transform_module(module)
        sites += [dataclasses.replace(s, line=to_original[min(s.line, len(to_original) - 1)]) for s in found]
        after = module.code
        if after != text:
            to_original, text = _line_map(text, after, to_original), after
    return _no_leading_blank(module, first), _unique(sites)


def _line_map(before: str, after: str, to_original: list[int]) -> list[int]:
    """``to_original`` carried over a rewrite: each line of ``after`` to the file's line it came from (a changed
    line to the first line of what it replaced), so every rule reports the lines the user's file has."""
    old, new = before.splitlines(), after.splitlines()
    mapped = [0] * (len(new) + 2)
    for tag, i1, _i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        for j in range(j1, j2):
            i = i1 + (j - j1) if tag == "equal" else i1
            mapped[j + 1] = to_original[min(i + 1, len(to_original) - 1)]
    mapped[len(new) + 1] = to_original[-1]
    return mapped


def _unique(sites: list[Site]) -> list[Site]:
    """One report per place, by line: a site some rule looked at is not reported again as unrecognised."""
    seen = {(s.line) for s in sites if s.rule != Unrecognised.CODE}
    return sorted((s for s in sites if s.rule != Unrecognised.CODE or s.line not in seen), key=lambda s: s.line)


def _no_leading_blank(module: cst.Module, first: cst.CSTNode | None) -> cst.Module:
    """``module`` without the blank lines a removed first import leaves at its top."""
    head = module.body[0] if module.body else None
    if head is None or first is None or head.deep_equals(first) or not isinstance(head, (cst.SimpleStatementLine, cst.BaseCompoundStatement)):
        return module
    lines = list(head.leading_lines)
    while lines and lines[0].comment is None:
        lines.pop(0)
    return module.with_changes(body=[head.with_changes(leading_lines=lines), *module.body[1:]])


def _parser() -> argparse.ArgumentParser:
    rules = "\n".join(f"  {r.CODE}  {r.DESCRIPTION}" for r in RULES if r.DESCRIPTION != Rule.DESCRIPTION)
    parser = argparse.ArgumentParser(
        prog="python -m jaxstatic.migrate", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Move JAX code to jaxstatic: static_argnums/static_argnames and pytree dataclasses become "
                    "Static[...] annotations. Files are rewritten in place unless --diff or --check is given.",
        epilog=f"rules:\n{rules}")
    parser.add_argument("paths", nargs="+", metavar="PATH", help="files, or folders searched for *.py")
    parser.add_argument("--diff", action="store_true", help="print a unified diff and write nothing")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when a file would change")
    parser.add_argument("--strict", action="store_true",
                        help="convert only what the source proves safe; leave (and report) what the default mode "
                             "takes on trust from annotations")
    return parser


Result = tuple[bytes, cst.Module, list[Site]] | cst.ParserSyntaxError


def _convert(paths: Sequence[pathlib.Path], elsewhere: Elsewhere, strict: bool) -> dict[pathlib.Path, Result]:
    results: dict[pathlib.Path, Result] = {}
    for path in paths:
        before = path.read_bytes()
        try:
            results[path] = (before, *migrate_source(before, str(path), elsewhere, strict))
        except cst.ParserSyntaxError as error:
            results[path] = error
    return results


def _statics(result: object, function: str) -> frozenset[str]:
    """The parameters of top-level ``def function`` already annotated ``Static[...]`` in a first-pass result."""
    if not isinstance(result, tuple):
        return frozenset()
    fn = next((s for s in result[1].body if isinstance(s, cst.FunctionDef) and s.name.value == function), None)
    params = [] if fn is None else [*fn.params.posonly_params, *fn.params.params, *fn.params.kwonly_params]
    return frozenset(p.name.value for p in params if p.annotation is not None
                     and cst.Module([]).code_for_node(p.annotation.annotation).startswith("Static["))


def _settle(elsewhere: Elsewhere, results: dict[pathlib.Path, object]) -> tuple[set[str], set[str]]:
    """The cross-file requests of the first pass, agreed or denied: (files to annotate, callers to convert again).
    Agreed: every call names the same parameters, and the function's own file made no others static."""
    by_function: dict[tuple[str, str], list[Request]] = {}
    for r in elsewhere.requests:
        by_function.setdefault((r.path, r.function), []).append(r)
    targets: set[str] = set()
    callers: set[str] = set()
    for (path, function), requests in by_function.items():
        own = _statics(results.get(pathlib.Path(path)), function)
        if len({r.names for r in requests}) == 1 and own in (frozenset(), requests[0].names):
            elsewhere.annotate.setdefault(path, {})[function] = requests[0].names
            targets.add(path)
            continue
        where = ", ".join(f"{r.caller}:{r.line}" for r in requests)
        elsewhere.deny[(path, function)] = (f"{function}() is made static on different parameters at different "
                                            f"calls ({where})")
        callers.update(r.caller for r in requests)
    return targets, callers


def _settle_classes(paths: Sequence[pathlib.Path], elsewhere: Elsewhere, results: dict[pathlib.Path, Result],
                    strict: bool) -> None:
    """Leave each converted class that a class of another file given subclasses without being converted, and
    convert its file again; until no more are left (each round leaves more, so it ends)."""
    classes: list[ClassInfo] | None = None
    while True:
        converted = {(p, n) for p, names in elsewhere.converted.items() for n in names}
        if not converted:
            return
        if classes is None:
            classes = [c for p in paths for c in classes_of(str(p), p.read_bytes())]
        more = {k: why for k, why in leave_bases(classes, converted).items() if k not in elsewhere.leave}
        if not more:
            return
        elsewhere.leave.update(more)
        again = {p for p, _ in more}
        results.update(_convert([p for p in paths if str(p) in again], elsewhere, strict))


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    write = not (args.diff or args.check)
    paths = list(python_files(args.paths))
    elsewhere = Elsewhere.of(paths)
    results = _convert(paths, elsewhere, args.strict)
    targets, callers = _settle(elsewhere, dict(results))
    elsewhere.requests.clear()
    again = [p for p in paths if str(p) in targets | callers]
    results.update(_convert(again, elsewhere, args.strict))
    _settle_classes(paths, elsewhere, results, args.strict)
    return _report(results, args.diff, args.check, write)


def _report(results: dict[pathlib.Path, Result], diff: bool, check: bool, write: bool) -> int:
    # with --diff, stdout is the patch alone: what the tool has to say goes to stderr
    say = sys.stderr if diff else sys.stdout
    sites: list[Site] = []
    changed, failed = [], []
    for path, result in results.items():
        if isinstance(result, cst.ParserSyntaxError):
            failed.append(path)
            print(f"{path}:{result.raw_line}: not converted: it does not parse ({result.message})", file=say)
            continue
        before, module, found = result
        sites += found
        after = module.bytes
        if after == before:
            continue
        changed.append(path)
        if diff:
            write_diff(sys.stdout.buffer, before, after, str(path))
        if write:
            path.write_bytes(after)
    sys.stdout.flush()
    _summary(say, sites, changed, failed, len(results), write)
    return 1 if failed or (check and changed) else 0


def _summary(say: TextIO, sites: list[Site], changed: list[pathlib.Path], failed: list[pathlib.Path], files: int,
             write: bool) -> None:
    for site in sites:
        print(site.text(written=write), file=say)
    done = sum(s.converted for s in sites)
    verb, sites_verb = ("rewritten", "sites converted") if write else ("would change", "sites would convert")
    print(f"jaxstatic.migrate: {done} {sites_verb}, {len(sites) - done} left; {len(changed)} of {files} "
          f"files {verb}" + (f"; {len(failed)} did not parse" if failed else ""), file=say)


_LINE = re.compile(rb"[^\n]*\n|[^\n]+")


def write_diff(out: BinaryIO, before: bytes, after: bytes, path: str) -> None:
    """A unified diff of the file's bytes, as ``patch -p0`` and ``git apply -p0`` read it: each line in the file's
    own encoding (a BOM, a latin-1 coding header and CRLF line ends kept), and a last line with no line end
    marked as such, so applying the patch gives the converted file byte for byte."""
    name = os.fsencode(path)
    lines = difflib.diff_bytes(difflib.unified_diff, _LINE.findall(before), _LINE.findall(after), name, name)
    for line in lines:
        out.write(line)
        if not line.endswith(b"\n"):
            out.write(b"\n\\ No newline at end of file\n")
