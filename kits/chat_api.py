"""Owner: the builtin plugin `gateway`. What platform adapters talking to a chat service's
HTTP API share (the WhatsApp, Signal and Mattermost platforms use it):

- :class:`ChatAPI`: JSON calls over httpx2 with the service's credentials in headers, every
  failure a :class:`ChatAPIError` saying whether the call certainly did not take effect
  (``retryable``: no connection, a 429, a 5xx) and how long to wait; :meth:`ChatAPI.send`
  turns a call into the ``SendResult`` the gateway retries by; :meth:`ChatAPI.download`
  reads a file no further than a limit. Known secrets are masked in every error.
- :class:`RecentIds`: the ids of messages already handed on (a redelivery is handled once).
- :func:`keep_connected`: a receiving connection (websocket, event stream) kept up, with a
  doubling delay between attempts, until closed or :class:`FatalConnectionError`.
- :class:`InboundQueue`: messages handed to the gateway in the order they came, off the
  connection's reader, each acknowledged (``on_taken``) once the gateway took it.

Not part of the contract docs/api.md locks (docs/kits.md)."""

from __future__ import annotations

import asyncio
import collections
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx2

from hermes_agent.api import InboundMessage, PlatformAdapter, SendResult

from .http import retry_after_seconds
from .secrets import mask_values

log = logging.getLogger("hermes_agent.gateway")
# Failures after which the request cannot have reached the service: retrying cannot duplicate.
_NOT_SENT = (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.PoolTimeout,
             httpx2.UnsupportedProtocol)


class ChatAPIError(Exception):
    """A failed call. ``status``: the HTTP status (0: no answer); ``data``: the JSON answer."""

    def __init__(self, description: str, *, status: int = 0, retryable: bool = False,
                 retry_after: float | None = None, data: Any = None):
        super().__init__(description)
        self.status, self.retryable, self.retry_after = status, retryable, retry_after
        self.data = data

    def result(self) -> SendResult:
        return SendResult(False, error=str(self), retryable=self.retryable,
                          retry_after=self.retry_after,
                          raw=self.data if isinstance(self.data, dict) else None)


class DownloadTooLarge(ChatAPIError):
    """The file is larger than the download's limit."""


