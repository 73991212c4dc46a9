"""Start `veridic ais serve` in a subprocess on 127.0.0.1 (shared by the browser and load tests)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    def __init__(self, db: Path, *, port: int | None = None, args: tuple[str, ...] = ()):
        self.db, self.port, self.args = db, port or free_port(), tuple(args)
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 120.0) -> Server:  # a loaded 2-core machine can take ~50 s to import fastapi + sqlalchemy
        env = dict(os.environ, VERIDIC_AIS_SECRET="test-secret-" + "x" * 20)
        self.proc = subprocess.Popen([sys.executable, "-m", "veridic.ais.cli", "serve", "--db", str(self.db), "--port", str(self.port), *self.args],
                                     env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.proc.stderr.read().decode()[-2000:]}")
            try:
                httpx.get(self.url + "/login", timeout=1.0)
                return self
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError("server did not start")

    def kill(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)  # the process group we started: no graceful shutdown
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(10)
