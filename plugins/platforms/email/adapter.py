"""The email adapter: a thread reads the mailbox over IMAP (IDLE where the server offers it,
else polling every ``poll_interval``), hands each unseen mail to the gateway and marks it
``\\Seen`` only once the gateway stored it in its inbox, so a gateway killed at any point
answers every mail it took and none twice (a mail is answered at least once: see
docs/gateway.md). Replies go out by SMTP in the mail's thread."""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import hashlib
import logging
import os
import re
import shutil
import smtplib
import ssl
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any

from hermes_agent import private_dir
from hermes_agent.api import ChatInfo, InboundMessage, PlatformAdapter, SendResult

from .inbound import Mail, describe, message_ids, parse
from .mailbox import CONNECTION_ERRORS, Mailbox, MailboxError
from .outbound import compose, deliver, open_smtp
from .settings import Settings
from .threads import MailContext, ThreadStore

log = logging.getLogger("hermes_agent.gateway.email")
PLATFORM = "email"
RECENT = 500  # mail contexts kept in memory (the thread store has them all)
MAX_BACKOFF = 60.0
LOGIN_ATTEMPTS = 5  # refused logins in a row (after a good start) that stop the platform
HAND_OVER_TIMEOUT = 300.0
_ADDRESS = re.compile(r"[^\s@<>,;\"]+@[^\s@<>,;\"]+")  # one bare address, no header tricks