class ChatAPI:
    """``ChatAPI(base_url, service="Mattermost", headers={...}, secrets=(token,),
    auth_hint="check MATTERMOST_TOKEN")``; paths are joined to ``base_url``, a full URL is
    used as it is. ``describe(data)`` finds the service's own explanation in an error body."""

    def __init__(self, base_url: str, *, service: str, headers: Mapping[str, str] | None = None,
                 secrets: tuple[str, ...] = (), auth_hint: str = "", timeout: float = 30.0,
                 describe: Callable[[Any], str] | None = None):
        self.base_url = base_url.rstrip("/")
        self.service, self.auth_hint = service, auth_hint
        self._secrets = tuple(s for s in secrets if s)
        self._describe = describe or _describe
        self._http = httpx2.AsyncClient(headers=dict(headers or {}), trust_env=False,
                                        follow_redirects=False,
                                        timeout=httpx2.Timeout(timeout, connect=min(timeout, 10.0)))

    def url(self, path: str) -> str:
        return path if "://" in path else f"{self.base_url}/{path.lstrip('/')}"

    def mask(self, text: str) -> str:
        return mask_values(text, self._secrets)

    async def call(self, method: str, path: str, **request: Any) -> Any:
        """The JSON answer (``{}`` when empty) of a 2xx; else :class:`ChatAPIError`.
        ``request``: httpx2's ``json``, ``params``, ``content``, ``files``, ``headers``,
        ``timeout``."""
        response = await self._request(method, path, request)
        if not response.content:
            return {}
        try:
            return response.json()
        except ValueError:
            return {}

    async def send(self, method: str, path: str, message_id: Callable[[Any], Any],
                   **request: Any) -> SendResult:
        """The call as the gateway's ``SendResult``; ``message_id(answer)`` names the sent
        message."""
        try:
            answer = await self.call(method, path, **request)
        except ChatAPIError as exc:
            return exc.result()
        sent = message_id(answer) if isinstance(answer, (dict, list)) else None
        return SendResult(True, message_id=str(sent) if sent not in (None, "") else None,
                          raw=answer)

    def stream(self, method: str, path: str, **request: Any) -> Any:
        """httpx2's streamed request (``async with api.stream(...) as response``): an event
        stream, a long download."""
        return self._http.stream(method, self.url(path), **request)

    async def download(self, path: str, max_bytes: int, **request: Any) -> tuple[bytes, str]:
        """A file's bytes and its declared media type, read no further than ``max_bytes``
        (:class:`DownloadTooLarge` beyond)."""
        try:
            async with self.stream("GET", path, **request) as response:
                if response.status_code >= 300:
                    await response.aread()
                    raise self._error("GET", path, response)
                declared = int(response.headers.get("content-length") or 0)
                if declared > max_bytes:
                    raise DownloadTooLarge(f"{declared} bytes, over the {max_bytes}-byte limit")
                data = bytearray()
                async for chunk in response.aiter_bytes():
                    data += chunk
                    if len(data) > max_bytes:
                        raise DownloadTooLarge(f"over the {max_bytes}-byte limit")
                return bytes(data), response.headers.get("content-type", "")
        except httpx2.HTTPError as exc:
            raise ChatAPIError(f"cannot download from {self.service}: "
                               f"{self.mask(type(exc).__name__)}") from None

    async def _request(self, method: str, path: str, request: dict[str, Any]) -> Any:
        try:
            response = await self._http.request(method, self.url(path), **request)
        except _NOT_SENT as exc:
            raise ChatAPIError(f"cannot reach {self.service} ({self._exc(exc)})",
                               retryable=True) from None
        except httpx2.HTTPError as exc:  # sent, but no answer: it may have taken effect
            raise ChatAPIError(f"no answer from {self.service} ({self._exc(exc)})") from None
        if response.status_code >= 300:
            raise self._error(method, path, response)
        return response

    def _exc(self, exc: Exception) -> str:
        return self.mask(f"{type(exc).__name__}: {exc}".rstrip(": "))

    def _error(self, method: str, path: str, response: Any) -> ChatAPIError:
        status = response.status_code
        try:
            data = response.json()
        except ValueError:
            data = None
        where = path if "://" not in path else path.split("?")[0]
        reason = self._describe(data) or response.reason_phrase or "error"
        text = self.mask(f"{self.service} {method} {where}: HTTP {status}: {reason}")
        if status in (401, 403) and self.auth_hint:
            text += f" ({self.auth_hint})"
        wait = retry_after_seconds(response.headers.get("retry-after"))
        if wait is None and isinstance(data, dict):
            wait = retry_after_seconds(str(data.get("retry_after") or ""))
        return ChatAPIError(text, status=status, retryable=status == 429 or status >= 500,
                            retry_after=wait, data=data)

    async def close(self) -> None:
        await self._http.aclose()


def _describe(data: Any) -> str:
    if not isinstance(data, dict):
        return ""
    error = data.get("error")
    if isinstance(error, dict):
        return str(error.get("message") or "")
    return str(data.get("message") or error or "")


class RecentIds:
    """The last ``size`` ids seen: ``first_time(id)`` is True once per id."""

    def __init__(self, size: int = 1000):
        self._ids: collections.OrderedDict[str, None] = collections.OrderedDict()
        self._size = size

    def __contains__(self, item: object) -> bool:
        return item in self._ids

    def first_time(self, item: str) -> bool:
        if item in self._ids:
            return False
        self._ids[item] = None
        if len(self._ids) > self._size:
            self._ids.popitem(last=False)
        return True


class FatalConnectionError(RuntimeError):
    """Connecting again cannot help (a refused token); the message says what to fix."""


