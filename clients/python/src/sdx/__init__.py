"""The Python client of the SDX social-data extraction API.

    import sdx

    client = sdx.Client()  # SDX_API_KEY, SDX_BASE_URL
    job = client.jobs.create("twitter", "followers", "nasa", limit=2000)
    job = client.jobs.wait(job.id, on_progress=lambda j: print(j.progress_current))
    for item in client.jobs.items(job.id):
        print(item.username)
"""

from . import webhooks
from ._async_client import AsyncClient
from ._client import Client
from ._errors import (
    APIConnectionError,
    APIError,
    APITimeoutError,
    AuthenticationError,
    ConflictError,
    InsufficientCreditsError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    SDXError,
    ValidationError,
    WaitTimeoutError,
    WebhookVerificationError,
)
from ._models import (
    Batch,
    BatchChild,
    Billing,
    Checkout,
    Invoice,
    Plan,
    Subscription,
    DailyUsage,
    Delivery,
    Destination,
    ExportResult,
    Item,
    Job,
    JobError,
    Monitor,
    MonitorAlert,
    MonitorChange,
    MonitorRun,
    Quote,
    Schedule,
    ScheduleRun,
    SDXObject,
    Series,
    SeriesList,
    SeriesPoint,
    Usage,
    Webhook,
    WebhookDelivery,
    WebhookEvent,
)
from ._paging import AsyncPager, SyncPager
from ._version import __version__

__all__ = [
    "Client",
    "AsyncClient",
    "webhooks",
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
    "SDXObject",
    "Job",
    "JobError",
    "Item",
    "Batch",
    "BatchChild",
    "Schedule",
    "ScheduleRun",
    "Monitor",
    "MonitorAlert",
    "MonitorRun",
    "MonitorChange",
    "Series",
    "SeriesPoint",
    "SeriesList",
    "Quote",
    "Usage",
    "DailyUsage",
    "Webhook",
    "WebhookDelivery",
    "WebhookEvent",
    "Destination",
    "Delivery",
    "Billing",
    "Plan",
    "Subscription",
    "Invoice",
    "Checkout",
    "ExportResult",
    "SyncPager",
    "AsyncPager",
    "__version__",
]
