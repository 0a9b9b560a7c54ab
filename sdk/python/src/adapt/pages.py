"""Lists: `?limit=&cursor=` pages of `{"items": [...], "nextCursor": ...}` as one iterator."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Iterator, Optional, Type, TypeVar

from . import _model

if TYPE_CHECKING:
    from ._transport import Transport

T = TypeVar("T")


def paginate(transport: "Transport", path: str, cls: Type[T], page_size: int = 50,
             query: Optional[Dict[str, Any]] = None) -> Iterator[T]:
    """Yields every item, fetching the next page only when the caller reaches it."""
    cursor: Optional[str] = None
    while True:
        q: Dict[str, Any] = dict(query or {})
        q["limit"] = page_size
        if cursor:
            q["cursor"] = cursor
        page = transport.call("GET", path, query=q)
        for item in page.get("items", []):
            yield _model.from_json(cls, item)
        cursor = page.get("nextCursor")
        if not cursor:
            return
