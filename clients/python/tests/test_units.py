"""The parts without I/O: SSE parsing, Link paging, Retry-After, backoff, objects, errors, signing."""

from __future__ import annotations

import pickle
import time
from typing import Dict
from email.utils import formatdate

import pytest

import sdx
from sdx import _base as base
from sdx._errors import error_from_response, parse_retry_after


def test_sse_decoder_follows_the_html_standard() -> None:
    decoder = base.SSEDecoder()
    stream = "\ufeff: keep-alive\r\nevent: status\r\ndata: {\"a\":\r\ndata: 1}\r\n\r\nid: 7\ndata: x\n\n\rdata: cut"
    events = []
    for byte in stream.encode():
        events += decoder.feed(bytes([byte]))
    assert events == [("status", '{"a":\n1}'), ("message", "x")]
    assert base.parse_state('{"status": "running", "id": "job_1"}') == {"status": "running", "id": "job_1"}
    assert base.parse_state('{"no": "status"}') is None and base.parse_state("not json") is None


def test_link_paging_takes_only_the_query() -> None:
    link = '<https://elsewhere.example/v1/jobs?limit=2&starting_after=job_9&status=failed>; rel="next", </v1/jobs>; rel="first"'
    assert base.next_query_from_link(link) == {"limit": "2", "starting_after": "job_9", "status": "failed"}
    assert base.next_query_from_link('</v1/jobs?x=1>; rel="prev"') is None
    assert base.next_query_from_link(None) is None


def test_retry_after_and_backoff() -> None:
    assert parse_retry_after("3") == 3 and parse_retry_after("0.5") == 0.5
    assert parse_retry_after(None) is None and parse_retry_after("soon") is None and parse_retry_after("-1") is None
    assert 28 <= (parse_retry_after(formatdate(time.time() + 30, usegmt=True)) or 0) <= 30
    for attempt in range(10):
        assert 0 <= base.backoff(attempt, None) <= min(8.0, 0.5 * 2**attempt)
    assert base.backoff(0, 5.0) == 5.0


def test_objects_wrap_nested_values_lazily_and_copy_on_to_dict() -> None:
    job = sdx.Job({"id": "job_1", "status": "failed", "error": {"code": "upstream", "message": "no", "retryable": False}, "result": [{"id": "1", "kind": "post"}]})
    assert isinstance(job.error, sdx.JobError) and job.error.code == "upstream"
    assert job.result[0].kind == "post"
    copy = job.to_dict()
    copy["error"]["code"] = "changed"
    assert job.error.code == "upstream"
    assert job == sdx.Job(job.to_dict()) and job != sdx.Batch(job.to_dict())
    assert "job_1" in repr(job)
    assert job.get("missing", 3) == 3


def test_errors_pickle_and_describe_themselves() -> None:
    error = error_from_response(429, {"detail": {"error": "rate_limit_exceeded", "message": "slow"}}, {"x-request-id": "r1", "retry-after": "7"})
    assert isinstance(error, sdx.RateLimitError) and error.retry_after == 7
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is sdx.RateLimitError and (again.code, again.request_id, again.retry_after) == ("rate_limit_exceeded", "r1", 7)
    assert str(again) == "429 rate_limit_exceeded: slow (request r1)"
    empty = error_from_response(404, None, {})
    assert type(empty) is sdx.NotFoundError and empty.code == "http_404" and empty.request_id is None


def test_sign_and_verify_round_trip_and_refusals() -> None:
    secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
    body = b'{"id":"evt_1","type":"webhook.test"}'
    headers = sdx.webhooks.sign(body, secret, msg_id="evt_1", timestamp=1_700_000_000)
    assert sdx.webhooks.verify(body, headers, secret, now=1_700_000_100).type == "webhook.test"
    assert sdx.webhooks.verify(body, list(headers.items()), secret, now=1_700_000_000).id == "evt_1"
    rotated = {**headers, "webhook-signature": "v1,bm90IGl0 " + headers["webhook-signature"]}
    assert sdx.webhooks.verify(body, rotated, secret, now=1_700_000_000).id == "evt_1"
    with pytest.raises(sdx.WebhookVerificationError, match="away from now"):
        sdx.webhooks.verify(body, headers, secret, now=1_700_000_301)
    with pytest.raises(sdx.WebhookVerificationError, match="not whsec_"):
        sdx.webhooks.verify(body, headers, "whsec_***", now=1_700_000_000)
    with pytest.raises(sdx.WebhookVerificationError, match="Unix time"):
        bad_stamp: Dict[str, str] = {**headers, "webhook-timestamp": "12a"}
        sdx.webhooks.verify(body, bad_stamp, secret)


