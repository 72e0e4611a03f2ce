"""Retries through a loopback proxy that plays the network between the SDK and the real service:
it cuts connections after the service answered, answers 429/502/503/504 itself, or hangs."""

from __future__ import annotations

import socket
import time
from typing import Dict

import pytest

import sdx
from service import Service
from support import Decision, Seen, proxy

UNAVAILABLE = (503, {"retry-after": "0"}, {"detail": {"error": "service_unavailable", "message": "restarting"}})


def keys(seen: "list[Seen]") -> "list[str]":
    return [request.headers.get("idempotency-key", "") for request in seen]


def test_a_create_whose_answer_was_lost_is_resent_with_the_same_key_and_makes_one_job(service: Service, workspace: Dict[str, str]) -> None:
    rule = lambda request, n: "drop-response" if request.method == "POST" and n == 1 else "pass"  # noqa: E731
    with proxy(service.url, rule) as net, sdx.Client(workspace["api_key"], net.url) as client:
        job = client.jobs.create("instagram", "posts", "natgeo", limit=10)
        posts = [r for r in net.seen if r.method == "POST"]
        assert len(posts) == 2
        assert posts[0].headers["idempotency-key"] != ""
        assert posts[1].headers["idempotency-key"] == posts[0].headers["idempotency-key"]
        assert posts[0].body == posts[1].body
        assert job.idempotent_replay is True
    assert service.count("jobs", workspace["workspace_id"]) == 1


async def test_async_create_is_resent_the_same_way(service: Service, workspace: Dict[str, str]) -> None:
    rule = lambda request, n: "drop-response" if request.method == "POST" and n <= 2 else "pass"  # noqa: E731
    with proxy(service.url, rule) as net:
        async with sdx.AsyncClient(workspace["api_key"], net.url) as client:
            job = await client.jobs.create("instagram", "posts", "natgeo", limit=10)
        assert len(net.seen) == 3
        assert len(set(keys(net.seen))) == 1
        assert job.idempotent_replay is True
    assert service.count("jobs", workspace["workspace_id"]) == 1


def test_429_502_503_504_are_retried_with_one_key_until_the_service_answers(service: Service, workspace: Dict[str, str]) -> None:
    answers: Dict[int, Decision] = {
        1: (429, {"retry-after": "0"}, {"detail": {"error": "rate_limit_exceeded", "message": "slow down"}}),
        2: (502, {}, "<html>bad gateway</html>"),
        3: UNAVAILABLE,
    }
    with proxy(service.url, lambda request, n: answers.get(n, "pass")) as net, sdx.Client(workspace["api_key"], net.url) as client:
        job = client.jobs.create("instagram", "posts", "natgeo", limit=10)
        assert job.status == "queued"
        assert len(net.seen) == 4
        assert len(set(keys(net.seen))) == 1
    assert service.count("jobs", workspace["workspace_id"]) == 1

    with proxy(service.url, lambda request, n: (504, {}, None) if n == 1 else "pass") as net, sdx.Client(workspace["api_key"], net.url) as client:
        assert client.jobs.get(job.id).id == job.id
        assert [r.method for r in net.seen] == ["GET", "GET"]


def test_the_callers_own_key_is_kept_for_batches(service: Service, workspace: Dict[str, str]) -> None:
    rule = lambda request, n: "drop-response" if n == 1 else "pass"  # noqa: E731
    with proxy(service.url, rule) as net, sdx.Client(workspace["api_key"], net.url) as client:
        batch = client.batches.create("instagram", "profile", ["natgeo", "nasa"], idempotency_key="order-42")
        assert keys(net.seen) == ["order-42", "order-42"]
        assert batch.idempotent_replay is True
    assert service.count("batches", workspace["workspace_id"]) == 1
    assert service.count("jobs", workspace["workspace_id"]) == 2


