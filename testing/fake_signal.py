"""A fake signal-cli HTTP daemon (``signal-cli -a ACCOUNT daemon --http``) on 127.0.0.1:

- ``GET /api/v1/check``: 200;
- ``POST /api/v1/rpc``: JSON-RPC 2.0 ``send`` (``recipient`` list or ``groupId``, ``message``,
  optional ``quoteTimestamp``/``quoteAuthor``; the result ``{"timestamp", "results"}``),
  ``sendReceipt``, ``sendTyping``, ``getAttachment`` (``{"data": base64}``); errors are
  JSON-RPC error objects;
- ``GET /api/v1/events``: server-sent events, ``event: receive`` with the ``{"envelope",
  "account"}`` of each message and an ``id`` (``<start time>-<sequence>``); the last 1000
  are kept, and a client sending ``Last-Event-ID`` first gets the ones after it (all kept
  ones for an unknown id); a client without it gets the events from then on.

    with FakeSignal() as signal:
        # SIGNAL_HTTP_URL=signal.base_url, SIGNAL_ACCOUNT=signal.account
        signal.user_message("+15550001111", "hi", name="Alice")
        [reply] = signal.wait_sent(1, "+15550001111")
"""

from __future__ import annotations

import base64
import json
import time
from typing import Any

from .fake_chat import ChatHandler, ChatState, FakeChat, Sent
from .local_server import RecordedRequest, send_json

KEPT = 1000


class SignalState(ChatState):
    run: int  # event ids are "<run>-<sequence>", as signal-cli's: an earlier run's never match
    events: list[tuple[int, dict[str, Any]]]
    streams: int  # event streams open now
    generation: int  # bumped by drop(): open streams end


class _Handler(ChatHandler):
    def serve(self, state: SignalState, request: RecordedRequest) -> None:
        if request.method == "GET" and request.path == "/api/v1/check":
            send_json(self, 200, {"versions": {"signal-cli": "0.13.x-fake"}})
        elif request.method == "GET" and request.path == "/api/v1/events":
            self._stream(state, request.headers.get("last-event-id"))
        elif request.method == "POST" and request.path == "/api/v1/rpc":
            self._rpc(state, request.body if isinstance(request.body, dict) else {})
        else:
            send_json(self, 404, {"error": "not found"})

    def _rpc(self, state: SignalState, body: dict[str, Any]) -> None:
        method, params, rid = body.get("method"), body.get("params") or {}, body.get("id")
        if params.get("account") not in (None, state.token):
            self._error(rid, -32602, f"Specified account does not exist: {params['account']}")
            return
        failure = state.take_failure(str(method))
        if failure is not None:
            send_json(self, failure[0], {"error": "scripted failure"})
            return
        if method == "send":
            self._send(state, rid, params)
        elif method == "sendReceipt":
            state.add_receipt((params.get("recipient"), params.get("targetTimestamp")))
            self._result(rid, {"timestamp": _now(), "results": []})
        elif method == "sendTyping":
            self._result(rid, {})
        elif method == "getAttachment":
            found = self.file(state, str(params.get("id")))
            if found is None:
                self._error(rid, -1, "Attachment file not found")
            else:
                self._result(rid, {"data": base64.b64encode(found[0]).decode()})
        else:
            self._error(rid, -32601, f"Method not implemented: {method}")

    def _send(self, state: SignalState, rid: Any, params: dict[str, Any]) -> None:
        text = str(params.get("message") or "")
        recipients = params.get("recipient")
        target = f"group.{params['groupId']}" if params.get("groupId") else (
            recipients[0] if isinstance(recipients, list) and recipients else recipients)
        if not target or not text:
            self._error(rid, -32602, "No recipients given")
            return
        stamp = _now()
        quote = params.get("quoteTimestamp")
        state.add_sent(Sent(str(target), text, str(stamp),
                            reply_to=f"{quote}:{params.get('quoteAuthor')}" if quote else None))
        self._result(rid, {"timestamp": stamp, "results": [
            {"recipientAddress": {"number": target}, "type": "SUCCESS"}]})

    def _result(self, rid: Any, result: Any) -> None:
        send_json(self, 200, {"jsonrpc": "2.0", "result": result, "id": rid})

    def _error(self, rid: Any, code: int, message: str) -> None:
        send_json(self, 200, {"jsonrpc": "2.0", "error": {"code": code, "message": message,
                                                          "data": None}, "id": rid})

    def _stream(self, state: SignalState, last: str | None) -> None:
        self.close_connection = True
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("cache-control", "no-cache")
        self.end_headers()
        with state.lock:
            ids = [f"{state.run}-{event_id}" for event_id, _ in state.events]
            if last is None:
                position = len(state.events)  # a fresh client: what comes from now on
            elif last in ids:
                position = ids.index(last) + 1
            else:
                position = 0  # unknown (too old, or of an earlier run): everything kept
            generation = state.generation
            state.streams += 1
            state.lock.notify_all()
        try:
            while True:
                with state.lock:
                    state.lock.wait_for(lambda: len(state.events) > position
                                        or state.generation != generation
                                        or state.closing.is_set(), 0.5)
                    if state.generation != generation or state.closing.is_set():
                        return
                    pending = state.events[position:]
                    position = len(state.events)
                for event_id, data in pending:
                    self.wfile.write(f"id:{state.run}-{event_id}\nevent:receive\n"
                                     f"data:{json.dumps(data)}\n\n".encode())
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return
        finally:
            with state.lock:
                state.streams -= 1
                state.lock.notify_all()


