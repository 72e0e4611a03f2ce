"""The objects the API answers: attribute access over the JSON, ``.to_dict()`` for the JSON itself.

An object keeps the decoded JSON it came from and wraps nested objects only when they are read,
so a page of 1,000 items costs one ``dict`` each, not a tree of Python objects. Fields a newer
service adds are readable at once (``job.some_new_field``); reading a field that the answer
does not carry raises AttributeError.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar, Dict, Iterable, Iterator, List, Mapping, Optional, Type, TypeVar

__all__ = [
    "SDXObject",
    "Job",
    "JobError",
    "Item",
    "Batch",
    "BatchChild",
    "Schedule",
    "ScheduleRun",
    "Quote",
    "Usage",
    "DailyUsage",
    "Webhook",
    "WebhookDelivery",
    "WebhookEvent",
    "Destination",
    "Delivery",
    "ExportResult",
    "Monitor",
    "MonitorAlert",
    "MonitorRun",
    "MonitorChange",
    "SeriesPoint",
    "Series",
    "SeriesList",
    "to_pandas",
]

_O = TypeVar("_O", bound="SDXObject")


class SDXObject:
    """A JSON object of the API with attribute access (``obj.field``) and ``obj.to_dict()``."""

    __slots__ = ("_data",)
    #: Nested fields read as a given class (objects, or lists of objects).
    _nested: ClassVar[Dict[str, Type["SDXObject"]]] = {}

    def __init__(self, data: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_data", data)

    @classmethod
    def _wrap(cls: Type[_O], data: Mapping[str, Any]) -> _O:
        return cls(data)

    def __getattr__(self, name: str) -> Any:
        data: Mapping[str, Any] = object.__getattribute__(self, "_data")
        try:
            value = data[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__} has no field {name!r}") from None
        return _convert(value, type(self)._nested.get(name, SDXObject))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is read-only; use to_dict() for a mutable copy")

    def __getitem__(self, name: str) -> Any:
        return self.__getattr__(name)

    def __contains__(self, name: object) -> bool:
        return name in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __dir__(self) -> Iterable[str]:
        return list(super().__dir__()) + [str(key) for key in self._data]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, SDXObject):
            return type(self) is type(other) and dict(self._data) == dict(other._data)
        return NotImplemented

    def __hash__(self) -> int:
        return id(self)

    def __repr__(self) -> str:
        data: Mapping[str, Any] = self._data
        shown = ", ".join(f"{key}={_short(value)}" for key, value in list(data.items())[:8])
        more = ", ..." if len(data) > 8 else ""
        return f"{type(self).__name__}({shown}{more})"

    def get(self, name: str, default: Any = None) -> Any:
        """The field, or ``default`` when the answer does not carry it."""
        return self.__getattr__(name) if name in self._data else default

    def to_dict(self) -> Dict[str, Any]:
        """The object as JSON-ready dicts and lists (a copy: changing it changes nothing here)."""
        copied = _copy(self._data)
        assert isinstance(copied, dict)
        return copied


def _convert(value: Any, cls: Type[SDXObject]) -> Any:
    if isinstance(value, dict):
        return cls(value)
    if isinstance(value, list):
        return [cls(entry) if isinstance(entry, dict) else entry for entry in value]
    return value


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _copy(entry) for key, entry in value.items()}
    if isinstance(value, list):
        return [_copy(entry) for entry in value]
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class JobError(SDXObject):
    """Why a job failed: ``code``, ``message``, ``retryable``."""

    code: str
    message: str
    retryable: bool


class Item(SDXObject):
    """One result item (a profile, post, comment, follower...): ``kind``, ``platform``, ``id``, and the fields of its kind."""

    kind: str
    platform: str
    id: Optional[str]


class Delivery(SDXObject):
    """The delivery of a job's (a batch's) export to the destination named at submission.

    ``status`` is ``pending`` (until the job completes, the batch ends, and while attempts are
    retried), ``succeeded`` once the object ``key`` is written, or ``failed`` (``error`` says why).
    """

    destination_id: str
    status: str
    key: str
    attempts: int
    error: Optional[str]
    delivered_at: Optional[str]


class Job(SDXObject):
    """A job: one operation against one target (``GET /v1/jobs/{job_id}``)."""

    _nested: ClassVar[Dict[str, Type[SDXObject]]] = {"error": JobError, "delivery": Delivery}
    id: str
    platform: str
    operation: str
    target: str
    requested_limit: int
    include_posts: int
    status: str
    attempts: int
    max_attempts: int
    progress_stage: str
    progress_message: Optional[str]
    progress_current: int
    progress_total: Optional[int]
    heartbeat_at: Optional[str]
    next_attempt_at: Optional[str]
    cancel_requested_at: Optional[str]
    result_count: Optional[int]
    billed_units: int
    credit_rate: int
    results_per_credit: int
    reserved_credits: int
    billed_credits: int
    #: The result as stored (a list of items, or one object); None until completed or with include_result=false.
    result: Any
    result_expired: bool
    error: Optional[JobError]
    created_at: str
    started_at: Optional[str]
    finished_at: Optional[str]
    cached: bool
    deduplicated: bool
    idempotent_replay: bool
    #: The delivery to the job's destination (``destination_id`` at submission); None without one.
    delivery: Optional[Delivery]

    def to_pandas(self) -> Any:
        """The job's ``result`` as a pandas DataFrame (one row per item); pandas must be installed."""
        result = self._data.get("result")
        rows: List[Any] = result if isinstance(result, list) else ([] if result is None else [result])
        return to_pandas(rows)


