"""A fake Slack on 127.0.0.1 for tests, speaking Slack's wire formats: the Web API that
slack-sdk calls (``base_url``: ``auth.test``, ``apps.connections.open``,
``chat.postMessage``, ``chat.update``, ``conversations.info``, file downloads with the bot
token), a Socket Mode websocket (``hello``, ``events_api`` envelopes that must be
acknowledged, unacknowledged ones sent again on the next connection, ``disconnect``) and the
Events API over HTTP (``event_callback`` POSTs signed with the signing secret). Needs
``websockets``.

    from hermes_agent.testing.fake_slack import FakeSlack

    with FakeSlack() as slack:
        ...  # platforms.slack.api_base = slack.api_base, SLACK_BOT_TOKEN=slack.bot_token,
             # SLACK_APP_TOKEN=slack.app_token
        slack.wait(lambda: slack.connections)
        slack.user_says("D0001", "U0001", "hello")
        slack.wait(lambda: slack.texts("D0001"))
"""

from .server import FakeSlack

__all__ = ["FakeSlack"]
