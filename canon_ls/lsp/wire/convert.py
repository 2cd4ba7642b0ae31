"""The one place that converts positions between the client's encoding and code points."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field

from lsprotocol import types
from pygls.workspace import PositionCodec
from pygls.workspace.position_codec import ServerTextPosition


@dataclass(eq=False)
class Text:
    """A document's text with a lazily built line index (one pass, reused per version)."""

    source: str
    version: int | None = None
    _starts: list[int] | None = field(default=None, init=False, repr=False)

    @property
    def starts(self) -> list[int]:
        if self._starts is None:
            starts = [0]
            find = self.source.find
            i = find("\n")
            while i != -1:
                starts.append(i + 1)
                i = find("\n", i + 1)
            self._starts = starts
        return self._starts

    @property
    def line_count(self) -> int:
        return len(self.starts)

    def line(self, n: int) -> str:
        """Line `n` without its line ending ('' past the end); line 0 without building the index."""
        if n == 0 and self._starts is None:
            end = self.source.find("\n")
            text = self.source if end == -1 else self.source[:end]
        elif 0 <= n < len(self.starts):
            starts = self.starts
            end = starts[n + 1] - 1 if n + 1 < len(starts) else len(self.source)
            text = self.source[starts[n] : end]
        else:
            return ""
        return text[:-1] if text.endswith("\r") else text

    def line_col(self, offset: int) -> tuple[int, int]:
        """Code-point offset in the source -> (line, column)."""
        starts = self.starts
        line = bisect_right(starts, offset) - 1
        return line, offset - starts[line]


# The start of a file: where a code lens, a location of a whole article or a file-level
# diagnostic points. Line 0, column 0 reads the same in every position encoding.
_ORIGIN = types.Position(line=0, character=0)
TOP = types.Range(start=_ORIGIN, end=_ORIGIN)


def to_column(codec: PositionCodec, line_text: str, character: int) -> int:
    """Client column on `line_text` -> code-point column."""
    if line_text.isascii():  # every encoding counts ASCII alike; pygls walks char by char
        return max(0, min(character, len(line_text)))
    if character >= codec.client_num_units(line_text):  # past the end means the end (LSP)
        return len(line_text)
    position = types.Position(line=0, character=max(0, character))
    return codec.position_from_client_units([line_text], position).character


def to_client_column(codec: PositionCodec, line_text: str, column: int) -> int:
    column = max(0, min(column, len(line_text)))
    if line_text[:column].isascii():  # the common case, without pygls' per-character walk
        return column
    return codec.position_to_client_units(
        [line_text], ServerTextPosition(line=0, character=column)
    ).character


def position(codec: PositionCodec, text: Text, line: int, column: int) -> types.Position:
    return types.Position(line=line, character=to_client_column(codec, text.line(line), column))


def span(codec: PositionCodec, text: Text, line: int, start: int, end: int) -> types.Range:
    """A range on one line, columns in code points."""
    line_text = text.line(line)
    return types.Range(
        start=types.Position(line=line, character=to_client_column(codec, line_text, start)),
        end=types.Position(line=line, character=to_client_column(codec, line_text, end)),
    )


def clamped_span(codec: PositionCodec, text: Text, line: int, start: int, end: int) -> types.Range:
    """A finding's range: its line clamped to the text, the whole line when it has no columns."""
    line = min(max(line, 0), max(text.line_count - 1, 0))
    if end <= start:
        start, end = 0, len(text.line(line))
    return span(codec, text, line, start, end)


def offsets(codec: PositionCodec, text: Text, start: int, end: int) -> types.Range:
    """A range between two code-point offsets of the whole source (may span lines)."""
    sl, sc = text.line_col(start)
    el, ec = text.line_col(end)
    return types.Range(start=position(codec, text, sl, sc), end=position(codec, text, el, ec))


def line_end(codec: PositionCodec, text: Text, line: int) -> types.Position:
    return types.Position(line=line, character=codec.client_num_units(text.line(line)))


def whole(codec: PositionCodec, text: Text) -> types.Range:
    """The range covering the whole source (for whole-document replacements)."""
    return types.Range(start=_ORIGIN, end=line_end(codec, text, text.line_count - 1))


def from_client(codec: PositionCodec, text: Text, pos: types.Position) -> tuple[int, int, str]:
    """Client position -> (line, code-point column, the line's text)."""
    line_text = text.line(pos.line)
    return pos.line, to_column(codec, line_text, pos.character), line_text
