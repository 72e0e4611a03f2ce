"""The error mapping: every identifier the service documents (its closed map of identifiers to
statuses, read from the running service), then the main ones triggered live."""

from __future__ import annotations

from typing import Dict, Type

import pytest

import sdx
from service import Service
from support import canned

CLASSES: Dict[int, Type[sdx.APIError]] = {
    401: sdx.AuthenticationError,
    402: sdx.InsufficientCreditsError,
    403: sdx.PermissionDeniedError,
    404: sdx.NotFoundError,
    409: sdx.ConflictError,
    422: sdx.ValidationError,
    429: sdx.RateLimitError,
}


def test_every_documented_identifier_maps_to_its_typed_error(service: Service) -> None:
    statuses: Dict[str, int] = service.command("error_statuses")
    assert len(statuses) >= 50 and statuses["job_not_found"] == 404
    for code, status in statuses.items():
        body = {"detail": {"error": code, "message": f"about {code}", "limit": 5}}
        with canned(status, {"x-request-id": f"req_{code}", "retry-after": "0"}, body) as server:
            with sdx.Client("sdx_live_x", server.url, max_retries=0) as client:
                with pytest.raises(sdx.APIError) as failed:
                    client.jobs.get("job_1")
        error = failed.value
        assert type(error) is CLASSES.get(status, sdx.APIError), code
        assert (error.status, error.code, error.request_id) == (status, code, f"req_{code}")
        assert error.detail == body["detail"]
        assert f"about {code}" in str(error) and f"req_{code}" in str(error)
        if status == 429:
            assert isinstance(error, sdx.RateLimitError) and error.retry_after == 0


def test_validation_errors_and_bodies_that_are_not_json() -> None:
    issues = [{"loc": ["body", "limit"], "msg": "Input should be less than or equal to 25000", "type": "less_than_equal"}]
    with canned(422, {}, {"detail": issues}) as server, sdx.Client("k", server.url) as client:
        with pytest.raises(sdx.ValidationError) as failed:
            client.jobs.get("job_1")
    assert failed.value.code == "validation_error"
    assert failed.value.errors == issues
    assert "body.limit" in str(failed.value)
    with canned(500, {}, b"<html>oops</html>") as server, sdx.Client("k", server.url) as client:
        with pytest.raises(sdx.APIError) as broken:
            client.jobs.get("job_1")
    assert (broken.value.status, broken.value.code, broken.value.detail) == (500, "http_500", "<html>oops</html>")


def test_live_authentication_and_permission(service: Service, workspace: Dict[str, str]) -> None:
    with sdx.Client("sdx_live_" + "0" * 40, service.url) as client:
        with pytest.raises(sdx.AuthenticationError) as failed:
            client.usage.current()
        assert failed.value.code == "invalid_api_key" and failed.value.request_id
    with sdx.Client("", service.url) as client:
        with pytest.raises(sdx.AuthenticationError) as missing:
            client.usage.current()
        assert missing.value.code == "missing_authentication"
    viewer = service.workspace(role="viewer")
    with sdx.Client(viewer["api_key"], service.url) as client:
        with pytest.raises(sdx.PermissionDeniedError) as forbidden:
            client.jobs.create("instagram", "profile", "natgeo")
        assert forbidden.value.code == "forbidden"
        assert isinstance(forbidden.value.detail, dict) and forbidden.value.detail["required_role"] == "member"
    with sdx.Client(workspace["api_key"], service.url, workspace_id="ws_someone_else") as client:
        with pytest.raises(sdx.PermissionDeniedError) as other:
            client.usage.current()
        assert other.value.code == "workspace_forbidden"


def test_live_credits_not_found_conflict_validation(service: Service, client: sdx.Client) -> None:
    poor = service.workspace(credits=1)
    with sdx.Client(poor["api_key"], service.url) as broke:
        with pytest.raises(sdx.InsufficientCreditsError) as failed:
            broke.jobs.create("twitter", "followers", "nasa", limit=5000)
        assert failed.value.status == 402 and failed.value.code == "insufficient_credits"
        assert failed.value.required is not None and failed.value.required > (failed.value.available or 0)

    with pytest.raises(sdx.NotFoundError) as missing:
        client.jobs.get("job_00000000000000000000000000")
    assert missing.value.code == "job_not_found"
    with pytest.raises(sdx.NotFoundError) as no_batch:
        client.batches.get("bat_00000000000000000000000000")
    assert no_batch.value.code == "batch_not_found"

    client.jobs.create("instagram", "posts", "natgeo", limit=5, idempotency_key="same")
    with pytest.raises(sdx.ConflictError) as conflict:
        client.jobs.create("instagram", "posts", "natgeo", limit=6, idempotency_key="same")
    assert conflict.value.code == "idempotency_key_conflict"

    with pytest.raises(sdx.ValidationError) as invalid:
        client.jobs.create("instagram", "posts", "natgeo", limit=10**6)
    assert invalid.value.code == "validation_error"
    assert invalid.value.errors[0]["loc"] == ["body", "limit"]
    with pytest.raises(sdx.ValidationError) as duplicate:
        client.batches.create("instagram", "profile", ["natgeo", "NatGeo"])
    assert duplicate.value.code == "duplicate_batch_target"


def test_live_rate_limit_carries_retry_after(service: Service) -> None:
    limited = service.workspace(rate_limit_per_minute=2)
    with sdx.Client(limited["api_key"], service.url, max_retries=0) as client:
        client.usage.current()
        client.usage.current()
        with pytest.raises(sdx.RateLimitError) as failed:
            client.usage.current()
    assert failed.value.status == 429 and failed.value.code == "rate_limit_exceeded"
    assert failed.value.retry_after is not None and 0 < failed.value.retry_after <= 60


def test_live_concurrent_job_limit(service: Service) -> None:
    capped = service.workspace(max_active_jobs=1)
    with sdx.Client(capped["api_key"], service.url, max_retries=0) as client:
        first = client.jobs.create("twitter", "followers", "elonmusk", limit=25_000)
        try:
            with pytest.raises(sdx.RateLimitError) as failed:
                client.jobs.create("twitter", "followers", "nasa", limit=25_000)
            assert failed.value.code == "concurrent_job_limit_exceeded"
        finally:
            client.jobs.cancel(first.id)
