"""``sdx.Client`` (``_client.py``) is generated from ``sdx.AsyncClient`` by ``scripts/unasync.py``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Callable, Sequence, Tuple

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "unasync.py"


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("unasync", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


unasync = _script()
rewrite: Callable[[str, Sequence[Tuple[str, str]]], str] = unasync.rewrite


def test_the_checked_in_sync_client_is_what_the_script_writes() -> None:
    checked = subprocess.run([sys.executable, str(SCRIPT), "--check"], capture_output=True, text=True)
    assert checked.returncode == 0, checked.stderr
    assert (SCRIPT.parent.parent / "src" / "sdx" / "_client.py").read_text().startswith("# Generated from _async_client.py by clients/python/scripts/unasync.py")


def test_a_changed_sync_client_fails_the_check(tmp_path: Path) -> None:
    # The script run on a copy of the package whose sync client was edited by hand.
    (tmp_path / "scripts").mkdir()
    (tmp_path / "src" / "sdx").mkdir(parents=True)
    (tmp_path / "scripts" / "unasync.py").write_text(SCRIPT.read_text())
    source = SCRIPT.parent.parent / "src" / "sdx"
    (tmp_path / "src" / "sdx" / "_async_client.py").write_text((source / "_async_client.py").read_text())
    (tmp_path / "src" / "sdx" / "_client.py").write_text((source / "_client.py").read_text().replace("def extract(", "def extract_(", 1))
    checked = subprocess.run([sys.executable, str(tmp_path / "scripts" / "unasync.py"), "--check"], capture_output=True, text=True)
    assert checked.returncode == 1
    assert "-    def extract_(" in checked.stderr and "+    def extract(" in checked.stderr
    written = subprocess.run([sys.executable, str(tmp_path / "scripts" / "unasync.py")], capture_output=True, text=True)
    assert written.returncode == 0, written.stderr
    assert (tmp_path / "src" / "sdx" / "_client.py").read_text() == (source / "_client.py").read_text()


def test_the_rewrite_rules() -> None:
    source = textwrap.dedent(
        '''
        import asyncio
        import time
        from typing import AsyncIterator, Awaitable, Callable, Optional

        import httpx

        from ._paging import AsyncPager, Query


        class AsyncThings:
            """``client.things`` of ``AsyncClient`` (``AsyncPager``)."""

            def __init__(self, fetch: Callable[[Query], Awaitable[Optional[int]]]) -> None:
                self.http = httpx.AsyncClient(transport=httpx.AsyncBaseTransport())
                self.fetch = fetch

            async def all(self) -> AsyncIterator[int]:
                async for chunk in self.http.stream("GET", "/").aiter_bytes():  # `f"{x}"` stays
                    await asyncio.sleep(0.1)
                    yield len(chunk)
                count = (await self.fetch({})).bit_length()
                await self.http.aclose()

            async def __aenter__(self) -> "AsyncThings":
                return self
        '''
    )
    expected = textwrap.dedent(
        '''
        import time
        from typing import Callable, Iterator, Optional

        import httpx

        from ._paging import Query, SyncPager


        class AsyncThings:
            """``client.things`` of ``Client`` (``SyncPager``)."""

            def __init__(self, fetch: Callable[[Query], Optional[int]]) -> None:
                self.http = httpx.Client(transport=httpx.BaseTransport())
                self.fetch = fetch

            def all(self) -> Iterator[int]:
                for chunk in self.http.stream("GET", "/").iter_bytes():  # `f"{x}"` stays
                    time.sleep(0.1)
                    yield len(chunk)
                count = self.fetch({}).bit_length()
                self.http.close()

            def __enter__(self) -> "AsyncThings":
                return self
        '''
    )
    with pytest.raises(unasync.UnasyncError, match="AsyncThings"):
        rewrite(source, ())
    renamed = source.replace("AsyncThings", "Things")
    assert rewrite(renamed, ()) == expected.replace("AsyncThings", "Things")


def test_anything_async_left_over_stops_the_script() -> None:
    with pytest.raises(unasync.UnasyncError, match="awaited"):
        rewrite('def f() -> None:\n    """Every call is awaited."""\n', ())
    with pytest.raises(unasync.UnasyncError, match="async"):
        rewrite("async def f() -> None:\n    g = async_helper\n", ())
    # An f-string is text to the rewrite: an `await` in it is left over.
    with pytest.raises(unasync.UnasyncError, match="await"):
        rewrite('async def f() -> str:\n    return f"{await g()}"\n', ())
    with pytest.raises(unasync.UnasyncError, match="is not in the async source"):
        rewrite("x = 1\n", [("a phrase", "another")])