def test_gives_up_after_max_retries_with_the_last_answer_as_a_typed_error(service: Service, workspace: Dict[str, str]) -> None:
    with proxy(service.url, lambda request, n: UNAVAILABLE) as net, sdx.Client(workspace["api_key"], net.url, max_retries=2) as client:
        with pytest.raises(sdx.APIError) as failed:
            client.usage.current()
        assert failed.value.status == 503 and failed.value.code == "service_unavailable"
        assert len(net.seen) == 3
    with proxy(service.url, lambda request, n: UNAVAILABLE) as net, sdx.Client(workspace["api_key"], net.url, max_retries=0) as client:
        with pytest.raises(sdx.APIError):
            client.usage.current()
        assert len(net.seen) == 1


def test_retry_after_is_waited_for_and_a_long_one_is_handed_to_the_caller(service: Service, workspace: Dict[str, str]) -> None:
    limited = (429, {"retry-after": "1"}, {"detail": {"error": "rate_limit_exceeded", "message": "slow down"}})
    with proxy(service.url, lambda request, n: limited if n == 1 else "pass") as net, sdx.Client(workspace["api_key"], net.url) as client:
        started = time.monotonic()
        client.usage.current()
        assert time.monotonic() - started >= 1.0
    too_long = (429, {"retry-after": "120"}, {"detail": {"error": "rate_limit_exceeded", "message": "slow down"}})
    with proxy(service.url, lambda request, n: too_long) as net, sdx.Client(workspace["api_key"], net.url) as client:
        with pytest.raises(sdx.RateLimitError) as failed:
            client.usage.current()
        assert failed.value.retry_after == 120
        assert len(net.seen) == 1


def test_a_failed_extraction_is_the_services_final_word(service: Service, workspace: Dict[str, str]) -> None:
    failed_body = (502, {"x-request-id": "req-1"}, {"detail": {"error": "extraction_failed", "message": "the job failed", "job_id": "job_x", "cause": None}})
    with proxy(service.url, lambda request, n: failed_body) as net, sdx.Client(workspace["api_key"], net.url) as client:
        with pytest.raises(sdx.APIError) as failed:
            client.extract("instagram", "profile", "natgeo")
        assert failed.value.code == "extraction_failed" and failed.value.request_id == "req-1"
        assert len(net.seen) == 1


def test_a_write_the_service_does_not_deduplicate_is_not_resent_blindly(service: Service, workspace: Dict[str, str]) -> None:
    rule = lambda request, n: "drop-response" if request.method == "POST" else "pass"  # noqa: E731
    with proxy(service.url, rule) as net, sdx.Client(workspace["api_key"], net.url) as client:
        with pytest.raises(sdx.APIConnectionError):
            client.webhooks.create("http://127.0.0.1:9/hooks")
        assert len(net.seen) == 1
        # It still carried a key, as every POST does.
        assert net.seen[0].headers["idempotency-key"] != ""
    with sdx.Client(workspace["api_key"], service.url) as direct:
        assert len(direct.webhooks.list()) == 1


def test_timeouts_raise_a_clear_error_and_nothing_hangs(service: Service, workspace: Dict[str, str]) -> None:
    with proxy(service.url, lambda request, n: "hang") as net:
        with sdx.Client(workspace["api_key"], net.url, timeout=0.3, max_retries=1) as client:
            started = time.monotonic()
            with pytest.raises(sdx.APITimeoutError) as failed:
                client.jobs.create("instagram", "posts", "natgeo")
            assert time.monotonic() - started < 5
            assert isinstance(failed.value, TimeoutError)
            assert "within 0.3 s" in str(failed.value) and "POST" in str(failed.value)
            assert len(net.seen) == 2


async def test_async_timeouts_too(service: Service, workspace: Dict[str, str]) -> None:
    with proxy(service.url, lambda request, n: "hang") as net:
        async with sdx.AsyncClient(workspace["api_key"], net.url, timeout=0.3, max_retries=0) as client:
            with pytest.raises(sdx.APITimeoutError):
                await client.jobs.get("job_x")


def test_connection_refused(workspace: Dict[str, str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with sdx.Client(workspace["api_key"], f"http://127.0.0.1:{port}", max_retries=1) as client:
        with pytest.raises(sdx.APIConnectionError) as failed:
            client.jobs.create("instagram", "posts", "natgeo")
        assert not isinstance(failed.value, sdx.APITimeoutError)
        assert "could not reach POST" in str(failed.value)
