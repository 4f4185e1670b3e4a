"""Fenced code blocks of the documentation pages and the README, and what the test suite does with each.

The README is read like a page (GitHub shows it as the project's front page), with the same conventions; it lies
outside ``docs/``, so the site never sees it.

A block is run according to its language and the HTML comment just above it (invisible on the site):

- ``python``: executed, in order, in one namespace per page (like a notebook); ``<!-- mypy -->`` type-checks it with
  the jaxstatic plugin instead; ``<!-- requires: flax -->`` runs it only where ``flax`` can be imported;
- a block titled ``Output`` (```` ```text title="Output" ````) right after one of these is what it must print
  (an exception that escapes is shown as Python shows it, after ``Traceback (most recent call last):`` and ``...``);
  a block with no ``Output`` block must print nothing and raise nothing;
- ``toml``: parsed;
- anything else, or a block marked ``<!-- not run: why -->``, is not run, and must say why.

Fences inside content tabs are indented; the indentation is removed before running them.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pytest

ROOT = Path(__file__).resolve().parents[2]

_OPEN = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>[^`]*)$")
_DIRECTIVE = re.compile(r"^\s*<!--\s*(?P<text>.*?)\s*-->\s*$")


@dataclasses.dataclass
class Block:
    page: str  # relative to the repository root
    line: int  # of the opening fence, 1-based
    lang: str
    info: str
    code: str
    directive: str | None
    expected: str | None = None  # the Output block that follows, if any

    @property
    def is_output(self) -> bool:
        return 'title="Output"' in self.info

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"

    @property
    def kind(self) -> str:
        """``run``, ``mypy``, ``toml``, ``requires:<module>``, or ``skip``."""
        d = self.directive or ""
        if d.startswith("not run:"):
            return "skip"
        if self.lang == "python":
            if d == "mypy":
                return "mypy"
            if d.startswith("requires:"):
                return "requires:" + d.split(":", 1)[1].strip()
            return "run"
        if self.lang == "toml":
            return "toml"
        return "skip"


def pages() -> list[Path]:
    """Every page of the site, then the README."""
    return [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]


def parse(path: Path) -> list[Block]:
    """The blocks of one page, each ``Output`` block attached to the block before it."""
    lines = path.read_text().splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        found = _OPEN.match(lines[i])
        if not found:
            i += 1
            continue
        indent, fence = len(found["indent"]), found["fence"]
        end = i + 1
        while end < len(lines) and lines[end].strip() != fence:
            end += 1
        body = [line[indent:] for line in lines[i + 1:end]]
        info = found["info"].strip()
        blocks.append(Block(str(path.relative_to(ROOT)), i + 1, info.split(" ")[0] if info else "", info,
                            "\n".join(body) + "\n", _directive_above(lines, i)))
        i = end + 1
    return _attach_outputs(blocks)


def _directive_above(lines: list[str], i: int) -> str | None:
    j = i - 1
    while j >= 0 and not lines[j].strip():
        j -= 1
    found = _DIRECTIVE.match(lines[j]) if j >= 0 else None
    return found["text"] if found else None


def _attach_outputs(blocks: list[Block]) -> list[Block]:
    kept: list[Block] = []
    for block in blocks:
        if block.is_output and kept and kept[-1].expected is None and kept[-1].lang == "python":
            kept[-1].expected = block.code
        else:
            kept.append(block)
    return kept


def normalize(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.strip("\n").splitlines())


def mypy_cache(request: pytest.FixtureRequest, name: str, fallback: Path) -> Path:
    """Where mypy keeps its cache for ``name``'s runs: pytest's cache folder, so that a second run is quick, or
    ``fallback`` when pytest runs without it (``-p no:cacheprovider``, which removes ``config.cache``)."""
    cache = getattr(request.config, "cache", None)
    return cache.mkdir(name) if cache is not None else fallback
