"""client.monitors, sync and async, against the running service: two runs of drifting profiles
read back as series (to pandas, one row per point), an export, runs and changes paged, and
another workspace's monitor not found."""

from __future__ import annotations

import asyncio
import csv
import time
from pathlib import Path
from typing import Dict

import pytest

import sdx
from service import Service

TARGETS = ["py_sandbox_drift_100", "py2_sandbox_drift_400"]


def test_monitors(client: sdx.Client, service: Service, tmp_path: Path, fake_pandas: None) -> None:
    monitor = client.monitors.create(
        "instagram",
        "profile",
        TARGETS,
        "weekly",
        name="Rivals",
        day_of_week="friday",
        time_of_day="08:15",
        timezone="Europe/Paris",
        alerts=[{"metric": "followers_count", "condition": "change_pct_above", "threshold": 0.5, "target": TARGETS[1]}],
    )
    assert isinstance(monitor, sdx.Monitor)
    assert monitor.targets == TARGETS and monitor.day_of_week == "friday" and monitor.time_of_day == "08:15"
    assert monitor.estimated_credits_per_run == 2 and monitor.estimated_credits_per_month == 8
    assert isinstance(monitor.alerts[0], sdx.MonitorAlert) and monitor.alerts[0].threshold == 0.5
    assert [m.id for m in client.monitors.list()] == [monitor.id]
    assert client.monitors.get(monitor.id).name == "Rivals"
    renamed = client.monitors.update(monitor.id, name="Renamed", frequency="daily")
    assert renamed.name == "Renamed" and renamed.frequency == "daily" and renamed.day_of_week is None
    assert client.monitors.pause(monitor.id).status == "paused"
    assert client.monitors.resume(monitor.id).status == "active"
    with pytest.raises(sdx.ValidationError) as refused:
        client.monitors.create("instagram", "followers", ["natgeo"], "daily")
    assert refused.value.code == "operation_not_monitorable"

    first = client.monitors.run(monitor.id)
    assert isinstance(first, sdx.MonitorRun) and first.trigger == "manual"
    assert service.monitor_run(first.id) == "completed"
    time.sleep(1.1)
    second = client.monitors.run(monitor.id)
    assert service.monitor_run(second.id) == "completed"
    assert [r.id for r in client.monitors.runs(monitor.id)] == [second.id, first.id]
    assert [r.id for r in client.monitors.runs(monitor.id, limit=1)] == [second.id, first.id]

    followers = client.monitors.series(monitor.id, metric="followers_count")
    assert sorted(s.target for s in followers) == sorted(TARGETS)
    for series in followers:
        assert isinstance(series, sdx.Series) and series.item_id is None
        assert len(series.points) == 2 and series.points[1].value > series.points[0].value
    frame = followers.to_pandas()
    assert frame.columns == ["target", "item_id", "metric", "at", "value"]
    assert len(frame) == 4
    assert sorted(set(frame["target"])) == sorted(TARGETS)
    assert client.monitors.series(monitor.id, target=TARGETS[0], to="2000-01-01T00:00:00Z") == []

    exported = client.monitors.export_series(monitor.id, "csv", tmp_path / "series.csv", metric="followers_count")
    with open(exported.path, newline="") as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == 4 and set(rows[0]) == {"target", "item_id", "metric", "at", "value"}

    client.monitors.delete(monitor.id)
    with pytest.raises(sdx.NotFoundError) as gone:
        client.monitors.get(monitor.id)
    assert gone.value.code == "monitor_not_found"


async def test_monitors_async(aclient: sdx.AsyncClient, service: Service, workspace: Dict[str, str]) -> None:
    monitor = await aclient.monitors.create("instagram", "profile", TARGETS, "hourly", time_of_day="00:20")
    assert monitor.frequency == "hourly" and monitor.estimated_credits_per_month == 2 * 730
    assert [m.id async for m in aclient.monitors.list()] == [monitor.id]
    assert (await aclient.monitors.update(monitor.id, name="Hourly")).name == "Hourly"
    assert (await aclient.monitors.pause(monitor.id)).paused_reason == "user"
    assert (await aclient.monitors.resume(monitor.id)).status == "active"
    first = await aclient.monitors.run(monitor.id)
    assert await asyncio.to_thread(service.monitor_run, first.id) == "completed"
    await asyncio.sleep(1.1)
    second = await aclient.monitors.run(monitor.id)
    assert await asyncio.to_thread(service.monitor_run, second.id) == "completed"
    assert [r.id async for r in aclient.monitors.runs(monitor.id)] == [second.id, first.id]
    series = await aclient.monitors.series(monitor.id, target=TARGETS[1], metric="followers_count")
    assert len(series) == 1 and len(series[0].points) == 2

    other = service.workspace(credits=10)
    async with sdx.AsyncClient(api_key=other["api_key"], base_url=service.url) as stranger:
        with pytest.raises(sdx.NotFoundError):
            await stranger.monitors.get(monitor.id)
    await aclient.monitors.delete(monitor.id)


def test_monitor_changes(client: sdx.Client, service: Service) -> None:
    monitor = client.monitors.create("instagram", "profile", TARGETS, "daily")
    first = client.monitors.run(monitor.id)
    assert service.monitor_run(first.id) == "completed"
    # The first run records observations and no changes.
    assert client.monitors.changes(monitor.id).to_list() == []
    time.sleep(1.1)
    second = client.monitors.run(monitor.id)
    assert service.monitor_run(second.id) == "completed"
    changes = client.monitors.changes(monitor.id).to_list()
    grew = [c for c in changes if c.kind == "metric_changed" and c.field == "followers_count"]
    assert sorted(c.target for c in grew) == sorted(TARGETS)
    assert all(isinstance(c, sdx.MonitorChange) and c.run_id == second.id and c.change_pct is not None and c.change_pct > 0 for c in grew)
    assert [c.id for c in client.monitors.changes(monitor.id, limit=1)] == [c.id for c in changes]

    mine = client.monitors.changes(monitor.id, target=TARGETS[1], kind="metric_changed").to_list()
    assert mine and all(c.target == TARGETS[1] and c.kind == "metric_changed" for c in mine)
