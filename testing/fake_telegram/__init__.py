"""A fake Telegram Bot API on 127.0.0.1 for tests, speaking the real wire format.

    with FakeTelegram() as telegram:
        ...  # platforms.telegram.base_url = telegram.base_url, TELEGRAM_BOT_TOKEN = telegram.token
        telegram.user_message(chat_id=42, user_id=7, text="hi", username="alice")
        [reply] = telegram.wait_sent(1, chat_id=42)
        assert reply.plain == "hello"

See :mod:`.methods` for the methods it answers and :mod:`.server` for what a test can script.
"""

from .markup import html_to_plain
from .methods import Answer, SentMessage
from .server import FakeTelegram

__all__ = ["Answer", "FakeTelegram", "SentMessage", "html_to_plain"]
