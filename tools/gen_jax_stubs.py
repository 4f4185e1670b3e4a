"""Regenerate the mechanical parts of ``typeshed_stubs/`` from the installed jax.

Derived, not written by hand:

* the re-export block of each re-typed module (``jax/__init__.pyi``,
  ``jax/custom_derivatives.pyi``): every public binding of the runtime module's
  source, rendered as an explicit re-export, minus the names the stub re-types;
* ``partial/jax-stubs/``, the PEP 561 rendering of ``jax/`` that pyright's
  ``stubPath`` and ``pip install`` use: the same stubs, a ``py.typed`` saying
  ``partial``, and copies of the ``.pyi`` files jax ships itself (pyright's
  partial-stub overlay would hide them otherwise). It is rendered on the user's
  machine from the jax installed there and never committed.

Usage::

    python tools/gen_jax_stubs.py                 # rewrite the generated parts, render partial/
    python tools/gen_jax_stubs.py --check         # exit 1 if the committed stubs are stale
    python tools/gen_jax_stubs.py --package-only  # render partial/ only

The tool lives outside ``typeshed_stubs/`` on purpose: pyright would treat a
``.py`` file there as a module of the stub package.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

STUBS = Path(__file__).resolve().parent.parent / "typeshed_stubs"
BEGIN = "# --- generated re-exports (tools/gen_jax_stubs.py); do not edit below ---"
END = "# --- end of generated re-exports ---"

# The .pyi files the installed jax ships itself (relative to the jax package).
JAX_OWN_STUBS = ("numpy/__init__.pyi", "nn/__init__.pyi", "_src/basearray.pyi")
PACKAGE = STUBS / "partial" / "jax-stubs"
COPY_HEADER = (
    "# Copied verbatim from the installed jax {version} by tools/gen_jax_stubs.py.\n"
    "# Only here so that the partial stub package does not hide jax's own stub.\n"
)
RENDER_HEADER = (
    "# Rendered from typeshed_stubs/{rel} by tools/gen_jax_stubs.py: edit that file instead.\n"
)


@dataclass(frozen=True)
class Target:
    """A runtime module whose stub re-types some names and re-exports the rest."""

    module: str
    stub: str  # path relative to typeshed_stubs/
    retyped: frozenset[str]


TARGETS = (
    Target(
        "jax",
        "jax/__init__.pyi",
        frozenset(
            {
                "jit",
                "pmap",
                "checkpoint",
                "remat",
                "grad",
                "value_and_grad",
                "custom_jvp",
                "custom_vjp",
            }
        ),
    ),
    Target(
        "jax.custom_derivatives",
        "jax/custom_derivatives.pyi",
        frozenset({"custom_jvp", "custom_vjp"}),
    ),
)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """Top-level statements as a type checker reads them (TYPE_CHECKING taken, try bodies kept)."""
    out: list[ast.stmt] = []
    for node in body:
        if isinstance(node, ast.If):
            out += _statements(node.body if _is_type_checking(node.test) else node.orelse)
        elif isinstance(node, ast.Try):
            out += _statements(node.body)
        else:
            out.append(node)
    return out


def _public(name: str) -> bool:
    return not name.startswith("_") or (name.startswith("__") and name.endswith("__"))


def _source(module: str) -> str:
    """The text a type checker reads for `module`: its .pyi if it ships one, else its source."""
    spec = importlib.util.find_spec(module)
    origin = Path(spec.origin) if spec and spec.origin else None
    if origin is None or origin.suffix not in (".py", ".pyi"):
        return ""
    stub = origin.with_suffix(".pyi")
    return (stub if stub.exists() else origin).read_text()


def _absolute(module: str, node: ast.ImportFrom) -> str:
    if not node.level:
        return node.module or ""
    package = module if _is_package(module) else module.rpartition(".")[0]
    base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
    return f"{base}.{node.module}" if node.module else base


def resolve(module: str, name: str, depth: int = 0) -> str:
    """An import line that binds `name` without relying on an implicit re-export.

    mypy with ``implicit_reexport = False`` (``--strict``) rejects ``from M import x`` unless M
    defines x or re-exports it as ``x as x``; jax's own modules are not always written that way,
    which goes unnoticed there only because mypy silences errors in installed packages.
    """
    tree = ast.parse(_source(module)) if depth < 8 else ast.Module(body=[], type_ignores=[])
    for node in _statements(tree.body):
        if (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.name == name
        ):
            break
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            break
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and node.target.id == name
        ):
            break
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if (alias.asname or alias.name) != name:
                    continue
                if alias.asname == alias.name:
                    return f"from {module} import {name} as {{bound}}"
                source = _absolute(module, node)
                if _is_package(source) and _is_module(f"{source}.{alias.name}"):
                    return f"import {source}.{alias.name} as {{bound}}"
                return resolve(source, alias.name, depth + 1)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname == name:
                    return f"import {alias.name} as {{bound}}"
    return f"from {module} import {name} as {{bound}}"


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ImportError:
        return False


def _is_package(module: str) -> bool:
    try:
        spec = importlib.util.find_spec(module)
    except ImportError:
        return False
    return bool(spec and spec.submodule_search_locations)


def reexport_lines(target: Target) -> list[str]:
    """Stub lines for every public binding in the runtime module's source."""
    module = importlib.import_module(target.module)
    private: dict[str, tuple[str, str]] = {}  # private alias -> where it was imported from
    lines: list[str] = []
    seen: set[str] = set()

    def emit(name: str, line: str) -> None:
        if name in target.retyped or name in seen:
            return
        seen.add(name)
        lines.append(line)

    def submodule(name: str) -> None:
        # Importing a submodule makes it an attribute of its package at runtime; the stub has to
        # import it too, or `jax.core` (say) becomes an error only when the stubs are in use.
        if name.startswith(f"{target.module}.") and name not in seen:
            seen.add(name)
            lines.append(f"import {name}")

    for node in _statements(ast.parse(_source(target.module)).body):
        if isinstance(node, ast.Import):
            for alias in node.names:
                submodule(alias.name)
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                bound = alias.asname or alias.name
                if alias.asname is None and _is_module(f"{node.module}.{alias.name}"):
                    submodule(f"{node.module}.{alias.name}")
                elif _public(bound) and alias.asname == alias.name:
                    emit(bound, resolve(node.module, alias.name).format(bound=bound))
                elif not _public(bound):
                    private[bound] = (node.module, alias.name)
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            tgt = node.targets[0]
            if not (isinstance(tgt, ast.Name) and _public(tgt.id)):
                continue
            value = node.value
            if isinstance(value, ast.Name) and value.id in private:
                # `name = _alias`: import the aliased object under the public name
                emit(tgt.id, resolve(*private[value.id]).format(bound=tgt.id))
            elif (
                isinstance(value, ast.Attribute)
                and isinstance(value.value, ast.Name)
                and value.value.id in private
            ):
                # `name = _module.attr`: import attr from wherever _module really is
                line = resolve(*private[value.value.id])
                if not line.startswith("import "):
                    raise SystemExit(
                        f"{target.module}.{tgt.id}: cannot render {ast.unparse(node)!r}"
                    )
                emit(tgt.id, resolve(line.split()[1], value.attr).format(bound=tgt.id))
            elif isinstance(value, ast.Call):
                # e.g. `ad = SimpleNamespace(...)`: only the type of the object is known statically.
                cls = getattr(module, tgt.id).__class__
                emit(
                    tgt.id,
                    f"from {cls.__module__} import {cls.__qualname__} as _{cls.__qualname__}\n"
                    f"{tgt.id}: _{cls.__qualname__}",
                )
    return [line for chunk in lines for line in chunk.split("\n")]


