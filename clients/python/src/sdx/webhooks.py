"""Verifying webhook deliveries (Standard Webhooks, https://www.standardwebhooks.com).

The service signs each delivery with three headers: ``webhook-id``, ``webhook-timestamp`` (Unix
seconds) and ``webhook-signature``: one or more ``v1,<base64 HMAC-SHA256>`` separated by spaces
(two during a secret rotation), each over ``{webhook-id}.{webhook-timestamp}.{body}``, keyed with
the base64-decoded part of the ``whsec_`` secret.

    event = sdx.webhooks.verify(request.body, request.headers, secret)
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import time
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Union

from ._errors import WebhookVerificationError
from ._models import WebhookEvent

__all__ = ["verify", "sign", "WebhookVerificationError", "DEFAULT_TOLERANCE"]

#: Largest distance between ``webhook-timestamp`` and now, in seconds: older is a replay.
DEFAULT_TOLERANCE = 300

HeadersLike = Union[Mapping[str, str], Iterable[Sequence[str]]]


def verify(
    payload: Union[bytes, str],
    headers: HeadersLike,
    secret: Union[str, Sequence[str]],
    *,
    tolerance: int = DEFAULT_TOLERANCE,
    now: Optional[float] = None,
) -> WebhookEvent:
    """Checks a delivery and returns its event.

    ``payload`` is the raw body as received (bytes; verify before parsing), ``headers`` the
    request's headers (any mapping, case-insensitive, or a list of pairs), ``secret`` the
    endpoint's ``whsec_...`` secret, or several (a rotation). Raises
    :class:`sdx.WebhookVerificationError` when a header is missing, the timestamp is more than
    ``tolerance`` seconds from now, or no signature matches.
    """
    found = _lower(headers)
    msg_id = found.get("webhook-id")
    timestamp = found.get("webhook-timestamp")
    signatures = found.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        raise WebhookVerificationError("missing webhook-id, webhook-timestamp or webhook-signature header")
    if not timestamp.isdigit():
        raise WebhookVerificationError("webhook-timestamp is not a Unix time in seconds")
    current = int(time.time() if now is None else now)
    if abs(current - int(timestamp)) > tolerance:
        raise WebhookVerificationError(f"webhook-timestamp is more than {tolerance} s away from now")
    body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    offered = [entry[3:] for entry in signatures.split(" ") if entry.startswith("v1,")]
    secrets = [secret] if isinstance(secret, str) else list(secret)
    for candidate in secrets:
        expected = _signature(candidate, msg_id, timestamp, body)
        if any(hmac.compare_digest(expected, signature) for signature in offered):
            try:
                event = json.loads(body)
            except ValueError:
                raise WebhookVerificationError("the signed body is not JSON") from None
            if not isinstance(event, dict):
                raise WebhookVerificationError("the signed body is not a JSON object")
            return WebhookEvent(event)
    raise WebhookVerificationError("no signature matches the secret")


def sign(payload: Union[bytes, str], secret: str, msg_id: str, timestamp: Optional[int] = None) -> Dict[str, str]:
    """The three headers that sign ``payload`` with ``secret``, as the service would (for tests and forwarding)."""
    stamp = str(int(time.time()) if timestamp is None else timestamp)
    body = payload.encode("utf-8") if isinstance(payload, str) else bytes(payload)
    return {"webhook-id": msg_id, "webhook-timestamp": stamp, "webhook-signature": "v1," + _signature(secret, msg_id, stamp, body)}


def _signature(secret: str, msg_id: str, timestamp: str, body: bytes) -> str:
    raw = secret[len("whsec_") :] if secret.startswith("whsec_") else secret
    try:
        key = base64.b64decode(raw, validate=True)
    except (binascii.Error, ValueError):
        raise WebhookVerificationError("the secret is not whsec_ followed by base64") from None
    mac = hmac.new(key, f"{msg_id}.{timestamp}.".encode("utf-8") + body, hashlib.sha256).digest()
    return base64.b64encode(mac).decode("ascii")


def _lower(headers: Any) -> Dict[str, str]:
    items = headers.items() if hasattr(headers, "items") else headers
    found: Dict[str, str] = {}
    for name, value in items:
        key = (name.decode("latin-1") if isinstance(name, bytes) else str(name)).lower()
        text = value.decode("latin-1") if isinstance(value, bytes) else str(value)
        found[key] = f"{found[key]} {text}" if key in found else text
    return found
