"""Worker processes started with ``python -m`` (like TVM's PopenWorker).

A fresh interpreter per worker, talking over its stdin/stdout pipes: nothing of the
parent's ``__main__`` is re-imported (multiprocessing's spawn would re-run a script that
lacks the ``if __name__ == "__main__"`` guard), it is safe with CUDA and in notebooks,
and a worker that hangs or crashes is killed and replaced without touching the parent.
Messages are length-prefixed pickles exchanged only between these two processes.
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import time
from typing import Any

from .workers import handle

_HEADER = struct.Struct("<Q")


class WorkerDied(RuntimeError):
    """The worker process exited while handling a request."""


class WorkerTimeout(TimeoutError):
    """The worker did not answer in time (it has been killed)."""


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks = []
    while n > 0:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WorkerTimeout("no answer in time")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                raise WorkerTimeout("no answer in time")
        data = os.read(fd, n)
        if not data:
            raise WorkerDied("the worker closed its pipe")
        chunks.append(data)
        n -= len(data)
    return b"".join(chunks)


class PopenWorker:
    """One worker process serving ``worker_main.handle`` requests."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        """Start the process (if it is not running)."""
        if self.proc is not None and self.proc.poll() is None:
            return
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ansor_lab.measure.worker_main"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=None,
            env=env,
        )

    @property
    def alive(self) -> bool:
        """Whether the process runs."""
        return self.proc is not None and self.proc.poll() is None

    def send(self, msg: Any) -> None:
        """Send one request."""
        self.start()
        data = pickle.dumps(msg, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self.proc.stdin.write(_HEADER.pack(len(data)) + data)
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError) as err:
            raise WorkerDied(f"could not send to the worker: {err}") from None

    def fileno(self) -> int:
        """The fd its answers arrive on (for select)."""
        return self.proc.stdout.fileno()

    def recv(self, timeout: float | None) -> Any:
        """Wait for one answer; kills the worker on timeout or death."""
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            (n,) = _HEADER.unpack(_read_exact(self.fileno(), _HEADER.size, deadline))
            return pickle.loads(_read_exact(self.fileno(), n, deadline))
        except WorkerTimeout:
            self.kill()
            raise
        except WorkerDied:
            raise WorkerDied(f"the worker died ({self._exit_status()})") from None

    def _exit_status(self) -> str:
        """How the process ended (reaped first: the pipe closes before the exit is seen)."""
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        self.kill()
        if code is not None and code < 0:
            try:
                return f"exit code {code}, {signal.Signals(-code).name}"
            except ValueError:
                pass
        return f"exit code {code}"

    def call(self, msg: Any, timeout: float | None = None) -> Any:
        """Send a request and wait for its answer."""
        self.send(msg)
        return self.recv(timeout)

    def kill(self) -> None:
        """Stop the process now."""
        if self.proc is not None:
            try:
                self.proc.kill()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
            for pipe in (self.proc.stdin, self.proc.stdout):
                try:
                    pipe.close()
                except OSError:
                    pass
        self.proc = None


def serve() -> None:
    """The worker's loop: read a request, answer it, until stdin closes."""

    inp = sys.stdin.buffer.raw if hasattr(sys.stdin.buffer, "raw") else sys.stdin.buffer
    out_fd = os.dup(sys.stdout.fileno())
    # anything the work prints goes to stderr, never into the answer channel
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    in_fd = inp.fileno()
    while True:
        try:
            (n,) = _HEADER.unpack(_read_exact(in_fd, _HEADER.size, None))
            msg = pickle.loads(_read_exact(in_fd, n, None))
        except WorkerDied:
            return
        reply = handle(msg)
        if reply is None:
            return
        data = pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL)
        try:
            os.write(out_fd, _HEADER.pack(len(data)) + data)
        except BrokenPipeError:  # the parent is gone (killed, or it gave up on us)
            return
