"""Donation on real training loops, written by others and shrunk to CPU size (``real/``, each file says where it
comes from and what was shrunk): the migration tool converts their donating sites (or reports them, with the
reason), the converted loops give bit-identical results with the same buffers deleted, a use after donation in a
converted loop fails with an error naming the donating call, and the mypy plugin (through ``jaxstatic-check``,
which checks unannotated bodies) reports the realistic bugs and nothing in the correct loops."""

from __future__ import annotations

import dataclasses
import pathlib
import re
import shutil
from types import ModuleType
from typing import Any

import jax
import numpy as np
import pytest

from jaxstatic.migrate._cli import migrate_source

from .._check import check
from .test_rules import load

# One pytest-xdist worker runs them all: jaxstatic-check runs once over every loop (``reports``) for all the tests here.
pytestmark = pytest.mark.xdist_group("real_loops")

pytest.importorskip("flax.nnx")
pytest.importorskip("optax")

REAL = pathlib.Path(__file__).parent / "real"


@dataclasses.dataclass(frozen=True)
class Loop:
    entry: str
    sites: list[str]
    bug: tuple[str, str]  # the correct loop's text and the buggy one's
    error: str  # what the converted buggy loop raises (a regular expression)
    report: str  # what the plugin reports on the buggy loop, original and converted (a regular expression)


LOOPS = {
    # The accumulation loop drops the value add_gradient returns: the next iteration passes the consumed gradients.
    "optax_gradient_accumulation": Loop(
        "main",
        ["73: JS001 converted: update_fn(): jax.jit now js.jit",
         "73: JS010 converted: update_fn(): opt_state, params now Donate",
         "82: JS001 converted: add_gradient(): jax.jit now js.jit",
         "82: JS010 converted: add_gradient(): accumulated_gradients now Donate",
         "88: JS001 converted: update_params(): jax.jit now js.jit",
         "88: JS010 converted: update_params(): accumulated_gradients, opt_state, params now Donate",
         "108: JS001 converted: update_fn_v2(): jax.jit now js.jit",
         "108: JS010 converted: update_fn_v2(): opt_state, params now Donate"],
        ("    accumulated_gradients = add_gradient(params, batch, accumulated_gradients)\n",
         "    add_gradient(params, batch, accumulated_gradients)\n"),
        r"add_gradient: parameter 'accumulated_gradients' got a deleted array at accumulated_gradients\[.*\): it was "
        r"donated to add_gradient at .*_bug\.py:\d+, which consumed its buffer\. Use the value add_gradient returned",
        r':\d+: error: "accumulated_gradients" was donated to "add_gradient" \(line \d+\) in the previous iteration '
        r"of this loop, and not rebound since",
    ),
    # Evaluating the state the train step consumed (jax-ml/jax#7144, poets-ai/elegy#226: a donated state passed on).
    "lm1b_train": Loop(
        "train_and_evaluate",
        ["207: JS003 converted: train_step(): config, label_smoothing, learning_rate_fn now Static; state now Donate",
         "219: JS003 converted: eval_step(): config, label_smoothing now Static"],
        ("    state, metrics = jit_train_step(\n", "    new_state, metrics = jit_train_step(\n"),
        r"eval_step: parameter 'params' got a deleted array at params\[.*\): it was donated to train_step as "
        r"parameter 'state' at .*_bug\.py:\d+, which consumed its buffer",
        r':\d+: error: "state" was donated to "jit_train_step" \(line \d+\) before: its buffers are deleted',
    ),
    # The same, in the benchmark's jax mode: the evaluation gets the state given to the train step.
    "nnx_simple_training": Loop(
        "main",
        ["71: JS000 left: nnx.jit(..., donate_argnums=...) is not a call of jax.jit or jax.pmap this tool recognises; "
         "convert it by hand",
         "82: JS000 left: nnx.jit(..., donate_argnums=...) is not a call of jax.jit or jax.pmap this tool recognises; "
         "convert it by hand",
         "106: JS001 converted: train_step_jax(): jax.jit now js.jit",
         "106: JS010 converted: train_step_jax(): state now Donate",
         "120: JS001 converted: test_step_jax(): jax.jit now js.jit",
         "120: JS010 converted: test_step_jax(): state now Donate"],
        ("      state = train_step_jax(state, batch)\n", "      next_state = train_step_jax(state, batch)\n"),
        r"test_step_jax: parameter 'state' got a deleted array at state\[.*\): it was donated to train_step_jax at "
        r".*_bug\.py:\d+, which consumed its buffer",
        r':\d+: error: "state" was donated to "train_step_jax" \(line \d+\) before: its buffers are deleted',
    ),
}
# The buggy loops rebind the state after the read: ``state = new_state`` where the loop body ends.
_REBIND = {"lm1b_train": ("      eval_metrics.append(jit_eval_step(state.params, eval_batch, eval_config))\n",
                          "      eval_metrics.append(jit_eval_step(state.params, eval_batch, eval_config))\n"
                          "    state = new_state\n"),
           "nnx_simple_training": ("        state, logs = test_step_jax(state, (X, Y))\n",
                                   "        _, logs = test_step_jax(state, (X, Y))\n      state = next_state\n")}


