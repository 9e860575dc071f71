"""Auxiliary tasks: per-task routing through call_llm, with environment overrides."""

from __future__ import annotations

from hermes_agent.builtin_plugins.models.auxiliary import call_llm
from hermes_agent.testing.fake_llm import FakeLLMServer, reply_text

ASK = [{"role": "user", "content": "summarise"}]


def test_task_uses_its_own_provider_model_and_options(kernel_for, server) -> None:
    with FakeLLMServer() as main:
        kernel = kernel_for(
            {"model": {"provider": "custom", "base_url": main.openai_base_url, "default": "big"},
             "auxiliary": {"compression": {"provider": "custom", "base_url": server.openai_base_url,
                                           "model": "small", "timeout": 12,
                                           "extra_body": {"top_k": 3}}}})
        server.script(reply_text("short summary"))
        response = call_llm(task="compression", messages=ASK, kernel=kernel)
        assert response.content == "short summary"
        body = server.last.body
        assert body["model"] == "small" and body["top_k"] == 3
        assert server.last.headers["x-stainless-read-timeout"] == "12.0"
        assert main.posts() == []
        # a task without settings uses the main provider
        main.script(reply_text("title"))
        assert call_llm(task="title_generation", messages=ASK, kernel=kernel).content == "title"
        assert main.last.body["model"] == "big"


def test_environment_overrides_and_profile_auxiliary_model(kernel_for, server) -> None:
    kernel = kernel_for({"model": {"provider": "openrouter", "default": "anthropic/claude-opus-4.1"},
                         "auxiliary": {"web_extract": {"model": "from-config"}}},
                        env={"OPENROUTER_API_KEY": "k", "OPENROUTER_BASE_URL": server.openai_base_url,
                             "AUXILIARY_WEB_EXTRACT_MODEL": "from-env"})
    server.script(reply_text("a"), reply_text("b"))
    call_llm(task="web_extract", messages=ASK, kernel=kernel)
    assert server.last.body["model"] == "from-env"
    call_llm(task="vision", messages=ASK, kernel=kernel)
    assert server.last.body["model"] == "google/gemini-2.5-flash"  # the profile's auxiliary model


def test_auxiliary_provider_override(kernel_for, server) -> None:
    with FakeLLMServer() as other:
        kernel = kernel_for({"model": {"provider": "openrouter", "default": "x"}},
                            env={"OPENROUTER_API_KEY": "k", "OPENROUTER_BASE_URL": server.openai_base_url,
                                 "DEEPSEEK_API_KEY": "d", "DEEPSEEK_BASE_URL": other.openai_base_url,
                                 "AUXILIARY_APPROVAL_PROVIDER": "deepseek"})
        other.script(reply_text("approve"))
        response = call_llm(task="approval", messages=ASK, kernel=kernel)
        assert (response.content, response.provider) == ("approve", "deepseek")
        assert other.last.body["model"] == "deepseek-chat" and server.posts() == []


def test_each_call_gets_its_own_client_over_one_resolved_provider(kernel_for, server) -> None:
    """Side tasks may run at once on several threads: a fallback taken by one call must not
    switch the provider of another, yet the provider and its SDK client are resolved once."""
    from hermes_agent.builtin_plugins.models.auxiliary import aux_client

    kernel = kernel_for({"model": {"provider": "custom", "base_url": server.openai_base_url,
                                   "default": "m"},
                         "fallback_providers": [{"provider": "deepseek", "model": "d"}]})
    first, second = aux_client(kernel, "compression"), aux_client(kernel, "compression")
    assert first is not second and first.primary is second.primary
    first.active = object()  # what taking a fallback does to a client
    assert second.active is second.primary
    assert aux_client(kernel, "vision").primary is not first.primary  # per task settings


def test_a_call_for_a_session_counts_toward_that_session(tmp_path, server) -> None:
    """A side task's call (a summary, a title, a page extract) costs tokens like a turn's:
    its usage lands in the session it served, an estimated one marked as such."""
    from hermes_agent.api import session_store
    from hermes_agent.kits.sql.values import usage_estimated

    from hermes_agent.testing import make_kernel

    kernel = make_kernel(tmp_path / "home", config={"model": {
        "provider": "custom", "base_url": server.openai_base_url, "default": "big"}},
        env={}, builtins=True)  # with the builtin session store
    store = session_store(kernel)
    session = store.create_session(source="cli", model="big")
    server.script(reply_text("summary", usage={"input_tokens": 120, "output_tokens": 7}),
                  reply_text("title", report_usage=False), reply_text("unrelated"))
    call_llm(task="compression", messages=ASK, kernel=kernel, session_id=session)
    row = store.get_session(session)
    assert (row["api_call_count"], row["input_tokens"], row["output_tokens"]) == (1, 120, 7)
    assert row["model"] == "big" and not usage_estimated(row)  # the session's model stays
    call_llm(task="title_generation", messages=ASK, kernel=kernel, session_id=session)
    row = store.get_session(session)
    assert row["api_call_count"] == 2 and row["input_tokens"] > 120  # estimated from the text
    assert usage_estimated(row)  # shown with ~
    call_llm(task="title_generation", messages=ASK, kernel=kernel)  # for no session
    assert store.get_session(session)["api_call_count"] == 2
    server.script(reply_text("still answered"))  # a session that is not stored: no record
    assert call_llm(task="web_extract", messages=ASK, kernel=kernel,
                    session_id="not-stored").content == "still answered"
