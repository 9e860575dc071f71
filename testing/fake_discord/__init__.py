"""A fake Discord for tests: the gateway websocket (real op codes and payloads: HELLO,
heartbeats and ACKs, IDENTIFY/READY, RESUME with replay, RECONNECT, INVALID_SESSION, close
code 4004) and the REST API (messages, typing, channels; 401 on a wrong token, scripted 429s)
on 127.0.0.1. Needs ``websockets`` (the ``platform-discord`` extra).

    from hermes_agent.testing.fake_discord import FakeDiscord

    with FakeDiscord(token="t") as discord:
        ...  # platforms.discord.api_base = discord.api_base, DISCORD_BOT_TOKEN=t
        discord.user_says("200", "42", "hello", username="alice")
        discord.wait(lambda: discord.sent_to("200"))
"""

from .server import FakeDiscord

__all__ = ["FakeDiscord"]
