"""Error codes, namespaced so that users can ``# type: ignore[jaxstatic-...]`` precisely."""

from __future__ import annotations

from typing import Final

from mypy.errorcodes import ErrorCode

UNHASHABLE: Final = ErrorCode(
    "jaxstatic-unhashable", "A value or type used as static cannot be hashed", "jaxstatic"
)
SIGNATURE: Final = ErrorCode(
    "jaxstatic-signature",
    "A decorator hides Static parameters from a jaxstatic transform",
    "jaxstatic",
)
ARGNAMES: Final = ErrorCode(
    "jaxstatic-argnames",
    "static_argnames or static_argnums name no parameter of the function",
    "jaxstatic",
)
DONATED: Final = ErrorCode(
    "jaxstatic-donated",
    "A value donated to a call (Donate[...], donate_argnums) is read again before it is rebound",
    "jaxstatic",
)