class BatchChild(SDXObject):
    """A child job of a batch, as the batch lists it."""

    id: str
    target: str
    status: str


class Batch(SDXObject):
    """A batch: one operation against up to 100 targets (``GET /v1/batches/{batch_id}``)."""

    _nested: ClassVar[Dict[str, Type[SDXObject]]] = {"jobs": BatchChild, "delivery": Delivery}
    id: str
    platform: str
    operation: str
    requested_limit: int
    include_posts: int
    target_count: int
    status: str
    queued_count: int
    running_count: int
    completed_count: int
    failed_count: int
    cancelled_count: int
    result_count: int
    reserved_credits: int
    billed_credits: int
    cancel_requested_at: Optional[str]
    created_at: str
    jobs: List[BatchChild]
    idempotent_replay: bool
    #: The delivery of the batch's export to its destination, once it ends; None without one.
    delivery: Optional[Delivery]


class ScheduleRun(SDXObject):
    """One occurrence of a schedule."""

    id: str
    schedule_id: str
    trigger: str
    scheduled_for: str
    status: str
    job_id: Optional[str]
    batch_id: Optional[str]
    error: Optional[SDXObject]
    created_at: str
    dispatched_at: Optional[str]


class Schedule(SDXObject):
    """A stored job or batch recipe with its recurrence."""

    _nested: ClassVar[Dict[str, Type[SDXObject]]] = {"runs": ScheduleRun}
    id: str
    name: str
    platform: str
    operation: str
    targets: List[str]
    requested_limit: int
    include_posts: int
    frequency: str
    timezone: str
    starts_at: str
    next_run_at: Optional[str]
    last_run_at: Optional[str]
    status: str
    #: ``creator_revoked`` while the service keeps it paused because its creator's key was revoked or its creator left; else None.
    paused_reason: Optional[str]
    overlap_policy: str
    delivery: Any
    #: The destination every occurrence's job or batch is delivered to; None for none.
    destination_id: Optional[str]
    #: Who created it (``kind`` ``user`` or ``key``, and ``id``); None for schedules made before creators were recorded.
    created_by: Optional[SDXObject]
    created_at: str
    updated_at: str
    runs: List[ScheduleRun]


