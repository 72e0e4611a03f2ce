"""What the sync and async clients share: configuration, the retry rules, paging and SSE parsing.

Nothing here does I/O; ``_async_client.py`` drives it with httpx's async client, and
``_client.py``, generated from it by ``scripts/unasync.py``, with httpx's sync client.
"""

from __future__ import annotations

import codecs
import json
import os
import platform
import random
import re
import time
import uuid
from typing import Any, Dict, List, Mapping, Optional, Tuple
from urllib.parse import parse_qsl, quote, urlsplit

import httpx

from ._errors import parse_retry_after
from ._version import __version__

DEFAULT_BASE_URL = "http://localhost:3000"
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RETRIES = 3
#: First ceiling of the full-jitter backoff, doubled per attempt up to BACKOFF_MAX (seconds).
BACKOFF_BASE = 0.5
BACKOFF_MAX = 8.0
#: A Retry-After longer than this is not waited for: the error is raised at once.
MAX_RETRY_AFTER = 60.0
#: The service sends a comment on an event stream every 15 s; a read waits at least this long.
STREAM_READ_TIMEOUT = 20.0
#: Page size of ``items()``: the largest the service answers (fewest round trips).
ITEMS_PAGE_SIZE = 1000

TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})
RETRYABLE_STATUSES = frozenset({429, 502, 503, 504})

#: POSTs the service makes idempotent (Idempotency-Key replays, or the same state however often
#: sent): safe to send again after a connection was cut mid-request. Other POSTs (a schedule's
#: manual run, creating a schedule or webhook) are resent only when nothing can have been written.
_REPLAYABLE_POST = re.compile(r"^/v1/(jobs|batches|extract|quotes|schedules/preview|(jobs|batches)/[^/]+/cancel|schedules/[^/]+/(pause|resume))$")


class Config:
    """The resolved settings of a client."""

    def __init__(
        self,
        api_key: Optional[str],
        base_url: Optional[str],
        timeout: float,
        max_retries: int,
        workspace_id: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
    ) -> None:
        self.api_key = api_key if api_key is not None else os.environ.get("SDX_API_KEY")
        self.base_url = (base_url or os.environ.get("SDX_BASE_URL") or DEFAULT_BASE_URL).rstrip("/")
        if timeout is None or timeout <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        if max_retries < 0:
            raise ValueError("max_retries must be 0 or more")
        self.timeout = float(timeout)
        self.max_retries = int(max_retries)
        self.headers: Dict[str, str] = {
            "User-Agent": f"sdx-client-python/{__version__} python/{platform.python_version()}",
            "Accept": "application/json",
        }
        if self.api_key:
            self.headers["Authorization"] = f"Bearer {self.api_key}"
        if workspace_id:
            self.headers["X-Workspace-ID"] = workspace_id
        self.headers.update(headers or {})

    def httpx_timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.timeout)


def new_idempotency_key() -> str:
    return str(uuid.uuid4())


def path(template: str, *ids: str) -> str:
    """A path with its IDs escaped (an ID can never reach another path)."""
    return template.format(*(quote(str(part), safe="") for part in ids))


def create_headers(no_cache: bool) -> Dict[str, str]:
    """The headers of a job's create or extract call: ``no_cache`` skips the result cache."""
    return {"Cache-Control": "no-cache"} if no_cache else {}


def is_replayable(method: str, url_path: str) -> bool:
    return method != "POST" or bool(_REPLAYABLE_POST.match(url_path))


def backoff(attempt: int, retry_after: Optional[float]) -> float:
    """Full jitter (a random wait up to min(BACKOFF_MAX, BACKOFF_BASE * 2**attempt)), never below Retry-After."""
    ceiling = min(BACKOFF_MAX, BACKOFF_BASE * (2**attempt))
    jitter = random.uniform(0, ceiling)
    return jitter if retry_after is None else max(retry_after, jitter)


def retry_decision(response: httpx.Response, replayable: bool) -> Tuple[bool, Optional[float]]:
    """Whether an error answer is worth sending again, and the Retry-After it carried.

    Retried: 429 (after Retry-After), 502, 503 and 504. Not: a Retry-After over a minute (the
    caller decides), a 502 ``extraction_failed`` (the service's final word on an extraction), and,
    for a write the service does not make idempotent, anything but what proves nothing was written
    (429, 503 ``rate_limiter_unavailable``).
    """
    status = response.status_code
    if status not in RETRYABLE_STATUSES:
        return False, None
    retry_after = parse_retry_after(response.headers.get("retry-after"))
    if retry_after is not None and retry_after > MAX_RETRY_AFTER:
        return False, retry_after
    code = error_code(response)
    if status == 502 and code == "extraction_failed":
        return False, retry_after
    if not replayable and status != 429 and code != "rate_limiter_unavailable":
        return False, retry_after
    return True, retry_after


def error_code(response: httpx.Response) -> Optional[str]:
    body = parse_body(response)
    if isinstance(body, dict) and isinstance(body.get("detail"), dict):
        code = body["detail"].get("error")
        return code if isinstance(code, str) else None
    return None


def parse_body(response: httpx.Response) -> Any:
    """The JSON of a read answer, or its text when it is not JSON."""
    content = response.content
    if not content:
        return None
    try:
        return json.loads(content)
    except ValueError:
        return response.text


def next_query_from_link(link: Optional[str]) -> Optional[Dict[str, str]]:
    """The query of a ``Link`` header's rel="next" target (only its query: never another host)."""
    if not link:
        return None
    for part in re.split(r",(?=\s*<)", link):
        match = re.match(r"^\s*<([^>]*)>(.*)$", part)
        if not match:
            continue
        rel = re.search(r';\s*rel\s*=\s*"?([^";]+)"?', match.group(2), re.IGNORECASE)
        if rel and "next" in rel.group(1).split():
            return dict(parse_qsl(urlsplit(match.group(1)).query, keep_blank_values=True))
    return None


