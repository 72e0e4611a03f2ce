"""Python SDK benchmark: iterating a 25,000-item job's items with the SDK versus raw httpx paging
of the same endpoint, in the same run, against a served test stack (clients/python/tests/serve.ts:
real API, worker, Postgres and Redis; a database of its own, dropped at the end).

- raw: an httpx.Client pages GET /v1/jobs/{job_id}/items?limit=1000 by next_cursor, decodes each
  page with json.loads and reads every item's id;
- sdk: `for item in client.jobs.items(job_id): item.id` (the same page size, objects with
  attribute access, retries armed).
Each is run BENCH_ROUNDS (5) times, alternating, after one warm-up each; the figures are medians.
Memory: the process's RSS sampled every 1,000 items of an SDK iteration, against its RSS before.

Targets: SDK throughput >= 0.7 of raw, and RSS growth < 50 MB. Exits with code 1 when one is missed.

Run: npm run bench:python   (BENCH_ITEMS, BENCH_ROUNDS; DATABASE_URL / REDIS_URL as for the tests)
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import List, Tuple

import httpx

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "clients" / "python" / "src"))
sys.path.insert(0, str(ROOT / "clients" / "python" / "tests"))

import sdx  # noqa: E402
from service import Service  # noqa: E402

ITEMS = int(os.environ.get("BENCH_ITEMS", "25000"))
ROUNDS = int(os.environ.get("BENCH_ROUNDS", "5"))
PAGE = 1000
TARGET_RATIO = 0.7
TARGET_RSS_MB = 50.0


def rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 1e6


def raw(url: str, key: str, job_id: str) -> Tuple[float, int, int]:
    count = 0
    seen = set()
    started = time.perf_counter()
    with httpx.Client(base_url=url, headers={"Authorization": f"Bearer {key}"}, timeout=30) as http:
        params = {"limit": str(PAGE)}
        while True:
            response = http.get(f"/v1/jobs/{job_id}/items", params=params)
            response.raise_for_status()
            page = json.loads(response.content)
            for item in page["items"]:
                seen.add(item["id"])
                count += 1
            if not page["next_cursor"]:
                break
            params = {"limit": str(PAGE), "cursor": page["next_cursor"]}
    return time.perf_counter() - started, count, len(seen)


def with_sdk(url: str, key: str, job_id: str, samples: List[float]) -> Tuple[float, int, int]:
    count = 0
    seen = set()
    started = time.perf_counter()
    with sdx.Client(key, url) as client:
        for item in client.jobs.items(job_id):
            seen.add(item.id)
            count += 1
            if count % 1000 == 0:
                samples.append(rss_mb())
    return time.perf_counter() - started, count, len(seen)


def main() -> int:
    service = Service()
    try:
        ws = service.workspace(credits=ITEMS * 3, rate_limit_per_minute=100_000)
        with sdx.Client(ws["api_key"], service.url) as client:
            job = client.jobs.create("twitter", "followers", "elonmusk", limit=ITEMS)
            job_id = job.id
            # Polls with the result left out of the answers: the bench process starts flat.
            while next(iter(client.jobs.list(include_result=False, limit=1))).status not in ("completed", "failed", "cancelled"):
                time.sleep(0.2)
        url, key = service.url, ws["api_key"]

        raw(url, key, job_id)
        with_sdk(url, key, job_id, [])
        raw_times: List[float] = []
        sdk_times: List[float] = []
        growth: List[float] = []
        for _ in range(ROUNDS):
            elapsed, count, unique = raw(url, key, job_id)
            assert count == unique == ITEMS, (count, unique)
            raw_times.append(elapsed)
            before = rss_mb()
            samples: List[float] = []
            elapsed, count, unique = with_sdk(url, key, job_id, samples)
            assert count == unique == ITEMS, (count, unique)
            sdk_times.append(elapsed)
            growth.append(max(samples) - before)
    finally:
        service.close()

    raw_rate = ITEMS / statistics.median(raw_times)
    sdk_rate = ITEMS / statistics.median(sdk_times)
    ratio = sdk_rate / raw_rate
    worst_growth = max(growth)
    print(f"items of one {ITEMS:,}-item job, pages of {PAGE}, {ROUNDS} rounds (medians)")
    print(f"{'':<6}{'seconds':>10}{'items/s':>12}")
    print(f"{'raw':<6}{statistics.median(raw_times):>10.3f}{raw_rate:>12,.0f}")
    print(f"{'sdk':<6}{statistics.median(sdk_times):>10.3f}{sdk_rate:>12,.0f}")
    print(f"ratio sdk/raw: {ratio:.2f} (target >= {TARGET_RATIO})")
    print(f"RSS growth while iterating: {worst_growth:.1f} MB at most (target < {TARGET_RSS_MB:.0f} MB); RSS now {rss_mb():.1f} MB")
    ok = ratio >= TARGET_RATIO and worst_growth < TARGET_RSS_MB
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