def _source(name: str) -> str:
    return (REAL / f"{name}.py").read_text()


def _buggy(name: str) -> str:
    text = _source(name)
    for old, new in (LOOPS[name].bug, *([_REBIND[name]] if name in _REBIND else [])):
        assert text.count(old) == 1, (name, old)
        text = text.replace(old, new)
    return text


def _converted(source: str, name: str) -> str:
    module, _ = migrate_source(source, f"{name}.py")
    return module.code


def _module(tmp_path: pathlib.Path, name: str, text: str) -> ModuleType:
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    return load(path, name)


def _leaves(tree: Any) -> list[np.ndarray]:
    return [np.asarray(leaf) for leaf in jax.tree.leaves(tree)]


@pytest.mark.parametrize("name", LOOPS)
def test_every_donating_site_is_converted_or_reported(name: str) -> None:
    _, sites = migrate_source(_source(name), f"{name}.py")
    assert [str(s) for s in sites] == [f"{name}.py:{s}" for s in LOOPS[name].sites]


@pytest.mark.parametrize("name", LOOPS)
def test_the_converted_loop_gives_identical_results_and_deletes_the_same_buffers(
        name: str, tmp_path: pathlib.Path) -> None:
    entry = LOOPS[name].entry
    before = getattr(_module(tmp_path, f"{name}_jax", _source(name)), entry)()
    after = getattr(_module(tmp_path, f"{name}_js", _converted(_source(name), name)), entry)()
    # (each module defines its own classes: the structures are compared by their text)
    assert str(jax.tree.structure(before)) == str(jax.tree.structure(after))
    for old, new in zip(_leaves(before), _leaves(after), strict=True):
        assert old.dtype == new.dtype and old.shape == new.shape
        assert np.array_equal(old, new, equal_nan=True)  # bit for bit, not close


@pytest.mark.parametrize("name", LOOPS)
def test_a_use_after_donation_in_the_converted_loop_names_the_donating_call(
        name: str, tmp_path: pathlib.Path) -> None:
    import jaxstatic as js

    original = _module(tmp_path, f"{name}_jax_bug", _buggy(name))
    with pytest.raises(Exception) as jax_error:
        getattr(original, LOOPS[name].entry)()
    buggy = _module(tmp_path, f"{name}_bug", _converted(_buggy(name), name))
    with pytest.raises(js.DeletedArrayError, match=LOOPS[name].error) as info:
        getattr(buggy, LOOPS[name].entry)()
    assert isinstance(info.value, type(jax_error.value))  # an except clause written for JAX's error still catches it


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """``jaxstatic-check`` once over every loop, correct and buggy, original and converted: its lines by file."""
    folder = tmp_path_factory.mktemp("real-loops")
    files = {}
    for name in LOOPS:
        for variant, text in (("jax", _source(name)), ("js", _converted(_source(name), name)),
                              ("jax_bug", _buggy(name)), ("js_bug", _converted(_buggy(name), name))):
            files[f"{name}_{variant}"] = text
            (folder / f"{name}_{variant}.py").write_text(text)
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(folder)
        patch.setenv("XDG_CACHE_HOME", str(folder / ".cache"))
        import contextlib
        import io

        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            check(sorted(f"{f}.py" for f in files))
    shutil.rmtree(folder / ".cache", ignore_errors=True)
    lines = out.getvalue().splitlines()
    return {f: [line.removeprefix(f"{f}.py") for line in lines if line.startswith(f"{f}.py:")] for f in files}


@pytest.mark.parametrize("name", LOOPS)
def test_the_plugin_is_silent_on_the_correct_loops(name: str, reports: dict[str, list[str]]) -> None:
    assert reports[f"{name}_jax"] == []
    assert reports[f"{name}_js"] == []


@pytest.mark.parametrize("name", LOOPS)
def test_the_plugin_reports_the_use_after_donation(name: str, reports: dict[str, list[str]]) -> None:
    for variant in ("jax_bug", "js_bug"):
        found = reports[f"{name}_{variant}"]
        assert len(found) == 1 and re.match(LOOPS[name].report, found[0]), (variant, found)
        assert found[0].endswith("[jaxstatic-donated]")
