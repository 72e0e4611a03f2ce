"""``sdx.AsyncClient``: the asyncio client, the source of ``sdx.Client`` (``scripts/unasync.py``)."""

from __future__ import annotations

import asyncio
import json as jsonlib
import os
import tempfile
import time
from typing import Any, AsyncIterator, Awaitable, Callable, List, Mapping, Optional, Type, TypeVar, Union

import httpx

from . import _base as base
from ._errors import APIConnectionError, APIError, APITimeoutError, WaitTimeoutError, error_from_response
from ._models import Batch, Billing, Checkout, DailyUsage, Destination, ExportResult, Invoice, Item, Job, Monitor, MonitorChange, MonitorRun, Quote, Schedule, SDXObject, Series, SeriesList, Subscription, Usage, Webhook, WebhookDelivery
from ._paging import AsyncPager, PageResult, Query
from ._shim import AsyncProgress, async_notify

__all__ = ["AsyncClient"]

_O = TypeVar("_O", bound=SDXObject)
PathLike = Union[str, "os.PathLike[str]"]


class _AsyncCore:
    """The HTTP client of one ``AsyncClient``: credentials, timeouts and retries."""

    def __init__(self, config: base.Config, transport: Optional[httpx.AsyncBaseTransport]) -> None:
        self.config = config
        self.http = httpx.AsyncClient(base_url=config.base_url, headers=config.headers, timeout=config.httpx_timeout(), transport=transport, follow_redirects=False)

    async def request(
        self,
        method: str,
        url_path: str,
        *,
        params: Optional[Mapping[str, Any]] = None,
        json: Any = None,
        headers: Optional[Mapping[str, str]] = None,
        idempotency_key: Optional[str] = None,
        stream: bool = False,
        timeout: Optional[httpx.Timeout] = None,
        deadline: Optional[float] = None,
    ) -> httpx.Response:
        """Sends a request, retried per the SDK's rules; a non-success answer raises its APIError.

        A POST carries an Idempotency-Key (the caller's, or a fresh one), the same on every retry.
        With ``stream``, the answer is returned unread: close it.
        """
        sent_headers = dict(headers or {})
        if method == "POST":
            sent_headers["Idempotency-Key"] = idempotency_key or base.new_idempotency_key()
        request = self.http.build_request(
            method,
            url_path,
            params=params,
            json=json,
            headers=sent_headers,
            timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
        )
        replayable = base.is_replayable(method, url_path)
        attempts = self.config.max_retries + 1
        limits = dict(request.extensions.get("timeout", {}))
        for attempt in range(attempts):
            last = attempt == attempts - 1
            if deadline is not None:
                # A wait's deadline bounds every attempt and every backoff of its requests.
                left = max(0.001, deadline - time.monotonic())
                request.extensions = {**request.extensions, "timeout": {name: left if value is None else min(value, left) for name, value in limits.items()}}
            try:
                response = await self.http.send(request, stream=stream)
                if not response.is_success:
                    await response.aread()
            except httpx.TimeoutException as error:
                seconds = timeout.read if timeout is not None and timeout.read is not None else self.config.timeout
                failure: APIConnectionError = APITimeoutError(
                    f"no answer from {method} {request.url} within {seconds:g} s ({attempt + 1} attempt{'s' if attempt else ''})"
                )
                failure.__cause__ = error
                resend = replayable or isinstance(error, httpx.ConnectTimeout)
            except httpx.TransportError as error:
                failure = APIConnectionError(f"could not reach {method} {request.url}: {error!r} ({attempt + 1} attempt{'s' if attempt else ''})")
                failure.__cause__ = error
                resend = replayable or isinstance(error, httpx.ConnectError)
            else:
                if response.is_success:
                    return response
                retry, retry_after = base.retry_decision(response, replayable)
                pause = base.backoff(attempt, retry_after)
                if retry and not last and not base.past(deadline, pause):
                    await response.aclose()
                    await asyncio.sleep(pause)
                    continue
                raise error_from_response(response.status_code, base.parse_body(response), response.headers)
            pause = base.backoff(attempt, None)
            if last or not resend or base.past(deadline, pause):
                raise failure
            await asyncio.sleep(pause)
        raise AssertionError("unreachable")  # pragma: no cover

    async def json(self, method: str, url_path: str, **kwargs: Any) -> Any:
        response = await self.request(method, url_path, **kwargs)
        return jsonlib.loads(response.content) if response.content else None

    async def close(self) -> None:
        await self.http.aclose()


