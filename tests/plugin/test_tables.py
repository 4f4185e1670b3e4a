"""The YAML cases for the static-hashable rule are generated from the shared table: they must be up to date."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

_GENERATE = Path(__file__).resolve().parents[1] / "typecheck" / "generate.py"


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("typecheck_generate", _GENERATE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_static_rule_yaml_is_generated_from_the_table() -> None:
    generate = _load_generator()
    assert generate.OUTPUT.read_text() == generate.render(), (
        "tests/typecheck/test_static_rule.yml is out of date: run `.venv/bin/python tests/typecheck/generate.py`"
    )
    assert generate.CALL_OUTPUT.read_text() == generate.render_calls(), (
        "tests/typecheck/test_call_shapes.yml is out of date: run `.venv/bin/python tests/typecheck/generate.py`"
    )
