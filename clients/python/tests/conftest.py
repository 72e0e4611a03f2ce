from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import AsyncIterator, Dict, Iterator

import pytest

HERE = Path(__file__).resolve().parent
# The package under test is the source tree, unless SDX_TEST_INSTALLED=1 asks for the installed one.
if os.environ.get("SDX_TEST_INSTALLED") != "1":
    sys.path.insert(0, str(HERE.parent / "src"))
sys.path.insert(0, str(HERE))

import sdx  # noqa: E402
from service import Service  # noqa: E402

#: Upstream pages take 30 ms in the sandbox, so a 25,000-item job runs long enough to be cancelled.
SERVICE_ENV = {"SANDBOX_LATENCY_MS": "30"}


@pytest.fixture(scope="session")
def service() -> Iterator[Service]:
    running = Service(SERVICE_ENV)
    try:
        yield running
    finally:
        running.close()


@pytest.fixture
def workspace(service: Service) -> Dict[str, str]:
    return service.workspace(credits=200_000)


@pytest.fixture
def client(service: Service, workspace: Dict[str, str]) -> Iterator[sdx.Client]:
    with sdx.Client(api_key=workspace["api_key"], base_url=service.url) as c:
        yield c


@pytest.fixture
async def aclient(service: Service, workspace: Dict[str, str]) -> AsyncIterator[sdx.AsyncClient]:
    async with sdx.AsyncClient(api_key=workspace["api_key"], base_url=service.url) as c:
        yield c


@pytest.fixture
def fake_pandas(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """tests/fakes/pandas on sys.path: pandas is no dependency of the SDK, nor installed here."""
    monkeypatch.syspath_prepend(str(HERE / "fakes"))
    sys.modules.pop("pandas", None)
    yield
    sys.modules.pop("pandas", None)

