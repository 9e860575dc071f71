"""Provenance survives a resume, in the SQLite store and in PostgreSQL: the resumed session
knows its untrusted messages, keeps its fence nonce and is tainted from its first turn on."""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest

from hermes_agent.builtin_plugins.agent.loop import Agent, AgentOptions
from hermes_agent.testing.fake_llm import reply_text, reply_tool_call

from .taint_support import collector, site  # noqa: F401 (fixtures)

pytest.importorskip("trafilatura", reason="the local extractor needs trafilatura")


def run_and_resume(kernel: Any, server: Any, site: Any, collector: Any, workdir: Any,  # noqa: F811
                   store: Any = None) -> None:
    first = Agent(kernel, AgentOptions(cwd=workdir), store=store)
    server.script(reply_tool_call("web_extract", {"urls": [site.url + "/notes"]}),
                  reply_text("Read it."))
    first.run_conversation("read the notes")
    nonce, session = first.taint.nonce, first.session_id
    assert first.taint.source == "web:127.0.0.1"

    again = Agent(kernel, AgentOptions(cwd=workdir), session_id=session, store=store)
    assert again.taint.nonce == nonce and again.taint.source == "web:127.0.0.1"
    page = [m for m in again.history if m.get("role") == "tool"][0]
    assert page["provenance"] == {"trust": "untrusted", "source": "web:127.0.0.1"}
    events: list[dict[str, Any]] = []
    server.script(reply_tool_call("terminal", {"command": f"curl -s {collector.url}"}),
                  reply_text("ok"))
    again.run_conversation("go on", on_event=events.append)
    assert collector.received == []
    refusal = [m for m in again.history if m.get("role") == "tool"][-1]["content"]
    assert "untrusted text (from web:127.0.0.1)" in json.loads(refusal)["error"]
    assert any(e.get("reason") == "tainted" and "holds untrusted text" in e["message"]
               for e in events)
    sent = server.posts()[-1].body["messages"]
    assert sent[0]["content"] == first.system_prompt  # the frozen prompt names the same nonce
    assert all("provenance" not in m for m in sent)  # the mark stays out of the request


def web_kernel(kernel_for: Any) -> Any:
    return kernel_for(toolsets=["web", "terminal"],
                      web={"extract_backend": "local", "allow_private_networks": True})


def test_provenance_survives_resume_in_sqlite(kernel_for, server, site, collector,  # noqa: F811
                                              workdir) -> None:
    run_and_resume(web_kernel(kernel_for), server, site, collector, workdir)


def test_provenance_survives_resume_in_postgres(kernel_for, server, site, collector,  # noqa: F811
                                                workdir, pg_schemas) -> None:
    store_class = importlib.import_module(
        "hermes_agent.plugins.session-stores.postgres.store").PostgresSessionStore
    store = store_class(pg_schemas("main"))
    try:
        run_and_resume(web_kernel(kernel_for), server, site, collector, workdir, store)
    finally:
        store.close()
