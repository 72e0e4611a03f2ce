"""Every method of sdx.Client against the running service."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Dict, List

import pytest

import sdx
from service import Service
from support import Receiver, proxy


def test_extract_and_quote(client: sdx.Client, workspace: Dict[str, str]) -> None:
    job = client.extract("instagram", "profile", "natgeo")
    assert isinstance(job, sdx.Job)
    assert job.status == "completed"
    assert job.result[0].username == "natgeo"
    assert job.to_dict()["id"] == job.id

    quote = client.quote("twitter", "followers", "nasa", limit=2000)
    assert isinstance(quote, sdx.Quote)
    assert quote.affordable is True
    assert quote.max_credits > 0
    batch_quote = client.quote("instagram", "profile", targets=["natgeo", "nasa"])
    assert batch_quote.target_count == 2

    with pytest.raises(sdx.ValidationError) as failed:
        client.extract("instagram", "profile", "not a valid target!")
    assert failed.value.code == "invalid_target"


def test_jobs(client: sdx.Client, tmp_path: Path) -> None:
    job = client.jobs.create("twitter", "followers", "nasa", limit=2500)
    assert job.status == "queued"
    assert job.requested_limit == 2500

    seen: List[sdx.Job] = []
    done = client.jobs.wait(job.id, timeout=60, on_progress=seen.append)
    assert done.status == "completed"
    assert done.result_count == 2500
    # Each state reported once, the first as the stream opened, the last the end.
    assert seen[0].status in ("queued", "running") and seen[-1].status == "completed"
    prints = [(s.status, s.progress_stage, s.progress_current) for s in seen]
    assert all(a != b for a, b in zip(prints, prints[1:]))
    assert len(done.result) == 2500

    again = client.jobs.get(job.id)
    assert again.id == job.id and again.status == "completed"
    assert again.error is None

    items = list(client.jobs.items(job.id, page_size=300))
    assert [item.id for item in items] == [entry["id"] for entry in done.result]
    assert isinstance(items[0], sdx.Item) and items[0].platform == "twitter"

    exported = client.jobs.export(job.id, "ndjson", tmp_path / "followers.ndjson")
    lines = (tmp_path / "followers.ndjson").read_text().splitlines()
    assert exported.bytes == (tmp_path / "followers.ndjson").stat().st_size
    assert [json.loads(line)["id"] for line in lines] == [item.id for item in items]
    csv = client.jobs.export(job.id, "csv", tmp_path / "followers.csv")
    assert csv.content_type is not None and "csv" in csv.content_type
    assert (tmp_path / "followers.csv").read_text().count("\n") >= 2500
    assert sorted(p.name for p in tmp_path.iterdir()) == ["followers.csv", "followers.ndjson"]

    second = client.jobs.create("instagram", "posts", "natgeo", limit=10)
    listed = [j.id for j in client.jobs.list(limit=1)]
    assert listed[:2] == [second.id, job.id]
    assert [j.id for j in client.jobs.list(platform="twitter", include_result=False)] == [job.id]
    assert all(j.result is None for j in client.jobs.list(include_result=False))
    client.jobs.wait(second.id, timeout=30)


def test_jobs_cancel(client: sdx.Client) -> None:
    job = client.jobs.create("twitter", "followers", "elonmusk", limit=25_000)
    cancelled = client.jobs.cancel(job.id)
    assert cancelled.id == job.id
    assert cancelled.status == "cancelled" or cancelled.cancel_requested_at is not None
    final = client.jobs.wait(job.id, timeout=60)
    assert final.status == "cancelled"
    assert final.billed_credits == 0
    with pytest.raises(sdx.ConflictError) as failed:
        client.jobs.export(job.id, "json", "never.json")
    assert failed.value.code == "results_not_ready"


def test_wait_times_out_clearly(client: sdx.Client) -> None:
    job = client.jobs.create("twitter", "followers", "jack", limit=25_000)
    try:
        started = time.monotonic()
        with pytest.raises(sdx.WaitTimeoutError) as failed:
            client.jobs.wait(job.id, timeout=0.3)
        assert time.monotonic() - started < 1.5
        assert isinstance(failed.value, TimeoutError)
        assert failed.value.last is not None and failed.value.last.id == job.id
    finally:
        client.jobs.cancel(job.id)


def test_batches(client: sdx.Client, tmp_path: Path) -> None:
    batch = client.batches.create("twitter", "followers", ["nasa", "esa"], limit=1200)
    assert isinstance(batch, sdx.Batch)
    assert batch.target_count == 2
    seen: List[sdx.Batch] = []
    done = client.batches.wait(batch.id, timeout=60, on_progress=seen.append)
    assert done.status == "completed"
    assert done.completed_count == 2
    assert seen[-1].status == "completed"
    assert [child.target for child in done.jobs] == ["nasa", "esa"]

    assert client.batches.get(batch.id).result_count == 2400
    items = list(client.batches.items(batch.id, page_size=500))
    assert len(items) == 2400 and len({(i.id) for i in items}) == 2400

    exported = client.batches.export(batch.id, "ndjson", tmp_path / "batch.ndjson")
    assert exported.bytes > 0
    assert len((tmp_path / "batch.ndjson").read_text().splitlines()) == 2400

    other = client.batches.create("instagram", "profile", ["natgeo"])
    assert [b.id for b in client.batches.list(limit=1)] == [other.id, batch.id]
    cancelled = client.batches.cancel(other.id)
    assert cancelled.id == other.id
    assert client.batches.wait(other.id, timeout=30).status in ("cancelled", "completed")


SCHEDULE = dict(platform="instagram", operation="posts", targets=["natgeo"], frequency="daily", timezone="Europe/Paris", starts_at="2030-01-01T09:00:00+01:00")


def test_schedules(client: sdx.Client) -> None:
    preview = client.schedules.preview("daily", "Europe/Paris", "2030-01-01T09:00:00+01:00")
    assert len(preview.runs) > 1
    schedule = client.schedules.create("Daily natgeo", limit=24, **SCHEDULE)  # type: ignore[arg-type]
    assert isinstance(schedule, sdx.Schedule)
    assert schedule.requested_limit == 24 and schedule.status == "active"
    assert client.schedules.get(schedule.id).name == "Daily natgeo"
    updated = client.schedules.update(schedule.id, "Renamed", limit=12, **SCHEDULE)  # type: ignore[arg-type]
    assert updated.name == "Renamed" and updated.requested_limit == 12
    assert client.schedules.pause(schedule.id).status == "paused"
    assert client.schedules.resume(schedule.id).status == "active"
    ran = client.schedules.run(schedule.id)
    assert ran.runs[0].trigger == "manual"
    second = client.schedules.create("Second", **SCHEDULE)  # type: ignore[arg-type]
    assert [s.id for s in client.schedules.list(limit=1)] == [second.id, schedule.id]
    client.schedules.delete(schedule.id)
    with pytest.raises(sdx.NotFoundError) as failed:
        client.schedules.get(schedule.id)
    assert failed.value.code == "schedule_not_found"


def test_usage(client: sdx.Client) -> None:
    client.extract("instagram", "profile", "natgeo")
    usage = client.usage.current()
    assert isinstance(usage, sdx.Usage)
    assert usage.credits_used >= 1
    days = client.usage.daily(days=3)
    assert len(days) == 3
    assert isinstance(days[-1], sdx.DailyUsage)
    assert days[-1].jobs_completed >= 1


def test_webhooks_verify_what_the_service_signs(client: sdx.Client, workspace: Dict[str, str]) -> None:
    with Receiver() as inbox:
        hook = client.webhooks.create(inbox.url + "/hooks", events=["job.completed"], description="python")
        assert hook.secret.startswith("whsec_")
        assert [h.id for h in client.webhooks.list()] == [hook.id]
        assert client.webhooks.get(hook.id).url == inbox.url + "/hooks"

        delivery = client.webhooks.test(hook.id)
        assert delivery.event_type == "webhook.test"
        (message,) = inbox.received(1)
        event = sdx.webhooks.verify(message.body, message.headers, hook.secret)
        assert isinstance(event, sdx.WebhookEvent)
        assert event.type == "webhook.test" and event.workspace_id == workspace["workspace_id"]
        assert event.id == message.headers["webhook-id"]

        with pytest.raises(sdx.WebhookVerificationError):
            sdx.webhooks.verify(message.body + b" ", message.headers, hook.secret)
        with pytest.raises(sdx.WebhookVerificationError):
            sdx.webhooks.verify(message.body, message.headers, "whsec_" + "QUJD" * 8)
        with pytest.raises(sdx.WebhookVerificationError):
            sdx.webhooks.verify(message.body, message.headers, hook.secret, now=int(message.headers["webhook-timestamp"]) + 301)
        missing = {k: v for k, v in message.headers.items() if k != "webhook-signature"}
        with pytest.raises(sdx.WebhookVerificationError):
            sdx.webhooks.verify(message.body, missing, hook.secret)
        # Several secrets (a rotation): any one that matches is enough; headers in any case.
        upper = {k.upper(): v for k, v in message.headers.items()}
        assert sdx.webhooks.verify(message.body, upper, ["whsec_" + "QUJD" * 8, hook.secret]).id == event.id

        job = client.extract("instagram", "profile", "natgeo")
        _, completed = inbox.received(2)
        completed_event = sdx.webhooks.verify(completed.body, completed.headers, hook.secret)
        assert completed_event.type == "job.completed"
        assert completed_event.data.id == job.id

        client.webhooks.delete(hook.id)
        assert client.webhooks.list() == []


def test_objects(client: sdx.Client, fake_pandas: None) -> None:
    job = client.extract("twitter", "followers", "nasa", limit=30)
    as_dict: Dict[str, Any] = job.to_dict()
    as_dict["status"] = "changed"
    assert job.status == "completed"
    with pytest.raises(AttributeError):
        job.no_such_field
    with pytest.raises(AttributeError):
        setattr(job, "status", "x")
    assert "status" in job and job["status"] == "completed"

    frame = client.jobs.items(job.id).to_pandas()
    assert len(frame) == 30
    assert "username" in frame.columns
    assert job.to_pandas().shape[0] == 30
    jobs = client.jobs.list(include_result=False).to_pandas()
    assert jobs["id"] == [job.id]


def test_to_pandas_without_pandas(client: sdx.Client, service: Service) -> None:
    import sys

    assert "pandas" not in sys.modules
    job = client.extract("twitter", "followers", "nasa", limit=5)
    with pytest.raises(ImportError, match="pip install pandas"):
        client.jobs.items(job.id).to_pandas()


def test_extract_waits_when_the_service_answers_202_first(service: Service, workspace: Dict[str, str]) -> None:
    # The proxy turns the extract into a plain create, which answers 202 with the queued job, as
    # the service does when its sync timeout passes first.
    rule = lambda request, n: "to:/v1/jobs" if request.path == "/v1/extract" else "pass"  # noqa: E731
    with proxy(service.url, rule) as net, sdx.Client(workspace["api_key"], net.url) as client:
        job = client.extract("twitter", "followers", "nasa", limit=1500)
        assert job.status == "completed" and len(job.result) == 1500
        assert [r.path for r in net.seen][0] == "/v1/extract"
        assert any(r.path.endswith("/events") for r in net.seen)
