"""Keeping a plugin from stopping hermes.

Plugin code runs inside hermes: in ``register(ctx)``, in hook callbacks, tool handlers and
slash commands. Whatever it raises there, ``SystemExit`` and ``KeyboardInterrupt``
included, is a failure of that plugin, not a request to stop hermes. The one exception is
a genuine shutdown of our own process:

- a Ctrl-C the user really pressed. :func:`watch_interrupts` makes SIGINT raise
  :class:`UserInterrupt` (a ``KeyboardInterrupt``), so a real interrupt is told apart
  from a ``KeyboardInterrupt`` a plugin raises itself. Python runs signal handlers on the
  main thread only, so on any other thread a ``KeyboardInterrupt`` is always the plugin's.
- in async dispatch, ``GeneratorExit`` (our coroutine is being closed) and a
  ``CancelledError`` while our own task is being cancelled.

``os._exit`` cannot be stopped in-process; nothing here tries.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType


class UserInterrupt(KeyboardInterrupt):
    """A Ctrl-C the user pressed (raised by the SIGINT handler :func:`watch_interrupts` sets)."""


def _on_sigint(signum: int, frame: FrameType | None) -> None:
    raise UserInterrupt()


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


def _from_user(exc: BaseException) -> bool:
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        if isinstance(link, UserInterrupt):
            return True
        seen.add(id(link))
        link = link.__cause__ or link.__context__
    return False


def is_user_interrupt(exc: BaseException) -> bool:
    """True for a ``KeyboardInterrupt`` that comes from a real Ctrl-C. When hermes could not
    install its SIGINT handler (an embedding application has its own), a
    ``KeyboardInterrupt`` on the main thread is taken as real."""
    if not isinstance(exc, KeyboardInterrupt):
        return False
    if _from_user(exc):
        return True
    watching = signal.getsignal(signal.SIGINT) is _on_sigint
    return not watching and threading.current_thread() is threading.main_thread()


def is_plugin_fault(exc: BaseException) -> bool:
    """Should ``exc``, raised by plugin code called synchronously, count as that plugin's
    failure (True) or propagate (False: a real Ctrl-C)?"""
    return isinstance(exc, Exception) or not is_user_interrupt(exc)


def is_async_plugin_fault(exc: BaseException) -> bool:
    """Like :func:`is_plugin_fault`, for plugin code awaited by a coroutine of ours."""
    if isinstance(exc, GeneratorExit):
        return False  # our coroutine is being closed: it must unwind
    import asyncio

    if isinstance(exc, asyncio.CancelledError):
        task = asyncio.current_task()
        return task is None or not task.cancelling()
    return is_plugin_fault(exc)


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
