"""The IMAP side, on ``imapclient`` (blocking; the adapter runs it in its own thread): log in
over implicit TLS, STARTTLS or (on this machine only) plain, list the unseen mails, fetch one
without marking it (``BODY.PEEK``), mark it ``\\Seen`` once the gateway stored it, and wait
for new mail with IDLE where the server offers it (else the caller polls)."""

from __future__ import annotations

import imaplib
import logging
import ssl
import threading
import time
from typing import Any

from imapclient import SEEN, IMAPClient
from imapclient.exceptions import IMAPClientError, LoginError

from .outbound import tls_context
from .settings import Settings

log = logging.getLogger("hermes_agent.gateway.email")
#: what a dropped or broken connection raises: reconnect and carry on
CONNECTION_ERRORS = (IMAPClientError, imaplib.IMAP4.abort, OSError, EOFError)
IDLE_SLICE = 1.0  # seconds: how soon a waiting IDLE notices the adapter stopping
CHANGES = ("EXISTS", "RECENT", "FETCH", "EXPUNGE")  # what the server says when mail changes


class MailboxError(Exception):
    """The mailbox cannot be used as configured; the message says what to fix."""


class Mailbox:
    def __init__(self, settings: Settings):
        self.settings = settings
        self.client: IMAPClient | None = None
        self.uidvalidity = 0
        self.idle_supported = False

    def open(self) -> None:
        s = self.settings
        try:
            client = IMAPClient(s.imap_host, port=s.imap_port, ssl=s.imap_security == "ssl",
                                ssl_context=tls_context(s) if s.imap_security == "ssl" else None,
                                timeout=s.timeout)
        except ssl.SSLCertVerificationError as exc:
            raise MailboxError(f"the IMAP server's certificate is not trusted "
                               f"({exc.verify_message}); set platforms.email.tls_ca_file to "
                               "its CA certificate") from None
        try:
            if s.imap_security == "starttls":
                client.starttls(tls_context(s))
            client.login(s.login, s.password)
            selected = client.select_folder(s.mailbox)
        except LoginError as exc:
            _close(client)
            raise MailboxError(f"the IMAP server refused the login of {s.login} ({_text(exc)}): "
                               "check EMAIL_ADDRESS and EMAIL_PASSWORD (an app password "
                               "where the provider asks for one)") from None
        except IMAPClientError as exc:
            _close(client)
            raise MailboxError(f"cannot open the mailbox {s.mailbox!r} on {s.imap_host} "
                               f"({_text(exc)}); set platforms.email.mailbox") from None
        except BaseException:
            _close(client)
            raise
        self.client = client
        self.uidvalidity = int(selected.get(b"UIDVALIDITY", 0) or 0)
        self.idle_supported = s.idle and client.has_capability("IDLE")

    def close(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            _close(client)

    def unseen(self) -> list[int]:
        return sorted(int(uid) for uid in self._client.search(["UNSEEN"]))

    def size(self, uid: int) -> int | None:
        """The mail's size in bytes, or None when it is gone (deleted meanwhile)."""
        data = self._client.fetch([uid], ["RFC822.SIZE"]).get(uid)
        return int(data[b"RFC822.SIZE"]) if data and b"RFC822.SIZE" in data else None

    def fetch(self, uid: int, headers_only: bool = False) -> bytes | None:
        """The mail as received (its headers only, when it is too big), still unseen."""
        part = "BODY.PEEK[HEADER]" if headers_only else "BODY.PEEK[]"
        data = self._client.fetch([uid], [part]).get(uid) or {}
        raw = data.get(b"BODY[HEADER]" if headers_only else b"BODY[]")
        return bytes(raw) if raw is not None else None

    def mark_seen(self, uid: int) -> None:
        self._client.add_flags([uid], [SEEN], silent=True)

    def wait(self, timeout: float, stopping: threading.Event) -> None:
        """Until the server reports a change (IDLE), ``timeout`` passes or ``stopping`` is
        set; without IDLE, just the timeout (polling)."""
        if not self.idle_supported:
            stopping.wait(timeout)
            return
        client = self._client
        # imaplib keeps the untagged responses a command's answer carried (an EXISTS for a
        # mail that arrived meanwhile): those before this SEARCH are covered by it, those
        # after it until IDLE's go-ahead would never reach idle_check: both are looked at
        stash = client._imap.untagged_responses
        for key in CHANGES:
            stash.pop(key, None)
        if client.search(["UNSEEN"]):  # arrived since the last look
            return
        client.idle()
        try:
            if any(stash.pop(key, None) for key in CHANGES):
                return
            deadline = time.monotonic() + timeout
            while not stopping.is_set() and time.monotonic() < deadline:
                if self._buffered():  # a line waits unread: look again (idle_done reads it)
                    return
                responses: list[Any] = client.idle_check(
                    timeout=min(IDLE_SLICE, max(0.0, deadline - time.monotonic())))
                if any(_is_change(response) for response in responses):
                    return
        finally:
            client.idle_done()

    def _buffered(self) -> bool:
        """Whether the server sent more than was read: lines that came with IDLE's go-ahead
        wait in imaplib's buffer (or the TLS layer's), where idle_check, which polls the
        socket, never sees them."""
        imap = self._client._imap
        sock = imap.sock
        if isinstance(sock, ssl.SSLSocket) and sock.pending():
            return True
        sock.setblocking(False)
        try:
            return bool(imap.file.peek(1))  # the buffer, or b"" when nothing came
        except (BlockingIOError, ssl.SSLWantReadError):
            return False
        finally:
            sock.settimeout(self.settings.timeout)

    @property
    def _client(self) -> IMAPClient:
        if self.client is None:
            raise imaplib.IMAP4.abort("not connected")
        return self.client


def _is_change(response: Any) -> bool:
    return isinstance(response, tuple) and len(response) >= 2 and response[1] in (
        key.encode() for key in CHANGES)


def _close(client: IMAPClient) -> None:
    try:
        client.logout()
    except Exception:
        try:
            client.shutdown()
        except Exception:
            log.debug("email: closing the IMAP connection failed", exc_info=True)


def _text(exc: Exception) -> str:
    text = str(exc)
    return text.decode(errors="replace") if isinstance(text, bytes) else text
