"""Keeping a plugin from stopping hermes.

Plugin code runs inside hermes: in ``register(ctx)``, in hook callbacks, tool handlers and
slash commands. Whatever it raises there, ``SystemExit`` and ``KeyboardInterrupt``
included, is a failure of that plugin, not a request to stop hermes. The one exception is
a genuine shutdown of our own process:

- a Ctrl-C the user really pressed. :func:`watch_interrupts` makes SIGINT raise a
  :class:`UserInterrupt` (a ``KeyboardInterrupt``) that the handler remembers, so a real
  interrupt is told apart from a ``KeyboardInterrupt`` a plugin raises itself, even one of
  that class. Python runs signal handlers on the main thread only.
- in async dispatch, ``GeneratorExit`` (our coroutine is being closed) and a
  ``CancelledError`` while our own task is being cancelled.

``os._exit`` cannot be stopped in-process; nothing here tries.
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
    """Make SIGINT raise :class:`UserInterrupt`. Only replaces Python's default handler, and
    only from the main thread; returns whether real interrupts are now recognisable."""
    if threading.current_thread() is not threading.main_thread():
        return signal.getsignal(signal.SIGINT) is _on_sigint
    current = signal.getsignal(signal.SIGINT)
    if current is signal.default_int_handler:
        signal.signal(signal.SIGINT, _on_sigint)
        return True
    return current is _on_sigint


def user_interrupt(exc: BaseException) -> BaseException | None:
    """The user's Ctrl-C that ``exc`` is, or was raised while handling; else None. When
    hermes could not install its SIGINT handler (an embedding application has its own), a
    ``KeyboardInterrupt`` on the main thread is taken as the user's."""
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
    """Called with whatever plugin code raised (synchronously): re-raises the user's Ctrl-C
    behind it, if any; otherwise returns, and ``exc`` is the plugin's failure."""
    interrupt = user_interrupt(exc)
    if interrupt is not None:
        raise interrupt


def reraise_async_shutdown(exc: BaseException) -> None:
    """Like :func:`reraise_shutdown`, for plugin code awaited by a coroutine of ours: the
    closing of that coroutine (``GeneratorExit``) and the cancelling of our own task
    propagate too."""
    if isinstance(exc, GeneratorExit):
        raise exc
    import asyncio

    if isinstance(exc, asyncio.CancelledError):
        task = asyncio.current_task()
        if task is not None and task.cancelling():
            raise exc
    reraise_shutdown(exc)


def halts(exc: BaseException) -> bool:
    """True for what would stop hermes if let through: any ``BaseException`` that is not an
    ``Exception`` (``SystemExit``, ``KeyboardInterrupt``, ``GeneratorExit``, ...)."""
    return not isinstance(exc, Exception)


def first_line(exc: BaseException) -> str:
    """``Type: message``, its first line only (``Type`` alone when there is no message)."""
    message = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {message[0]}" if message else type(exc).__name__


def describe(exc: BaseException) -> str:
    """:func:`first_line`, with a hint for the ways a plugin may try to exit."""
    line = first_line(exc)
    if isinstance(exc, SystemExit):
        return f"{line} (the plugin called sys.exit; a plugin must raise an exception instead)"
    if isinstance(exc, KeyboardInterrupt):
        return f"{line} (raised by the plugin, not by a Ctrl-C)"
    if halts(exc):
        return f"{line} (a plugin must raise an Exception, not a BaseException)"
    return line
