"""The hooks of jaxstatic's pytest plugin: retrace budgets for a test suite.

- ``@pytest.mark.max_traces(n)`` / ``max_traces(n, step, loss)``: the test fails if jaxstatic functions (or the
  named ones) trace more than ``n`` times during it, each trace listed with its explanation.
- ``--jaxstatic-report`` (or ``=json:PATH``): the functions traced during the session and the traces per test.
- ``--jaxstatic-max-retraces=N``: the session fails if a function retraced more than ``N`` times, as the report
  counts them (its objects and the pytest-xdist workers added up).

Loading the plugin imports neither jaxstatic nor JAX: a marked test imports them when it runs, and the options
when the session starts (after ``conftest.py`` files have configured JAX). Without a marker or an option it does
nothing and prints nothing.
"""

from __future__ import annotations

import os
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from jaxstatic._report import Recorder

MARKER = ("max_traces(n, *functions): fail the test if jaxstatic functions (or only the functions named) trace more "
          "than n times while it runs; the failure lists each trace with its explanation.")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("jaxstatic", "jaxstatic trace budgets")
    group.addoption("--jaxstatic-report", nargs="?", const="term", action="append", default=[], metavar="json:PATH",
                    help="at the end of the session, show the jaxstatic functions traced (traces, hits, retraces, "
                         "the most common retrace reason) and the traces per test; json:PATH writes them as JSON "
                         "(give the option twice for both).")
    group.addoption("--jaxstatic-max-retraces", type=int, default=None, metavar="N",
                    help="fail the session if any jaxstatic function retraced more than N times.")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER)
    reports: list[str] = config.getoption("jaxstatic_report")
    limit: int | None = config.getoption("jaxstatic_max_retraces")
    for report in reports:
        if report != "term" and not (report.startswith("json:") and report[5:]):
            raise pytest.UsageError(f"--jaxstatic-report takes no value, or json:PATH; got {report!r}.")
    if limit is not None and limit < 0:
        raise pytest.UsageError(f"--jaxstatic-max-retraces takes a number >= 0; got {limit}.")
    if reports or limit is not None:
        config.pluginmanager.register(_Session(reports, limit), "jaxstatic-session")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, Any, Any]:
    marker = item.get_closest_marker("max_traces")
    if marker is None:
        return (yield)
    # Imported only now: a suite without the marker never imports JAX through the plugin.
    from jaxstatic import _testing

    n, fns = _budget(marker)
    try:
        block: _testing.Block[_testing.TraceLog] = _testing.Block(fns, "max_traces", at_most=n)
    except TypeError as error:  # not a jaxstatic function: the error alone, not the plugin's source around it
        pytest.fail(f"@pytest.mark.max_traces: {error}", pytrace=False)
    block.where = f"@pytest.mark.max_traces({', '.join([str(n), *(_testing.name_of(fn) for fn in fns)])})"
    watch = block.start()
    try:
        result = yield
    finally:
        block.stop(watch)
    failure = block.failure(watch)
    if failure is not None:
        pytest.fail(str(failure), pytrace=False)
    return result


def _budget(marker: pytest.Mark) -> tuple[int, tuple[Any, ...]]:
    """The marker's number and functions; a misused marker fails its test with one line saying how to use it."""
    if marker.kwargs or not marker.args:
        pytest.fail("@pytest.mark.max_traces takes the number of traces allowed, then the functions to watch if not "
                    f"all: max_traces(2) or max_traces(2, step); got {_written(marker)}.", pytrace=False)
    n, *fns = marker.args
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        pytest.fail(f"@pytest.mark.max_traces: the number of traces must be an int >= 0, got {n!r}.", pytrace=False)
    return n, tuple(fns)


def _written(marker: pytest.Mark) -> str:
    """``max_traces(n=1)``: the marker as the test wrote it."""
    args = [*map(repr, marker.args), *(f"{k}={v!r}" for k, v in marker.kwargs.items())]
    return f"{marker.name}({', '.join(args)})"


class _Session:
    """The session-wide options: a recorder of every trace, and the report and checks made from it."""

    def __init__(self, reports: list[str], limit: int | None) -> None:
        self.term = "term" in reports
        # Absolute now, as the user meant them: a test that changes the working directory does not move them.
        self.paths = [os.path.abspath(report[5:]) for report in reports if report != "term"]
        self.unwritten: dict[str, str] = {}  # the reports that could not be written, and why
        self.limit = limit
        self.recorder: Recorder | None = None

    def pytest_sessionstart(self, session: pytest.Session) -> None:
        from jaxstatic._report import Recorder

        self.recorder = Recorder()
        self.recorder.start()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, Any, Any]:
        assert self.recorder is not None
        self.recorder.test = item.nodeid
        try:
            return (yield)
        finally:
            self.recorder.test = None
            self.recorder.refresh(recent=True)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.recorder is None:
            return
        self.recorder.stop()
        worker_output = getattr(session.config, "workeroutput", None)
        if worker_output is not None:  # a pytest-xdist worker: the controller reports for all of them
            worker_output["jaxstatic"] = self.recorder.export()
            return
        if self.limit is not None and self.recorder.over(self.limit) and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        for path in self.paths:
            try:
                self.recorder.write_json(path, self.limit)
            except OSError as error:
                self.unwritten[path] = str(error)
        if self.unwritten and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.USAGE_ERROR

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: object) -> None:
        """pytest-xdist: a worker finished; add what it recorded."""
        data = getattr(node, "workeroutput", {}).get("jaxstatic")
        if data is not None and self.recorder is not None:
            self.recorder.absorb(data)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.recorder is None:
            return
        if self.term:
            terminalreporter.write_sep("=", "jaxstatic trace report")
            terminalreporter.write_line(self.recorder.table())
        for path in self.paths:
            if path in self.unwritten:
                terminalreporter.write_line(f"jaxstatic: --jaxstatic-report=json:{path} could not be written: "
                                            f"{self.unwritten[path]}", red=True)
            else:
                terminalreporter.write_line(f"jaxstatic trace report written to {path}")
        if self.limit is not None and self.recorder.over(self.limit):
            terminalreporter.write_sep("=", f"jaxstatic: functions retraced more than {self.limit} times", red=True)
            terminalreporter.write_line(self.recorder.offenders(self.limit))
