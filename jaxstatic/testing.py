"""Trace budgets for tests, in any test framework: fail when a jaxstatic function traces where it should not.

``no_retrace`` refuses traces inside a block, ``expect_traces`` checks their number when the block ends, and
``trace_log`` records them for assertions of your own. Each gives a ``Block``: a context manager that can be
entered again, and a decorator whose every call is a block of its own. Each trace comes with jaxstatic's
explanation of why it happened. The pytest plugin shipped with jaxstatic builds on them
(``@pytest.mark.max_traces``).
"""

from ._stats import TraceEvent as TraceEvent
from ._testing import (
    Block as Block,
    TraceLog as TraceLog,
    expect_traces as expect_traces,
    no_retrace as no_retrace,
    trace_log as trace_log,
)

# Shown as jaxstatic.testing.TraceEvent in reprs and help(), where users find them.
TraceEvent.__module__ = TraceLog.__module__ = Block.__module__ = __name__

__all__ = ["Block", "TraceEvent", "TraceLog", "expect_traces", "no_retrace", "trace_log"]
