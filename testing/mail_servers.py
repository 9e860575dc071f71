"""Real mail servers on 127.0.0.1 for testing the email platform: Debian's dovecot as the IMAP
server (started from a generated config in a temporary folder, with a passwd-file of users
and their Maildirs; no system service), and an SMTP server on aiosmtpd that keeps what it
receives. Both raise :class:`MailServerUnavailable` (say why, so a test can skip) when they
cannot start here.

    with Dovecot({"agent@example.test": "secret"}) as imap, SmtpSink() as smtp:
        imap.append("agent@example.test", raw_mail)        # IMAP APPEND, as a delivery would
        [mail] = smtp.wait_for(1, to="alice@example.org")  # what the agent sent
"""

from __future__ import annotations

import contextlib
import email
import email.policy
import imaplib
import logging
import os
import pwd
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import Path
from typing import Any, Self

DOVECOT_PATHS = ("/usr/sbin/dovecot", "/usr/local/sbin/dovecot")
START_TIMEOUT = 20.0


class MailServerUnavailable(RuntimeError):
    """The server cannot run on this machine; the message says why."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def dovecot_binary() -> str | None:
    found = shutil.which("dovecot")
    return found or next((p for p in DOVECOT_PATHS if os.access(p, os.X_OK)), None)


class Dovecot:
    """dovecot serving IMAP (IDLE included) on a free 127.0.0.1 port, passwords from its own
    passwd-file. With ``tls=(certificate, key)`` (PEM files) it also offers STARTTLS on that
    port and implicit TLS on ``tls_port``."""

    def __init__(self, users: dict[str, str] | None = None,
                 tls: tuple[Path, Path] | None = None) -> None:
        self.port = self.tls_port = 0
        self.tls = tls
        self.folder: Path | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._users: dict[str, str] = dict(users or {})

    def start(self) -> Self:
        binary = dovecot_binary()
        if binary is None:
            raise MailServerUnavailable("dovecot is not installed (apt-get install "
                                        "dovecot-imapd)")
        self.folder = Path(tempfile.mkdtemp(prefix="hermes-dovecot-"))
        self.folder.chmod(0o755)  # dovecot's own users must reach its runtime folder
        internal, login, self._uid, self._gid = _accounts()
        for sub in ("run", "state", "mail"):
            (self.folder / sub).mkdir()
        os.chown(self.folder / "mail", self._uid, self._gid)
        self._write_users()
        last = ""
        for _ in range(3):  # a free port taken meanwhile by someone else: another one
            self.port, self.tls_port = free_port(), free_port() if self.tls else 0
            (self.folder / "dovecot.conf").write_text(
                _config(self.folder, self.port, internal, login, self.tls, self.tls_port))
            self._process = subprocess.Popen(
                [binary, "-F", "-c", str(self.folder / "dovecot.conf")],
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if self._wait_ready():
                return self
            last = self._stop_process()
        self.close()
        raise MailServerUnavailable(f"dovecot did not start: {last.strip()[-600:]}")

    def _wait_ready(self) -> bool:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self._process is None or self._process.poll() is not None:
                return False
            with contextlib.suppress(OSError), socket.create_connection(
                    ("127.0.0.1", self.port), timeout=2) as sock:
                sock.settimeout(5)
                if sock.recv(64).startswith(b"* OK"):
                    return True
            time.sleep(0.05)
        return False

    def _stop_process(self) -> str:
        process, self._process = self._process, None
        if process is None:
            return ""
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(10)
        error = process.stderr.read().decode(errors="replace") if process.stderr else ""
        log = self.folder / "dovecot.log" if self.folder else None
        if log is not None and log.exists():
            error += log.read_text(errors="replace")
        return error

    def add_user(self, address: str, password: str) -> None:
        """Another account (its Maildir is made at its first login). dovecot rereads its
        passwd-file at most once a second: an account added to a running server may not log
        in at once, so pass the accounts to the constructor where you can."""
        self._users[address] = password
        if self.folder is not None:
            self._write_users()

    def _write_users(self) -> None:
        assert self.folder is not None
        mail = self.folder / "mail"
        lines = [f"{user}:{{PLAIN}}{secret}:{self._uid}:{self._gid}::{mail / user}"
                 for user, secret in self._users.items()]
        (self.folder / "passwd").write_text("".join(line + "\n" for line in lines))

    def empty(self, address: str) -> None:
        """Delete every mail of ``address``'s INBOX (a fresh mailbox for the next test)."""
        with self.session(address) as client:
            status, data = client.search(None, "ALL")
            if status == "OK" and data and data[0]:
                client.store("1:*", "+FLAGS.SILENT", "(\\Deleted)")
                client.expunge()

    @contextlib.contextmanager
    def session(self, address: str) -> Any:
        """An IMAP connection logged in as ``address`` with INBOX selected."""
        client = imaplib.IMAP4("127.0.0.1", self.port, timeout=10)
        try:
            client.login(address, self._users[address])
            client.select("INBOX")
            yield client
        finally:
            with contextlib.suppress(Exception):
                client.logout()

    def append(self, address: str, raw: bytes | EmailMessage, flags: str = "") -> int:
        """Deliver ``raw`` into ``address``'s INBOX (IMAP APPEND); its UID."""
        data = raw.as_bytes() if isinstance(raw, EmailMessage) else raw
        with self.session(address) as client:
            status, answer = client.append("INBOX", f"({flags})" if flags else None, None,
                                           data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n"))
        match = re.search(rb"APPENDUID \d+ (\d+)", answer[0] or b"")
        if status != "OK" or match is None:
            raise AssertionError(f"APPEND failed: {status} {answer}")
        return int(match.group(1))

    def flags(self, address: str) -> dict[int, set[str]]:
        """Every mail of ``address``'s INBOX: its UID and flags."""
        with self.session(address) as client:
            status, lines = client.uid("FETCH", "1:*", "(FLAGS)")
        found: dict[int, set[str]] = {}
        for line in lines if status == "OK" else []:
            match = re.search(rb"UID (\d+) FLAGS \(([^)]*)\)|FLAGS \(([^)]*)\) UID (\d+)",
                              line if isinstance(line, bytes) else b"")
            if match:
                uid = match.group(1) or match.group(4)
                names = match.group(2) if match.group(1) else match.group(3)
                found[int(uid)] = set(names.decode().split())
        return found

    def seen(self, address: str) -> set[int]:
        return {uid for uid, names in self.flags(address).items() if "\\Seen" in names}

    def close(self) -> None:
        self._stop_process()
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)
            self.folder = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _accounts() -> tuple[str, str, int, int]:
    """(internal user, login user, uid, gid of the mail files): dovecot refuses to run its
    login and mail processes as root, so as root they run as the package's own users."""
    if os.getuid() != 0:
        me = pwd.getpwuid(os.getuid())
        return me.pw_name, me.pw_name, me.pw_uid, me.pw_gid
    try:
        internal, login = pwd.getpwnam("dovecot"), pwd.getpwnam("dovenull")
    except KeyError:
        raise MailServerUnavailable("running as root, dovecot needs its users dovecot and "
                                    "dovenull (made by the dovecot-core package)") from None
    return internal.pw_name, login.pw_name, internal.pw_uid, internal.pw_gid


