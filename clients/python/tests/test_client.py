"""The Python client against the real `rewind serve` (the built bin of packages/rewind).

Covers a whole scenario (session, turn, checkpoint, point with progress, restore with its token),
refusals as values, errors as exceptions with their tag, the Unix socket, and that the generated
methods are what the server's current `--schema` generates.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from rewind_client import Ok, Refused, RewindClient, RewindError  # noqa: E402

BIN = os.environ.get("REWIND_BIN_JS", str(ROOT.parent.parent / "packages" / "rewind" / "dist" / "cli" / "rewind.mjs"))
NODE = os.environ.get("NODE", shutil.which("node") or "node")
COMMAND = [NODE, BIN]


def rewind(*args: str, cwd: str) -> subprocess.CompletedProcess:
    return subprocess.run(COMMAND + list(args), cwd=cwd, capture_output=True, text=True, check=False)


def value(outcome):
    if not isinstance(outcome, Ok):
        raise AssertionError(f"expected Ok, got {outcome!r}")
    return outcome.value


class WorkspaceTest(unittest.TestCase):
    def setUp(self) -> None:
        self.root = tempfile.mkdtemp(prefix="rwpy-")
        self.addCleanup(shutil.rmtree, self.root, True)
        init = rewind("init", cwd=self.root)
        self.assertEqual(init.returncode, 0, init.stderr)


class ScenarioTest(WorkspaceTest):
    def test_whole_scenario_over_stdio(self) -> None:
        path = Path(self.root, "a.txt")
        path.write_text("zero\n")
        with RewindClient.spawn(self.root, command=COMMAND) as client:
            session = value(client.create_session({"title": "python agent", "cwd": self.root}))
            sid = session["id"]
            turn = value(client.append_user_message(sid, {"text": "write a.txt", "turnId": "t1"}))
            self.assertEqual(turn["turnId"], "t1")

            progress = []
            captured = value(client.capture_point(sid, "t1", on_progress=progress.append))
            self.assertEqual(captured["_tag"], "Captured")
            self.assertTrue(any(p.get("phase") == "done" for p in progress), progress)
            point_id = captured["point"]["pointId"]

            path.write_text("one\n")
            recorded = value(
                client.record_file_mutation(
                    {"sessionId": sid, "turnId": "t1", "path": "a.txt", "toolName": "write", "before": "zero\n", "after": "one\n"}
                )
            )
            self.assertTrue(recorded["recorded"])
            value(client.complete_turn(sid, "t1"))
            self.assertEqual([p["pointId"] for p in value(client.list_points(sid))], [point_id])

            # Back to the point: preview (a token), restore, and the token is spent.
            plan = value(client.preview_point_restore(sid, point_id))
            self.assertTrue(plan["canApply"])
            restored = client.restore_point(sid, point_id, plan["token"])
            self.assertIsInstance(restored, Ok)
            self.assertEqual(path.read_text(), "zero\n")
            again = client.restore_point(sid, point_id, plan["token"])
            self.assertIsInstance(again, Refused)
            self.assertEqual(again.refusal.kind, "token_used")
            self.assertFalse(again.ok)

    def test_refusals_are_values_and_errors_raise_with_their_tag(self) -> None:
        with RewindClient.spawn(self.root, command=COMMAND) as client:
            missing = client.transcript("no-such-session")
            self.assertIsInstance(missing, Refused)
            self.assertEqual(missing.refusal.kind, "session_not_found")
            self.assertTrue(missing.refusal.message)
            with self.assertRaises(RewindError) as raised:
                client.append_user_message("s", {"text": 42})  # type: ignore[typeddict-item]
            self.assertEqual(raised.exception.tag, "InvalidParams")
            self.assertEqual(raised.exception.code, -32602)
            with self.assertRaises(RewindError) as unknown:
                client.call("noSuchMethod", {})
            self.assertEqual(unknown.exception.tag, "MethodNotFound")
            # The connection is still good after both.
            self.assertIsInstance(client.list_sessions(), Ok)

    def test_a_missing_store_fails_the_first_call_with_disconnected(self) -> None:
        empty = tempfile.mkdtemp(prefix="rwpy-empty-")
        self.addCleanup(shutil.rmtree, empty, True)
        client = RewindClient.spawn(empty, command=COMMAND)
        try:
            with self.assertRaises(RewindError) as raised:
                client.list_sessions()
            self.assertEqual(raised.exception.tag, "Disconnected")
        finally:
            client.close()


class SocketTest(WorkspaceTest):
    def test_connect_to_a_listening_socket(self) -> None:
        run_dir = tempfile.mkdtemp(prefix="rwpy-sock-")
        self.addCleanup(shutil.rmtree, run_dir, True)
        os.chmod(run_dir, 0o700)
        sock = os.path.join(run_dir, "rewind.sock")
        server = subprocess.Popen(
            COMMAND + ["serve", "--workspace", self.root, "--socket", sock],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.addCleanup(lambda: server.communicate(timeout=60))
        self.addCleanup(server.terminate)
        # Ready is the "listening on" line (docs/server.md), not the socket file: the file exists
        # from bind(), a moment before listen(), and a connect in between is refused.
        while True:
            line = server.stderr.readline()  # type: ignore[union-attr]
            if line == "":
                server.kill()
                self.fail(f"the server did not start: {server.communicate()[1]}")
            if "listening on" in line:
                break
        with RewindClient.connect(sock) as first, RewindClient.connect(sock) as second:
            sid = value(first.create_session({"title": "over a socket", "cwd": self.root}))["id"]
            listed = value(second.list_sessions())
            self.assertIn(sid, [s["sessionId"] for s in listed])


class GeneratedTest(unittest.TestCase):
    def test_the_generated_methods_are_current(self) -> None:
        check = subprocess.run(
            [sys.executable, str(ROOT / "generate.py"), "--check", "--command"] + COMMAND,
            capture_output=True,
            text=True,
        )
        self.assertEqual(check.returncode, 0, check.stderr)

    def test_one_method_per_server_method(self) -> None:
        import json

        from rewind_client._methods import Methods

        schema = json.loads(subprocess.run(COMMAND + ["serve", "--schema"], capture_output=True, check=True).stdout)
        sys.path.insert(0, str(ROOT))
        from generate import snake

        for method in schema["methods"]:
            self.assertTrue(callable(getattr(Methods, snake(method["name"]), None)), method["name"])


if __name__ == "__main__":
    unittest.main()
