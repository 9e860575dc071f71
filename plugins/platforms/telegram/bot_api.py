"""A small async client of the Telegram Bot API (httpx2): ``await api.call("sendMessage",
chat_id=..., text=...)`` returns the answer's ``result`` or raises :class:`TelegramError`,
which says whether the call certainly did not take effect (``retryable``) and how long
Telegram asks to wait (``retry_after``). The token is part of every URL, so it is masked in
every error and in httpx2's own request log lines."""

from __future__ import annotations

import logging
from typing import Any

import httpx2

from hermes_agent.kits.secrets import mask_values

log = logging.getLogger("hermes_agent.gateway.telegram")
# Failures after which the request cannot have reached Telegram: retrying cannot duplicate.
_NOT_SENT = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout, httpx2.WriteError,
             httpx2.WriteTimeout, httpx2.UnsupportedProtocol)


class TelegramError(Exception):
    """A failed Bot API call. ``status``: the HTTP status (0: no answer)."""

    def __init__(self, method: str, description: str, *, status: int = 0,
                 retryable: bool = False, retry_after: float | None = None,
                 parameters: dict[str, Any] | None = None):
        super().__init__(f"Telegram {method} failed: {description}")
        self.method, self.description, self.status = method, description, status
        self.retryable, self.retry_after = retryable, retry_after
        self.parameters = parameters or {}

    @property
    def cannot_parse(self) -> bool:
        """Telegram refused the text's HTML markup."""
        return self.status == 400 and "can't parse entities" in self.description.lower()


class TokenMaskingFilter(logging.Filter):
    """Masks the bot token in the records of the logger it is added to (httpx2 logs every
    request's URL, which holds the token)."""

    def __init__(self, secrets: tuple[str, ...]):
        super().__init__()
        self.secrets = secrets

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:
            return True
        masked = mask_values(message, self.secrets)
        if masked != message:
            record.msg, record.args = masked, None
        return True


class BotAPI:
    def __init__(self, token: str, base_url: str, *, secrets: tuple[str, ...] = (),
                 timeout: float = 20.0):
        self._secrets = tuple(dict.fromkeys((token, *secrets)))
        self._prefix = f"{base_url.rstrip('/')}/bot{token}/"
        self._files = f"{base_url.rstrip('/')}/file/bot{token}/"
        self._timeout = timeout
        self._filter = TokenMaskingFilter(self._secrets)
        logging.getLogger("httpx2").addFilter(self._filter)
        self._http = httpx2.AsyncClient(timeout=httpx2.Timeout(timeout, connect=10.0),
                                        follow_redirects=False)

    def mask(self, text: str) -> str:
        return mask_values(text, self._secrets)

    async def call(self, method: str, timeout: float | None = None, **params: Any) -> Any:
        """POST ``params`` (None values left out) as JSON to ``method``; its ``result``."""
        body = {k: v for k, v in params.items() if v is not None}
        try:
            response = await self._http.post(self._prefix + method, json=body,
                                             timeout=timeout or self._timeout)
        except _NOT_SENT as exc:
            raise TelegramError(method, f"cannot reach the Bot API ({self._describe(exc)})",
                                retryable=True) from None
        except httpx2.HTTPError as exc:  # sent, but no answer: it may have taken effect
            raise TelegramError(method, f"no answer from the Bot API ({self._describe(exc)})"
                                ) from None
        try:
            data = response.json()
        except ValueError:
            data = {}
        if response.status_code == 200 and isinstance(data, dict) and data.get("ok"):
            return data.get("result")
        raise self._error(method, response.status_code, data if isinstance(data, dict) else {})

    async def upload(self, method: str, field: str, path: str, **params: Any) -> Any:
        """``method`` with the file at ``path`` as the multipart field ``field`` (sendVoice,
        sendPhoto, ...); its ``result``. A failure before Telegram answered may have sent it:
        not retryable."""
        from pathlib import Path

        form = {k: str(v) for k, v in params.items() if v is not None}
        file = Path(path)
        try:
            with open(file, "rb") as content:
                response = await self._http.post(
                    self._prefix + method, data=form,
                    files={field: (file.name, content, _mime(file))}, timeout=self._timeout)
        except _NOT_SENT as exc:
            raise TelegramError(method, f"cannot reach the Bot API ({self._describe(exc)})",
                                retryable=True) from None
        except httpx2.HTTPError as exc:
            raise TelegramError(method, f"no answer from the Bot API ({self._describe(exc)})"
                                ) from None
        try:
            data = response.json()
        except ValueError:
            data = {}
        if response.status_code == 200 and isinstance(data, dict) and data.get("ok"):
            return data.get("result")
        raise self._error(method, response.status_code, data if isinstance(data, dict) else {})

    async def download(self, file_id: str, max_bytes: int) -> bytes:
        """The bytes of a file users sent (``getFile``, then its download URL); at most
        ``max_bytes`` (the Bot API serves bots files of up to 20 MB)."""
        info = await self.call("getFile", file_id=file_id)
        path = info.get("file_path") if isinstance(info, dict) else None
        if not path:
            raise TelegramError("getFile", "Telegram gave no file_path for the file")
        if int(info.get("file_size") or 0) > max_bytes:
            raise TelegramError("getFile", f"the file has more than {max_bytes} bytes")
        try:
            async with self._http.stream("GET", self._files + path) as response:
                if response.status_code != 200:
                    raise TelegramError("getFile", f"the download answered HTTP "
                                        f"{response.status_code}", status=response.status_code)
                data = bytearray()
                async for piece in response.aiter_bytes():
                    data += piece
                    if len(data) > max_bytes:
                        raise TelegramError("getFile", f"the file has more than {max_bytes} bytes")
                return bytes(data)
        except httpx2.HTTPError as exc:
            raise TelegramError("getFile", f"the download failed ({self._describe(exc)})") from None

    def _describe(self, exc: Exception) -> str:
        return self.mask(f"{type(exc).__name__}: {exc}".rstrip(": "))

    def _error(self, method: str, status: int, data: dict[str, Any]) -> TelegramError:
        code = int(data.get("error_code") or status)
        description = self.mask(str(data.get("description") or f"HTTP {status}"))
        parameters = data.get("parameters") if isinstance(data.get("parameters"), dict) else {}
        if code == 401:
            description += " (the bot token was refused: check TELEGRAM_BOT_TOKEN with @BotFather)"
        if code == 429:
            wait = parameters.get("retry_after")
            return TelegramError(method, description, status=code, retryable=True,
                                 retry_after=float(wait) if wait is not None else None,
                                 parameters=parameters)
        return TelegramError(method, description, status=code, retryable=code >= 500,
                             parameters=parameters)

    async def close(self) -> None:
        logging.getLogger("httpx2").removeFilter(self._filter)
        await self._http.aclose()


def _mime(path: Any) -> str:
    import mimetypes

    return mimetypes.guess_type(str(path))[0] or "application/octet-stream"
