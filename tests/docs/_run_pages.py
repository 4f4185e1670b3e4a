"""Run the ``python`` blocks of documentation pages, as a user would paste them, and print what each printed.

Run: python tests/docs/_run_pages.py PAGE.md [PAGE.md ...] [--json OUT]

Each page runs in a fresh module named ``example`` (so dataclasses and ``get_type_hints`` resolve names in it), each
block compiled as ``example.py`` with lines counted from the block's first line, so the file names and lines in
messages are the ones a reader would see. Without ``--json`` it prints every block's output, to paste into the page.
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
import io
import json
import linecache
import sys
import traceback
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _blocks import ROOT, Block, parse


def _exception_text(err: BaseException) -> str:
    cls = type(err)
    name = cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    last = "".join(traceback.format_exception_only(err)).splitlines()
    first = f"{name}: {err}" if str(err) else name
    notes = last[len(str(err).splitlines()) or 1:]  # format_exception_only appends the __notes__
    return "\n".join(["Traceback (most recent call last):", "  ...", first, *notes])


def run_block(block: Block, namespace: dict[str, object]) -> str:
    source = block.code
    linecache.cache["example.py"] = (len(source), None, source.splitlines(True), "example.py")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(source, "example.py", "exec"), namespace)
        except Exception as err:
            print(_exception_text(err))
    return out.getvalue()


def _runnable(block: Block) -> bool:
    if block.kind == "run":
        return True
    if block.kind.startswith("requires:"):
        return importlib.util.find_spec(block.kind.split(":", 1)[1]) is not None
    return False


def run_page(path: Path) -> dict[int, str]:
    """The output of each runnable block of one page, by line."""
    module = types.ModuleType("example")
    sys.modules["example"] = module
    outputs = {b.line: run_block(b, module.__dict__) for b in parse(path) if _runnable(b)}
    del sys.modules["example"]
    module.__dict__.clear()
    gc.collect()  # the page's functions leave js.trace_report() before the next page runs
    return outputs


def main(argv: list[str]) -> None:
    out_file = None
    if "--json" in argv:
        at = argv.index("--json")
        out_file = argv[at + 1]
        argv = argv[:at] + argv[at + 2:]
    results = {}
    for page in argv:
        path = Path(page).resolve()
        results[str(path.relative_to(ROOT))] = run_page(path)
    if out_file is not None:
        Path(out_file).write_text(json.dumps(results))
        return
    for page, outputs in results.items():
        for line, text in outputs.items():
            print(f"--- {page}:{line}\n{text}", end="" if text.endswith("\n") or not text else "\n")


if __name__ == "__main__":
    main(sys.argv[1:])
