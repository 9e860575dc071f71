"""Noticing a reply that repeats itself (a small model stuck in a loop streams one paragraph
until the server's context runs out).

:class:`RepetitionGuard` is fed the streamed text. It reports a loop when the end of the text
is one block repeated back to back, at least :data:`MIN_COPIES` times and over at least
:data:`MIN_SPAN` characters: a paragraph is caught after three copies, a short line only
after dozens, so the identical rows of a table or a list are not taken for a loop.
:attr:`RepetitionGuard.kept` is the text up to the end of the block's first copy (its
copies are taken to begin at a line start when the block holds a line break).

The check costs a few ``rfind`` calls and one string comparison every
:data:`CHECK_EVERY` characters.
"""

from __future__ import annotations

MIN_COPIES = 3
MIN_SPAN = 600  # characters the repeats must cover
MAX_PERIOD = 3000  # the longest block looked for
PROBE = 24  # the tail searched for earlier in the text
CHECK_EVERY = 32
_WINDOW = MAX_PERIOD * MIN_COPIES + PROBE
_TRIES = 16  # earlier places of the probe tried per check


class RepetitionGuard:
    """Watches one reply's text. ``feed`` returns True once the text loops."""

    __slots__ = ("pieces", "total", "window", "unchecked", "kept")

    def __init__(self) -> None:
        self.pieces: list[str] = []
        self.total = 0
        self.window = ""  # the last _WINDOW characters
        self.unchecked = 0
        self.kept: str | None = None  # set when a loop was found

    def feed(self, piece: str) -> bool:
        if self.kept is not None:
            return True
        self.pieces.append(piece)
        self.total += len(piece)
        self.window = (self.window + piece)[-_WINDOW:]
        self.unchecked += len(piece)
        if self.unchecked < CHECK_EVERY or len(self.window) < MIN_SPAN:
            return False
        self.unchecked = 0
        period = self._period()
        if period is None:
            return False
        start = self._run_start(period)
        cut = self.total - len(self.window) + start + period
        self.kept = "".join(self.pieces)[:cut].rstrip()
        return True

    @property
    def text(self) -> str:
        """Everything fed so far."""
        return "".join(self.pieces)

    def _period(self) -> int | None:
        """The length of a block the window ends with enough copies of, if any."""
        w = self.window
        n = len(w)
        probe = w[-PROBE:]
        end = n - 1
        for _ in range(_TRIES):
            found = w.rfind(probe, 0, end)
            if found < 0:
                return None
            period = n - PROBE - found
            if period > MAX_PERIOD or period * MIN_COPIES > n:
                return None
            copies = max(MIN_COPIES, -(-MIN_SPAN // period))
            span = copies * period
            if span <= n and w[n - span:n - period] == w[n - span + period:]:
                return period
            end = found + PROBE - 1
        return None

    def _run_start(self, period: int) -> int:
        """Where in the window the first copy begins: at the start of the repeating run,
        moved to the next line start within the copy if there is one (so the text kept ends
        where a paragraph or line of the block ends)."""
        w = self.window
        i = len(w) - MIN_COPIES * period
        while i > 0 and w[i - 1] == w[i - 1 + period]:
            i -= 1
        newline = w.find("\n", max(i - 1, 0), i + period - 1)
        return newline + 1 if newline + 1 >= i else i
