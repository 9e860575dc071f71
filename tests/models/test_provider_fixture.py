"""The fake_llm pytest fixture that plugin authors get from the pytest11 entry point."""

from __future__ import annotations

import openai

from hermes_agent.testing.fake_llm import reply_text


def test_fake_llm_fixture_serves_scripted_replies(fake_llm) -> None:
    fake_llm.script(reply_text("scripted"))
    client = openai.OpenAI(api_key="k", base_url=fake_llm.openai_base_url, max_retries=0)
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}])
    assert reply.choices[0].message.content == "scripted"
    assert fake_llm.last.body["messages"] == [{"role": "user", "content": "hi"}]
    exhausted = client.chat.completions.with_raw_response  # next call: the script is empty
    try:
        exhausted.create(model="m", messages=[])
    except openai.APIStatusError as exc:
        assert exc.status_code == 418 and "script is exhausted" in str(exc)
    else:
        raise AssertionError("an exhausted script must answer with an error")
