"""A received mail as what the gateway needs: who sent it (the ``From`` address), which thread
it belongs to (the first ``References`` entry, else ``In-Reply-To``, else its own
``Message-ID``), its text (the plain part, else the HTML part as text, quoted history cut
off) and its attachments (images and other files, each size-limited). Pure: no I/O."""

from __future__ import annotations

import email
import email.policy
import html
import re
from dataclasses import dataclass, field
from email.message import EmailMessage
from email.utils import getaddresses

MESSAGE_ID = re.compile(r"<([^<>\s]+)>")
#: automated senders never get an answer (a reply could start a mail loop)
AUTOMATED_LOCALPARTS = ("noreply", "no-reply", "no_reply", "donotreply", "do-not-reply",
                        "mailer-daemon", "postmaster", "bounce")
IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_QUOTE_HEAD = re.compile(r"^(On .{0,300}wrote:|-{2,} ?Original Message ?-{2,}|Le .{0,300}a écrit :|"
                         r"Am .{0,300}schrieb .{0,200}:)\s*$", re.I)
_AUTH_METHOD = re.compile(r"\b(dmarc|dkim|spf)\s*=\s*([a-z]+)", re.I)
_AUTH_PROP = re.compile(r"\b(header\.from|header\.d|smtp\.mailfrom|smtp\.from)\s*=\s*([^\s;]+)",
                        re.I)


@dataclass
class Attachment:
    kind: str  # "image" or "file"
    filename: str
    media_type: str
    data: bytes = field(repr=False)

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass
class Mail:
    sender: str  # the From address, lower case; "" when it has none (or several)
    sender_name: str
    subject: str
    message_id: str  # without angle brackets
    in_reply_to: str
    references: list[str]
    text: str
    attachments: list[Attachment] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # attachments over the size limit
    automated: bool = False
    authenticated: bool = False
    auth_reason: str = ""

    @property
    def thread_root(self) -> str:
        """The thread's first message: what every message of the thread shares."""
        if self.references:
            return self.references[0]
        return self.in_reply_to or self.message_id

    @property
    def starts_thread(self) -> bool:
        return not self.references and not self.in_reply_to


def message_ids(value: str | None) -> list[str]:
    """The ids in a ``References`` / ``In-Reply-To`` header, without angle brackets."""
    return MESSAGE_ID.findall(str(value or ""))


def parse(raw: bytes, *, own_address: str = "", fallback_id: str = "",
          max_attachment_bytes: int = 10_000_000, skip_attachments: bool = False,
          authserv_id: str = "") -> Mail:
    message = email.message_from_bytes(raw, policy=email.policy.default)
    assert isinstance(message, EmailMessage)
    senders = [addr for _, addr in getaddresses([str(h) for h in message.get_all("From", [])])
               if addr]
    sender = senders[0].strip().lower() if len(senders) == 1 else ""
    names = [name for name, _ in getaddresses([str(message.get("From", ""))])]
    ids = message_ids(message.get("Message-ID"))
    mail = Mail(sender=sender, sender_name=(names[0] if names else "").strip(),
                subject=" ".join(str(message.get("Subject", "")).split()),
                message_id=ids[0] if ids else fallback_id,
                in_reply_to=next(iter(message_ids(message.get("In-Reply-To"))), ""),
                references=message_ids(message.get("References")),
                text=strip_quoted(body_text(message)))
    mail.automated = _automated(message, sender, own_address)
    mail.authenticated, mail.auth_reason = sender_authenticated(message, sender, authserv_id)
    if not skip_attachments:
        for part in message.iter_attachments():
            _attach(mail, part, max_attachment_bytes)
    return mail


def _attach(mail: Mail, part: EmailMessage, limit: int) -> None:
    if part.is_multipart():  # a forwarded mail (message/rfc822) is kept as one file
        data = part.as_bytes()
    else:
        data = part.get_payload(decode=True) or b""
    media_type = part.get_content_type()
    filename = safe_filename(part.get_filename() or "", media_type, len(mail.attachments) + 1)
    if len(data) > limit:
        mail.left_out.append(f"{filename} ({_size(len(data))}, over the {_size(limit)} limit)")
        return
    if not data:
        return
    kind = "image" if media_type in IMAGE_TYPES and _looks_like_image(data) else "file"
    mail.attachments.append(Attachment(kind, filename, media_type, data))


def _looks_like_image(data: bytes) -> bool:
    return data.startswith((b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a")) or (
        data[:4] == b"RIFF" and data[8:12] == b"WEBP")


def safe_filename(name: str, media_type: str, index: int) -> str:
    """A file name that is only a name: no folders, no leading dots, printable, bounded."""
    name = re.split(r"[/\\]", name)[-1]  # a path's last part only
    name = re.sub(r"[\x00-\x1f\x7f:]+", "_", name).strip(" .")[:120]
    if not name:
        name = f"attachment-{index}.{media_type.rpartition('/')[2] or 'bin'}"
    return name


def _size(count: int) -> str:
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f} MB"
    return f"{count / 1000:.0f} KB" if count >= 1000 else f"{count} bytes"