class Quote(SDXObject):
    """What a job or batch would reserve now (``POST /v1/quotes``)."""

    platform: str
    operation: str
    requested_limit: int
    target_count: int
    max_credits: int
    cached_targets: int
    available_credits: int
    affordable: bool
    blocked_by: Optional[str]
    active_jobs: int
    max_active_jobs: int


class Usage(SDXObject):
    """Credits of the current period (``GET /v1/usage/current``)."""

    period_start: str
    credit_limit: int
    units_used: int
    units_reserved: int
    units_remaining: int
    credits_used: int
    credits_reserved: int
    credits_remaining: int
    purchased_credits: int
    promotional_credits: int
    promotional_expires_at: Optional[str]
    lifetime_purchased: int
    lifetime_spent: int


class DailyUsage(SDXObject):
    """One UTC day of usage (``GET /v1/usage/daily``)."""

    date: str
    credits_used: int
    credits_released: int
    results: int
    jobs_completed: int
    jobs_failed: int


class Webhook(SDXObject):
    """A webhook endpoint; ``secret`` only in the answer of ``create``."""

    id: str
    url: str
    events: List[str]
    description: Optional[str]
    enabled: bool
    created_at: str
    secret: str


class WebhookDelivery(SDXObject):
    """One delivery of an event to an endpoint."""

    id: str
    event_id: str
    event_type: str
    status: str
    attempts: int
    response_status: Optional[int]
    error: Optional[str]
    next_attempt_at: Optional[str]
    created_at: str
    delivered_at: Optional[str]


class WebhookEvent(SDXObject):
    """A verified webhook message: ``id``, ``type``, ``created_at``, ``workspace_id``, ``data``."""

    id: str
    type: str
    created_at: str
    workspace_id: str
    data: SDXObject


class Destination(SDXObject):
    """A bucket that jobs and batches deliver their export to (``GET /v1/destinations/{destination_id}``);
    never with its secret access key."""

    id: str
    name: str
    type: str
    bucket: str
    prefix: str
    region: str
    endpoint: Optional[str]
    force_path_style: bool
    access_key_id: str
    format: str
    created_at: str


class Plan(SDXObject):
    """A monthly plan (``PLANS``): ``monthly_credits`` a month for ``amount`` (minor unit) in ``currency``."""

    id: str
    name: str
    monthly_credits: int
    amount: int
    currency: str
    limits: SDXObject


class Subscription(SDXObject):
    """The workspace's Stripe subscription: ``status`` ``incomplete``, ``active``, ``past_due`` or
    ``canceled``; ``scheduled_plan_id`` is a downgrade's plan until the next invoice is paid."""

    id: str
    plan_id: str
    status: str
    current_period_end: Optional[str]
    cancel_at_period_end: bool
    scheduled_plan_id: Optional[str]


class Invoice(SDXObject):
    """An invoice of the subscription, with Stripe's page to view or pay it (``hosted_invoice_url``)."""

    id: str
    number: Optional[str]
    status: str
    amount_due: int
    amount_paid: int
    currency: str
    period_start: Optional[str]
    period_end: Optional[str]
    hosted_invoice_url: Optional[str]
    created_at: str


class Billing(SDXObject):
    """``GET /v1/billing``: ``payments_enabled``, ``plans``, ``plan``, ``subscription`` (or None),
    ``packs``, ``auto_recharge``, ``limits`` and ``month_spent_credits``."""

    _nested: ClassVar[Dict[str, Type[SDXObject]]] = {"plans": Plan, "plan": Plan, "subscription": Subscription}
    payments_enabled: bool
    plans: List[Plan]
    plan: Plan
    subscription: Optional[Subscription]
    month_spent_credits: int


class Checkout(SDXObject):
    """A Stripe Checkout Session to send the subscriber to: ``checkout_id`` and ``url``."""

    checkout_id: str
    url: str


class ExportResult(SDXObject):
    """Where ``export`` wrote: ``path``, ``bytes``, ``content_type``, ``filename`` (the service's name for it)."""

    path: str
    bytes: int
    content_type: Optional[str]
    filename: Optional[str]


