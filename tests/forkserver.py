"""A preloaded parent that forks the kill -9 fleets' workers (DESIGN-NOTES "Test suite
time"): each restart of a killed worker skipped nothing a worker does — it opens its own
connections, starts its own capture or queue — but paid an interpreter start and ~0.9 CPU-s
of imports (sluice, psycopg, the Streams packages) first, a dozen times a test on a CPU-bound
CI.  The server imports that once, single-threaded and without a connection, and forks a
child per ``spawn``: the child is a real separate process (its own pid, SIGKILLed like any),
only its start-up is shared.

:func:`shared` keeps one server per preload list for the life of the test process (each
test of a fleet module would otherwise pay the imports once more); a child gets the
controller's environment and directory as they are when it is spawned (a test's
``monkeypatch.setenv`` reaches it), nothing else of the controller's.

Protocol (lines of JSON): the controller writes ``{"target": "module:function", "args": [...],
"out": path, "env": {...}, "cwd": path}``; the server answers ``{"pid": n}`` and, once a child ended, ``{"exit": i,
"code": c}`` once its ``i``-th child ended (``c`` as ``Popen.returncode``: negative for a
signal).  :class:`Child` is the
part of ``subprocess.Popen`` the harnesses use (``stdout.read()``: its output file once it
ended, as a pipe's read to EOF).  tests/idap's ``CliServer`` forks ``sluice serve`` so
(:func:`cli`, :meth:`ForkServer.popen`): ``FLEETS`` includes what serving imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Child:
    """A forked worker, as the harness sees a ``Popen``."""

    def __init__(self, server: "ForkServer", pid: int, serial: int, out: str) -> None:
        self.server, self.pid = server, pid
        self.serial = serial                 # the server's n-th child (a pid may be reused)
        self.stdout = Output(self, out)

    @property
    def returncode(self) -> int | None:
        return self.server._codes.get(self.serial)

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        end = None if timeout is None else time.monotonic() + timeout
        with self.server._cond:
            while self.serial not in self.server._codes:
                if self.server._dead:
                    raise RuntimeError(f"the fork server died: {self.server.proc.returncode}")
                left = None if end is None else end - time.monotonic()
                if left is not None and left <= 0:
                    raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout)
                self.server._cond.wait(left)
            return self.server._codes[self.serial]

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:          # not reaped yet: the pid is still this child's
            os.kill(self.pid, sig)

    def kill(self) -> None:
        import signal
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        import signal
        self.send_signal(signal.SIGTERM)


class Output:
    """A child's stdout and stderr (its ``out`` file) as a ``Popen(stdout=PIPE,
    stderr=STDOUT)``'s ``stdout``: :meth:`read` waits for the end of the output — the
    child's exit — and gives the bytes not read yet."""

    def __init__(self, child: Child, path: str) -> None:
        self.child, self.path, self._pos = child, path, 0

    def read(self) -> bytes:
        self.child.wait()
        with open(self.path, "rb") as f:
            f.seek(self._pos)
            data = f.read()
        self._pos += len(data)
        return data


class ForkServer:
    """Start with the modules to preload; :meth:`spawn` forks a worker; :meth:`close`."""

    def __init__(self, *preload: str, env: dict | None = None) -> None:
        env = _child_env(dict(os.environ if env is None else env))
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), *preload],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, cwd=ROOT)
        self._cond = threading.Condition()
        self._codes: dict[int, int] = {}
        self._pids: list[int] = []
        self._ready = False
        self._dead = False
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            msg = json.loads(line)
            with self._cond:
                if "exit" in msg:
                    self._codes[msg["exit"]] = msg["code"]
                elif "pid" in msg:
                    self._pids.append(msg["pid"])
                elif "ready" in msg:
                    self._ready = True
                self._cond.notify_all()
        with self._cond:
            self._dead = True
            self._cond.notify_all()

    def spawn(self, target: str, args: list[str], out: str, cwd: str | None = None, timeout: float = 300) -> Child:
        """Fork ``target(*args)`` (``"module:function"``) with stdout and stderr into ``out``,
        in directory ``cwd`` (default: the controller's)."""
        open(out, "ab").close()              # there at once, as with a Popen's redirection
        with self._cond:
            before = len(self._pids)
            self.proc.stdin.write(json.dumps({"target": target, "args": list(args), "out": out, "cwd": cwd or os.getcwd(),
                                              "env": _child_env(dict(os.environ))}).encode() + b"\n")
            self.proc.stdin.flush()
            if not self._cond.wait_for(lambda: len(self._pids) > before or self._dead, timeout):
                raise RuntimeError("the fork server did not fork in time")
            if self._dead:
                raise RuntimeError(f"the fork server died: {self.proc.poll()}")
            return Child(self, self._pids[before], before, out)

    def popen(self, target: str, args: list[str], cwd: str | None = None) -> Child:
        """:meth:`spawn` with the output into a file of the test process's own (removed at
        its exit), read as a ``Popen``'s: ``child.stdout.read()``."""
        global _OUT_DIR
        with _LOCK:
            if _OUT_DIR is None:
                import atexit
                import shutil
                import tempfile
                _OUT_DIR = tempfile.mkdtemp(prefix="forkserver-out-")
                atexit.register(shutil.rmtree, _OUT_DIR, True)
        import tempfile
        fd, out = tempfile.mkstemp(suffix=".out", dir=_OUT_DIR)
        os.close(fd)
        return self.spawn(target, args, out, cwd)

    def close(self) -> None:
        """Stop the server (its children are the harness's to stop)."""
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> "ForkServer":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


