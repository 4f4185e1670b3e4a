"""The tool on code it did not see written for it: the "before" examples of docs/migration.md, and the plain-JAX
training step the stub tests check (tests/stubs_sample/train_step.py). Converted, each prints or computes what
the original did, with no more traces."""

from __future__ import annotations

import contextlib
import io
import pathlib
import re
import shutil
import sys
import types

import jax
import numpy as np
import pytest

from jaxstatic.migrate._cli import migrate_source

from .test_rules import load

ROOT = pathlib.Path(__file__).resolve().parents[2]
PAGE = (ROOT / "docs" / "migration.md").read_text()
_FENCE = re.compile(r"^( *)```python\n(.*?)^\1```\n(?:\n\1```text title=\"Output\"\n(.*?)^\1```)?",
                    re.MULTILINE | re.DOTALL)


def _dedent(text: str, indent: str) -> str:
    return "".join(line.removeprefix(indent) for line in text.splitlines(keepends=True))


def _before_blocks() -> list[tuple[str, str]]:
    """(code, expected output) of each block under a "before" tab of the page."""
    found = []
    start = PAGE.index("share one set of imports")  # the examples after the one-command section's
    for tab in re.finditer(r'^=== "before"\n', PAGE[start:], re.MULTILINE):
        match = _FENCE.search(PAGE, start + tab.end())
        assert match is not None
        indent, code, output = match.group(1), match.group(2), match.group(3) or ""
        found.append((_dedent(code, indent), _dedent(output, indent)))
    return found


IMPORTS = _FENCE.search(PAGE, PAGE.index("share one set of imports"))
assert IMPORTS is not None
SHARED = IMPORTS.group(2) + "import equinox as eqx\nimport jax_dataclasses as jdc\n\n\n"
BEFORE = _before_blocks()


def _printed(source: str, name: str) -> str:
    out, module = io.StringIO(), types.ModuleType(name)
    sys.modules[name] = module  # dataclasses look their module up
    with contextlib.redirect_stdout(out):
        exec(compile(source, f"<{name}>", "exec"), module.__dict__)
    return out.getvalue()


@pytest.mark.parametrize("index", range(len(BEFORE)))
def test_docs_before_examples_convert_and_print_the_same(index: int) -> None:
    code, expected = BEFORE[index]
    source = SHARED + code
    module, sites = migrate_source(source, "migration.md")
    assert not any(not s.converted for s in sites), [str(s) for s in sites]
    if "eqx." not in code:  # Equinox has no rule: its example is left as it was
        assert sites and module.code != source
        assert "jax.jit" not in module.code and "jdc." not in module.code and "struct." not in module.code
    assert _printed(source, f"migrate_doc_{index}_before") == expected
    assert _printed(module.code, f"migrate_doc_{index}_after") == expected


def test_the_pages_own_before_and_after() -> None:
    top = PAGE[: PAGE.index("share one set of imports")]
    (before, _), (after, _) = [(_dedent(m.group(2), m.group(1)), None) for m in _FENCE.finditer(top)]
    module, sites = migrate_source(before, "src/model.py")
    assert module.code == after
    report = [str(s) for s in sites]
    for line in report:
        assert line in top, line
    module, sites = migrate_source(before, "src/model.py", strict=True)
    assert module.code == before
    assert str(sites[0]) in PAGE  # the line the --strict section shows


def test_docs_examples_found() -> None:
    assert len(BEFORE) == 6


def _same_leaves(a: object, b: object) -> None:
    """The same arrays (the two modules' ``Params`` are two classes of one shape)."""
    leaves_a, leaves_b = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    assert len(leaves_a) == len(leaves_b)
    for u, v in zip(leaves_a, leaves_b):
        np.testing.assert_array_equal(u, v)


def test_plain_jax_training_step(tmp_path: pathlib.Path) -> None:
    shutil.copy(ROOT / "tests" / "stubs_sample" / "train_step.py", tmp_path / "train_step.py")
    source = (tmp_path / "train_step.py").read_text()
    module, sites = migrate_source(source, "train_step.py")
    assert [(s.rule, s.converted) for s in sites] == [("JS001", True), ("JS010", True)]
    assert "@js.jit\ndef train_step(params: Donate[Params], x: jax.Array, y: jax.Array, lr: Static[float])" \
        in module.code
    (tmp_path / "train_step_js.py").write_text(module.code)
    before = load(tmp_path / "train_step.py", "migrate_train_step")
    after = load(tmp_path / "train_step_js.py", "migrate_train_step_js")

    key = jax.random.key(0)
    x, y = jax.numpy.ones((8, 4)), jax.numpy.ones((8, 1))
    for lr in (0.1, 0.1, 0.2):
        r0 = before.train_step(before.init_params(key, 4, 16, 1), x, y, lr=lr)
        r1 = after.train_step(after.init_params(key, 4, 16, 1), x, y, lr=lr)
        _same_leaves(r0, r1)
    assert after.train_step.trace_count == before.train_step._cache_size() == 2

    _same_leaves(before.fit(key, steps=20), after.fit(key, steps=20))
