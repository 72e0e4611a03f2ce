"""Every method of sdx.AsyncClient against the running service."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Dict, List

import pytest

import sdx
from service import Service
from support import Receiver, proxy

SCHEDULE = dict(platform="instagram", operation="posts", targets=["natgeo"], frequency="daily", timezone="Europe/Paris", starts_at="2030-01-01T09:00:00+01:00")


async def test_extract_and_quote(aclient: sdx.AsyncClient) -> None:
    job = await aclient.extract("instagram", "profile", "natgeo")
    assert isinstance(job, sdx.Job) and job.status == "completed"
    quote = await aclient.quote("twitter", "followers", "nasa", limit=2000)
    assert quote.affordable is True
    assert (await aclient.quote("instagram", "profile", targets=["a1", "b2"])).target_count == 2
    with pytest.raises(sdx.ValidationError) as failed:
        await aclient.extract("nowhere", "profile", "natgeo")
    assert failed.value.code == "unsupported_operation"


async def test_jobs(aclient: sdx.AsyncClient, tmp_path: Path) -> None:
    job = await aclient.jobs.create("twitter", "followers", "nasa", limit=2500)
    seen: List[sdx.Job] = []

    async def progress(state: sdx.Job) -> None:
        seen.append(state)

    done = await aclient.jobs.wait(job.id, timeout=60, on_progress=progress)
    assert done.status == "completed" and done.result_count == 2500
    assert seen[0].status in ("queued", "running") and seen[-1].status == "completed"
    assert (await aclient.jobs.get(job.id)).status == "completed"

    ids = [item.id async for item in aclient.jobs.items(job.id, page_size=700)]
    assert ids == [entry["id"] for entry in done.result]
    assert len(await aclient.jobs.items(job.id).to_list()) == 2500

    exported = await aclient.jobs.export(job.id, "ndjson", tmp_path / "f.ndjson")
    assert exported.path == str(tmp_path / "f.ndjson")
    assert [json.loads(line)["id"] for line in (tmp_path / "f.ndjson").read_text().splitlines()] == ids

    second = await aclient.jobs.create("instagram", "posts", "natgeo", limit=10)
    assert [j.id async for j in aclient.jobs.list(limit=1)][:2] == [second.id, job.id]
    await aclient.jobs.wait(second.id, timeout=30)

    big = await aclient.jobs.create("twitter", "followers", "elonmusk", limit=25_000)
    await aclient.jobs.cancel(big.id)
    assert (await aclient.jobs.wait(big.id, timeout=60)).status == "cancelled"
    slow = await aclient.jobs.create("twitter", "followers", "jack", limit=25_000)
    started = time.monotonic()
    try:
        with pytest.raises(sdx.WaitTimeoutError):
            await aclient.jobs.wait(slow.id, timeout=0.3)
        assert time.monotonic() - started < 1.5
    finally:
        await aclient.jobs.cancel(slow.id)


async def test_batches(aclient: sdx.AsyncClient, tmp_path: Path) -> None:
    batch = await aclient.batches.create("twitter", "followers", ["nasa", "esa"], limit=1200)
    done = await aclient.batches.wait(batch.id, timeout=60, on_progress=lambda b: None)
    assert done.status == "completed" and done.completed_count == 2
    assert (await aclient.batches.get(batch.id)).result_count == 2400
    assert len([i async for i in aclient.batches.items(batch.id)]) == 2400
    assert (await aclient.batches.export(batch.id, "csv", tmp_path / "b.csv")).bytes > 0
    other = await aclient.batches.create("instagram", "profile", ["natgeo"])
    assert [b.id async for b in aclient.batches.list(limit=1)] == [other.id, batch.id]
    assert (await aclient.batches.cancel(other.id)).id == other.id


async def test_schedules(aclient: sdx.AsyncClient) -> None:
    assert len((await aclient.schedules.preview("weekly", "UTC", "2030-01-01T09:00:00Z")).runs) > 1
    schedule = await aclient.schedules.create("Async", **SCHEDULE)  # type: ignore[arg-type]
    assert (await aclient.schedules.get(schedule.id)).name == "Async"
    assert (await aclient.schedules.update(schedule.id, "Renamed", **SCHEDULE)).name == "Renamed"  # type: ignore[arg-type]
    assert (await aclient.schedules.pause(schedule.id)).status == "paused"
    assert (await aclient.schedules.resume(schedule.id)).status == "active"
    assert (await aclient.schedules.run(schedule.id)).runs[0].trigger == "manual"
    assert [s.id async for s in aclient.schedules.list()] == [schedule.id]
    await aclient.schedules.delete(schedule.id)
    with pytest.raises(sdx.NotFoundError):
        await aclient.schedules.get(schedule.id)


async def test_usage(aclient: sdx.AsyncClient) -> None:
    await aclient.extract("instagram", "profile", "natgeo")
    assert (await aclient.usage.current()).credits_used >= 1
    assert len(await aclient.usage.daily()) == 30


async def test_webhooks(aclient: sdx.AsyncClient, workspace: Dict[str, str]) -> None:
    with Receiver() as inbox:
        hook = await aclient.webhooks.create(inbox.url + "/hooks")
        assert [h.id for h in await aclient.webhooks.list()] == [hook.id]
        assert (await aclient.webhooks.get(hook.id)).events == ["*"]
        await aclient.webhooks.test(hook.id)
        for _ in range(400):
            if inbox.messages:
                break
            await asyncio.sleep(0.05)
        message = inbox.messages[0]
        event = sdx.webhooks.verify(message.body, message.headers, hook.secret)
        assert event.type == "webhook.test" and event.workspace_id == workspace["workspace_id"]
        await aclient.webhooks.delete(hook.id)
        assert await aclient.webhooks.list() == []


async def test_concurrent_calls_share_one_client(aclient: sdx.AsyncClient) -> None:
    jobs = await asyncio.gather(*(aclient.jobs.create("instagram", "profile", f"user{i}") for i in range(5)))
    done = await asyncio.gather(*(aclient.jobs.wait(job.id, timeout=30) for job in jobs))
    assert [job.status for job in done] == ["completed"] * 5


async def test_extract_waits_when_the_service_answers_202_first(service: Service, workspace: Dict[str, str]) -> None:
    rule = lambda request, n: "to:/v1/jobs" if request.path == "/v1/extract" else "pass"  # noqa: E731
    with proxy(service.url, rule) as net:
        async with sdx.AsyncClient(workspace["api_key"], net.url) as client:
            job = await client.extract("twitter", "followers", "nasa", limit=1500)
    assert job.status == "completed" and len(job.result) == 1500