def _now() -> int:
    return int(time.time() * 1000)


class FakeSignal(FakeChat):
    thread_name = "fake-signal"
    handler = _Handler

    def __init__(self, account: str = "+15550009999"):
        state = SignalState(account)
        state.events, state.streams, state.generation = [], 0, 0
        state.run = int(time.time() * 1000)
        self._state = state
        self.account = account

    def user_message(self, sender: str, text: str = "", *, name: str = "",
                     group: str | None = None, attachment: str | None = None,
                     uuid: str | None = None) -> dict[str, Any]:
        """An incoming message on the event stream (``attachment``: a :meth:`add_file` id);
        its envelope."""
        state = self._state
        stamp = _now()
        with state.lock:
            stamp += next(state.ids)  # unique per message
        message: dict[str, Any] = {"timestamp": stamp, "message": text or None,
                                   "expiresInSeconds": 0, "viewOnce": False, "attachments": []}
        if group:
            message["groupInfo"] = {"groupId": group, "type": "DELIVER"}
        if attachment:
            data, media_type, file_name = state.files[attachment]
            message["attachments"].append({"contentType": media_type, "filename": file_name,
                                           "id": attachment, "size": len(data)})
        envelope = {"source": sender, "sourceNumber": sender,
                    "sourceUuid": uuid or f"uuid-{sender.strip('+')}", "sourceName": name,
                    "sourceDevice": 1, "timestamp": stamp, "dataMessage": message}
        self._event({"envelope": envelope, "account": self.account})
        return envelope

    def typing(self, sender: str) -> None:
        """A typing notification (no message: the bot ignores it)."""
        self._event({"envelope": {"source": sender, "sourceNumber": sender, "timestamp": _now(),
                                  "typingMessage": {"action": "STARTED"}},
                     "account": self.account})

    def _event(self, data: dict[str, Any]) -> None:
        state = self._state
        with state.lock:
            event_id = next(state.ids)
            state.events.append((event_id, data))
            del state.events[:-KEPT]
            state.lock.notify_all()

    def drop(self) -> None:
        """End every open event stream (the client reconnects)."""
        with self._state.lock:
            self._state.generation += 1
            self._state.lock.notify_all()

    @property
    def streams(self) -> int:
        with self._state.lock:
            return self._state.streams

    def event_requests(self) -> list[Any]:
        return [r for r in self.requests if r.path == "/api/v1/events"]
