"""What a CLI command hands back: its tables, what JSON and CSV show, and how it exits."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from profiler_core.cli.json_stream import iter_json
from profiler_core.cli.tables import Table, iter_csv, iter_text, render_text


@dataclass
class Output:
    """Tables for text; ``document`` for JSON (default: every table by name); ``csv_table``
    for CSV (default: the first table); a non-zero ``exit_code`` with a ``message``."""

    tables: list[Table]
    header: list[tuple[str, str]] = field(default_factory=list)
    document: dict[str, Any] | None = None
    #: A Table, or a function making it or its chunks (rows of one table, in order): only
    #: CSV needs it, and a compare's long form is big.
    csv_table: Table | Callable[[], Table | Iterable[Table]] | None = None
    exit_code: int = 0
    message: str | None = None
    #: What makes the input partial (incomplete, mismatched, cut short, written under a
    #: failed writer): each is a ``warning:`` line on stderr, and the exit status is 5.
    warnings: list[str] = field(default_factory=list)
    #: What a reader should know that does not make the input partial (a file written
    #: before checksums, whose damage could not be detected): a ``note:`` line on stderr
    #: each; the exit status stays.
    notes: list[str] = field(default_factory=list)

    def render_pieces(self, form: str) -> Iterator[str]:
        """``render(form)`` in pieces: text and JSON tables a chunk of rows at a time, so a
        400k-row table is written as it is formatted rather than held whole."""
        if form == "json":
            yield from iter_json(self._document())
        elif form == "csv":
            yield from self._csv_pieces()
        else:
            yield from iter_text(self.tables, self.header)

    def render(self, form: str) -> str:
        if form == "json":
            return "".join(iter_json(self._document()))
        if form == "csv":
            return "".join(self._csv_pieces())
        return render_text(self.tables, self.header)

    def _csv_pieces(self) -> Iterator[str]:
        """The CSV table (the first table by default), written a chunk of rows at a time;
        chunks after the first add their rows under the first one's header."""
        made = self.csv_table() if callable(self.csv_table) else self.csv_table
        if made is None:
            made = self.tables[0] if self.tables else Table("empty", {})
        chunks = [made] if isinstance(made, Table) else made
        for index, chunk in enumerate(chunks):
            yield from iter_csv(chunk, header=index == 0)

    def _document(self) -> dict[str, Any]:
        """What JSON shows: ``document``, else every table by name."""
        if self.document is not None:
            return self.document
        return {table.name.replace(" ", "_"): table for table in self.tables}


def category_column(label: str) -> str:
    """A memory category's column name in CSV and JSON: ``Gaps (alignment)`` ->
    ``gaps_alignment``."""
    words = "".join(c if c.isalnum() else " " for c in label.lower()).split()
    return "_".join(words)
