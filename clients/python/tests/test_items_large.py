"""A 25,000-item job read item by item, sync and async: none lost, none repeated, in the order of
the stored result (its streamed ndjson export)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Optional

import pytest

import sdx
from service import Service

COUNT = 25_000


@pytest.fixture(scope="module")
def large(service: Service) -> Dict[str, str]:
    ws = service.workspace(credits=100_000)
    with sdx.Client(ws["api_key"], service.url) as client:
        job = client.jobs.create("twitter", "followers", "elonmusk", limit=COUNT)
        done = client.jobs.wait(job.id, timeout=90)
        assert done.status == "completed" and done.result_count == COUNT
    return {**ws, "job_id": job.id}


@pytest.fixture(scope="module")
def exported_ids(service: Service, large: Dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> List[str]:
    target = tmp_path_factory.mktemp("export") / "followers.ndjson"
    with sdx.Client(large["api_key"], service.url) as client:
        client.jobs.export(large["job_id"], "ndjson", target)
    ids = [json.loads(line)["id"] for line in target.read_text().splitlines()]
    assert len(ids) == COUNT
    return ids


def test_sync_items_lose_and_repeat_nothing(service: Service, large: Dict[str, str], exported_ids: List[str]) -> None:
    with sdx.Client(large["api_key"], service.url) as client:
        pages = 0
        ids: List[Optional[str]] = []
        for page in client.jobs.items(large["job_id"]).pages():
            pages += 1
            ids.extend(item.id for item in page)
    assert pages == COUNT // 1000
    assert len(ids) == COUNT
    assert len(set(ids)) == COUNT
    assert ids == exported_ids


async def test_async_items_lose_and_repeat_nothing(service: Service, large: Dict[str, str], exported_ids: List[str]) -> None:
    async with sdx.AsyncClient(large["api_key"], service.url) as client:
        ids = [item.id async for item in client.jobs.items(large["job_id"], page_size=777)]
    assert len(ids) == COUNT
    assert ids == exported_ids
