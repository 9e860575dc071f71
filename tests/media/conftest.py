"""Fixtures of the voice and image generation tests: the fake media API and a kernel with
the builtin plugins pointed at it."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hermes_agent.testing import make_kernel
from hermes_agent.testing.fake_media import FakeMediaAPI

needs_espeak = pytest.mark.skipif(
    not (shutil.which("espeak-ng") or shutil.which("espeak")),
    reason="espeak-ng is not installed (Debian: apt-get install espeak-ng; .ci/run installs it)")
needs_sox = pytest.mark.skipif(not shutil.which("sox"),
                               reason="sox is not installed (apt-get install sox)")


@pytest.fixture
def media() -> Iterator[FakeMediaAPI]:
    with FakeMediaAPI() as fake:
        yield fake


@pytest.fixture
def kernel_with(home: Path) -> Callable[..., Any]:
    def build(config: dict[str, Any] | None = None, env: dict[str, str] | None = None) -> Any:
        return make_kernel(home, config=config or {}, builtins=True,
                           env={"HERMES_HOME": str(home), **(env or {})})
    return build
