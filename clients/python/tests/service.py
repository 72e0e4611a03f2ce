"""The service the tests run against: tests/serve.ts (a served @sdx/testing stack), as a child process."""

from __future__ import annotations

import json
import os
import subprocess
import threading
from pathlib import Path
from typing import IO, Any, Dict, Optional

REPO = Path(__file__).resolve().parents[3]
SERVE = Path(__file__).resolve().parent / "serve.ts"


class Service:
    """A running service: ``url``, and commands to its test harness (fresh workspaces, row counts)."""

    def __init__(self, env: Optional[Dict[str, str]] = None) -> None:
        # The Node that runs the jest run (SDX_NODE, set by test/pytest.test.ts) runs the service too.
        node = os.environ.get("SDX_NODE", "node")
        tsx = REPO / "node_modules" / "tsx" / "dist" / "cli.mjs"
        child_env = dict(os.environ)
        if env:
            child_env["SDX_SERVE_ENV"] = json.dumps(env)
        self._process = subprocess.Popen(
            [node, str(tsx), str(SERVE)],
            cwd=str(REPO),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=child_env,
            text=True,
            bufsize=1,
        )
        self._lock = threading.Lock()
        self._next = 0
        first = self._read()
        if "url" not in first:
            raise RuntimeError(f"the service did not start: {first}")
        self.url: str = first["url"]

    def _stdin(self) -> IO[str]:
        assert self._process.stdin is not None
        return self._process.stdin

    def _read(self) -> Dict[str, Any]:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the service exited (code {self._process.poll()})")
        message: Dict[str, Any] = json.loads(line)
        return message

    def command(self, cmd: str, **fields: Any) -> Any:
        with self._lock:
            self._next += 1
            self._stdin().write(json.dumps({"id": self._next, "cmd": cmd, **fields}) + "\n")
            self._stdin().flush()
            answer = self._read()
        if "error" in answer:
            raise RuntimeError(answer["error"])
        return answer["ok"]

    def workspace(self, **fields: Any) -> Dict[str, str]:
        """A fresh workspace: ``{"workspace_id", "api_key"}`` (fields: credits, rate_limit_per_minute, max_active_jobs, role)."""
        result: Dict[str, str] = self.command("workspace", **fields)
        return result

    def s3(self) -> Dict[str, str]:
        """The loopback S3 beside the service: ``{endpoint, region, bucket, access_key_id, secret_access_key}``."""
        result: Dict[str, str] = self.command("s3")
        return result

    def monitor_run(self, run_id: str) -> str:
        """Passes the scheduler would make over monitors, until the run has ended; its final status."""
        return str(self.command("monitor_run", run_id=run_id))

    def count(self, table: str, workspace_id: str) -> int:
        return int(self.command("count", table=table, workspace_id=workspace_id))

    def close(self) -> None:
        try:
            self._stdin().close()
        except OSError:
            pass
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._process.terminate()
            self._process.wait(timeout=10)
