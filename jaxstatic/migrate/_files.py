"""The cross-file pass: which top-level functions the files given define, by module name, so that
``jax.jit(f, static_argnums=...)`` of an imported ``f`` can be converted when ``f``'s file is given too.

A module name is every dotted tail of a file's path (``src/pkg/mod.py``: ``mod``, ``pkg.mod``, ``src.pkg.mod``), since
which folder is on ``sys.path`` is not known; a name two files share resolves to neither.
"""

from __future__ import annotations

import ast
import dataclasses
import os
import pathlib
import subprocess
from collections.abc import Iterable, Iterator

import libcst as cst

KEY = "jaxstatic.migrate.elsewhere"  # where the rules find it: CodemodContext.scratch
# a class of a file: its name, and how many classes of that name come before it there (a file may hold several)
Key = tuple[str, int]


@dataclasses.dataclass(frozen=True)
class Request:
    """A call in one file that made static ``names`` of function ``function`` defined in file ``path``."""

    path: str
    function: str
    names: frozenset[str]
    caller: str
    line: int


@dataclasses.dataclass
class Elsewhere:
    modules: dict[str, str | None] = dataclasses.field(default_factory=dict)  # module name -> path (None: two)
    requests: list[Request] = dataclasses.field(default_factory=list)
    deny: dict[tuple[str, str], str] = dataclasses.field(default_factory=dict)  # (path, function) -> why
    annotate: dict[str, dict[str, frozenset[str]]] = dataclasses.field(default_factory=dict)  # path -> {f: names}
    converted: dict[str, set[Key]] = dataclasses.field(default_factory=dict)  # path -> classes made js.dataclass
    leave: dict[tuple[str, Key], str] = dataclasses.field(default_factory=dict)  # (path, class) -> why
    _defs: dict[str, dict[str, cst.FunctionDef]] = dataclasses.field(default_factory=dict)
    _used: dict[str, set[str]] = dataclasses.field(default_factory=dict)  # path -> names used not as calls

    @classmethod
    def of(cls, paths: Iterable[pathlib.Path]) -> Elsewhere:
        found = cls()
        for path in paths:
            parts = path.with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            for i in range(len(parts) - 1, -1, -1):
                name = ".".join(parts[i:])
                found.modules[name] = None if name in found.modules else str(path)
        return found

    def module_path(self, module: str, relative: int, caller: str) -> str | None:
        """The file given for ``from <dots><module> import ...`` written in file ``caller``."""
        if relative:
            base = pathlib.Path(caller).parents[relative - 1]
            target = base.joinpath(*module.split(".")) if module else base
            for candidate in (target.with_suffix(".py"), target / "__init__.py"):
                if str(candidate) in self.modules.values():
                    return str(candidate)
            return None
        return self.modules.get(module)

    def function(self, path: str, name: str) -> cst.FunctionDef | None:
        """The top-level ``def name`` of file ``path``, when the file defines ``name`` once, with that def."""
        if path not in self._defs:
            source = pathlib.Path(path).read_bytes()
            try:
                tree, module = ast.parse(source), cst.parse_module(source)
            except (SyntaxError, cst.ParserSyntaxError):
                self._defs[path] = {}
                return None
            bound = [t.id for node in tree.body if isinstance(node, (ast.Assign, ast.AnnAssign))
                     for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
                     if isinstance(t, ast.Name)]
            defs = [s for s in module.body if isinstance(s, cst.FunctionDef)]
            names = [d.name.value for d in defs] + bound
            self._defs[path] = {d.name.value: d for d in defs if names.count(d.name.value) == 1}
            self._used[path] = _used_not_called(tree)
        return self._defs[path].get(name)

    def used_elsewhere(self, path: str, name: str) -> bool:
        """Whether file ``path`` uses ``name`` other than by calling it or giving it to a ``jax.`` function
        (``js.vmap(f)``, ``partial(f, ...)``): annotating it could change what that use does."""
        return name in self._used.get(path, set())


def _used_not_called(tree: ast.Module) -> set[str]:
    fine: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            fine.add(id(node.func))
            root = node.func
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id == "jax":
                fine.update(id(a) for a in node.args)
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
            and id(n) not in fine}


