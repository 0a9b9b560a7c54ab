"""Server-Sent Events frames from a streamed response (the events and command streams)."""

from __future__ import annotations

from typing import Callable, Iterator, List, NamedTuple, Optional


class Event(NamedTuple):
    event: str
    data: str
    id: Optional[str]


def parse_events(readline: Callable[[], bytes]) -> Iterator[Event]:
    """Yields each frame until the stream ends. Comments (`:` lines) are keep-alives."""
    name: str = "message"
    data: List[str] = []
    last_id: Optional[str] = None
    while True:
        raw = readline()
        if not raw:
            return
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if not line:
            if data:
                yield Event(name, "\n".join(data), last_id)
            name, data = "message", []
            continue
        if line.startswith(":"):
            continue
        key, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if key == "event":
            name = value
        elif key == "data":
            data.append(value)
        elif key == "id":
            last_id = value
