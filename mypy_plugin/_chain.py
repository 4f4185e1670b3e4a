"""Cooperation with the other plugins, and reporting from inside mypy's overload matching.

mypy asks user plugins before its default plugin and the first hook returned wins. The call-site check needs a
hook for *every* call, so it would hide everybody else's hooks (mypy's own ``functools.partial`` support among
them): each of our catch-all hooks therefore looks up the hook the chain would have chosen without us and runs it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

from mypy.checker import TypeChecker
from mypy.errorcodes import ErrorCode
from mypy.nodes import Context
from mypy.plugin import CheckerPluginInterface, Plugin

from ._compat import is_overload_matcher

_H = TypeVar("_H")


def next_hook(api: object, me: Plugin, lookup: Callable[[Plugin], _H | None]) -> _H | None:
    """The hook the plugins after ``me`` in mypy's chain return, or ``None``."""
    chain = getattr(api, "plugin", None)
    plugins = getattr(chain, "_plugins", None)
    if not isinstance(plugins, list):
        return None
    found_me = False
    for plugin in plugins:
        if found_me:
            hook = lookup(plugin)
            if hook is not None:
                return hook
        elif plugin is me:
            found_me = True
    return None


def overridden_after(api: object, me: Plugin, method: str) -> bool:
    """Whether a plugin after ``me`` in mypy's chain overrides the hook getter ``method`` at all (mypy's default
    plugin does not, for most): a hook called for every class need not look further when none does."""
    default = getattr(Plugin, method)
    return next_hook(api, me, lambda p: True if getattr(type(p), method) is not default else None) is not None


class NextHooks(Generic[_H]):
    """``next_hook`` remembered per fully qualified name (the chain does not change during a build)."""

    def __init__(self, me: Plugin, lookup: Callable[[Plugin, str], _H | None]) -> None:
        self._me = me
        self._lookup = lookup
        self._found: dict[str, _H | None] = {}

    def get(self, api: object, fullname: str) -> _H | None:
        try:
            return self._found[fullname]
        except KeyError:
            hook = self._found[fullname] = next_hook(
                api, self._me, lambda p: self._lookup(p, fullname)
            )
            return hook


def report(api: CheckerPluginInterface, msg: str, context: Context, code: ErrorCode) -> None:
    """Report an error, also from inside mypy's overload matching.

    mypy tries each item of an overloaded callee under an error filter and takes the first item that reports
    nothing, so a plain report there would reject the item, change the chosen overload and lose the message. Our
    findings do not depend on the item (only on the values and the function involved), so while that matcher is
    the innermost filter and the item has matched so far, the error goes past it to the filters outside (which
    keep and replay errors as they do mypy's own). An item that failed reports nothing.
    """
    if not isinstance(api, TypeChecker):
        api.fail(msg, context, code=code)
        return
    errors = api.msg.errors
    watchers = errors._watchers
    if watchers and is_overload_matcher(watchers[-1]):
        if watchers[-1].has_new_errors():
            return
        errors._watchers = watchers[:-1]
        try:
            api.fail(msg, context, code=code)
        finally:
            errors._watchers = watchers
        return
    api.fail(msg, context, code=code)