def _config(folder: Path, port: int, internal: str, login: str,
            tls: tuple[Path, Path] | None = None, tls_port: int = 0) -> str:
    import grp

    group = grp.getgrgid(pwd.getpwnam(internal).pw_gid).gr_name
    ssl = f"yes\nssl_cert = <{tls[0]}\nssl_key = <{tls[1]}" if tls else "no"
    return f"""\
base_dir = {folder}/run
state_dir = {folder}/state
log_path = {folder}/dovecot.log
protocols = imap
listen = 127.0.0.1
ssl = {ssl}
disable_plaintext_auth = no
auth_mechanisms = plain login
mail_location = maildir:~/Maildir
first_valid_uid = 1
default_internal_user = {internal}
default_internal_group = {group}
default_login_user = {login}
mailbox_idle_check_interval = 1 secs
service imap-login {{
  chroot =
  inet_listener imap {{
    address = 127.0.0.1
    port = {port}
  }}
  inet_listener imaps {{
    address = 127.0.0.1
    port = {tls_port}
  }}
}}
service anvil {{
  chroot =
}}
service stats {{
  unix_listener stats-writer {{
    mode = 0666
  }}
}}
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {folder}/passwd
}}
userdb {{
  driver = passwd-file
  args = username_format=%u {folder}/passwd
}}
"""


@dataclass
class Received:
    """One mail the SMTP server took: the envelope and the parsed message."""

    mail_from: str
    rcpt_to: list[str]
    message: EmailMessage
    raw: bytes


