#!/usr/bin/env python3
"""A history run of the live engine on a real repository (docs/benchmarks.md, session 34).

    python3 bench/history/historyRun.py <rewind bin> <clone of a repository> <rev 1> <rev 2>

e.g. `python3 bench/history/historyRun.py packages/rewind/dist/cli/rewind.mjs /tmp/vite HEAD~300
HEAD~1500` on a fresh `git clone` (the run changes the clone: checkouts, edits, a `git clean -fdx`).

`rewind serve --workspace-socket` runs in the clone with its watcher, started from inside it as the
hook client used to start its server, and every `rewind capture --json` is handed to it (each must
say `"via":"server"`). Bulk git operations (checkouts of thousands of files, `git stash -u`,
`git clean -fdx`) land right before a capture, with no pause, so the watcher's flush is what makes
each point right. Each point's file count is compared with git's view of the tree at capture time
(tracked files and untracked, non-ignored ones, less what Rewind's built-in skip list leaves out
where no ignore file names it); then a restore to every point, in a shuffled order, is checked path
by path (content and executable bit, or link target) against that view, and followed by another
capture through the server. The last line says how many checks failed; the exit code is 1 if any.
"""
import atexit
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time

BIN, WS, REV1, REV2 = sys.argv[1:5]
BIN = os.path.abspath(BIN)
WS = os.path.realpath(WS)
RUNTIME = tempfile.mkdtemp(prefix="rewind-history-")
os.chmod(RUNTIME, 0o700)
ENV = dict(os.environ, XDG_STATE_HOME=RUNTIME, XDG_RUNTIME_DIR=RUNTIME, NO_COLOR="1")
SKIPPED_UNLESS_NAMED = (b"node_modules", b".venv", b"__pycache__", b".cache", b".turbo", b".next")
failures = 0
checks = 0


def check(ok, what):
    global failures, checks
    checks += 1
    if not ok:
        failures += 1
        print(f"FAIL {what}", flush=True)


def rewind(*args):
    started = time.time()
    p = subprocess.run(["node", BIN, *args, "--json", "--workspace", WS], cwd=WS, env=ENV, capture_output=True)
    if p.returncode != 0:
        raise SystemExit(f"rewind {' '.join(args)} failed: {p.stdout.decode()[-1500:]} {p.stderr.decode()[-1500:]}")
    lines = [json.loads(line) for line in p.stdout.decode().split("\n") if line.startswith("{")]
    return lines, time.time() - started


def git(*args):
    return subprocess.run(["git", *args], cwd=WS, capture_output=True, check=True).stdout


def view():
    """git's view of the tree: path -> ("F", executable, sha1) or ("L", target)."""
    tracked = set(git("ls-files", "-c", "-z").split(b"\0"))
    named = subprocess.run(
        ["git", "grep", "-h", "-I", *sum((["-e", n.decode()] for n in SKIPPED_UNLESS_NAMED), []), "--", "*.gitignore"],
        cwd=WS, capture_output=True,
    ).stdout
    skip = {n for n in SKIPPED_UNLESS_NAMED if n not in named}
    out = {}
    for rel in git("ls-files", "-co", "--exclude-standard", "-z").split(b"\0"):
        if not rel or (rel not in tracked and skip.intersection(rel.split(b"/")[:-1])):
            continue
        path = os.path.join(WS.encode(), rel)
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            continue
        if os.path.islink(path):
            out[rel] = ("L", os.readlink(path))
        elif os.path.isfile(path):
            with open(path, "rb") as f:
                out[rel] = ("F", st.st_mode & 0o111 != 0, hashlib.sha1(f.read()).hexdigest())
    return out


points = []


def capture(label):
    expected = view()
    lines, took = rewind("capture")
    point = next(line for line in lines if line.get("type") == "point")
    points.append((label, point["pointId"], expected))
    held = point["files"] + point.get("links", 0)
    print(f"capture {label}: {held} entries (git's view {len(expected)}), {took:.2f} s, via {point.get('via')}", flush=True)
    check(point.get("via") == "server", f"capture {label} was not made by the server")
    check(held == len(expected), f"capture {label}: the point holds {held}, git's view {len(expected)}")


START = git("rev-parse", "--abbrev-ref", "HEAD").strip().decode()
rewind("init")
server = subprocess.Popen(
    ["node", BIN, "serve", "--workspace", WS, "--workspace-socket"],
    cwd=WS, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
)
atexit.register(lambda: server.poll() is None and server.kill())
while b"listening on" not in server.stderr.readline():
    if server.poll() is not None:
        raise SystemExit("rewind serve did not start")

capture("start")
capture("start, again")
git("checkout", "-q", REV1)
capture(REV1)
git("checkout", "-q", REV2)
capture(REV2)
rnd = random.Random(11)
files = [f for f in git("ls-files", "-z").split(b"\0") if f and os.path.isfile(os.path.join(WS.encode(), f)) and not os.path.islink(os.path.join(WS.encode(), f))]
for f in rnd.sample(files, min(200, len(files) // 2)):
    with open(os.path.join(WS.encode(), f), "ab") as h:
        h.write(b"\n// agent edit\n")
capture("200 edits")
for f in rnd.sample(files, min(20, len(files) // 4)):
    os.chmod(os.path.join(WS.encode(), f), 0o755)
dirs = sorted({os.path.dirname(f) for f in files if f.count(b"/") >= 2})
os.symlink("../README.md", os.path.join(WS.encode(), dirs[0], b"readme-link"))
subprocess.run(["rm", "-rf", os.path.join(WS.encode(), rnd.choice(dirs))], check=True)
if os.path.isdir(os.path.join(WS.encode(), dirs[1])):
    os.rename(os.path.join(WS.encode(), dirs[1]), os.path.join(WS.encode(), dirs[1] + b"-moved"))
with open(os.path.join(WS, "new file ü.txt"), "w") as h:
    h.write("new\n")
capture("chmod, link, rm -rf, mv")
git("stash", "-u", "-q")
capture("stashed")
git("checkout", "-q", "-f", START)
capture(f"back on {START}")
os.makedirs(os.path.join(WS, "node_modules", "pkg"), exist_ok=True)
with open(os.path.join(WS, "node_modules", "pkg", "i.js"), "w") as h:
    h.write("x")
with open(os.path.join(WS, ".gitignore"), "a") as h:
    h.write("\n*.md\n")
capture(".gitignore changed")
subprocess.run(["git", "checkout", "-q", "--", ".gitignore"], cwd=WS)
subprocess.run(["git", "clean", "-fdxq"], cwd=WS)
check(os.path.exists(os.path.join(WS, ".rewind", "rewind-data", "rewind.db")), "git clean -fdx took the store")
capture("git clean -fdx")

order = list(range(len(points)))
rnd.shuffle(order)
for i in order:
    label, point_id, expected = points[i]
    preview, _ = rewind("preview", point_id)
    token = next((line["token"] for line in preview if "token" in line), None)
    kept = {p["path"].encode() for line in preview for p in line.get("protected", [])}
    _, took = rewind("restore", point_id, *(["--token", token] if token else []))
    now = view()
    differ = [path for path in expected if now.get(path) != expected[path] and path not in kept]
    print(f"restore {label}: {took:.2f} s, {len(differ)} paths differ, {len(kept)} kept by the preview", flush=True)
    check(not differ, f"restore {label}: {len(differ)} paths differ, e.g. {differ[:3]}")
    capture(f"after the restore of {label}")

server.send_signal(signal.SIGTERM)
server.wait(timeout=30)
print(f"{checks - failures} passed, {failures} failed")
sys.exit(1 if failures else 0)
