"""The smoke test of an installed sdx-client (run from a fresh venv by clients/python/test/package.test.ts):
the package comes from site-packages, is typed, and works against the service (SDX_API_KEY, SDX_BASE_URL)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import sdx

location = Path(sdx.__file__).resolve()
assert str(location).startswith(sys.prefix), f"sdx imported from {location}, not from the venv {sys.prefix}"
assert (location.parent / "py.typed").exists(), "py.typed is missing from the installed package"

with sdx.Client() as client:
    assert client.base_url == os.environ["SDX_BASE_URL"]
    job = client.jobs.create("twitter", "followers", "nasa", limit=1500)
    done = client.jobs.wait(job.id, timeout=60)
    assert done.status == "completed", done
    ids = [item.id for item in client.jobs.items(done.id, page_size=400)]
    assert len(ids) == 1500 and len(set(ids)) == 1500
    try:
        client.jobs.get("job_00000000000000000000000000")
    except sdx.NotFoundError as error:
        assert error.code == "job_not_found" and error.request_id
    else:
        raise AssertionError("expected NotFoundError")
    print(f"sdx {sdx.__version__} from {location.parent}: job {done.id} completed with {len(ids)} items")
