"""The errors the SDK raises on purpose; all of them are :class:`SDXError`."""

from __future__ import annotations

import builtins
import email.utils
import time
from typing import Any, Dict, List, Mapping, Optional, Type, Union

__all__ = [
    "SDXError",
    "APIError",
    "AuthenticationError",
    "InsufficientCreditsError",
    "PermissionDeniedError",
    "NotFoundError",
    "ConflictError",
    "ValidationError",
    "RateLimitError",
    "APIConnectionError",
    "APITimeoutError",
    "WaitTimeoutError",
    "WebhookVerificationError",
]

#: The body's ``detail``: an object with ``error`` and ``message`` for service errors, a list of
#: issues for 422 validation errors, text when the body was not JSON, None when there was no body.
Detail = Union[Dict[str, Any], List[Any], str, None]


class SDXError(Exception):
    """Base of every error the SDK raises on purpose."""


class APIError(SDXError):
    """The service answered with an error status.

    ``status`` is the HTTP status; ``code`` the service's identifier (``detail.error``, e.g.
    ``job_not_found``), ``validation_error`` for a 422 listing invalid fields, ``http_<status>``
    when the body names none; ``detail`` the body's ``detail`` as sent; ``request_id`` the
    answer's ``X-Request-ID`` (quote it to support).
    """

    status: int
    code: str
    detail: Detail
    request_id: Optional[str]

    def __init__(self, status: int, code: str, detail: Detail, request_id: Optional[str] = None, message: Optional[str] = None) -> None:
        self.status = status
        self.code = code
        self.detail = detail
        self.request_id = request_id
        self.message = message or _describe(status, code, detail)
        super().__init__(self.message + (f" (request {request_id})" if request_id else ""))

    @property
    def errors(self) -> List[Dict[str, Any]]:
        """The field issues of a 422 validation error (``loc``, ``msg``, ``type``); empty otherwise."""
        if isinstance(self.detail, list):
            return [issue for issue in self.detail if isinstance(issue, dict)]
        return []

    def __reduce__(self) -> Any:
        return (type(self)._rebuild, (self.status, self.code, self.detail, self.request_id, self.message, self.__dict__))

    @classmethod
    def _rebuild(cls, status: int, code: str, detail: Detail, request_id: Optional[str], message: str, state: Dict[str, Any]) -> "APIError":
        error = cls.__new__(cls)
        APIError.__init__(error, status, code, detail, request_id, message)
        error.__dict__.update(state)
        return error


class AuthenticationError(APIError):
    """401: no credential, or an unknown, revoked or expired key."""


class InsufficientCreditsError(APIError):
    """402: the work does not fit the workspace's credits (``insufficient_credits``) or its spend cap."""

    @property
    def available(self) -> Optional[int]:
        return _int_field(self.detail, "available")

    @property
    def required(self) -> Optional[int]:
        return _int_field(self.detail, "required")

    @property
    def reserved(self) -> Optional[int]:
        return _int_field(self.detail, "reserved")


class PermissionDeniedError(APIError):
    """403: the key's role or workspace does not grant the call."""


class NotFoundError(APIError):
    """404: no such job, batch, schedule, webhook... in the workspace (or an unknown path)."""


class ConflictError(APIError):
    """409: e.g. ``idempotency_key_conflict`` or ``results_not_ready``."""


class ValidationError(APIError):
    """422: fields out of schema (``code`` ``validation_error``, see :attr:`errors`) or a service rule."""


class RateLimitError(APIError):
    """429: the per-minute limit, the active-job cap, the heavy-read bound or the stream bound.

    ``retry_after`` is the seconds the service asked to wait (``Retry-After``), None when it did not say.
    """

    retry_after: Optional[float]

    def __init__(self, status: int, code: str, detail: Detail, request_id: Optional[str] = None, message: Optional[str] = None, retry_after: Optional[float] = None) -> None:
        super().__init__(status, code, detail, request_id, message)
        self.retry_after = retry_after


class APIConnectionError(SDXError):
    """No answer: the connection failed or was cut (after the retries)."""


class APITimeoutError(APIConnectionError, builtins.TimeoutError):
    """No answer within the client's ``timeout`` (after the retries)."""


class WaitTimeoutError(SDXError, builtins.TimeoutError):
    """``wait(timeout=...)`` ran out before the job or batch ended; it goes on running on the service.

    ``last`` is the last state seen (a Job or Batch), or None.
    """

    def __init__(self, message: str, last: Any = None) -> None:
        super().__init__(message)
        self.last = last


class WebhookVerificationError(SDXError):
    """``sdx.webhooks.verify``: not a valid, recent, signed delivery."""


_STATUS_CLASSES: Dict[int, Type[APIError]] = {
    401: AuthenticationError,
    402: InsufficientCreditsError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    422: ValidationError,
    429: RateLimitError,
}


def error_from_response(status: int, body: Any, headers: Mapping[str, str]) -> APIError:
    """The typed error of an answer whose status is not a success (``body``: parsed JSON or text)."""
    request_id = headers.get("x-request-id")
    detail: Detail
    if isinstance(body, dict) and "detail" in body:
        detail = body["detail"]
    elif isinstance(body, str) and body != "":
        detail = body
    else:
        detail = None
    if isinstance(detail, dict) and isinstance(detail.get("error"), str):
        code = str(detail["error"])
    elif isinstance(detail, list):
        code = "validation_error"
    else:
        code = f"http_{status}"
    cls = _STATUS_CLASSES.get(status, APIError)
    if cls is RateLimitError:
        return RateLimitError(status, code, detail, request_id, retry_after=parse_retry_after(headers.get("retry-after")))
    return cls(status, code, detail, request_id)


def parse_retry_after(value: Optional[str], now: Optional[float] = None) -> Optional[float]:
    """``Retry-After`` in seconds (a number of seconds or an HTTP date); None when absent or unreadable."""
    if value is None or value.strip() == "":
        return None
    text = value.strip()
    try:
        seconds = float(text)
        return seconds if seconds >= 0 else None
    except ValueError:
        pass
    try:
        at = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    return max(0.0, at.timestamp() - (time.time() if now is None else now))


def _describe(status: int, code: str, detail: Detail) -> str:
    if isinstance(detail, dict) and isinstance(detail.get("message"), str):
        return f"{status} {code}: {detail['message']}"
    if isinstance(detail, list):
        issues = "; ".join(
            ".".join(str(part) for part in issue.get("loc", [])) + ": " + str(issue.get("msg", ""))
            for issue in detail
            if isinstance(issue, dict)
        )
        return f"{status} {code}: {issues}"
    if isinstance(detail, str):
        return f"{status} {code}: {detail}"
    return f"{status} {code}"


def _int_field(detail: Detail, name: str) -> Optional[int]:
    if isinstance(detail, dict):
        value = detail.get(name)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None