def _linked_pages(core: _AsyncCore, url_path: str, cls: Type[_O]) -> Callable[[Query], Awaitable[PageResult[_O]]]:
    """Pages of a list that the service links with ``Link: <…>; rel="next"`` (``starting_after``)."""

    async def fetch(query: Query) -> PageResult[_O]:
        response = await core.request("GET", url_path, params=query)
        data = jsonlib.loads(response.content)
        return [cls(entry) for entry in data], base.next_query_from_link(response.headers.get("link"))

    return fetch


def _has_more_pages(core: _AsyncCore, url_path: str, cls: Type[_O]) -> Callable[[Query], Awaitable[PageResult[_O]]]:
    """Pages of a ``{data, has_more}`` list: the next page starts after the last item."""

    async def fetch(query: Query) -> PageResult[_O]:
        body = await core.json("GET", url_path, params=query)
        items = [cls(entry) for entry in body["data"]]
        return items, ({"starting_after": body["data"][-1]["id"]} if body["has_more"] and body["data"] else None)

    return fetch


class _Follower:
    """Following a job or batch to its end: its event stream, then polling when there is none."""

    def __init__(self, core: _AsyncCore, events_path: str, get: Callable[[Optional[float]], Awaitable[Any]], fingerprint: Callable[[Mapping[str, Any]], str], wrap: Callable[[Mapping[str, Any]], Any]) -> None:
        self.core = core
        self.events_path = events_path
        self.get = get
        self.fingerprint = fingerprint
        self.wrap = wrap
        self.last_print: Optional[str] = None
        self.last: Any = None
        self.on_progress: Optional[AsyncProgress[Any]] = None

    async def run(self, timeout: Optional[float], on_progress: Optional[AsyncProgress[Any]], poll_interval: float) -> Any:
        deadline = None if timeout is None else time.monotonic() + timeout
        self.on_progress = on_progress
        if await self._stream(deadline):
            # The events carry no result: the ended job is read once, whole, with the client's timeout.
            final = await self.get(None)
            await self._report(final.to_dict(), final)
            return final
        delay = min(0.25, poll_interval)
        while True:
            state = await self._get(deadline)
            await self._report(state.to_dict(), state)
            if state.status in base.TERMINAL_STATUSES:
                return state
            left = self._left(deadline)
            await asyncio.sleep(delay if left is None else min(delay, left))
            self._left(deadline)
            delay = min(poll_interval, delay * 2)

    async def _get(self, deadline: Optional[float]) -> Any:
        try:
            return await self.get(deadline)
        except APIConnectionError:
            self._left(deadline)
            raise

    def _left(self, deadline: Optional[float]) -> Optional[float]:
        if deadline is None:
            return None
        left = deadline - time.monotonic()
        if left <= 0:
            raise WaitTimeoutError(f"{self.events_path.rsplit('/', 2)[-2]} did not end within the wait's timeout (it goes on on the service)", self.last)
        return left

    async def _report(self, raw: Mapping[str, Any], state: Any = None) -> None:
        self.last = state if state is not None else self.wrap(raw)
        print_ = self.fingerprint(raw)
        if print_ == self.last_print:
            return
        self.last_print = print_
        if self.on_progress is not None:
            await async_notify(self.on_progress, self.last)

    async def _stream(self, deadline: Optional[float]) -> bool:
        """True when the stream reached the terminal state; False when polling must take over."""
        while True:
            left = self._left(deadline)
            read = base.STREAM_READ_TIMEOUT if left is None else min(base.STREAM_READ_TIMEOUT, left)
            try:
                response = await self.core.request(
                    "GET",
                    self.events_path,
                    headers={"Accept": "text/event-stream"},
                    stream=True,
                    timeout=httpx.Timeout(self.core.config.timeout, read=read),
                    deadline=deadline,
                )
            except (APIError, APIConnectionError):
                self._left(deadline)
                return False
            reopen = False
            try:
                decoder = base.SSEDecoder()
                async for chunk in response.aiter_bytes():
                    for _event, data in decoder.feed(chunk):
                        state = base.parse_state(data)
                        if state is None:
                            continue
                        await self._report(state)
                        if state["status"] in base.TERMINAL_STATUSES:
                            return True
                    left = self._left(deadline)
                    # A read may block for `read` seconds: reopen with a shorter one near the deadline.
                    if left is not None and left < read / 2:
                        reopen = True
                        break
            except httpx.TransportError:
                self._left(deadline)
                return False
            finally:
                await response.aclose()
            if not reopen:
                return False


