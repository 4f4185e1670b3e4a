"""Dataclasses with postponed annotations, decorated before the names they use exist: a self-reference, an alias
and a class defined further down, and a subclass from another module's point of view."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import jax

import jaxstatic as js
from jaxstatic import Static


@js.dataclass
class Node:
    value: jax.Array
    children: tuple[Node, ...]
    combine: Static[Combine]
    spec: Static[Spec]

    def total(self) -> jax.Array:
        return self.spec.scale * self.combine(self.value, sum((c.total() for c in self.children), self.value * 0))


Combine = Callable[[jax.Array, jax.Array], jax.Array]


@dataclasses.dataclass(frozen=True)
class Spec:
    scale: float


@js.dataclass
class Labelled(Node):
    label: Static[str] = "node"
    extra: jax.Array | None = None