class SmtpSink:
    """An SMTP server (aiosmtpd) on a free 127.0.0.1 port that keeps every mail it takes.
    With ``users`` it asks for AUTH (over plain text: it is the loopback). ``fail(code,
    text)`` answers the next DATA with that reply instead (a 451, say). With ``tls`` (an
    ``ssl.SSLContext``) it requires STARTTLS, or with ``implicit_tls`` speaks TLS at once."""

    def __init__(self, users: dict[str, str] | None = None, tls: Any = None,
                 implicit_tls: bool = False):
        self.users = dict(users or {})
        self.tls, self.implicit_tls = tls, implicit_tls
        self.received: list[Received] = []
        self.logins: list[str] = []
        self.attempts = 0  # DATA commands, the refused ones included
        self._failures: list[str] = []
        self._changed = threading.Condition()
        self._controller: Any = None
        self.port = 0

    def start(self) -> Self:
        try:
            from aiosmtpd.controller import Controller
            from aiosmtpd.smtp import AuthResult
        except ImportError:
            raise MailServerUnavailable("aiosmtpd is not installed (pip install aiosmtpd)") \
                from None
        sink = self

        class Handler:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
                with sink._changed:
                    sink.attempts += 1
                    if sink._failures:
                        return sink._failures.pop(0)
                raw = bytes(envelope.original_content or envelope.content)
                message = email.message_from_bytes(raw, policy=email.policy.default)
                with sink._changed:
                    sink.received.append(Received(envelope.mail_from, list(envelope.rcpt_tos),
                                                  message, raw))  # type: ignore[arg-type]
                    sink._changed.notify_all()
                return "250 OK"

        def authenticate(server: Any, session: Any, envelope: Any, mechanism: str,
                         data: Any) -> Any:
            login = getattr(data, "login", b"")
            login = login.decode() if isinstance(login, bytes) else str(login)
            password = getattr(data, "password", b"")
            password = password.decode() if isinstance(password, bytes) else str(password)
            ok = sink.users.get(login) == password
            if ok:
                sink.logins.append(login)
            return AuthResult(success=ok)

        # AUTH without TLS is what a loopback test wants: not worth a warning per connection
        logging.getLogger("mail.log").setLevel(logging.ERROR)
        warnings.filterwarnings("ignore", "Requiring AUTH while not requiring TLS")
        self.port = free_port()
        options: dict[str, Any] = {}
        if self.users:
            options = {"authenticator": authenticate, "auth_required": True,
                       "auth_require_tls": False}
        if self.tls is not None and self.implicit_tls:
            options["ssl_context"] = self.tls
        elif self.tls is not None:
            options.update(tls_context=self.tls, require_starttls=True)
        self._controller = Controller(Handler(), hostname="127.0.0.1", port=self.port,
                                      **options)
        try:
            self._controller.start()
        except Exception as exc:
            raise MailServerUnavailable(f"aiosmtpd did not start: {exc}") from None
        return self

    def fail(self, code: int, text: str) -> None:
        with self._changed:
            self._failures.append(f"{code} {text}")

    def to(self, address: str) -> list[Received]:
        with self._changed:
            return [r for r in self.received if address.lower() in
                    (a.lower() for a in r.rcpt_to)]

    def wait_for(self, count: int, to: str, timeout: float = 30.0) -> list[Received]:
        """The first ``count`` mails sent to ``to``, once there are that many."""
        with self._changed:
            if not self._changed.wait_for(lambda: len(self.to(to)) >= count, timeout):
                raise AssertionError(f"{len(self.to(to))} mail(s) to {to}, not {count}, "
                                     f"after {timeout}s")
        return self.to(to)[:count]

    def close(self) -> None:
        if self._controller is not None:
            self._controller.stop()
            self._controller = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.close()


def self_signed_certificate(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and localhost and its key (PEM), made with openssl: the
    certificate is its own CA (what ``tls_ca_file`` names)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise MailServerUnavailable("openssl is not installed")
    certificate, key = folder / "server.crt", folder / "server.key"
    result = subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
         "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
         "-keyout", str(key), "-out", str(certificate)], capture_output=True, text=True)
    if result.returncode:
        raise MailServerUnavailable(f"openssl could not make a certificate: {result.stderr}")
    return certificate, key