class AsyncJobs:
    """``client.jobs``: create, get, list, wait, items, export, cancel."""

    def __init__(self, core: _AsyncCore) -> None:
        self._core = core

    async def create(
        self,
        platform: str,
        operation: str,
        target: str,
        limit: Optional[int] = None,
        idempotency_key: Optional[str] = None,
        *,
        no_cache: bool = False,
        **options: Any,
    ) -> Job:
        """``POST /v1/jobs``: accepts the job and answers at once (``queued``, or a reused job).

        ``options`` are further fields of the request (``include_posts``...). Without your own
        ``idempotency_key`` a fresh one is made for the call and sent on each of its retries.
        ``no_cache=True`` skips the result cache.
        """
        body = base.body_of({"platform": platform, "operation": operation, "target": target, "limit": limit, **options})
        return Job(await self._core.json("POST", "/v1/jobs", json=body, idempotency_key=idempotency_key, headers=base.create_headers(no_cache)))

    async def get(self, id: str) -> Job:
        """``GET /v1/jobs/{job_id}``: the job, with its result once completed."""
        return await self._get_job(id, None)

    async def _get_job(self, id: str, deadline: Optional[float]) -> Job:
        return Job(await self._core.json("GET", base.path("/v1/jobs/{}", id), deadline=deadline))

    def list(self, **filters: Any) -> AsyncPager[Job]:
        """``GET /v1/jobs``, newest first, every page: ``status``, ``platform``, ``operation``,
        ``batch_id``, ``schedule_id``, ``include_result`` and ``limit`` (page size, 1 to 100)."""
        return AsyncPager(_linked_pages(self._core, "/v1/jobs", Job), base.query_of(filters))

    async def cancel(self, id: str) -> Job:
        """``POST /v1/jobs/{job_id}/cancel``."""
        return Job(await self._core.json("POST", base.path("/v1/jobs/{}/cancel", id)))

    async def wait(self, id: str, timeout: Optional[float] = None, on_progress: Optional[AsyncProgress[Job]] = None, *, poll_interval: float = 2.0) -> Job:
        """Waits until the job is completed, failed or cancelled, and returns it with its result.

        Follows the job's event stream (``GET /v1/jobs/{job_id}/events``), calling
        ``on_progress(job)`` at each change of status or progress; polls ``GET`` when there is no
        stream. After ``timeout`` seconds raises :class:`sdx.WaitTimeoutError` (the job goes on).
        """
        follower = _Follower(self._core, base.path("/v1/jobs/{}/events", id), lambda deadline: self._get_job(id, deadline), base.job_fingerprint, Job)
        result: Job = await follower.run(timeout, on_progress, poll_interval)
        return result

    def items(self, id: str, *, page_size: int = base.ITEMS_PAGE_SIZE) -> AsyncPager[Item]:
        """Every item of a completed job's result, fetched page by page (``GET /v1/jobs/{job_id}/items``):
        the result is never held whole in memory."""
        url_path = base.path("/v1/jobs/{}/items", id)

        async def fetch(query: Query) -> PageResult[Item]:
            page = await self._core.json("GET", url_path, params=query)
            cursor = page.get("next_cursor")
            return [Item(entry) for entry in page["items"]], (None if not cursor else {"cursor": cursor})

        return AsyncPager(fetch, {"limit": page_size})

    async def export(self, id: str, format: str = "json", path: Optional[PathLike] = None) -> ExportResult:
        """Streams the job's export (``json``, ``ndjson``, ``csv`` or ``xlsx``) to the file ``path``
        (default: the service's file name in the current directory). The file appears whole or not at all."""
        return await _export(self._core, "jobs", id, format, path)


