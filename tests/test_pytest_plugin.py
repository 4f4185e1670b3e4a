"""The pytest plugin: the max_traces marker, --jaxstatic-report and --jaxstatic-max-retraces, run with pytester."""

from __future__ import annotations

import json

import jax.numpy as jnp
import pytest

import jaxstatic as js


@pytest.fixture(scope="module", autouse=True)
def jax_imported_here() -> None:
    """pytester runs pytest in this process and afterwards forgets the modules imported meanwhile: JAX must be
    imported, and have compiled once, before, since its extension modules cannot be imported twice."""
    js.jit(lambda x: x + 1)(jnp.ones(2))

STEP = """
import jax.numpy as jnp
import pytest
import jaxstatic as js
from jaxstatic import Static

@js.jit
def step(x, n: Static[int]):
    return x * n

@js.jit
def other(x):
    return x + 1
"""


def test_a_test_over_its_budget_fails_with_each_trace_explained(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(STEP + """
@pytest.mark.max_traces(1)
def test_over():
    step(jnp.ones(3), 1)
    step(jnp.ones(3), 2)

@pytest.mark.max_traces(2)
def test_within():
    step(jnp.ones(4), 1)
    step(jnp.ones(4), 2)
""")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines([
        "*@pytest.mark.max_traces(1) expected at most 1 trace, but 2 traces happened:",
        "  1. jit(step): trace #1 (the first)",
        "  2. jit(step): trace #2, because n: 1 -> 2",
        "FAILED *::test_over*",
    ])
    assert "During handling" not in result.stdout.str()


def test_the_marker_can_name_the_functions_it_counts(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(STEP + """
@pytest.mark.max_traces(0, step)
def test_other_may_trace():
    step(jnp.ones(3), 1)
    other(jnp.ones(3))

@pytest.mark.max_traces(0, other)
def test_only_other_is_counted():
    step(jnp.ones(3), 5)
""")
    result = pytester.runpytest()
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*@pytest.mark.max_traces(0, jit(step)) expected at most 0 traces, but 1 trace happened:",
                                 "  1. jit(step): trace #1 (the first)"])


def test_a_misused_marker_says_how_to_use_it(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(STEP + """
@pytest.mark.max_traces("two")
def test_text():
    pass

@pytest.mark.max_traces(1, len)
def test_not_jaxstatic():
    pass
""")
    result = pytester.runpytest()
    result.assert_outcomes(failed=2)
    result.stdout.fnmatch_lines([
        "*@pytest.mark.max_traces: the number of traces must be an int >= 0, got 'two'.",
        "*max_traces() watches functions made by jaxstatic transforms*but got <built-in function len>*",
    ])


def test_the_marker_is_registered_and_nothing_is_printed_unless_asked(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(STEP + """
@pytest.mark.max_traces(5)
def test_step():
    step(jnp.ones(3), 1)
""")
    result = pytester.runpytest("--strict-markers")
    result.assert_outcomes(passed=1)
    assert "jaxstatic" not in result.stdout.str().partition("collected")[2]
    markers = pytester.runpytest("--markers")
    markers.stdout.fnmatch_lines(["@pytest.mark.max_traces(n, *functions): fail the test if jaxstatic functions*"])


def test_loading_the_plugin_imports_neither_jaxstatic_nor_jax(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("""
import sys

def test_modules():
    assert "jaxstatic_pytest._plugin" in sys.modules
    assert "jax" not in sys.modules and "jaxstatic" not in sys.modules
""")
    pytester.runpytest_subprocess().assert_outcomes(passed=1)


REPORTED = STEP + """
def test_static_values(request):
    for n in range(4):
        step(jnp.ones(3), n)

def test_shapes():
    for size in (1, 2):
        step(jnp.ones(size), 0)
    other(jnp.ones(2))

def test_cached():
    other(jnp.ones(2))
"""


def test_the_report_lists_functions_and_tests(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_report=REPORTED)
    result = pytester.runpytest("--jaxstatic-report")
    result.assert_outcomes(passed=3)
    result.stdout.fnmatch_lines([
        "*= jaxstatic trace report =*",
        "function    defined at      traces  hits  retraces  most common retrace reason",
        "jit(step)   test_report:6   6       0     5         n changed (3 of 5 retraces), e.g. n: 2 -> 3",
        "jit(other)  test_report:10  1       1     0         -",
        "",
        "traces per test:",
        "4  test_report.py::test_static_values",
        "3  test_report.py::test_shapes",
    ])
    assert "test_cached" not in result.stdout.str().partition("traces per test:")[2]


def test_the_report_of_a_run_without_traces(pytester: pytest.Pytester) -> None:
    pytester.makepyfile("def test_nothing():\n    pass\n")
    result = pytester.runpytest("--jaxstatic-report")
    result.assert_outcomes(passed=1)
    result.stdout.fnmatch_lines(["*= jaxstatic trace report =*",
                                 "no jaxstatic jit, pmap or shard_map function traced during the run"])


def test_the_report_as_json(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_report=REPORTED)
    path = pytester.path / "traces.json"
    result = pytester.runpytest(f"--jaxstatic-report=json:{path}", "--jaxstatic-report")
    result.stdout.fnmatch_lines(["*= jaxstatic trace report =*", f"jaxstatic trace report written to {path}"])
    data = json.loads(path.read_text())
    assert data["functions"][0] == {
        "function": "jit(step)", "defined_at": "test_report:6", "traces": 6, "hits": 0, "retraces": 5,
        "most_common_retrace_reason": "n changed (3 of 5 retraces), e.g. n: 2 -> 3",
        "retrace_reasons": {"n changed": 3, "x changed": 2},
    }
    assert data["tests"] == [{"test": "test_report.py::test_static_values", "traces": 4},
                             {"test": "test_report.py::test_shapes", "traces": 3}]


def test_a_bad_report_value_is_a_usage_error(pytester: pytest.Pytester) -> None:
    result = pytester.runpytest("--jaxstatic-report=html")
    result.stderr.fnmatch_lines(["*--jaxstatic-report takes no value, or json:PATH; got 'html'."])
    assert result.ret == pytest.ExitCode.USAGE_ERROR


def test_max_retraces_fails_the_session_naming_the_function(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_report=REPORTED)
    result = pytester.runpytest("--jaxstatic-max-retraces=4")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "*= jaxstatic: functions retraced more than 4 times =*",
        "jit(step) (test_report:6) retraced 5 times (allowed: 4); most often: n changed (3 of 5 retraces), e.g. n: 2 -> 3",
    ])
    assert pytester.runpytest("--jaxstatic-max-retraces=5").ret == pytest.ExitCode.OK


def test_the_report_adds_up_the_workers_of_pytest_xdist(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_report=REPORTED)
    path = pytester.path / "traces.json"
    result = pytester.runpytest("-p", "xdist", "-n", "2", f"--jaxstatic-report=json:{path}",
                                "--jaxstatic-max-retraces=2")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    data = json.loads(path.read_text())
    # However the tests are spread: a step of its own per worker, other traced once per worker that calls it.
    assert {"test": "test_report.py::test_static_values", "traces": 4} in data["tests"]
    assert sum(t["traces"] for t in data["tests"]) in (7, 8)
    [step] = [f for f in data["functions"] if f["function"] == "jit(step)"]
    assert step["traces"] == 6 and step["retraces"] in (4, 5)
    assert [f["function"] for f in data["over_max_retraces"]] == ["jit(step)"]
