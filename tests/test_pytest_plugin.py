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


def test_a_budget_failure_names_the_field_that_changed(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(STEP + """
from typing import NamedTuple

class Config(NamedTuple):
    depth: int
    width: int

@js.jit
def deep(x, cfg: Static[Config]):
    return x * cfg.depth

@pytest.mark.max_traces(1)
def test_over():
    deep(jnp.ones(3), Config(2, 4))
    deep(jnp.ones(3), Config(3, 4))
""")
    result = pytester.runpytest()
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["  2. jit(deep): trace #2, because cfg.depth: 2 -> 3"])


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
                                 "  1. jit(step): trace #1 (the first)",
                                 "jit(step) traced for the first time inside @pytest.mark.max_traces(0, jit(step)): if "
                                 "another test usually calls it first (a test now deselected by -k or --lf, or run on "
                                 "another pytest-xdist worker), call it once before the budgeted code, or count its "
                                 "first trace in the budget."])


def test_a_misused_marker_says_how_to_use_it_in_one_line(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(STEP + """
import jax

@pytest.mark.max_traces("two")
def test_text():
    pass

@pytest.mark.max_traces(1, len)
def test_not_jaxstatic():
    pass

@pytest.mark.max_traces()
def test_no_number():
    pass

@pytest.mark.max_traces(n=1)
def test_keyword():
    pass

@pytest.mark.max_traces(1, jax.jit(step))
def test_foreign_wrapper():
    pass
""")
    result = pytester.runpytest()
    result.assert_outcomes(failed=5)
    result.stdout.fnmatch_lines([
        "*_ test_text _*", "@pytest.mark.max_traces: the number of traces must be an int >= 0, got 'two'.",
        "*_ test_not_jaxstatic _*",
        "@pytest.mark.max_traces: max_traces() watches functions made by jaxstatic transforms*but got <built-in "
        "function len>*",
        "*_ test_no_number _*",
        "@pytest.mark.max_traces takes the number of traces allowed, then the functions to watch if not all: "
        "max_traces(2) or max_traces(2, step); got max_traces().",
        "*_ test_keyword _*", "*got max_traces(n=1).",
        "*_ test_foreign_wrapper _*",
        "@pytest.mark.max_traces: max_traces() watches functions made by jaxstatic transforms, but got <PjitFunction "
        "of <jaxstatic.jit of step>>, a wrapper around <jaxstatic.jit of step>*",
    ])
    assert "_plugin.py" not in result.stdout.str() and "def pytest_runtest_call" not in result.stdout.str()


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


SHARED = STEP.replace("import pytest\n", "")


def _retrace_twice(start: int) -> str:
    return f"""
import jax.numpy as jnp
from shared import step

def test_retraces_twice():
    for n in ({start}, {start + 1}, {start + 2}):
        step(jnp.ones(3), n)
"""


def test_under_xdist_the_limit_checks_the_totals_the_report_prints(pytester: pytest.Pytester) -> None:
    """Each worker retraces the shared step twice: 4 retraces in all, over a limit of 3, though neither worker is."""
    pytester.makepyfile(shared=SHARED, test_a=_retrace_twice(1), test_b=_retrace_twice(10))
    path = pytester.path / "traces.json"
    args = ("-p", "xdist", "-n", "2", "--dist", "loadfile", f"--jaxstatic-report=json:{path}", "--jaxstatic-report")
    result = pytester.runpytest(*args, "--jaxstatic-max-retraces=3")
    result.assert_outcomes(passed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "function   defined at  traces  hits  retraces  most common retrace reason",
        "jit(step)  shared:5    6       0     4         n changed (4 of 4 retraces), e.g. n: *",
        "*= jaxstatic: functions retraced more than 3 times =*",
        "jit(step) (shared:5) retraced 4 times (allowed: 3); most often: n changed (4 of 4 retraces), e.g. n: *",
    ])
    data = json.loads(path.read_text())
    assert sorted((t["test"], t["traces"]) for t in data["tests"]) == [("test_a.py::test_retraces_twice", 3),
                                                                       ("test_b.py::test_retraces_twice", 3)]
    assert data["over_max_retraces"] == [{"function": "jit(step)", "defined_at": "shared:5", "retraces": 4}]


def test_two_functions_of_one_name_are_two_rows_each_checked_on_its_own(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_a=STEP + REPORTED.removeprefix(STEP), test_b=STEP + """
def test_b():
    for n in range(3):
        step(jnp.ones(3), n)
""")
    result = pytester.runpytest("--jaxstatic-report", "--jaxstatic-max-retraces=2")
    result.assert_outcomes(passed=4)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines([
        "function    defined at  traces  hits  retraces  most common retrace reason",
        "jit(step)   test_a:6    6       0     5         *",
        "jit(step)   test_b:6    3       0     2         n changed (2 of 2 retraces), e.g. n: 1 -> 2",
        "*= jaxstatic: functions retraced more than 2 times =*",
        "jit(step) (test_a:6) retraced 5 times (allowed: 2)*",
    ])
    assert "(test_b:6) retraced" not in result.stdout.str()


@pytest.mark.parametrize("autoload", ["disabled", "enabled"])
def test_the_plugin_loads_by_its_package_name(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
                                              autoload: str) -> None:
    if autoload == "disabled":
        monkeypatch.setenv("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "1")
    pytester.makepyfile(STEP + """
@pytest.mark.max_traces(0)
def test_over():
    step(jnp.ones(3), 1)
""")
    result = pytester.runpytest("-p", "jaxstatic_pytest", "--strict-markers")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["@pytest.mark.max_traces(0) expected at most 0 traces, but 1 trace happened:"])
    assert "Unknown pytest.mark" not in result.stdout.str()
    # -p no:jaxstatic wins, whatever else loads the package
    pytester.runpytest("-p", "no:jaxstatic", "-p", "jaxstatic_pytest").assert_outcomes(passed=1)


def test_expect_traces_decorates_a_parametrized_test(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(STEP + """
@pytest.mark.parametrize("n", [1, 2, 3])
@js.testing.expect_traces(step, 1)
def test_each_value_compiles_once(n):
    step(jnp.ones(3), n)
    step(jnp.ones(3), n)
""")
    pytester.runpytest().assert_outcomes(passed=3)


def test_the_json_report_makes_its_folders_and_says_when_it_cannot_be_written(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(test_report=REPORTED)
    result = pytester.runpytest("--jaxstatic-report=json:reports/sub/traces.json")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK
    path = pytester.path / "reports" / "sub" / "traces.json"
    result.stdout.fnmatch_lines([f"jaxstatic trace report written to {path}"])
    assert json.loads(path.read_text())["functions"][0]["traces"] == 6
    (pytester.path / "taken").write_text("a file, not a folder")
    result = pytester.runpytest("--jaxstatic-report=json:taken/traces.json")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines([f"jaxstatic: --jaxstatic-report=json:{pytester.path / 'taken' / 'traces.json'} "
                                 "could not be written: [[]Errno *"])
    assert "Traceback" not in result.stdout.str() and "written to" not in result.stdout.str()