class AsyncBatches:
    """``client.batches``: create, get, list, wait, items, export, cancel."""

    def __init__(self, core: _AsyncCore, jobs: AsyncJobs) -> None:
        self._core = core
        self._jobs = jobs

    async def create(
        self,
        platform: str,
        operation: str,
        targets: List[str],
        limit: Optional[int] = None,
        idempotency_key: Optional[str] = None,
        **options: Any,
    ) -> Batch:
        """``POST /v1/batches``: one queued child job per target, all or none."""
        body = base.body_of({"platform": platform, "operation": operation, "targets": list(targets), "limit": limit, **options})
        return Batch(await self._core.json("POST", "/v1/batches", json=body, idempotency_key=idempotency_key))

    async def get(self, id: str) -> Batch:
        """``GET /v1/batches/{batch_id}``, with its children."""
        return await self._get_batch(id, None)

    async def _get_batch(self, id: str, deadline: Optional[float]) -> Batch:
        return Batch(await self._core.json("GET", base.path("/v1/batches/{}", id), deadline=deadline))

    def list(self, **filters: Any) -> AsyncPager[Batch]:
        """``GET /v1/batches``, newest first, every page (``limit``, ``include_jobs``)."""
        return AsyncPager(_linked_pages(self._core, "/v1/batches", Batch), base.query_of(filters))

    async def cancel(self, id: str) -> Batch:
        """``POST /v1/batches/{batch_id}/cancel``: cancels every child still queued or running."""
        return Batch(await self._core.json("POST", base.path("/v1/batches/{}/cancel", id)))

    async def wait(self, id: str, timeout: Optional[float] = None, on_progress: Optional[AsyncProgress[Batch]] = None, *, poll_interval: float = 2.0) -> Batch:
        """Waits until every child has ended; as ``jobs.wait``."""
        follower = _Follower(self._core, base.path("/v1/batches/{}/events", id), lambda deadline: self._get_batch(id, deadline), base.batch_fingerprint, Batch)
        result: Batch = await follower.run(timeout, on_progress, poll_interval)
        return result

    async def items(self, id: str, *, page_size: int = base.ITEMS_PAGE_SIZE) -> AsyncIterator[Item]:
        """Every item of every completed child, in the order of the batch's targets, page by page."""
        for child in (await self.get(id)).jobs:
            if child.status == "completed":
                async for item in self._jobs.items(child.id, page_size=page_size):
                    yield item

    async def export(self, id: str, format: str = "json", path: Optional[PathLike] = None) -> ExportResult:
        """Streams the batch's export (every child's items) to the file ``path``."""
        return await _export(self._core, "batches", id, format, path)