def render(target: Target, current: str) -> str:
    head, sep, _ = current.partition(BEGIN)
    if not sep:
        raise SystemExit(f"{target.stub}: marker line {BEGIN!r} not found")
    body = "\n".join(sorted(set(reexport_lines(target)), key=_sort_key))
    return f"{head}{BEGIN}\n{body}\n{END}\n"


def _sort_key(line: str) -> tuple[int, str]:
    # imports first, then the assignments/annotations that use them
    return (0 if line.startswith(("from ", "import ")) else 1, line)


def jax_types_jit(jit: object) -> bool:
    """Whether jax's own ``jit`` keeps the wrapped function's parameters (a ParamSpec in its signature).

    jax 0.4.38 to 0.10.2 type ``fun`` as a bare ``Callable``; a release that types it with a ParamSpec needs no
    stub for it, and the stubs step aside rather than override it.
    """
    import inspect
    import re

    fn = inspect.unwrap(jit)  # type: ignore[arg-type]
    module = sys.modules.get(getattr(fn, "__module__", ""), None)
    specs = {name for name, value in vars(module).items() if type(value).__name__ == "ParamSpec"} if module else set()
    specs |= {p.__name__ for p in getattr(fn, "__type_params__", ()) if type(p).__name__ == "ParamSpec"}
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return False
    texts = [str(p.annotation) for p in signature.parameters.values()] + [str(signature.return_annotation)]
    return any(re.search(rf"\b{re.escape(name)}\b", text) for name in specs for text in texts)