class MonitorAlert(SDXObject):
    """An alert of a monitor: ``metric``, ``condition`` (above, below, change_pct_above, new_item), ``threshold``, ``target``."""

    metric: str
    condition: str
    threshold: float
    target: str


class Monitor(SDXObject):
    """A monitorable operation over targets on a recurrence (``GET /v1/monitors/{monitor_id}``)."""

    _nested: ClassVar[Dict[str, Type[SDXObject]]] = {"alerts": MonitorAlert}
    id: str
    name: str
    platform: str
    operation: str
    targets: List[str]
    limit: int
    frequency: str
    time_of_day: Optional[str]
    day_of_week: Optional[str]
    timezone: str
    status: str
    paused_reason: Optional[str]
    alerts: List[MonitorAlert]
    created_by: Optional[SDXObject]
    next_run_at: Optional[str]
    last_run_at: Optional[str]
    estimated_credits_per_run: int
    estimated_credits_per_month: int
    created_at: str


class MonitorRun(SDXObject):
    """One run of a monitor: its batches of at most 100 targets."""

    id: str
    monitor_id: str
    trigger: str
    status: str
    batch_ids: List[str]
    scheduled_for: str
    started_at: Optional[str]
    finished_at: Optional[str]
    observations: int
    changes: int
    error: Optional[SDXObject]


class MonitorChange(SDXObject):
    """A change a run recorded: ``metric_changed``, ``field_changed`` or ``new_item``."""

    id: str
    run_id: str
    target: str
    item_id: Optional[str]
    kind: str
    field: Optional[str]
    before: Any
    after: Any
    change_pct: Optional[float]
    at: str


class SeriesPoint(SDXObject):
    """A value (``value``) and when the run that observed it completed (``at``)."""

    at: str
    value: float


class Series(SDXObject):
    """One series: a target's count (``item_id`` None) or an item's metric, its points oldest first."""

    _nested: ClassVar[Dict[str, Type[SDXObject]]] = {"points": SeriesPoint}
    target: str
    item_id: Optional[str]
    metric: str
    points: List[SeriesPoint]


#: The columns of a series' DataFrame and of its export.
SERIES_COLUMNS = ["target", "item_id", "metric", "at", "value"]


class SeriesList(List[Series]):
    """The series of ``monitors.series(...)``: a list of Series, and ``to_pandas()``."""

    def rows(self) -> List[Dict[str, Any]]:
        """One row per point: target, item_id, metric, at, value (the export's columns)."""
        out: List[Dict[str, Any]] = []
        for series in self:
            data = series.to_dict()
            for point in data["points"]:
                out.append({"target": data["target"], "item_id": data["item_id"], "metric": data["metric"], "at": point["at"], "value": point["value"]})
        return out

    def to_pandas(self) -> Any:
        """A pandas DataFrame, one row per point, with the columns target, item_id, metric, at,
        value (``at`` as the ISO 8601 text the service sends); pandas must be installed. For a
        column per series: ``df.pivot_table(index="at", columns="target", values="value")``."""
        try:
            pandas = importlib.import_module("pandas")
        except ImportError as error:
            raise ImportError("to_pandas() needs pandas, which the SDK does not install: pip install pandas") from error
        return pandas.DataFrame(self.rows(), columns=SERIES_COLUMNS)


def to_pandas(rows: Iterable[Any]) -> Any:
    """A pandas DataFrame of ``rows`` (SDX objects or dicts), nested fields flattened with dots.

    pandas is not a dependency of the SDK: it is imported here, when asked for.
    """
    try:
        pandas = importlib.import_module("pandas")
    except ImportError as error:
        raise ImportError("to_pandas() needs pandas, which the SDK does not install: pip install pandas") from error
    records = [row.to_dict() if isinstance(row, SDXObject) else row for row in rows]
    return pandas.json_normalize(records)
