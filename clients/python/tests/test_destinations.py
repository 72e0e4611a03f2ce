"""client.destinations (sync and async) against the running service and a loopback S3 beside it:
create (after the service's check write), list, get, delete, the typed errors of an unknown
destination (404) and of a store that cannot be written to (422), and the delivery of a job's
and a batch's export, read back from the bucket."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any, Dict, Optional

import httpx
import pytest

import sdx
from service import Service


@pytest.fixture(scope="module")
def s3(service: Service) -> Dict[str, str]:
    return service.s3()


def _create(client: sdx.Client, s3: Dict[str, str], **overrides: Any) -> sdx.Destination:
    fields: Dict[str, Any] = dict(
        name="Results bucket",
        bucket=s3["bucket"],
        access_key_id=s3["access_key_id"],
        secret_access_key=s3["secret_access_key"],
        prefix="py/",
        endpoint=s3["endpoint"],
        force_path_style=True,
    )
    fields.update(overrides)
    return client.destinations.create(**fields)


def _stored(s3: Dict[str, str], key: str) -> bytes:
    """The object as the loopback S3 serves it (it answers unsigned reads)."""
    response = httpx.get(f"{s3['endpoint']}/{s3['bucket']}/{key}")
    assert response.status_code == 200, f"{key}: {response.status_code} {response.text[:200]}"
    return response.content


def _delivered_job(client: sdx.Client, id: str) -> sdx.Job:
    deadline = time.monotonic() + 30
    while True:
        job = client.jobs.get(id)
        if job.delivery is not None and job.delivery.status != "pending":
            return job
        assert time.monotonic() < deadline, f"the delivery of {id} is still pending: {job.delivery!r}"
        time.sleep(0.2)


def test_create_list_get_delete(client: sdx.Client, s3: Dict[str, str]) -> None:
    created = _create(client, s3, region="eu-west-1", format="csv")
    assert isinstance(created, sdx.Destination)
    assert created.id.startswith("dst_")
    assert (created.name, created.type, created.bucket, created.prefix, created.region) == ("Results bucket", "s3", s3["bucket"], "py/", "eu-west-1")
    assert (created.endpoint, created.force_path_style, created.access_key_id, created.format) == (s3["endpoint"], True, s3["access_key_id"], "csv")
    assert "secret" not in json.dumps(created.to_dict())
    plain = _create(client, s3, name="defaults", prefix=None)
    assert (plain.prefix, plain.region, plain.format) == ("", "us-east-1", "ndjson")

    listed = client.destinations.list()
    assert [d.id for d in listed] == [plain.id, created.id]
    assert all(isinstance(d, sdx.Destination) for d in listed)
    assert client.destinations.get(created.id) == created

    client.destinations.delete(plain.id)
    assert [d.id for d in client.destinations.list()] == [created.id]
    with pytest.raises(sdx.NotFoundError) as missing:
        client.destinations.get(plain.id)
    assert missing.value.status == 404 and missing.value.code == "destination_not_found"
    assert isinstance(missing.value.detail, dict) and missing.value.detail["destination_id"] == plain.id
    with pytest.raises(sdx.NotFoundError) as again:
        client.destinations.delete(plain.id)
    assert again.value.code == "destination_not_found"
    with pytest.raises(sdx.NotFoundError) as unknown:
        client.jobs.create("instagram", "profile", "natgeo", destination_id="dst_unknown")
    assert unknown.value.code == "destination_not_found"


def test_unreachable_stores_raise_a_validation_error(client: sdx.Client, s3: Dict[str, str]) -> None:
    with pytest.raises(sdx.ValidationError) as closed:
        _create(client, s3, name="closed", endpoint="http://127.0.0.1:9")
    assert closed.value.status == 422 and closed.value.code == "destination_unreachable"
    assert "ECONNREFUSED" in str(closed.value)
    with pytest.raises(sdx.ValidationError) as missing:
        _create(client, s3, name="missing", bucket="no-such-bucket")
    assert missing.value.code == "destination_unreachable"
    assert isinstance(missing.value.detail, dict) and missing.value.detail["bucket"] == "no-such-bucket"
    assert "bucket does not exist" in str(missing.value).lower()
    # A body the schema refuses is a validation error too, with its field issues.
    with pytest.raises(sdx.ValidationError) as invalid:
        _create(client, s3, name="bad", format="parquet")
    assert invalid.value.code == "validation_error" and invalid.value.errors[0]["loc"][:2] == ["body", "format"]
    assert client.destinations.list() == []


def test_a_job_delivers_its_export_to_the_destination(client: sdx.Client, s3: Dict[str, str]) -> None:
    destination = _create(client, s3, prefix="jobs/")
    job = client.jobs.create("twitter", "followers", "nasa", limit=150, destination_id=destination.id)
    assert isinstance(job.delivery, sdx.Delivery)
    assert (job.delivery.destination_id, job.delivery.status, job.delivery.key) == (destination.id, "pending", f"jobs/{job.id}.ndjson")
    assert client.jobs.wait(job.id, timeout=60).status == "completed"
    delivered = _delivered_job(client, job.id)
    assert delivered.delivery is not None
    assert delivered.delivery.status == "succeeded", delivered.delivery.error
    assert delivered.delivery.attempts >= 1 and delivered.delivery.error is None and delivered.delivery.delivered_at is not None
    lines = _stored(s3, delivered.delivery.key).decode().splitlines()
    assert [json.loads(line)["id"] for line in lines] == [item.id for item in client.jobs.items(job.id)]
    plain = client.jobs.create("instagram", "profile", "natgeo")
    assert plain.delivery is None


async def _adelivered_batch(aclient: sdx.AsyncClient, id: str) -> sdx.Batch:
    deadline = time.monotonic() + 30
    while True:
        batch = await aclient.batches.get(id)
        delivery: Optional[sdx.Delivery] = batch.delivery
        if delivery is not None and delivery.status != "pending":
            return batch
        assert time.monotonic() < deadline, f"the delivery of {id} is still pending: {delivery!r}"
        await asyncio.sleep(0.2)


async def test_async_create_list_get_delete_and_errors(aclient: sdx.AsyncClient, s3: Dict[str, str]) -> None:
    created = await aclient.destinations.create(
        "async bucket",
        s3["bucket"],
        s3["access_key_id"],
        s3["secret_access_key"],
        prefix="async/",
        endpoint=s3["endpoint"],
        force_path_style=True,
        format="json",
    )
    assert isinstance(created, sdx.Destination) and created.format == "json" and created.prefix == "async/"
    assert [d.id for d in await aclient.destinations.list()] == [created.id]
    assert await aclient.destinations.get(created.id) == created

    batch = await aclient.batches.create("instagram", "profile", ["natgeo", "nasa"], destination_id=created.id)
    assert isinstance(batch.delivery, sdx.Delivery) and batch.delivery.key == f"async/{batch.id}.json"
    await aclient.batches.wait(batch.id, timeout=60)
    delivered = await _adelivered_batch(aclient, batch.id)
    assert delivered.delivery is not None and delivered.delivery.status == "succeeded", delivered.delivery
    exported = json.loads(_stored(s3, delivered.delivery.key))
    assert sorted(entry["target"] for entry in exported) == ["nasa", "natgeo"]

    with pytest.raises(sdx.ValidationError) as unreachable:
        await aclient.destinations.create("closed", s3["bucket"], s3["access_key_id"], s3["secret_access_key"], endpoint="http://127.0.0.1:9", force_path_style=True)
    assert unreachable.value.code == "destination_unreachable"
    with pytest.raises(sdx.ValidationError) as wrong_key:
        await aclient.destinations.create("wrong key", s3["bucket"], "NOT-A-KEY", s3["secret_access_key"], endpoint=s3["endpoint"], force_path_style=True)
    assert wrong_key.value.code == "destination_unreachable"

    await aclient.destinations.delete(created.id)
    assert await aclient.destinations.list() == []
    with pytest.raises(sdx.NotFoundError) as missing:
        await aclient.destinations.get(created.id)
    assert missing.value.code == "destination_not_found"
    with pytest.raises(sdx.NotFoundError) as again:
        await aclient.destinations.delete(created.id)
    assert again.value.code == "destination_not_found"
