"""``ServiceKey``: the typed name of a service, so ``kernel.service(KEY)`` returns its contract.

A key pairs the name a plugin offers a service under (``ctx.register_service(KEY, factory)``)
with the Protocol (or class) the service satisfies. The shared keys and their Protocols are
in :mod:`hermes_agent.api.services`; a plain string name still works (third-party plugins).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class ServiceKey(Generic[T]):
    """A service's name and the type ``kernel.service(key)`` returns."""

    name: str
    type: type[T]

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise TypeError("a ServiceKey needs a non-empty name")

    def __str__(self) -> str:
        return self.name


def service_name(key: "ServiceKey[Any] | str") -> str:
    """The name a key or a plain string stands for."""
    return key.name if isinstance(key, ServiceKey) else key
