"""Mails the agent sends: a reply in its thread (``In-Reply-To`` the mail it answers,
``References`` that mail's plus its id, the subject with one ``Re:``), as plain text and,
unless turned off, HTML too (``multipart/alternative``); and the SMTP delivery (stdlib
smtplib, in a worker thread: implicit TLS, STARTTLS, or plain on this machine only)."""

from __future__ import annotations

import re
import smtplib
import ssl
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from hermes_agent.api import SendResult

from .formatting import to_html
from .settings import Settings
from .threads import MailContext

DEFAULT_SUBJECT = "Message from Hermes"
MAX_REFERENCES = 20  # the first (the thread's root) and the latest, as RFC 5322 suggests
_RE = re.compile(r"^\s*((re|aw|sv|antw)\s*(\[\d+\])?\s*:\s*)+", re.I)


def reply_subject(subject: str) -> str:
    stripped = _RE.sub("", subject).strip()
    return f"Re: {stripped}" if stripped else DEFAULT_SUBJECT


def compose(settings: Settings, to: str, text: str, answering: MailContext | None,
            subject: str = "", thread_root: str = "") -> EmailMessage:
    """The mail; without the mail it answers (not known here: another gateway replica took
    it), ``thread_root`` still keeps it in its thread."""
    if answering is None and thread_root:
        answering = MailContext(thread_root, to, thread_root, subject, ())
    message = EmailMessage()
    message["From"] = settings.address
    message["To"] = to
    message["Subject"] = reply_subject(answering.subject) if answering else (
        subject or DEFAULT_SUBJECT)
    message["Date"] = formatdate(localtime=True)
    message["Message-ID"] = make_msgid(domain=settings.domain)
    if answering is not None:
        chain = [*answering.references, answering.message_id]
        if len(chain) > MAX_REFERENCES:
            chain = [chain[0], *chain[-(MAX_REFERENCES - 1):]]
        message["In-Reply-To"] = f"<{answering.message_id}>"
        message["References"] = " ".join(f"<{ref}>" for ref in chain)
    message["Auto-Submitted"] = "auto-replied"  # RFC 3834: no auto-reply to this one
    message.set_content(text)
    if settings.html:
        message.add_alternative(to_html(text), subtype="html")
    return message


def tls_context(settings: Settings) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=settings.tls_ca_file or None)


def deliver(settings: Settings, message: EmailMessage) -> SendResult:
    """Send ``message`` by SMTP (blocking: run it in a worker thread). Retryable only when the
    server certainly did not take it (no connection, or a 4xx answer)."""
    delivering = False  # the DATA command began: a failure now may have delivered it
    try:
        with open_smtp(settings) as smtp:
            if smtp.has_extn("auth"):
                smtp.login(settings.login, settings.password)
            delivering = True
            smtp.send_message(message, from_addr=settings.address,
                              to_addrs=[str(message["To"])])
    except smtplib.SMTPAuthenticationError as exc:
        return SendResult(False, error=f"the SMTP server refused the login ({_reply(exc)}): "
                                       "check EMAIL_ADDRESS and EMAIL_PASSWORD")
    except smtplib.SMTPRecipientsRefused as exc:
        codes = [code for code, _ in exc.recipients.values()]
        return SendResult(False, error=f"the recipient was refused: {exc.recipients}",
                          retryable=all(400 <= c < 500 for c in codes))
    except smtplib.SMTPResponseException as exc:
        return SendResult(False, error=f"the SMTP server answered {_reply(exc)}",
                          retryable=400 <= exc.smtp_code < 500)
    except (smtplib.SMTPException, OSError) as exc:
        if isinstance(exc, ssl.SSLCertVerificationError):
            return SendResult(False, error=f"the SMTP server's certificate is not trusted "
                                           f"({exc.verify_message}); set platforms.email."
                                           "tls_ca_file to its CA certificate")
        sent_maybe = delivering and not isinstance(exc, ConnectionRefusedError)
        return SendResult(False, error=f"SMTP to {settings.smtp_host}:{settings.smtp_port} "
                                       f"failed: {type(exc).__name__}: {exc}",
                          retryable=not sent_maybe)
    return SendResult(True, message_id=str(message["Message-ID"]).strip("<>"))


def open_smtp(settings: Settings) -> smtplib.SMTP:
    host, port, timeout = settings.smtp_host, settings.smtp_port, settings.timeout
    local = "localhost" if settings.smtp_security == "none" else None  # None: this host's name
    if settings.smtp_security == "ssl":
        smtp: smtplib.SMTP = smtplib.SMTP_SSL(host, port, local_hostname=local, timeout=timeout,
                                              context=tls_context(settings))
    else:
        smtp = smtplib.SMTP(host, port, local_hostname=local, timeout=timeout)
    try:  # EHLO (again after STARTTLS): what the server offers, AUTH included
        if settings.smtp_security == "starttls":
            smtp.starttls(context=tls_context(settings))
            smtp.ehlo()
        else:
            smtp.ehlo_or_helo_if_needed()
    except BaseException:
        smtp.close()
        raise
    return smtp


def _reply(exc: smtplib.SMTPResponseException) -> str:
    text = exc.smtp_error.decode(errors="replace") if isinstance(exc.smtp_error, bytes) \
        else str(exc.smtp_error)
    return f"{exc.smtp_code} {text}"
