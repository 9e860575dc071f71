"""A fake Mem0 Platform server for tests: real HTTP on 127.0.0.1, memories kept in memory,
``Authorization: Token`` checked, and faults on demand (HTTP errors, 429 with Retry-After,
hangs).

    from hermes_agent.testing.fake_mem0 import FakeMem0Server

    def test_recall():
        with FakeMem0Server(api_key="m0-test") as mem0:
            mem0.seed("User drinks green tea", user_id="alice")
            mem0.fail(503, times=2)          # the next two requests get HTTP 503
            ...  # point MEM0_HOST at mem0.url and MEM0_API_KEY at "m0-test"
            assert mem0.requests[-1].body["filters"] == {"AND": [{"user_id": "alice"}]}
"""

from .server import FakeMem0Server, Fault, RecordedRequest

__all__ = ["FakeMem0Server", "Fault", "RecordedRequest"]