def package_files(plain: dict[Path, str]) -> dict[Path, str]:
    """The ``jax-stubs`` rendering: the plain stubs, the partial marker, jax's own stubs."""
    import jax

    files = {PACKAGE / "py.typed": "partial\n"}
    for path, text in plain.items():
        rel = path.relative_to(STUBS)
        files[PACKAGE / rel.relative_to("jax")] = RENDER_HEADER.format(rel=rel.as_posix()) + text
    root = Path(jax.__file__).parent
    header = COPY_HEADER.format(version=jax.__version__)
    for own in JAX_OWN_STUBS:
        if (root / own).exists():  # jax 0.4.38 ships no nn/__init__.pyi
            files[PACKAGE / own] = header + (root / own).read_text()
    return files


def expected_files(package: bool = True) -> dict[Path, str]:
    plain: dict[Path, str] = {}
    for target in TARGETS:
        path = STUBS / target.stub
        plain[path] = render(target, path.read_text())
    return {**plain, **package_files(plain)} if package else plain


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument(
        "--check", action="store_true", help="report stale committed stubs instead of writing"
    )
    mode.add_argument(
        "--package-only", action="store_true",
        help="render partial/jax-stubs only (it is not committed: it holds copies of jax's own stubs)",
    )
    parser.add_argument(
        "--out", type=Path, default=PACKAGE.parent,
        help="with --package-only: the folder to render jax-stubs/ into (default: typeshed_stubs/partial)",
    )
    args = parser.parse_args(argv)
    if args.package_only:
        import jax

        if jax_types_jit(jax.jit):
            print(
                f"jax {jax.__version__} types jax.jit itself (with a ParamSpec): the stubs step aside rather than"
                " override it. Use jax's own types (uninstall jaxstatic-jax-stubs if an older rendering is there).",
                file=sys.stderr,
            )
            return 3
    files = expected_files(package=not args.check)
    if args.package_only:
        out = args.out.resolve() / PACKAGE.name
        files = {out / p.relative_to(PACKAGE): t for p, t in files.items() if p.is_relative_to(PACKAGE)}
        # a rendering from another jax version may hold files this one does not produce
        for old in out.rglob("*") if out.exists() else ():
            if old.is_file() and old not in files:
                old.unlink()
    stale = []
    for path, text in files.items():
        if path.exists() and path.read_text() == text:
            continue
        stale.append(path)
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    for path in stale:
        shown = path.relative_to(STUBS.parent) if path.is_relative_to(STUBS.parent) else path
        print(f"{'stale' if args.check else 'wrote'}: {shown}")
    return 1 if (args.check and stale) else 0


if __name__ == "__main__":
    sys.exit(main())