def describe(attachment: Attachment, path: str) -> str:
    """The line the agent reads about one attachment."""
    return (f"[{attachment.kind} attached: {attachment.filename} ({attachment.media_type}, "
            f"{_size(attachment.size)}) saved at {path}]")


def body_text(message: EmailMessage) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        content = part.get_content()
    except (LookupError, ValueError):  # an unknown charset
        payload = part.get_payload(decode=True) or b""
        content = payload.decode("utf-8", errors="replace")
    text = str(content)
    return html_to_text(text) if part.get_content_type() == "text/html" else text


def html_to_text(markup: str) -> str:
    """HTML mail as text: blocks as lines, tags gone, entities decoded (good enough to read)."""
    text = re.sub(r"(?is)<(script|style|head)\b.*?</\1\s*>", "", markup)
    text = re.sub(r"(?i)<br\s*/?>|</(p|div|li|tr|h[1-6])\s*>", "\n", text)
    text = re.sub(r"(?s)<[^>]*>", "", text)
    text = html.unescape(text).replace("\xa0", " ")
    return re.sub(r"\n{3,}", "\n\n", "\n".join(line.rstrip() for line in text.splitlines()))


def strip_quoted(text: str) -> str:
    """``text`` without the quoted history a reply carries below it (the session has it)."""
    lines = text.replace("\r\n", "\n").split("\n")
    end = len(lines)
    while end and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith(">")):
        end -= 1
    if end < len(lines) and end and _QUOTE_HEAD.match(lines[end - 1].strip()):
        end -= 1
    for index, line in enumerate(lines[:end]):  # a top-posted reply above the old mail
        if index and _QUOTE_HEAD.match(line.strip()) and (
                line.lstrip().startswith("-") or _quoted_next(lines, index + 1)):
            end = index
            break
    kept = "\n".join(lines[:end]).strip()
    return kept or text.strip()


def _quoted_next(lines: list[str], start: int) -> bool:
    following = next((line for line in lines[start:] if line.strip()), "")
    return following.lstrip().startswith(">")


def _automated(message: EmailMessage, sender: str, own_address: str) -> bool:
    if not sender or sender == own_address.lower():
        return True
    local = sender.partition("@")[0]
    if any(local.startswith(word) for word in AUTOMATED_LOCALPARTS):
        return True
    if str(message.get("Auto-Submitted", "no")).strip().lower() != "no":
        return True  # RFC 3834: an auto-reply, a vacation notice, a bounce
    if str(message.get("Precedence", "")).strip().lower() in ("bulk", "list", "junk"):
        return True
    return bool(message.get("List-Id") or message.get("List-Unsubscribe"))


def _domain(address: str) -> str:
    return address.rpartition("@")[2].strip().lower().rstrip(".")


def _aligned(a: str, b: str) -> bool:
    a, b = a.lower().rstrip("."), b.lower().rstrip(".")
    return bool(a and b) and (a == b or a.endswith("." + b) or b.endswith("." + a))


def sender_authenticated(message: EmailMessage, sender: str,
                         authserv_id: str = "") -> tuple[bool, str]:
    """Whether the receiving server vouched for the ``From`` domain: the topmost
    ``Authentication-Results`` header (the one the own server added; with ``authserv_id``,
    the first from that server) shows DMARC passing, or SPF or DKIM passing for a domain
    aligned with it. ``From`` alone is whatever the sender typed."""
    domain = _domain(sender)
    if not domain:
        return False, "no From address"
    headers = [" ".join(str(h).split()) for h in message.get_all("Authentication-Results", [])]
    if authserv_id:
        headers = [h for h in headers if _aligned(h.split(";", 1)[0].strip(), authserv_id)]
    if not headers:
        return False, ("no Authentication-Results header" + (
            f" from {authserv_id}" if authserv_id else ""))
    verdict = headers[0]
    methods = {m.lower(): r.lower() for m, r in _AUTH_METHOD.findall(verdict)}
    props = {p.lower(): v.strip('"').lower() for p, v in _AUTH_PROP.findall(verdict)}
    if methods.get("dmarc") == "pass":
        return True, "dmarc=pass"
    spf = props.get("smtp.mailfrom") or props.get("smtp.from") or ""
    if methods.get("spf") == "pass" and _aligned(_domain(spf) if "@" in spf else spf, domain):
        return True, "spf=pass"
    if methods.get("dkim") == "pass" and _aligned(props.get("header.d", ""), domain):
        return True, "dkim=pass"
    return False, f"not authenticated ({verdict[:120]})"
