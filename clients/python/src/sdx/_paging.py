"""Iterators over every item of every page, for the sync and the async client.

A page fetcher answers ``(items, next_query)``; ``next_query`` is None after the last page. The
first call's filters stay on every page, whatever the service's next-page link repeats of them.
Only one page is held at a time, so iterating a 25,000-item result stays flat in memory.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Awaitable, Callable, Dict, Generic, Iterator, List, Optional, Tuple, TypeVar

from ._models import to_pandas

T = TypeVar("T")

Query = Dict[str, Any]
PageResult = Tuple[List[T], Optional[Query]]


class SyncPager(Generic[T]):
    """Iterate it for every item across pages (``for job in client.jobs.list(): ...``).

    ``pages()`` iterates page by page; ``to_list()`` and ``to_pandas()`` read everything.
    """

    def __init__(self, fetch_page: Callable[[Query], PageResult[T]], query: Optional[Query] = None) -> None:
        self._fetch_page = fetch_page
        self._query: Query = dict(query or {})

    def pages(self) -> Iterator[List[T]]:
        query: Optional[Query] = self._query
        while query is not None:
            items, following = self._fetch_page(query)
            yield items
            query = None if following is None else {**self._query, **following}

    def __iter__(self) -> Iterator[T]:
        for page in self.pages():
            yield from page

    def to_list(self) -> List[T]:
        """Every item, in one list (mind the size of what you ask for)."""
        return list(self)

    def to_pandas(self) -> Any:
        """Every item as a pandas DataFrame, one row per item (pandas must be installed)."""
        return to_pandas(self)


class AsyncPager(Generic[T]):
    """``async for`` it for every item across pages; ``pages()``, ``await to_list()``, ``await to_pandas()``."""

    def __init__(self, fetch_page: Callable[[Query], Awaitable[PageResult[T]]], query: Optional[Query] = None) -> None:
        self._fetch_page = fetch_page
        self._query: Query = dict(query or {})

    async def pages(self) -> AsyncIterator[List[T]]:
        query: Optional[Query] = self._query
        while query is not None:
            items, following = await self._fetch_page(query)
            yield items
            query = None if following is None else {**self._query, **following}

    def __aiter__(self) -> AsyncIterator[T]:
        return self._items()

    async def _items(self) -> AsyncIterator[T]:
        async for page in self.pages():
            for item in page:
                yield item

    async def to_list(self) -> List[T]:
        return [item async for item in self]

    async def to_pandas(self) -> Any:
        return to_pandas(await self.to_list())