def query_of(filters: Mapping[str, Any]) -> Dict[str, Any]:
    """Query parameters without the None ones; booleans as the service spells them."""
    out: Dict[str, Any] = {}
    for key, value in filters.items():
        if value is None:
            continue
        out[key] = ("true" if value else "false") if isinstance(value, bool) else value
    return out


def body_of(fields: Mapping[str, Any]) -> Dict[str, Any]:
    """A request body without the None fields (the service applies its defaults)."""
    return {key: value for key, value in fields.items() if value is not None}


def monitor_body(
    platform: str,
    operation: str,
    targets: List[str],
    frequency: str,
    name: Optional[str],
    limit: Optional[int],
    time_of_day: Optional[str],
    day_of_week: Optional[str],
    timezone: Optional[str],
    alerts: Optional[List[Mapping[str, Any]]],
    options: Mapping[str, Any],
) -> Dict[str, Any]:
    """The body of ``POST /v1/monitors``, without the fields left to the service's defaults."""
    return body_of(
        {
            "name": name,
            "platform": platform,
            "operation": operation,
            "targets": list(targets),
            "frequency": frequency,
            "limit": limit,
            "time_of_day": time_of_day,
            "day_of_week": day_of_week,
            "timezone": timezone,
            "alerts": [dict(alert) for alert in alerts] if alerts is not None else None,
            **options,
        }
    )


def series_query(filters: Mapping[str, Any]) -> Dict[str, Any]:
    """Series filters as the service names them (``from_`` is ``from``, a word Python keeps)."""
    return query_of({("from" if key == "from_" else key): value for key, value in filters.items()})


def destination_body(
    name: str,
    bucket: str,
    access_key_id: str,
    secret_access_key: str,
    prefix: Optional[str],
    region: Optional[str],
    endpoint: Optional[str],
    force_path_style: Optional[bool],
    format: Optional[str],
) -> Dict[str, Any]:
    """The body of ``POST /v1/destinations``: an ``s3`` destination, the options left unset left out."""
    return body_of(
        {
            "name": name,
            "type": "s3",
            "bucket": bucket,
            "prefix": prefix,
            "region": region,
            "endpoint": endpoint,
            "force_path_style": force_path_style,
            "access_key_id": access_key_id,
            "secret_access_key": secret_access_key,
            "format": format,
        }
    )


def job_fingerprint(state: Mapping[str, Any]) -> str:
    return f"{state.get('status')}/{state.get('progress_stage')}/{state.get('progress_current')}/{state.get('progress_total')}"


def batch_fingerprint(state: Mapping[str, Any]) -> str:
    keys = ("status", "queued_count", "running_count", "completed_count", "failed_count", "cancelled_count", "result_count")
    return "/".join(str(state.get(key)) for key in keys)


def export_target(resource: str, id: str) -> str:
    return path("/v1/{}/{}/export", resource, id)


def filename_of(header: Optional[str]) -> Optional[str]:
    """``filename`` of a Content-Disposition header (RFC 6266; ``filename*`` preferred)."""
    if not header:
        return None
    extended = re.search(r"filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)", header)
    if extended:
        from urllib.parse import unquote

        return unquote(extended.group(1).strip())
    plain = re.search(r'filename\s*=\s*("((?:[^"\\]|\\.)*)"|[^;]+)', header)
    if not plain:
        return None
    if plain.group(2) is not None:
        return re.sub(r"\\(.)", r"\1", plain.group(2))
    return plain.group(1).strip()


class SSEDecoder:
    """Server-Sent Events as the HTML standard parses them: ``event``, ``data`` (lines joined with
    newlines), ``id``; comments; lines ending in \\n, \\r\\n or \\r; a leading BOM dropped; an event
    the stream cut before its blank line is dropped.

    ``feed(bytes)`` returns the complete events, as ``(event, data)``, and whether a line of any
    kind (a keep-alive comment included) arrived.
    """

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._event = ""
        self._data: List[str] = []
        self._first = True

    def feed(self, chunk: bytes) -> List[Tuple[str, str]]:
        text = self._decoder.decode(chunk)
        if self._first and text:
            self._first = False
            if text.startswith("\ufeff"):
                text = text[1:]
        self._buffer += text
        events: List[Tuple[str, str]] = []
        while True:
            match = re.search(r"\r\n|\r|\n", self._buffer)
            if not match:
                break
            # A \r at the very end may be the first half of \r\n: wait for the next chunk.
            if match.group(0) == "\r" and match.end() == len(self._buffer):
                break
            line = self._buffer[: match.start()]
            self._buffer = self._buffer[match.end() :]
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def _line(self, line: str) -> Optional[Tuple[str, str]]:
        if line == "":
            if not self._data:
                self._event = ""
                return None
            event = (self._event or "message", "\n".join(self._data))
            self._event = ""
            self._data = []
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "event":
            self._event = value
        elif name == "data":
            self._data.append(value)
        return None


def parse_state(data: str) -> Optional[Dict[str, Any]]:
    """The job or batch an event carries, or None (an event without a state is skipped)."""
    try:
        value = json.loads(data)
    except ValueError:
        return None
    if isinstance(value, dict) and isinstance(value.get("status"), str):
        return value
    return None


def past(deadline: Optional[float], after: float = 0.0) -> bool:
    """Whether ``deadline`` (time.monotonic()) has passed, or will ``after`` seconds from now."""
    return deadline is not None and time.monotonic() + after >= deadline