class AsyncSchedules:
    """``client.schedules``: create, get, list, update, delete, pause, resume, run, preview."""

    def __init__(self, core: _AsyncCore) -> None:
        self._core = core

    async def create(
        self,
        name: str,
        platform: str,
        operation: str,
        targets: List[str],
        frequency: str,
        timezone: str,
        starts_at: str,
        limit: Optional[int] = None,
        **options: Any,
    ) -> Schedule:
        """``POST /v1/schedules``: a job (one target) or batch recipe dispatched on a recurrence
        (``frequency`` once, daily, weekly or monthly; ``starts_at`` with its UTC offset)."""
        body = base.body_of({"name": name, "platform": platform, "operation": operation, "targets": list(targets), "frequency": frequency, "timezone": timezone, "starts_at": starts_at, "limit": limit, **options})
        return Schedule(await self._core.json("POST", "/v1/schedules", json=body))

    async def get(self, id: str) -> Schedule:
        return Schedule(await self._core.json("GET", base.path("/v1/schedules/{}", id)))

    def list(self, **filters: Any) -> AsyncPager[Schedule]:
        """``GET /v1/schedules``, every page."""
        return AsyncPager(_linked_pages(self._core, "/v1/schedules", Schedule), base.query_of(filters))

    async def update(
        self,
        id: str,
        name: str,
        platform: str,
        operation: str,
        targets: List[str],
        frequency: str,
        timezone: str,
        starts_at: str,
        limit: Optional[int] = None,
        **options: Any,
    ) -> Schedule:
        """``PUT /v1/schedules/{schedule_id}``: replaces recipe and recurrence."""
        body = base.body_of({"name": name, "platform": platform, "operation": operation, "targets": list(targets), "frequency": frequency, "timezone": timezone, "starts_at": starts_at, "limit": limit, **options})
        return Schedule(await self._core.json("PUT", base.path("/v1/schedules/{}", id), json=body))

    async def delete(self, id: str) -> None:
        await self._core.request("DELETE", base.path("/v1/schedules/{}", id))

    async def pause(self, id: str) -> Schedule:
        return Schedule(await self._core.json("POST", base.path("/v1/schedules/{}/pause", id)))

    async def resume(self, id: str) -> Schedule:
        return Schedule(await self._core.json("POST", base.path("/v1/schedules/{}/resume", id)))

    async def run(self, id: str) -> Schedule:
        """``POST /v1/schedules/{schedule_id}/run``: an occurrence now; its run is first in ``runs``."""
        return Schedule(await self._core.json("POST", base.path("/v1/schedules/{}/run", id)))

    async def preview(self, frequency: str, timezone: str, starts_at: str, **options: Any) -> SDXObject:
        """``POST /v1/schedules/preview``: the next occurrences of a recurrence."""
        body = base.body_of({"frequency": frequency, "timezone": timezone, "starts_at": starts_at, **options})
        return SDXObject(await self._core.json("POST", "/v1/schedules/preview", json=body))


class AsyncMonitors:
    """``client.monitors``: create, list, get, update, delete, pause, resume, run, runs, series,
    export_series, changes."""

    def __init__(self, core: _AsyncCore) -> None:
        self._core = core

    async def create(
        self,
        platform: str,
        operation: str,
        targets: List[str],
        frequency: str,
        *,
        name: Optional[str] = None,
        limit: Optional[int] = None,
        time_of_day: Optional[str] = None,
        day_of_week: Optional[str] = None,
        timezone: Optional[str] = None,
        alerts: Optional[List[Mapping[str, Any]]] = None,
        **options: Any,
    ) -> Monitor:
        """``POST /v1/monitors``: follow a monitorable operation over 1 to 1,000 targets, ``frequency``
        hourly, daily or weekly. A non-monitorable operation raises APIError ``operation_not_monitorable`` (422)."""
        body = base.monitor_body(platform, operation, targets, frequency, name, limit, time_of_day, day_of_week, timezone, alerts, options)
        return Monitor(await self._core.json("POST", "/v1/monitors", json=body))

    def list(self, **filters: Any) -> AsyncPager[Monitor]:
        """``GET /v1/monitors``, newest first, every page."""
        return AsyncPager(_linked_pages(self._core, "/v1/monitors", Monitor), base.query_of(filters))

    async def get(self, id: str) -> Monitor:
        return Monitor(await self._core.json("GET", base.path("/v1/monitors/{}", id)))

    async def update(self, id: str, **fields: Any) -> Monitor:
        """``PATCH /v1/monitors/{monitor_id}``: the fields given replace the stored ones (``None`` sends null)."""
        return Monitor(await self._core.json("PATCH", base.path("/v1/monitors/{}", id), json=dict(fields)))

    async def delete(self, id: str) -> None:
        await self._core.request("DELETE", base.path("/v1/monitors/{}", id))

    async def pause(self, id: str) -> Monitor:
        return Monitor(await self._core.json("POST", base.path("/v1/monitors/{}/pause", id)))

    async def resume(self, id: str) -> Monitor:
        return Monitor(await self._core.json("POST", base.path("/v1/monitors/{}/resume", id)))

    async def run(self, id: str) -> MonitorRun:
        """``POST /v1/monitors/{monitor_id}/run``: a run now (``skipped_credits`` when unaffordable)."""
        return MonitorRun(await self._core.json("POST", base.path("/v1/monitors/{}/run", id)))

    def runs(self, id: str, **filters: Any) -> AsyncPager[MonitorRun]:
        """``GET /v1/monitors/{monitor_id}/runs``, newest first, every page."""
        return AsyncPager(_has_more_pages(self._core, base.path("/v1/monitors/{}/runs", id), MonitorRun), base.query_of(filters))

    async def series(
        self,
        id: str,
        *,
        target: Optional[str] = None,
        metric: Optional[str] = None,
        item_id: Optional[str] = None,
        from_: Optional[str] = None,
        to: Optional[str] = None,
    ) -> SeriesList:
        """``GET /v1/monitors/{monitor_id}/series``: each series with its points oldest first;
        ``.to_pandas()`` gives one row per point."""
        query = base.query_of({"target": target, "metric": metric, "item_id": item_id, "from": from_, "to": to})
        body = await self._core.json("GET", base.path("/v1/monitors/{}/series", id), params=query)
        return SeriesList(Series(entry) for entry in body["data"])

    async def export_series(self, id: str, format: str = "csv", path: Optional[PathLike] = None, **filters: Any) -> ExportResult:
        """``GET /v1/monitors/{monitor_id}/series/export`` (csv, xlsx or json) written to ``path``
        (default the service's file name), whole or not at all."""
        return await _download(self._core, base.path("/v1/monitors/{}/series/export", id), id, format, path, base.series_query(filters))

    def changes(self, id: str, **filters: Any) -> AsyncPager[MonitorChange]:
        """``GET /v1/monitors/{monitor_id}/changes`` (``target``, ``kind``, ``limit``), newest first, every page."""
        return AsyncPager(_has_more_pages(self._core, base.path("/v1/monitors/{}/changes", id), MonitorChange), base.query_of(filters))