def test_configuration_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SDX_API_KEY", "sdx_live_env")
    monkeypatch.setenv("SDX_BASE_URL", "http://example.test:9/")
    with sdx.Client() as client:
        assert client.base_url == "http://example.test:9"
        assert client._core.http.headers["authorization"] == "Bearer sdx_live_env"
        assert client._core.config.timeout == 30.0 and client._core.config.max_retries == 3
    monkeypatch.delenv("SDX_BASE_URL")
    with sdx.Client(api_key="k") as client:
        assert client.base_url == "http://localhost:3000"
    with pytest.raises(ValueError):
        sdx.Client(timeout=0)


def test_billing_plans_subscribe_change_cancel_and_invoices_sync_and_async() -> None:
    """``client.billing``: a Checkout without a subscription (201), the subscription on a change
    (200), cancel, and every page of invoices (``has_more``, ``starting_after``)."""
    import asyncio
    import json

    import httpx

    seen: list[tuple[str, str, str]] = []
    live = {"state": False}
    invoice = {"id": "in_2", "number": "N-2", "status": "paid", "amount_due": 4900, "amount_paid": 4900, "currency": "usd",
               "period_start": None, "period_end": None, "hosted_invoice_url": "https://pay.example/in_2", "created_at": "2026-12-07T10:00:00Z"}
    subscription = {"id": "sub_1", "plan_id": "starter", "status": "active", "current_period_end": None, "cancel_at_period_end": False, "scheduled_plan_id": None}
    plan = {"id": "free", "name": "Free", "monthly_credits": 1000, "amount": 0, "currency": "usd", "limits": {}}

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append((request.method, request.url.path, request.url.query.decode()))
        if request.url.path == "/v1/billing" and request.method == "GET":
            return httpx.Response(200, json={"payments_enabled": True, "plans": [plan], "plan": plan, "subscription": None, "month_spent_credits": 0})
        if request.url.path == "/v1/billing/subscription" and request.method == "POST":
            assert json.loads(request.content) == {"plan_id": "starter"}
            if live["state"]:
                return httpx.Response(200, json={**subscription, "scheduled_plan_id": "starter"})
            live["state"] = True
            return httpx.Response(201, json={"checkout_id": "cs_1", "url": "https://checkout.example/cs_1"})
        if request.url.path == "/v1/billing/subscription" and request.method == "DELETE":
            return httpx.Response(200, json={**subscription, "cancel_at_period_end": True})
        if request.url.path == "/v1/billing/invoices":
            if "starting_after=in_2" in request.url.query.decode():
                return httpx.Response(200, json={"data": [{**invoice, "id": "in_1"}], "has_more": False})
            return httpx.Response(200, json={"data": [invoice], "has_more": True})
        return httpx.Response(404, json={"detail": {"error": "not_found", "message": "no"}})

    client = sdx.Client(api_key="sk_test", base_url="http://sdx.test", transport=httpx.MockTransport(handler), max_retries=0)
    view = client.billing.get()
    assert view.payments_enabled is True and view.plan.id == "free" and view.subscription is None
    first = client.billing.subscribe("starter")
    assert isinstance(first, sdx.Checkout) and first.url == "https://checkout.example/cs_1"
    changed = client.billing.change("starter")
    assert isinstance(changed, sdx.Subscription) and changed.scheduled_plan_id == "starter"
    assert client.billing.cancel().cancel_at_period_end is True
    assert [i.id for i in client.billing.invoices()] == ["in_2", "in_1"]

    async def run() -> list[str]:
        async_client = sdx.AsyncClient(api_key="sk_test", base_url="http://sdx.test", transport=httpx.MockTransport(handler), max_retries=0)
        try:
            sub = await async_client.billing.change("starter")
            assert isinstance(sub, sdx.Subscription)
            return [i.id async for i in async_client.billing.invoices()]
        finally:
            await async_client.close()

    assert asyncio.run(run()) == ["in_2", "in_1"]
