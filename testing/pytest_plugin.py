"""pytest fixtures for plugin authors, registered through the ``pytest11`` entry point."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from . import HookRecorder, make_kernel


@pytest.fixture
def hermes_kernel(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A fresh, booted kernel with its own HERMES_HOME under ``tmp_path``."""
    return make_kernel(tmp_path / "hermes-home")


@pytest.fixture
def hook_recorder(hermes_kernel) -> Iterator[HookRecorder]:  # type: ignore[no-untyped-def]
    """Records every hook the ``hermes_kernel`` fires."""
    recorder = HookRecorder(hermes_kernel)
    yield recorder
    recorder.close()


@pytest.fixture
def fake_llm():  # type: ignore[no-untyped-def]
    """A started :class:`hermes_agent.testing.fake_llm.FakeLLMServer` (closed afterwards)."""
    from .fake_llm import FakeLLMServer

    with FakeLLMServer() as server:
        yield server
