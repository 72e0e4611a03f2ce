"""Every `python` block of docs/python.md, run as a script against the service (each in a fresh
workspace, SDX_API_KEY and SDX_BASE_URL set, tests/fakes on the path for pandas, a loopback S3's
bucket in BUCKET_NAME, BUCKET_ENDPOINT, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY), and checked
with mypy --strict."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import List

import pytest

from service import Service

HERE = Path(__file__).resolve().parent
DOC = HERE.parents[2] / "docs" / "python.md"


def blocks() -> List[str]:
    return re.findall(r"^```python\n(.*?)^```$", DOC.read_text(), flags=re.S | re.M)


def test_the_page_has_its_examples() -> None:
    found = blocks()
    assert len(found) >= 6
    assert "sdx.Client()" in found[0]
    assert any("to_pandas()" in block for block in found)
    assert any("sdx.AsyncClient()" in block for block in found)
    assert any("sdx.webhooks.verify" in block for block in found)
    assert any("client.destinations.create" in block for block in found)


def _source_path() -> str:
    if os.environ.get("SDX_TEST_INSTALLED") == "1":
        return str(HERE / "fakes")
    return os.pathsep.join([str(HERE.parent / "src"), str(HERE / "fakes")])


@pytest.mark.parametrize("index", range(len(blocks())))
def test_example_runs(service: Service, tmp_path: Path, index: int) -> None:
    ws = service.workspace(credits=200_000)
    script = tmp_path / f"example_{index}.py"
    script.write_text(blocks()[index])
    # The destinations example writes to the loopback S3 beside the service.
    s3 = service.s3()
    bucket = {"BUCKET_NAME": s3["bucket"], "BUCKET_ENDPOINT": s3["endpoint"], "AWS_ACCESS_KEY_ID": s3["access_key_id"], "AWS_SECRET_ACCESS_KEY": s3["secret_access_key"]}
    env = {**os.environ, **bucket, "SDX_API_KEY": ws["api_key"], "SDX_BASE_URL": service.url, "PYTHONPATH": _source_path()}
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180)
    assert run.returncode == 0, f"example {index} failed:\n{blocks()[index]}\n--- stdout\n{run.stdout}\n--- stderr\n{run.stderr}"
    assert run.stdout.strip() != ""


def test_examples_type_check(tmp_path: Path) -> None:
    for index, block in enumerate(blocks()):
        (tmp_path / f"example_{index}.py").write_text(block)
    env = {**os.environ, "MYPYPATH": _source_path()}
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--python-version", "3.9", *sorted(str(p) for p in tmp_path.glob("example_*.py"))],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert run.returncode == 0, run.stdout + run.stderr
