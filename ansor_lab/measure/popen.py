"""Worker processes started with ``python -m`` (like TVM's PopenWorker).

A fresh interpreter per worker, talking over its stdin/stdout pipes: nothing of the
parent's ``__main__`` is re-imported (multiprocessing's spawn would re-run a script that
lacks the ``if __name__ == "__main__"`` guard), it is safe with CUDA and in notebooks,
and a worker that hangs or crashes is killed and replaced without touching the parent.
Messages are length-prefixed pickles exchanged only between these two processes.

A worker's stderr goes to an unlinked temporary file, not straight to the terminal: after
each answer it is copied to our stderr (so warnings still show), and when the worker dies
its last words (LLVM's or libgomp's message, a Python traceback) go into the error record.
A worker dies with its parent: a watchdog thread notices the parent is gone even while the
main thread spins in a hung kernel (ctypes releases the GIL), so a killed tuner leaves no
runner behind. (PR_SET_PDEATHSIG is not used: it fires when the *thread* that started the
worker ends, and the notebook widget tunes in a thread.)
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from typing import Any

from .workers import handle

try:
    import fcntl
except ImportError:  # not POSIX
    fcntl = None

_HEADER = struct.Struct("<Q")
LAST_WORDS_CHARS = 1500  # how much of a dead worker's stderr goes into its error record
_PARENT_ENV = "ANSOR_LAB_WORKER_PARENT"
_WATCH_INTERVAL_S = 0.5


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
        self._stderr = None  # the worker's stderr file (unlinked)

    def start(self) -> None:
        """Start the process (if it is not running)."""
        if self.proc is not None and self.proc.poll() is None:
            return
        if self.proc is not None:  # it died while idle: keep its last words
            self._forward_stderr()
        env = dict(os.environ)
        env.setdefault("PYTHONUNBUFFERED", "1")
        env[_PARENT_ENV] = str(os.getpid())
        self._close_stderr()
        self._stderr = tempfile.TemporaryFile(prefix="ansor_lab_worker_")
        if fcntl is not None:  # the worker appends even after we truncate what we copied
            fd = self._stderr.fileno()
            fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_APPEND)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ansor_lab.measure.worker_main"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=env,
        )

    def _forward_stderr(self) -> str:
        """Copy what the worker wrote to stderr to ours, empty the file; returns its tail."""
        if self._stderr is None:
            return ""
        fd = self._stderr.fileno()
        try:
            size = os.fstat(fd).st_size
            tail = b""
            pos = 0
            while pos < size:
                chunk = os.pread(fd, min(1 << 20, size - pos), pos)
                if not chunk:
                    break
                try:
                    os.write(2, chunk)
                except OSError:
                    pass
                tail = (tail + chunk)[-4 * LAST_WORDS_CHARS :]
                pos += len(chunk)
            if size:
                os.ftruncate(fd, 0)
        except OSError:
            return ""
        text = tail.decode("utf-8", errors="replace").strip()
        return text[-LAST_WORDS_CHARS:]

    def _close_stderr(self) -> None:
        if self._stderr is not None:
            try:
                self._stderr.close()
            except OSError:
                pass
            self._stderr = None

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
            reply = pickle.loads(_read_exact(self.fileno(), n, deadline))
        except WorkerTimeout:
            self.kill()
            raise
        except WorkerDied:
            status = self._exit_status()
            words = self._forward_stderr()
            self._close_stderr()
            said = f"; its stderr ended with:\n{words}" if words else ""
            raise WorkerDied(f"the worker died ({status}){said}") from None
        self._forward_stderr()
        return reply

    def _exit_status(self) -> str:
        """How the process ended (reaped first: the pipe closes before the exit is seen)."""
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        self.kill(keep_stderr=True)
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

    def kill(self, keep_stderr: bool = False) -> None:
        """Stop the process now."""
        if not keep_stderr:
            self._forward_stderr()
            self._close_stderr()
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


def _die_with_parent() -> None:
    """Kill this process as soon as the process that started it is gone."""
    try:
        parent = int(os.environ.get(_PARENT_ENV, "0"))
    except ValueError:
        parent = 0
    parent = parent or os.getppid()

    def watch() -> None:
        while True:
            if os.getppid() != parent:  # re-parented: the tuner was killed
                os.kill(os.getpid(), signal.SIGKILL)
            time.sleep(_WATCH_INTERVAL_S)

    threading.Thread(target=watch, name="ansor_lab-parent-watchdog", daemon=True).start()


def serve() -> None:
    """The worker's loop: read a request, answer it, until stdin closes."""

    _die_with_parent()
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