def python_files(paths: Iterable[str]) -> Iterator[pathlib.Path]:
    """Each ``.py`` file given, or found under a folder given. A folder walk skips hidden folders, caches, virtual
    environments (a folder holding ``pyvenv.cfg``, or named ``site-packages``/``dist-packages``: installed code is
    not the project's) and whatever ``git`` ignores there; a file named on the command line is always taken."""
    for given in map(pathlib.Path, paths):
        if not given.is_dir():
            yield given
            continue
        found = sorted(_walk(given))
        ignored = _git_ignored(given, found)
        yield from (f for f in found if f not in ignored)


def _walk(top: pathlib.Path) -> Iterator[pathlib.Path]:
    for folder, dirs, files in os.walk(top):
        # pruned here, so a virtual environment's thousands of files are never listed
        dirs[:] = [d for d in dirs if not _skipped(pathlib.Path(folder, d))]
        yield from (pathlib.Path(folder, f) for f in files if f.endswith(".py"))


def _skipped(folder: pathlib.Path) -> bool:
    name = folder.name
    return (name.startswith(".") or name in ("__pycache__", "site-packages", "dist-packages")
            or (folder / "pyvenv.cfg").exists())


def _git_ignored(top: pathlib.Path, files: list[pathlib.Path]) -> set[pathlib.Path]:
    """Those of ``files`` that ``git`` ignores (a tracked file never is); none when ``top`` is not in a git work tree or git is missing."""
    if not files:
        return set()
    try:
        result = subprocess.run(["git", "-C", str(top), "check-ignore", "--stdin", "-z"],
                                input=b"\0".join(os.fsencode(f.resolve()) for f in files), capture_output=True,
                                timeout=60, check=False)
    except (OSError, subprocess.SubprocessError):
        return set()
    if result.returncode not in (0, 1):  # 128: not a work tree
        return set()
    ignored = {pathlib.Path(os.fsdecode(p)) for p in result.stdout.split(b"\0") if p}
    return {f for f in files if f.resolve() in ignored}


@dataclasses.dataclass(frozen=True)
class ClassInfo:
    """A class statement of a file given: where, and the last part of each base's name (``base.Base``: ``Base``)."""

    path: str
    line: int
    key: Key
    bases: tuple[str, ...]


def classes_of(path: str, source: str | bytes) -> list[ClassInfo]:
    """Every class statement of ``source`` (nested ones too), in the order of the file; none when it does not
    parse."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    nodes = sorted((n for n in ast.walk(tree) if isinstance(n, ast.ClassDef)), key=lambda n: (n.lineno, n.col_offset))
    seen: dict[str, int] = {}
    found = []
    for node in nodes:
        index = seen[node.name] = seen.get(node.name, -1) + 1
        found.append(ClassInfo(path, node.lineno, (node.name, index), tuple(_tail(b) for b in node.bases)))
    return found


def _tail(base: ast.expr) -> str:
    base = base.value if isinstance(base, ast.Subscript) else base
    return base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""


def leave_bases(classes: Iterable[ClassInfo], converted: set[tuple[str, Key]]) -> dict[tuple[str, Key], str]:
    """The converted classes (``(path, key)``) to leave after all: those some class not converted subclasses.

    A ``js.dataclass`` refuses an undecorated subclass (JAX would take it for a leaf), and a Flax or
    jax_dataclasses subclass is one; the other way round (a ``js.dataclass`` below a Flax class) works. Bases
    are matched by name alone, so a same-named class of another file counts too: that leaves more, never less.
    """
    by_name: dict[str, list[tuple[str, Key]]] = {}
    for path, key in converted:
        by_name.setdefault(key[0], []).append((path, key))
    leave: dict[tuple[str, Key], str] = {}
    for sub in classes:
        if (sub.path, sub.key) in converted:
            continue
        for base in sub.bases:
            for found in by_name.get(base, []):
                leave.setdefault(found, f"class {sub.key[0]} ({sub.path}:{sub.line}) subclasses it and is not "
                                        "converted; a js.dataclass needs each subclass decorated")
    return leave
