"""Keeping a plugin from stopping hermes: whatever plugin code raises, ``SystemExit`` and
``KeyboardInterrupt`` included, fails that plugin. Only a Ctrl-C the user really pressed
(the SIGINT handler marks it; Python runs it on the main thread) and, in async dispatch, the
closing or cancelling of our own coroutine propagate. ``os._exit`` cannot be stopped.
"""

from __future__ import annotations

import signal
import threading
import weakref
from types import FrameType


class UserInterrupt(KeyboardInterrupt):
    """A Ctrl-C the user pressed (raised by the SIGINT handler :func:`watch_interrupts` sets)."""


_SIGNALLED: "weakref.WeakSet[UserInterrupt]" = weakref.WeakSet()  # raised by _on_sigint


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    interrupt = UserInterrupt()
    _SIGNALLED.add(interrupt)
    raise interrupt


def watch_interrupts() -> bool:
    """Make SIGINT raise :class:`UserInterrupt` (only replacing Python's default handler, from
    the main thread); returns whether real interrupts are now recognisable."""
    current = signal.getsignal(signal.SIGINT)
    if current is signal.default_int_handler and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, _on_sigint)
        return True
    return current is _on_sigint


def user_interrupt(exc: BaseException) -> BaseException | None:
    """The user's Ctrl-C that ``exc`` is, or was raised while handling; else None. Without
    our SIGINT handler (an embedding application has its own), a ``KeyboardInterrupt`` on
    the main thread is taken as the user's."""
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, UserInterrupt) and link in _SIGNALLED:
            return link
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    if isinstance(exc, KeyboardInterrupt) and signal.getsignal(signal.SIGINT) is not _on_sigint \
            and threading.current_thread() is threading.main_thread():
        return exc
    return None


def reraise_shutdown(exc: BaseException) -> None:
    """Re-raise the user's Ctrl-C behind ``exc`` (what plugin code raised), if any."""
    interrupt = user_interrupt(exc)
    if interrupt is not None:
        raise interrupt


def reraise_async_shutdown(exc: BaseException) -> None:
    """:func:`reraise_shutdown`, also propagating the closing of our coroutine
    (``GeneratorExit``) and the cancelling of our own task."""
    if isinstance(exc, GeneratorExit):
        raise exc
    import asyncio

    if isinstance(exc, asyncio.CancelledError):
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise exc
    reraise_shutdown(exc)


def halts(exc: BaseException) -> bool:
    """True for what would stop hermes if let through: a ``BaseException`` not an ``Exception``."""
    return not isinstance(exc, Exception)


def first_line(exc: BaseException) -> str:
    """``Type: message``, its first line only (``Type`` alone when there is no message)."""
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__


_HINTS = ((SystemExit, "the plugin called sys.exit; a plugin must raise an exception instead"),
          (KeyboardInterrupt, "raised by the plugin, not by a Ctrl-C"),
          (BaseException, "a plugin must raise an Exception, not a BaseException"))


def describe(exc: BaseException) -> str:
    """:func:`first_line`, with a hint for the ways a plugin may try to exit."""
    hint = next((h for kind, h in _HINTS if isinstance(exc, kind)), "") if halts(exc) else ""
    return f"{first_line(exc)} ({hint})" if hint else first_line(exc)