class AsyncUsage:
    """``client.usage``: current(), daily()."""

    def __init__(self, core: _AsyncCore) -> None:
        self._core = core

    async def current(self) -> Usage:
        """``GET /v1/usage/current``: credits of the current period."""
        return Usage(await self._core.json("GET", "/v1/usage/current"))

    async def daily(self, days: Optional[int] = None) -> List[DailyUsage]:
        """``GET /v1/usage/daily``: one row per UTC day, oldest first (``days`` 1 to 90, default 30)."""
        return [DailyUsage(row) for row in await self._core.json("GET", "/v1/usage/daily", params=base.query_of({"days": days}))]


class AsyncWebhooks:
    """``client.webhooks``: create, list, get, delete, test. Verify deliveries with ``sdx.webhooks.verify``."""

    def __init__(self, core: _AsyncCore) -> None:
        self._core = core

    async def create(self, url: str, events: Optional[List[str]] = None, description: Optional[str] = None, **options: Any) -> Webhook:
        """``POST /v1/webhooks``: ``secret`` is in this answer only (``events`` default ``["*"]``)."""
        body = base.body_of({"url": url, "events": list(events) if events is not None else ["*"], "description": description, **options})
        return Webhook(await self._core.json("POST", "/v1/webhooks", json=body))

    async def list(self) -> List[Webhook]:
        """``GET /v1/webhooks``."""
        return [Webhook(entry) for entry in await self._core.json("GET", "/v1/webhooks")]

    async def get(self, id: str) -> Webhook:
        return Webhook(await self._core.json("GET", base.path("/v1/webhooks/{}", id)))

    async def delete(self, id: str) -> None:
        await self._core.request("DELETE", base.path("/v1/webhooks/{}", id))

    async def test(self, id: str) -> WebhookDelivery:
        """``POST /v1/webhooks/{webhook_id}/test``: sends a signed ``webhook.test`` event."""
        return WebhookDelivery(await self._core.json("POST", base.path("/v1/webhooks/{}/test", id)))