SERVE = ("sluice.cli", "sluice.idap.app", "sluice.dashboard.view", "sluice.monitor.prometheus",
         "sluice.store.sqlitesession", "sluice.store.sqloracle", "sluice.store.sqlfetch", "sluice.store.oraclecalls",
         "sluice.store.usercolumns", "sluice.store.viewdates", "sluice.store.clockbinds", "sluice.store.sqlheadings",
         "sluice.store.postgres", "sluice.store.pgsession", "sluice.store.pgfetch", "sluice.store.pglisten",
         "sluice.store.pgprepared",
         "sluice.aq.notify.register", "uvicorn.main", "uvicorn.lifespan.on", "uvicorn.loops.auto",
         "uvicorn.loops.uvloop", "uvicorn.protocols.http.httptools_impl", "uvicorn.protocols.http.h11_impl",
         "uvicorn.protocols.websockets.auto", "uvicorn.protocols.websockets.wsproto_impl", "uvicorn.logging",
         "logging.config", "anyio._backends._asyncio", "anyio.streams.tls", "starlette.applications",
         "encodings.idna")   # what ``sluice serve`` imports before it answers (lazily, in the CLI's command)
FLEETS = ("tests.crashharness", "tests.streams.capturecrash", "tests.streams.propcrash", "sluice.streams.capture",
          "sluice.streams.apply", "sluice.streams.propagation.runner", "sluice.dashboard",
          "sluice.idap", *SERVE)   # what the kill -9 harnesses' workers and `sluice serve` import: one server for all

SLUICE = os.path.join(os.path.dirname(sys.executable), "sluice")   # the venv's console script


def cli(*args: str) -> None:
    """``sluice ARGS`` (the command line's entry point) as a forked worker's target: what the
    venv's ``sluice`` script runs, with the argv it would have (``sys.argv[0]``: the script;
    V$SESSION.PROGRAM says ``sluice@host``, as for the script)."""
    from sluice.cli import main
    from sluice.store import pgconn, sessions
    sys.argv = [SLUICE, *args]
    sessions.PROGRAM = pgconn.PROGRAM = sessions._program()
    main(args=list(args), prog_name="sluice")


_SHARED: dict[tuple[str, ...], ForkServer] = {}
_LOCK = threading.Lock()
_OUT_DIR: str | None = None


def shared(*preload: str) -> ForkServer:
    """The test process's server preloading ``preload`` (started on first use, stopped at exit)."""
    with _LOCK:
        server = _SHARED.get(preload)
        if server is None or server._dead:
            server = _SHARED[preload] = ForkServer(*preload)
            import atexit
            atexit.register(server.close)
        return server


def _child_env(env: dict) -> dict:
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "src"), ROOT, env.get("PYTHONPATH", "")])
    return env


def _child(target: str, args: list, out: str, env: dict, cwd: str) -> None:
    """In the forked child: the worker, then exit (never back into the server's loop)."""
    import signal
    code = 0
    try:
        signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        os.environ.clear()
        os.environ.update(env)
        time.tzset()                         # TZ as the controller has it now (a new process reads it)
        os.chdir(cwd)
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.close(fd)
        os.close(null)
        import importlib
        module, function = target.split(":")
        getattr(importlib.import_module(module), function)(*args)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:   # noqa: BLE001 — a worker that died: its traceback, a non-zero exit
        import traceback
        traceback.print_exc()
        code = 1
    try:
        import atexit
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def serve(preload: list[str]) -> None:
    import gc
    import importlib
    import selectors
    import signal
    for name in preload:
        importlib.import_module(name)
    if threading.active_count() != 1:        # a fork would lose them (and maybe their locks)
        raise SystemExit(f"fork server: a preloaded module started threads: {threading.enumerate()}")
    gc.collect()
    gc.freeze()                              # the children do not copy the preloaded heap
    out = sys.stdout.buffer

    def say(msg: dict) -> None:
        out.write(json.dumps(msg).encode() + b"\n")
        out.flush()

    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    sel = selectors.DefaultSelector()
    sel.register(sys.stdin.buffer, selectors.EVENT_READ)
    sel.register(wake_r, selectors.EVENT_READ)
    say({"ready": True})
    stdin = sys.stdin.buffer
    live: dict[int, int] = {}                # pid: the how-manyth child
    closing = False
    spawned = 0
    while not closing or live:
        for key, _ in sel.select(1.0):
            if key.fileobj is wake_r:
                os.read(wake_r, 4096)
            elif not closing:
                line = stdin.readline()
                if not line:                 # the controller closed: end once the children did
                    closing = True
                    sel.unregister(stdin)
                    continue
                msg = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    sel.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    _child(msg["target"], msg["args"], msg["out"], msg["env"], msg["cwd"])
                live[pid] = spawned
                spawned += 1
                say({"pid": pid})
        while live:                          # reap
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            say({"exit": live.pop(pid), "code": -os.WTERMSIG(status) if os.WIFSIGNALED(status)
                 else os.WEXITSTATUS(status)})


if __name__ == "__main__":
    serve(sys.argv[1:])
