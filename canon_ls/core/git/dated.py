"""Each governed file's change time, by laying the asset listing over the history's paths."""

from __future__ import annotations

from array import array
from bisect import bisect_right
from collections.abc import Iterator

from canon_ls.core.git.changes import ChangeTimes
from canon_ls.core.git.pathtable import decode, lower_row

__all__ = ["Runs", "Timeline", "runs_of"]


class Runs:
    """The listing's governed files as runs of consecutive rows with one governing article (start
    row, end row, article index): a directory's files are one run, not one entry each."""

    __slots__ = ("ends", "govs", "starts")

    def __init__(self) -> None:
        self.starts = array("i")
        self.ends = array("i")
        self.govs = array("i")

    def __iter__(self) -> Iterator[tuple[int, int, int]]:
        return zip(self.starts, self.ends, self.govs, strict=True)

    def __len__(self) -> int:
        return len(self.govs)


def runs_of(governing: array) -> Runs:
    """Runs of `governing` (per listing row: its article's index, -1 for none), -1 left out."""
    out = Runs()
    starts, ends, govs = out.starts.append, out.ends.append, out.govs.append
    n = len(governing)
    row = 0
    while row < n:
        g = governing[row]
        end = row + 1
        while end < n and governing[end] == g:
            end += 1
        if g >= 0:
            starts(row)
            ends(end)
            govs(g)
        row = end
    return out


class Timeline:
    """The listing (`blob`, its files in byte order, NUL-ended) dated by `times`: per row its
    history row (-1 when git does not know the path) and its change time."""

    def __init__(self, blob: bytes, rows: int, times: ChangeTimes) -> None:
        history, dirty = times.state()
        self.commits = history.commits
        self.table = history.newest
        self._hblob, self._hstarts, self._hfirst, self._hat, self._hextra = self.table.parts()
        self._times = times
        self.dirty = dirty
        self.row_of = array("i", [-1]) * rows  # listing row -> history row
        self.time = array("d", [0.0]) * rows  # listing row -> change time (once dated)
        self.undated: dict[int, str] = {}  # listing row -> path, for rows git does not date
        self._late: dict[str, float] = {}  # undated paths touched_since() gave, dated
        self._segments: list[tuple[int, int, int]] = []  # (listing row, history row, count)
        self._lay(blob, rows)
        for path in dirty:
            row = self._listing_row(self.table.index(path))
            if row >= 0:
                self.undated[row] = path

    def _lay(self, blob: bytes, rows: int) -> None:
        """Find the stretches the listing shares with the history's paths (both in byte order)
        and copy the history's times over them; the listing's other rows are undated."""
        hblob, hstarts = self._hblob, self._hstarts
        view = memoryview(hblob)
        total = len(self._hfirst)
        ctime = [float(c.time) for c in self.commits]
        htime = array("d", map(ctime.__getitem__, self._hfirst))
        row, at, h = 0, 0, 0
        size = len(blob)
        while at < size and h < total:
            count = _common(blob, at, view, hstarts, h, total)
            if count:
                self._segments.append((row, h, count))
                self.row_of[row : row + count] = array("i", range(h, h + count))
                self.time[row : row + count] = htime[h : h + count]
                at += hstarts[h + count] - hstarts[h]
                row += count
                h += count
                continue
            end = blob.index(b"\0", at)
            mine = blob[at:end]
            if mine < hblob[hstarts[h] : hstarts[h + 1] - 1]:
                self.undated[row] = decode(mine)  # not in the history: untracked
                row += 1
                at = end + 1
            else:  # history paths the listing lacks (deleted, the store, ignored): skip them
                h = lower_row(hblob, hstarts, mine, h, total)
        for path in decode(blob[at:]).split("\0")[:-1] if at < size else ():
            self.undated[row] = path
            row += 1
        if row != rows:
            raise ValueError("the listing and its survey disagree")

    def _listing_row(self, h: int) -> int:
        if h < 0:
            return -1
        k = bisect_right(self._segments, h, key=lambda s: s[1]) - 1
        if k < 0:
            return -1
        row, start, count = self._segments[k]
        return row + h - start if h < start + count else -1

    def date(self, governing: array) -> None:
        """Give every governed undated row its mtime (one stat each, as ChangeTimes.of())."""
        mtime, time = self._times.mtime, self.time
        for row, path in self.undated.items():
            if governing[row] >= 0:
                time[row] = mtime(path)

    def path(self, row: int) -> str:
        found = self.undated.get(row)
        if found is not None:
            return found
        h = self.row_of[row]
        return decode(self._hblob[self._hstarts[h] : self._hstarts[h + 1] - 1])

    def newest(self, runs: Runs, articles: list[str]) -> dict[str, tuple[float, str]]:
        """Article -> (newest change, that file): newest_changes() by runs (the first file of
        the newest time in listing order, articles in the order their first file comes)."""
        best: dict[int, tuple[float, int]] = {}
        time = self.time
        get = best.get
        for start, end, g in runs:
            if end - start == 1:
                top, at = time[start], start
            else:
                part = time[start:end]
                top = max(part)
                at = start + part.index(top)
            seen = get(g)
            if seen is None or top > seen[0]:
                best[g] = (top, at)
        if self.undated:
            return {articles[g]: (ts, self.path(row)) for g, (ts, row) in best.items()}
        blob, starts, row_of = self._hblob, self._hstarts, self.row_of
        out = {}
        for g, (ts, row) in best.items():
            h = row_of[row]
            out[articles[g]] = (ts, decode(blob[starts[h] : starts[h + 1] - 1]))
        return out

    def touched_since(
        self, rows: list[int], cut: float
    ) -> tuple[dict[object, list[str]], list[str]]:
        """ChangeTimes.touched_since() for listing rows: no lookup per path."""
        commits, first_of, at, extra = self.commits, self._hfirst, self._hat, self._hextra
        row_of, undated, path_of = self.row_of, self.undated, self.path
        hits: dict[object, list[str]] = {}
        late: list[str] = []
        for row in rows:
            h = row_of[row]
            if h < 0:
                path = undated[row]
                late.append(path)
                self._late[path] = self.time[row]
                continue
            first = first_of[h]
            dirty = undated.get(row)  # tracked but changed since: both dated and undated
            if dirty is not None:
                late.append(dirty)
                self._late[dirty] = self.time[row]
            if commits[first].time < cut:
                continue
            path = dirty if dirty is not None else path_of(row)
            for i in (first, *extra[at[h] : at[h + 1]]):
                commit = commits[i]
                if commit.time >= cut:
                    hits.setdefault(commit, []).append(path)
        return hits, late

    def mtime(self, path: str) -> float:
        """The mtime of a path touched_since() found undated, as date() read it (no second stat)."""
        found = self._late.get(path)
        return found if found is not None else self._times.mtime(path)


def _common(blob: bytes, at: int, view: memoryview, starts: array, h: int, total: int) -> int:
    """How many whole entries from blob[at:] equal the history's from row h on: galloping
    then bisecting, each probe comparing only the bytes past the known-equal stretch."""
    base = starts[h]
    good, step = 0, 1
    bad = total - h + 1
    while good + 1 < bad:
        probe = min(good + step, bad - 1)
        lo, hi = starts[h + good], starts[h + probe]
        if blob.startswith(view[lo:hi], at + lo - base):
            good = probe
            step *= 2
        else:
            bad = probe
            step = 1
    return good
