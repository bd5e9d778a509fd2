"""A progress bar on stderr for run_many (tqdm-like, standard library only).

On a terminal it redraws one line; otherwise it prints a plain line at most
every `interval` seconds (and at the end), so logs stay readable. The ETA
is the remaining count at the average rate so far: honest for work of even
size, only a guess when jobs differ widely in length (it says "~").
"""
from __future__ import annotations

import sys
import time
from typing import Any, AsyncIterable, AsyncIterator, Dict, Iterable, Iterator, Optional, TextIO, TypeVar

R = TypeVar("R")


def _hms(s):
    s = int(s + 0.5)
    return "%d:%02d:%02d" % (s // 3600, s // 60 % 60, s % 60)


class Progress:
    """A progress line for `total` jobs (None: unknown) on `file` (stderr),
    redrawn every `interval` seconds (0.1 on a terminal, else 10), counting
    each finished job's status."""

    def __init__(self, total: Optional[int] = None, file: Optional[TextIO] = None, interval: Optional[float] = None,
                 desc: str = "surgebox") -> None:
        self.total = total
        self.file = file if file is not None else sys.stderr
        self.tty = hasattr(self.file, "isatty") and self.file.isatty()
        self.interval = interval if interval is not None else (0.1 if self.tty else 10.0)
        self.desc = desc
        self.done = 0
        self.counts: Dict[str, int] = {}
        self.start = time.monotonic()
        self._last = 0.0
        self._width = 0
        self._drawn = -1  # self.done when last drawn

    def update(self, result: Optional[Dict[str, Any]] = None) -> None:
        """Count one finished job (its Result tallies its status)."""
        self.done += 1
        if result is not None:
            st = result.get("status", "?")
            self.counts[st] = self.counts.get(st, 0) + 1
        now = time.monotonic()
        if now - self._last >= self.interval or self.done == self.total:
            self._last = now
            self._draw(now)

    def line(self, now: Optional[float] = None) -> str:
        """The text of the progress line at time `now` (default: now)."""
        el = (now or time.monotonic()) - self.start
        rate = self.done / el if el > 0 else 0.0
        counts = " ".join("%s=%d" % kv for kv in sorted(self.counts.items()))
        if self.total:
            frac = min(1.0, self.done / self.total)
            bar = "#" * int(frac * 20)
            eta = "~" + _hms((self.total - self.done) / rate) if rate > 0 else "?"
            return "%s %3d%% |%-20s| %d/%d [%s<%s, %.1f/s] %s" % (
                self.desc, int(frac * 100), bar, self.done, self.total, _hms(el), eta, rate, counts)
        return "%s %d [%s, %.1f/s] %s" % (self.desc, self.done, _hms(el), rate, counts)

    def _draw(self, now=None):
        self._drawn = self.done
        text = self.line(now).rstrip()
        if self.tty:
            pad = max(0, self._width - len(text))
            self.file.write("\r" + text + " " * pad)
            self._width = len(text)
        else:
            self.file.write(text + "\n")
        self.file.flush()

    def close(self) -> None:
        """Draw the final count (and end the line on a terminal)."""
        if self._drawn != self.done:
            self._draw()
        if self.tty:
            self.file.write("\n")
            self.file.flush()


def progress(results: Iterable[R], total: Optional[int] = None, **kw: Any) -> Iterator[R]:
    """Wrap run_many's results: `for r in progress(c.run_many(jobs), total=len(jobs)):`."""
    bar = Progress(total=total, **kw)
    try:
        for r in results:
            bar.update(r)
            yield r
    finally:
        bar.close()


async def aprogress(results: AsyncIterable[R], total: Optional[int] = None, **kw: Any) -> AsyncIterator[R]:
    """The same for AsyncClient.run_many: `async for r in aprogress(c.run_many(jobs), total=n):`."""
    bar = Progress(total=total, **kw)
    try:
        async for r in results:
            bar.update(r)
            yield r
    finally:
        bar.close()