class AsyncDestinations:
    """``client.destinations``: create, list, get, delete. Name one in ``destination_id`` of a job,
    batch or schedule to have its export written to the bucket."""

    def __init__(self, core: _AsyncCore) -> None:
        self._core = core

    async def create(
        self,
        name: str,
        bucket: str,
        access_key_id: str,
        secret_access_key: str,
        prefix: Optional[str] = None,
        region: Optional[str] = None,
        endpoint: Optional[str] = None,
        force_path_style: Optional[bool] = None,
        format: Optional[str] = None,
    ) -> Destination:
        """``POST /v1/destinations`` (an S3 bucket, or one of an S3-compatible store at ``endpoint``):
        the service first writes and deletes a check object, and raises :class:`sdx.ValidationError`
        ``destination_unreachable`` (with the store's message) when it cannot. ``format`` is
        ``json``, ``ndjson`` (default), ``csv`` or ``xlsx``. The secret is never answered."""
        body = base.destination_body(name, bucket, access_key_id, secret_access_key, prefix, region, endpoint, force_path_style, format)
        return Destination(await self._core.json("POST", "/v1/destinations", json=body))

    async def list(self) -> List[Destination]:
        """``GET /v1/destinations``, newest first."""
        return [Destination(entry) for entry in await self._core.json("GET", "/v1/destinations")]

    async def get(self, id: str) -> Destination:
        """``GET /v1/destinations/{destination_id}``; unknown: :class:`sdx.NotFoundError` ``destination_not_found``."""
        return Destination(await self._core.json("GET", base.path("/v1/destinations/{}", id)))

    async def delete(self, id: str) -> None:
        """``DELETE /v1/destinations/{destination_id}``: schedules that named it go on without one."""
        await self._core.request("DELETE", base.path("/v1/destinations/{}", id))


class AsyncBilling:
    """``client.billing``: get(), subscribe(), change(), cancel(), portal(), invoices() (monthly plans)."""

    def __init__(self, core: _AsyncCore) -> None:
        self._core = core

    async def get(self) -> Billing:
        """``GET /v1/billing``: the plans, the workspace's plan and subscription, ``payments_enabled``."""
        return Billing(await self._core.json("GET", "/v1/billing"))

    async def subscribe(self, plan_id: str, success_url: Optional[str] = None, cancel_url: Optional[str] = None) -> Union[Checkout, Subscription]:
        """``POST /v1/billing/subscription``: a :class:`Checkout` (send the subscriber to ``url``)
        without a live subscription; else the :class:`Subscription` changed to the plan."""
        body = base.body_of({"plan_id": plan_id, "success_url": success_url, "cancel_url": cancel_url})
        response = await self._core.request("POST", "/v1/billing/subscription", json=body)
        data = jsonlib.loads(response.content)
        return Checkout(data) if response.status_code == 201 else Subscription(data)

    async def change(self, plan_id: str) -> Union[Checkout, Subscription]:
        """The live subscription changed to ``plan_id`` (an upgrade is invoiced at once; a downgrade
        waits for the next invoice); a :class:`Checkout` when there is none."""
        return await self.subscribe(plan_id)

    async def cancel(self) -> Subscription:
        """``DELETE /v1/billing/subscription``: it ends at the end of the period."""
        return Subscription(await self._core.json("DELETE", "/v1/billing/subscription"))

    async def portal(self, return_url: Optional[str] = None) -> SDXObject:
        """``POST /v1/billing/portal``: Stripe's billing portal (``url``)."""
        return SDXObject(await self._core.json("POST", "/v1/billing/portal", json=base.body_of({"return_url": return_url})))

    def invoices(self, limit: Optional[int] = None) -> AsyncPager[Invoice]:
        """``GET /v1/billing/invoices``, newest first, every page."""

        async def fetch(query: Query) -> PageResult[Invoice]:
            data = await self._core.json("GET", "/v1/billing/invoices", params=query)
            rows = [Invoice(entry) for entry in data["data"]]
            return rows, ({"starting_after": rows[-1].id} if data["has_more"] and rows else None)

        return AsyncPager(fetch, base.query_of({"limit": limit}))


async def _export(core: _AsyncCore, resource: str, id: str, format: str, path: Optional[PathLike]) -> ExportResult:
    return await _download(core, base.export_target(resource, id), id, format, path)


