"""Fixtures of the memory tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from hermes_agent.testing.fake_mem0 import FakeMem0Server

from .mem0_support import KEY


@pytest.fixture
def mem0() -> Iterator[FakeMem0Server]:
    """A fake Mem0 server that wants ``Token <KEY>``."""
    with FakeMem0Server(api_key=KEY) as server:
        yield server
        server.release()