async def keep_connected(name: str, connect_once: Callable[[], Awaitable[None]], *,
                         closing: Callable[[], bool], first_delay: float = 1.0,
                         max_delay: float = 60.0) -> str | None:
    """Run ``connect_once`` (one connection, until it ends) again and again until
    ``closing()``: after a failure, wait ``first_delay`` doubling up to ``max_delay`` (back to
    ``first_delay`` after a connection that lasted a minute). Returns the fatal reason when
    ``connect_once`` raised :class:`FatalConnectionError`, else None."""
    loop = asyncio.get_running_loop()
    delay = first_delay
    while not closing():
        started = loop.time()
        try:
            await connect_once()
            problem = "the connection closed"
        except FatalConnectionError as exc:
            log.error("%s: stopped: %s", name, exc)
            return str(exc)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            problem = f"{type(exc).__name__}: {exc}".rstrip(": ")
        if closing():
            break
        if loop.time() - started > 60:
            delay = first_delay
        log.warning("%s: %s; connecting again in %.0fs", name, problem, delay)
        await asyncio.sleep(delay)
        delay = min(max_delay, delay * 2)
    return None


class InboundQueue:
    """Messages from a connection's reader, handed to the gateway one at a time in order
    (the reader never waits for the gateway). ``handle(message)`` is the adapter's
    ``handle_message``; ``on_taken(message, outcome, cursor)`` runs once the gateway decided
    (``queued``: stored in its inbox; also ``refused``, ``skipped``...; not when it is
    stopping), with the ``cursor`` the message was put with: a read receipt, a stream
    position saved. It may fail without harm."""

    def __init__(self, name: str, handle: Callable[[InboundMessage], Awaitable[Any]],
                 on_taken: Callable[[InboundMessage, str, Any], Awaitable[None]] | None = None):
        self.name, self._handle, self._on_taken = name, handle, on_taken
        self._queue: asyncio.Queue[tuple[InboundMessage, Any]] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run())

    def put(self, message: InboundMessage, cursor: Any = None) -> None:
        self._queue.put_nowait((message, cursor))

    async def _run(self) -> None:
        while True:
            message, cursor = await self._queue.get()
            try:
                outcome = await self._handle(message)
            except Exception:  # one bad message must not stop the others
                log.exception("%s: handling message %s failed", self.name, message.message_id)
                continue
            if outcome != "closed" and self._on_taken is not None:
                try:
                    await self._on_taken(message, str(outcome), cursor)
                except Exception as exc:
                    log.debug("%s: after taking %s: %s", self.name, message.message_id, exc)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None


class Receiver:
    """A platform's receiving side: ``listen()`` (one connection, until it ends) kept up by
    :func:`keep_connected`, and the :class:`InboundQueue` the messages it ``put``\\ s go
    through to ``adapter.handle_message``. A fatal end (:class:`FatalConnectionError`) is
    reported with ``adapter.report_fatal``."""

    def __init__(self, adapter: Any, listen: Callable[[], Awaitable[None]],
                 on_taken: Callable[[InboundMessage, str, Any], Awaitable[None]] | None = None,
                 *, first_delay: float = 1.0, max_delay: float = 60.0):
        self.adapter, self._listen = adapter, listen
        self.queue = InboundQueue(adapter.name, adapter.handle_message, on_taken)
        self._delays = (first_delay, max_delay)
        self._task: asyncio.Task[str | None] | None = None
        self._closing = False

    def start(self) -> None:
        """Begin receiving (again: a no-op)."""
        if self._task is not None:
            return
        self.queue.start()
        self._task = asyncio.get_running_loop().create_task(keep_connected(
            self.adapter.name, self._listen, closing=lambda: self._closing,
            first_delay=self._delays[0], max_delay=self._delays[1]))
        self._task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[str | None]) -> None:
        if not task.cancelled() and task.exception() is None and task.result():
            self.adapter.report_fatal(task.result())

    def put(self, message: InboundMessage, cursor: Any = None) -> None:
        self.queue.put(message, cursor)

    async def close(self) -> None:
        self._closing = True
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self.queue.close()


class ReceivingAdapter(PlatformAdapter):
    """A platform adapter whose messages come over one connection it keeps up (an event
    stream, a websocket) through its :attr:`receiver`: every connected client gets every
    message, so with gateway replicas only the elected one receives (``exclusive_receiver``).
    Call :meth:`begin_receiving` at the end of ``connect``, ``await self.receiver.close()`` in
    ``disconnect``."""

    exclusive_receiver = True
    receiver: Receiver

    def begin_receiving(self) -> None:
        if self.receive_on_connect:
            self.receiver.start()

    async def start_receiving(self) -> None:
        self.receiver.start()