async def _download(core: _AsyncCore, url_path: str, id: str, format: str, path: Optional[PathLike], query: Optional[Query] = None) -> ExportResult:
    response = await core.request("GET", url_path, params={**(query or {}), "format": format}, headers={"Accept": "*/*"}, stream=True)
    try:
        filename = base.filename_of(response.headers.get("content-disposition"))
        target = os.fspath(path) if path is not None else (filename or f"{id}.{format}")
        directory = os.path.dirname(os.path.abspath(target))
        written = 0
        handle, partial = tempfile.mkstemp(prefix=".sdx-export-", suffix=".part", dir=directory)
        try:
            with os.fdopen(handle, "wb") as file:
                async for chunk in response.aiter_bytes():
                    file.write(chunk)
                    written += len(chunk)
            os.replace(partial, target)
        except BaseException:
            if os.path.exists(partial):
                os.unlink(partial)
            raise
    except httpx.TimeoutException as error:
        raise APITimeoutError(f"the export of {id} stalled for more than {core.config.timeout:g} s") from error
    except httpx.TransportError as error:
        raise APIConnectionError(f"the export of {id} was cut: {error!r}") from error
    finally:
        await response.aclose()
    return ExportResult({"path": target, "bytes": written, "content_type": response.headers.get("content-type"), "filename": filename})


class AsyncClient:
    """The asyncio client of the SDX API: every call is awaited, every pager ``async for``-ed.

    ``api_key`` and ``base_url`` default to ``SDX_API_KEY`` and ``SDX_BASE_URL`` (then
    ``http://localhost:3000``). ``timeout`` is per attempt, in seconds; ``max_retries`` the retries
    after a first attempt (connection errors, 429, 502, 503, 504). Use it as an async context
    manager (``async with``), or await ``close()``.
    """

    def __init__(
        self,
        api_key: Optional[str] = None,
        base_url: Optional[str] = None,
        timeout: float = base.DEFAULT_TIMEOUT,
        max_retries: int = base.DEFAULT_MAX_RETRIES,
        *,
        workspace_id: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        transport: Optional[httpx.AsyncBaseTransport] = None,
    ) -> None:
        config = base.Config(api_key, base_url, timeout, max_retries, workspace_id, headers)
        self._core = _AsyncCore(config, transport)
        self.base_url = config.base_url
        self.jobs = AsyncJobs(self._core)
        self.batches = AsyncBatches(self._core, self.jobs)
        self.schedules = AsyncSchedules(self._core)
        self.monitors = AsyncMonitors(self._core)
        self.usage = AsyncUsage(self._core)
        self.webhooks = AsyncWebhooks(self._core)
        self.destinations = AsyncDestinations(self._core)
        self.billing = AsyncBilling(self._core)

    async def extract(
        self,
        platform: str,
        operation: str,
        target: str,
        limit: Optional[int] = None,
        idempotency_key: Optional[str] = None,
        *,
        no_cache: bool = False,
        timeout: Optional[float] = None,
        **options: Any,
    ) -> Job:
        """``POST /v1/extract``: the completed job with its result. When the service's sync timeout
        passes first (202), waits for the job (``timeout``: how long, default unbounded). A failed
        extraction raises APIError ``extraction_failed`` (502)."""
        body = base.body_of({"platform": platform, "operation": operation, "target": target, "limit": limit, **options})
        response = await self._core.request("POST", "/v1/extract", json=body, idempotency_key=idempotency_key, headers=base.create_headers(no_cache))
        job = Job(jsonlib.loads(response.content))
        if response.status_code != 202:
            return job
        done = await self.jobs.wait(job.id, timeout=timeout)
        if done.status == "completed":
            return done
        detail = {"error": "extraction_failed", "message": f"job {done.id} ended {done.status}", "job_id": done.id, "cause": done.to_dict().get("error")}
        raise APIError(502, "extraction_failed", detail, response.headers.get("x-request-id"))

    async def quote(
        self,
        platform: str,
        operation: str,
        target: Optional[str] = None,
        limit: Optional[int] = None,
        *,
        targets: Optional[List[str]] = None,
        **options: Any,
    ) -> Quote:
        """``POST /v1/quotes``: what a job (``target``) or batch (``targets``) would reserve now."""
        body = base.body_of({"platform": platform, "operation": operation, "target": target, "targets": list(targets) if targets is not None else None, "limit": limit, **options})
        return Quote(await self._core.json("POST", "/v1/quotes", json=body))

    async def close(self) -> None:
        await self._core.close()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.close()