class EmailAdapter(PlatformAdapter):
    name = PLATFORM
    exclusive_receiver = True  # one reader per mailbox among gateway replicas

    def __init__(self, config: Any, settings: Settings, home: Path):
        super().__init__(config)
        self.settings = settings
        self.max_message_length = settings.max_message_length
        self.home = Path(home)
        self.media = self.home / "gateway" / "media" / PLATFORM
        self.store: ThreadStore | None = None
        # by (Message-ID, correspondent); touched on the loop only
        self._recent: OrderedDict[tuple[str, str], MailContext] = OrderedDict()
        self._untaken: OrderedDict[tuple[str, str], None] = OrderedDict()  # turned away
        self._loop: asyncio.AbstractEventLoop | None = None
        self._reader: threading.Thread | None = None
        self._stopping = threading.Event()
        self.connected_mailbox = threading.Event()  # the reader is logged in (tests wait on it)

    # --- lifecycle ---------------------------------------------------------------------------
    async def connect(self, *, is_reconnect: bool = False) -> bool:
        self._loop = asyncio.get_running_loop()
        self.store = ThreadStore(self.home)
        try:
            await asyncio.to_thread(self._check_servers)
        except (MailboxError, *CONNECTION_ERRORS) as exc:
            log.error("email: cannot start: %s", _reason(exc))
            self.store.close()
            return False
        if self.receive_on_connect:
            await self.start_receiving()
        return True

    def _check_servers(self) -> None:
        """Log in to both servers once, so a wrong setting stops the platform at start."""
        mailbox = Mailbox(self.settings)
        mailbox.open()
        mailbox.close()
        try:
            smtp = open_smtp(self.settings)
        except ssl.SSLCertVerificationError as exc:
            raise MailboxError(f"the SMTP server's certificate is not trusted "
                               f"({exc.verify_message}); set platforms.email.tls_ca_file to "
                               "its CA certificate") from None
        with smtp:
            if smtp.has_extn("auth"):
                try:
                    smtp.login(self.settings.login, self.settings.password)
                except smtplib.SMTPException as exc:
                    raise MailboxError(f"the SMTP server refused the login ({exc}): check "
                                       "EMAIL_ADDRESS and EMAIL_PASSWORD") from None

    async def start_receiving(self) -> None:
        if self._reader is None:
            self._reader = threading.Thread(target=self._read, name="email-imap", daemon=True)
            self._reader.start()

    async def disconnect(self) -> None:
        self._stopping.set()
        if self._reader is not None:
            await asyncio.to_thread(self._reader.join, self.settings.timeout + 5)
        if self.store is not None:
            self.store.close()

    # --- inbound (the reader thread) ---------------------------------------------------------
    def _read(self) -> None:
        s, mailbox = self.settings, Mailbox(self.settings)
        failures = refusals = 0  # in a row: connections that failed, logins refused
        while not self._stopping.is_set():
            try:
                if mailbox.client is None:
                    mailbox.open()
                    failures = refusals = 0
                    self.connected_mailbox.set()
                    log.info("email: reading %s on %s (%s)", s.mailbox, s.imap_host,
                             "IDLE" if mailbox.idle_supported else
                             f"polling every {s.poll_interval:g}s")
                if self._read_unseen(mailbox):
                    self._stopping.wait(s.poll_interval)  # not taken: ask again later
                else:
                    mailbox.wait(s.idle_timeout if mailbox.idle_supported else s.poll_interval,
                                 self._stopping)
            except MailboxError as exc:  # it worked at start: a passing refusal, maybe
                refusals += 1
                if refusals >= LOGIN_ATTEMPTS:
                    log.error("email: stopped reading mail: %s", exc)
                    if self._loop is not None and not self._loop.is_closed():
                        self._loop.call_soon_threadsafe(self.report_fatal, str(exc))
                    break
                log.warning("email: %s; again in %.0fs", exc, MAX_BACKOFF)
                self.connected_mailbox.clear()
                self._stopping.wait(MAX_BACKOFF)
            except CONNECTION_ERRORS as exc:
                failures += 1
                wait = min(MAX_BACKOFF, 2.0 ** (failures - 1))
                log.warning("email: the IMAP connection failed (%s); again in %.0fs",
                            _reason(exc), wait)
                self.connected_mailbox.clear()
                mailbox.close()
                self._stopping.wait(wait)
            except Exception:
                log.exception("email: reading mail failed; again in %.0fs", MAX_BACKOFF)
                mailbox.close()
                self._stopping.wait(MAX_BACKOFF)
        mailbox.close()

    def _read_unseen(self, mailbox: Mailbox) -> bool:
        """Hand every unseen mail over, oldest first; True when the gateway did not take
        one, which stays unseen for the next look: its chat's queue is full (the other
        chats' mails are still handed over) or the gateway is stopping (none are)."""
        blocked: set[str] = set()  # senders with a mail not taken: theirs wait, in order
        for uid in mailbox.unseen():
            if self._stopping.is_set():
                return False
            if self._take(mailbox, uid, blocked) == "closed":
                return True
        return bool(blocked)

    def _take(self, mailbox: Mailbox, uid: int, blocked: set[str]) -> str:
        s, store = self.settings, self.store
        assert store is not None
        size = mailbox.size(uid)
        raw = mailbox.fetch(uid, headers_only=size is not None and size > s.max_mail_bytes)
        if size is None or raw is None:
            return "gone"
        try:
            mail = parse(raw, own_address=s.address,
                         fallback_id=f"{mailbox.uidvalidity}.{uid}@imap",
                         max_attachment_bytes=s.max_attachment_bytes,
                         skip_attachments=s.skip_attachments, authserv_id=s.authserv_id)
        except Exception:  # one mail nobody can read must not hold up the others
            log.exception("email: mail %s cannot be read; marked seen, not answered", uid)
            mailbox.mark_seen(uid)
            return "ignored"
        if size > s.max_mail_bytes:
            mail.text = (f"[this mail has {size} bytes, over the limit of {s.max_mail_bytes} "
                         "(platforms.email.max_mail_bytes): only its headers were read]")
        if mail.automated:
            log.info("email: not answering an automated mail from %s", mail.sender or "?")
            mailbox.mark_seen(uid)
            return "ignored"
        if s.require_authenticated_sender and not mail.authenticated:
            log.warning("email: dropped a mail whose sender %s is not authenticated (%s); if "
                        "your mail server adds no Authentication-Results header, set "
                        "platforms.email.require_authenticated_sender: false (or "
                        "EMAIL_TRUST_FROM_HEADER=true)", mail.sender, mail.auth_reason)
            mailbox.mark_seen(uid)
            return "ignored"
        if store.accepted(mail.message_id, mail.sender):  # taken before; its \Seen was lost
            mailbox.mark_seen(uid)
            return "duplicate"
        if mail.sender in blocked:
            return "busy"
        root = store.root_of(mail.sender, *mail.references, mail.in_reply_to) or mail.thread_root
        context = MailContext(mail.message_id, mail.sender, root, mail.subject,
                              self._references(mail))
        folder = self.media / hashlib.sha256(
            f"{mail.sender} {mail.message_id}".encode()).hexdigest()[:24]
        allowed = self.may_talk(mail.sender, mail.sender)
        if allowed:  # a stranger's mail leaves nothing here: no thread, no attachment
            store.record(context, outgoing=False)  # before the gateway hears of it: a replay
        else:
            mail.attachments, mail.left_out = [], []
        message = self._message(mail, root, folder, uid, mailbox.uidvalidity)
        outcome = self._hand_over(message, context)
        if outcome in ("queued", "answered"):
            store.accept(mail.message_id, mail.sender)
            mailbox.mark_seen(uid)
            return outcome
        store.forget(mail.message_id, mail.sender)  # nothing of a refused sender stays
        shutil.rmtree(folder, ignore_errors=True)
        if outcome in ("refused", "skipped"):
            mailbox.mark_seen(uid)
        elif outcome == "busy":
            blocked.add(mail.sender)
        return outcome

    def _references(self, mail: Mail) -> tuple[str, ...]:
        """The mail's ``References``; for one that sends ``In-Reply-To`` alone, the chain of
        the mail it answers, when known (RFC 5322: its parent's references and id)."""
        if mail.references or not mail.in_reply_to:
            return tuple(mail.references)
        assert self.store is not None
        parent = self.store.get(mail.in_reply_to, mail.sender)
        return (*parent.references, parent.message_id) if parent else (mail.in_reply_to,)

    def _message(self, mail: Mail, root: str, folder: Path, uid: int,
                 uidvalidity: int) -> InboundMessage:
        text = mail.text.strip()
        if mail.subject and not mail.subject.lower().startswith(("re:", "aw:")):
            text = f"[Subject: {mail.subject}]\n\n{text}".rstrip()
        attachments, images, lines = [], [], []
        for index, attachment in enumerate(mail.attachments):
            path = private_dir(folder) / f"{index + 1}-{attachment.filename}"
            with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as out:
                out.write(attachment.data)
            attachments.append({"type": attachment.kind, "path": str(path),
                                "name": attachment.filename,
                                "mime_type": attachment.media_type, "size": attachment.size})
            if attachment.kind == "image":  # what a model that sees is shown (docs/vision.md)
                encoded = base64.b64encode(attachment.data).decode("ascii")
                images.append({"type": "image_url", "image": {"name": attachment.filename},
                               "image_url": {"url": f"data:{attachment.media_type};base64,"
                                                    f"{encoded}"}})
            lines.append(describe(attachment, str(path)))
        lines += [f"[attachment left out: {entry}]" for entry in mail.left_out]
        text = "\n\n".join(filter(None, [text, "\n".join(lines)])) or "(an empty mail)"
        raw = {"uid": uid, "uidvalidity": uidvalidity, "subject": mail.subject,
               "sender_name": mail.sender_name, "in_reply_to": mail.in_reply_to,
               "references": mail.references}
        return InboundMessage(PLATFORM, mail.sender, mail.sender, text, user_name=mail.sender,
                              thread_id=root, message_id=mail.message_id, chat_type="dm",
                              raw=raw, attachments=attachments, images=images)

    def _hand_over(self, message: InboundMessage, context: MailContext) -> str:
        """The gateway's decision on ``message`` (from the reader thread)."""
        loop = self._loop
        if loop is None or loop.is_closed():
            return "closed"

        async def hand_over() -> str:
            self._remember(context)
            outcome = await self.accept_message(message)
            if outcome not in ("queued", "answered"):  # a refusal to it is not kept either
                self._untaken[_key(context)] = None
                while len(self._untaken) > RECENT:
                    self._untaken.popitem(last=False)
            return str(outcome)

        try:
            future = asyncio.run_coroutine_threadsafe(hand_over(), loop)
            return str(future.result(HAND_OVER_TIMEOUT))
        except (RuntimeError, concurrent.futures.CancelledError):  # the loop is going away
            return "closed"
        except concurrent.futures.TimeoutError:
            log.warning("email: the gateway did not take mail %s in time; it comes again",
                        message.message_id)
            return "busy"

    # --- outbound ----------------------------------------------------------------------------
    async def send(self, chat_id: str, content: str, reply_to: str | None = None,
                   metadata: dict[str, Any] | None = None) -> SendResult:
        metadata = metadata or {}
        to, thread = str(chat_id).strip(), metadata.get("thread_id")
        if not _ADDRESS.fullmatch(to):
            return SendResult(False, error=f"{to!r} is not a mail address (name@domain)")
        answering = await self._answering(to, reply_to, thread)
        message = await asyncio.to_thread(  # off the loop: a long reply's HTML takes a while
            compose, self.settings, to, content, answering,
            str(metadata.get("subject") or ""), str(thread or ""))
        result = await asyncio.to_thread(deliver, self.settings, message)
        if not result.success:
            log.warning("email: sending to %s failed: %s", to, result.error)
            return result
        message_id = result.message_id or ""
        root = answering.root if answering else str(thread or message_id)
        sent = MailContext(message_id, to.lower(), root, str(message["Subject"]),
                           tuple(message_ids(message.get("References"))))
        self._remember(sent)
        if self.store is not None and (answering is None
                                       or _key(answering) not in self._untaken):
            await asyncio.to_thread(self.store.record, sent, outgoing=True)
        return result

    async def _answering(self, to: str, reply_to: str | None,
                         thread: Any) -> MailContext | None:
        """The mail this one answers: ``reply_to``, else the thread's latest mail; only ever
        one of this correspondent's."""
        correspondent = to.lower()
        found: MailContext | None = None
        if reply_to:
            found = self._recent.get((reply_to, correspondent))
            if found is None and self.store is not None:
                found = await asyncio.to_thread(self.store.get, reply_to, correspondent)
        if found is None and thread:
            found = next((c for c in reversed(self._recent.values())
                          if c.root == thread and c.correspondent == correspondent), None)
            if found is None and self.store is not None:
                found = await asyncio.to_thread(self.store.latest, correspondent, str(thread))
        return found if found is not None and found.correspondent == correspondent else None

    def _remember(self, context: MailContext) -> None:
        self._recent[_key(context)] = context
        self._recent.move_to_end(_key(context))
        while len(self._recent) > RECENT:
            self._recent.popitem(last=False)

    async def get_chat_info(self, chat_id: str) -> ChatInfo:
        return ChatInfo(name=str(chat_id), type="dm")


def _key(context: MailContext) -> tuple[str, str]:
    return context.message_id, context.correspondent


def _reason(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, MailboxError) else f"{type(exc).__name__}: {exc}"
