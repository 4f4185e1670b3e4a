# The types of the cache hits in C (_hits.c).
from collections.abc import Callable, Iterator
from typing import Any, NoReturn

class LaneCall:
    fallback: Callable[..., Any]
    def __init__(
        self,
        *,
        program: Callable[..., Any],
        fallback: Callable[..., Any],
        failed: Callable[[BaseException, tuple[Any, ...], dict[str, Any]], NoReturn],
        allowed: frozenset[type],
        kept: dict[int, Any],
        names: tuple[str, ...],
        kwonly: tuple[str, ...],
        positional_only: int,
        statics: tuple[int, ...],
        calls: Iterator[int],
        defaults: tuple[Any, ...],
        missing: object,
    ) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __get__(self, instance: object, owner: type | None = None) -> Any: ...

class KeyCall:
    fallback: Callable[..., Any]
    def __init__(
        self,
        *,
        fallback: Callable[..., Any],
        failed: Callable[[BaseException, tuple[Any, ...], dict[str, Any]], NoReturn],
        cache: dict[Any, Any],
        remembered: dict[int, Any],
        contents: dict[Any, Any],
        nested: dict[Any, Any],
        shallow: dict[type, bool],
        atomic: frozenset[type],
        calls: Iterator[int],
        touch: Callable[[Any], None],
        vid: int,
        nargs: int,
        statics: tuple[Any, ...],
        dynamics: tuple[int, ...],
        kwnames: tuple[str, ...],
        other: KeyCall | None,
    ) -> None: ...
    other: KeyCall | None
    nargs: int
    kwnames: tuple[str, ...] | None
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __get__(self, instance: object, owner: type | None = None) -> Any: ...

class Base:
    """The base of jaxstatic's functions: a call goes straight to the hit ``attach`` gave it, if any."""
    @property
    def _call_slot(self) -> LaneCall | KeyCall | None: ...

def attach(function: Base, hit: LaneCall | KeyCall | None, /) -> None: ...

class Counter(Iterator[int]):
    """Counts from 0, as ``itertools.count()``; a hit in C adds to it directly."""
    @property
    def value(self) -> int: ...
    def __next__(self) -> int: ...

class Recorder:
    """A donating program that notes, per call, where its donated arguments were donated (``_donate``)."""
    program: Callable[..., Any]
    steady: int
    def __init__(
        self,
        *,
        program: Callable[..., Any],
        watch: Callable[..., Any],
        append: Callable[[tuple[Any, str, str, Any, int]], None],
        function: str,
        pairs: tuple[tuple[int, str], ...],
        ours: tuple[str, ...],
        strict: int,
        weak: list[bool | None],
    ) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def __getattr__(self, name: str) -> Any: ...

def strict_donation(flag: bool, /) -> None: ...
