"""What the async client does differently from the sync client generated from it.

``scripts/unasync.py`` writes ``_client.py`` from ``_async_client.py`` by renaming; each async
name here is renamed to its sync twin (``AsyncProgress`` to ``Progress``, ``async_notify`` to
``notify``), so the difference stays in these few lines.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, TypeVar

T = TypeVar("T")

#: ``on_progress`` of the sync client: a plain function.
Progress = Callable[[T], None]
#: ``on_progress`` of the async client: a plain function or a coroutine function.
AsyncProgress = Callable[[T], Any]


def notify(callback: Progress[T], value: T) -> None:
    callback(value)


async def async_notify(callback: AsyncProgress[T], value: T) -> None:
    outcome = callback(value)
    if inspect.isawaitable(outcome):
        await outcome
