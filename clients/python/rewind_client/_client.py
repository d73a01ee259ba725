"""The connection to a `rewind serve`: spawned over stdio, or a Unix socket it listens on.

One JSON-RPC 2.0 message per line. Calls may be made from several threads: each gets its own id,
and a reader thread hands every answer to the call waiting for it (answers can come out of order)
and every `$/progress` notification to that call's `on_progress`. A server that goes away fails
every waiting call with `RewindError(tag="Disconnected")`.
"""
import json
import os
import shutil
import socket
import subprocess
import threading
from typing import IO, Any, Callable, Dict, List, Optional, Sequence

from ._methods import Methods
from ._outcome import Outcome, RewindError, outcome_of

Progress = Callable[[Dict[str, Any]], None]


class _Pending:
    def __init__(self, on_progress: Optional[Progress]) -> None:
        self.done = threading.Event()
        self.result: Any = None
        self.error: Optional[RewindError] = None
        self.on_progress = on_progress


class RewindClient(Methods):
    """A client of one `rewind serve`. Use `RewindClient.spawn(...)` or `RewindClient.connect(...)`."""

    def __init__(self, reader: IO[bytes], writer: IO[bytes], on_close: Callable[[], None]) -> None:
        self._reader = reader
        self._writer = writer
        self._on_close = on_close
        self._lock = threading.Lock()
        self._next_id = 0
        self._pending: Dict[int, _Pending] = {}
        self._closed = False
        self._thread = threading.Thread(target=self._read_loop, name="rewind-client-reader", daemon=True)
        self._thread.start()

    # --- opening -----------------------------------------------------------------------------
    @classmethod
    def spawn(
        cls,
        workspace: str,
        *,
        command: Optional[Sequence[str]] = None,
        store_dir: Optional[str] = None,
        env: Optional[Dict[str, str]] = None,
    ) -> "RewindClient":
        """Starts `rewind serve` on the workspace (its store must exist: `rewind init`) over stdio.

        `command` is how to run rewind (default: `$REWIND_BIN`, else `rewind` on PATH).
        """
        argv: List[str] = list(command) if command is not None else _default_command()
        argv += ["serve", "--workspace", workspace]
        if store_dir is not None:
            argv += ["--dir", store_dir]
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        stderr_lines: List[str] = []

        def drain(stream: IO[bytes]) -> None:
            for line in stream:
                stderr_lines.append(line.decode("utf-8", "replace").rstrip("\n"))

        threading.Thread(target=drain, args=(proc.stderr,), daemon=True).start()

        def close() -> None:
            try:
                proc.stdin.close()  # type: ignore[union-attr]
            except OSError:
                pass
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

        client = cls(proc.stdout, proc.stdin, close)
        client.server_stderr = stderr_lines
        return client

    @classmethod
    def connect(cls, socket_path: str) -> "RewindClient":
        """Connects to a `rewind serve --socket <path>` that is already listening."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.connect(socket_path)
        reader = sock.makefile("rb")
        writer = sock.makefile("wb")

        def close() -> None:
            # Wakes the reader thread with end-of-file first: closing a file another thread reads blocks.
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            for part in (writer, reader):
                try:
                    part.close()
                except OSError:
                    pass
            sock.close()

        return cls(reader, writer, close)

    server_stderr: List[str] = []

    # --- calls -------------------------------------------------------------------------------
    def call(self, method: str, params: Dict[str, Any], on_progress: Optional[Progress] = None) -> Outcome:
        """Calls any server method by name, params by name; answers its Outcome."""
        return outcome_of(self._request(method, params, on_progress))

    def _call(self, method: str, params: Dict[str, Any], on_progress: Optional[Progress] = None) -> Outcome:
        return self.call(method, params, on_progress)

    def _request(self, method: str, params: Dict[str, Any], on_progress: Optional[Progress]) -> Any:
        pending = _Pending(on_progress)
        with self._lock:
            if self._closed:
                raise RewindError(-32603, "the client is closed", "Disconnected")
            self._next_id += 1
            request_id = self._next_id
            self._pending[request_id] = pending
            line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            try:
                self._writer.write(line.encode("utf-8") + b"\n")
                self._writer.flush()
            except OSError as error:
                del self._pending[request_id]
                raise RewindError(-32603, f"the server cannot be reached: {error}", "Disconnected") from error
        pending.done.wait()
        if pending.error is not None:
            raise pending.error
        return pending.result

    def _read_loop(self) -> None:
        try:
            for raw in self._reader:
                try:
                    message = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(message, dict):
                    continue
                if message.get("method") == "$/progress":
                    params = message.get("params") or {}
                    with self._lock:
                        waiting = self._pending.get(params.get("id"))
                    if waiting is not None and waiting.on_progress is not None:
                        waiting.on_progress(params.get("progress") or {})
                    continue
                with self._lock:
                    waiting = self._pending.pop(message.get("id"), None)
                if waiting is None:
                    continue
                if "error" in message:
                    waiting.error = RewindError.from_rpc(message["error"])
                else:
                    waiting.result = message.get("result")
                waiting.done.set()
        except (OSError, ValueError):
            pass
        finally:
            with self._lock:
                self._closed = True
                left = list(self._pending.values())
                self._pending.clear()
            for waiting in left:
                waiting.error = RewindError(-32603, "the server went away before answering", "Disconnected")
                waiting.done.set()

    # --- closing -----------------------------------------------------------------------------
    def close(self) -> None:
        """Ends the connection (a spawned server finishes its calls, closes the store and exits)."""
        with self._lock:
            self._closed = True
        self._on_close()
        self._thread.join(timeout=30)

    def __enter__(self) -> "RewindClient":
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


def _default_command() -> List[str]:
    configured = os.environ.get("REWIND_BIN")
    if configured:
        return [configured]
    found = shutil.which("rewind")
    if found is None:
        raise RewindError(-32603, "no rewind on PATH: pass command=[...] or set REWIND_BIN", "NotFound")
    return [found]
