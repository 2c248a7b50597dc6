"""A private PostgreSQL cluster for one test or benchmark run.

Some checks stop or restart PostgreSQL on purpose: the reliability run's restart fault,
the scale-out test of requests while the database is down. They must never do that to
this machine's own cluster (127.0.0.1:5432, Debian's ``pg_ctlcluster <version> main``),
which everything else shares. :class:`ThrowawayCluster` gives such a check a cluster of
its own instead: ``initdb`` in a fresh temporary directory, a free port on loopback,
trust authentication, its unix socket inside its data directory. The check may stop and
start it at will; leaving the ``with`` block stops it and deletes the directory.

``initdb`` and ``postgres`` refuse to run as root, so as root they run as the
``postgres`` user (``runuser``), which owns the directory.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import NoReturn, Self

from benchmarks.processes import free_port

OWNER = "postgres"
"""The OS user the server runs as when we are root."""
TIMEOUT_S = 60.0
LOG_TAIL_CHARS = 3_000


def server_bindir() -> Path:
    """Where PostgreSQL's server programs are: the newest Debian
    ``/usr/lib/postgresql/<version>/bin``, else ``pg_config --bindir``."""
    debian = [p.parent for p in Path("/usr/lib/postgresql").glob("*/bin/initdb")]
    if debian:
        return max(debian, key=lambda p: int(p.parent.name) if p.parent.name.isdigit() else 0)
    pg_config = shutil.which("pg_config")
    if pg_config is not None:
        found = subprocess.run([pg_config, "--bindir"], capture_output=True, text=True, check=False)
        bindir = Path(found.stdout.strip())
        if (bindir / "initdb").exists():
            return bindir
    raise RuntimeError("PostgreSQL's server programs (initdb, pg_ctl) are not installed")


class ThrowawayCluster:
    """A PostgreSQL cluster of one run's own, in a temporary directory, on a free port.

    ``with ThrowawayCluster() as cluster:`` creates and starts it; :meth:`stop`,
    :meth:`start` and :meth:`restart` wait until it is down or accepts connections."""

    def __init__(
        self, *, parent: Path = Path("/tmp"), timeout: float = TIMEOUT_S, keep: bool = False
    ) -> None:
        """``parent`` must be traversable by the ``postgres`` user; ``keep`` leaves the
        (stopped) directory behind for inspection."""
        self.port = free_port()
        self.timeout = timeout
        self.keep = keep
        self._parent = parent
        self._bin = server_bindir()
        self._root: Path | None = None

    @property
    def root(self) -> Path:
        """The cluster's temporary directory (data directory and server log inside)."""
        if self._root is None:
            raise RuntimeError("the cluster is not created yet: call start()")
        return self._root

    @property
    def data(self) -> Path:
        """The data directory (the unix socket lives here too)."""
        return self.root / "data"

    @property
    def log(self) -> Path:
        """The server's log file."""
        return self.root / "server.log"

    @property
    def url(self) -> str:
        """The ``postgres`` database, as the ``postgres`` superuser."""
        return self.database_url("postgres")

    def database_url(self, name: str) -> str:
        """The URL of database ``name`` on this cluster."""
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    @property
    def running(self) -> bool:
        """Whether a server holds the data directory (its ``postmaster.pid`` is there)."""
        return self._root is not None and (self.data / "postmaster.pid").exists()

    def start(self) -> None:
        """Create the cluster if needed, start it, wait until it accepts connections."""
        if self._root is None:
            self._create()
        if self.running:
            return
        done = self._pg_ctl("start", "-l", str(self.log))
        if done.returncode != 0 or not self._wait_for(accepting=True):
            self._fail("did not start", done)

    def stop(self) -> None:
        """Stop the server (fast shutdown: sessions are cut off) and wait until it is down."""
        if not self.running:
            return
        done = self._pg_ctl("stop", "-m", "fast")
        if done.returncode != 0 or not self._wait_for(accepting=False):
            self._fail("did not stop", done)

    def restart(self) -> None:
        """:meth:`stop`, then :meth:`start`, on the same port."""
        self.stop()
        self.start()

    def close(self) -> None:
        """Stop the server however it takes, then delete the directory (unless ``keep``)."""
        if self._root is None:
            return
        try:
            self.stop()
        except Exception:
            self._pg_ctl("stop", "-m", "immediate")
            self._kill_postmaster()
        finally:
            if not self.keep:
                shutil.rmtree(self._root, ignore_errors=True)
                self._root = None

    def __enter__(self) -> Self:
        try:
            self.start()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _create(self) -> None:
        root = Path(tempfile.mkdtemp(prefix="recap-pg-", dir=self._parent))
        self._root = root
        if os.geteuid() == 0:
            shutil.chown(root, OWNER, OWNER)
        done = self._run(
            "initdb",
            *("-D", str(self.data), "-U", "postgres", "--auth=trust"),
            *("--encoding=UTF8", "--no-locale", "--no-sync"),
        )
        if done.returncode != 0:
            self._fail("initdb failed", done)
        settings = {
            "listen_addresses": "'127.0.0.1'",
            "port": str(self.port),
            "unix_socket_directories": f"'{self.data}'",
            "fsync": "off",  # nothing here has to survive a machine crash
        }
        with (self.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
            conf.write("\n# ThrowawayCluster\n")
            conf.writelines(f"{key} = {value}\n" for key, value in settings.items())

    def _pg_ctl(self, action: str, *args: str) -> subprocess.CompletedProcess[str]:
        wait = ["-w", "-t", str(int(self.timeout))]
        return self._run("pg_ctl", action, "-D", str(self.data), *wait, *args)

    def _run(self, program: str, *args: str) -> subprocess.CompletedProcess[str]:
        """A server program, as the ``postgres`` user when we are root."""
        command = [str(self._bin / program), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", OWNER, "--", *command]
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        try:
            return subprocess.run(
                command,
                cwd=self.root,
                env=env,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                timeout=self.timeout + 10,
            )
        except subprocess.TimeoutExpired as exc:
            output = "".join(
                o.decode(errors="replace") if isinstance(o, bytes) else o
                for o in (exc.stdout, exc.stderr)
                if o
            )
            return subprocess.CompletedProcess(command, -1, output, "timed out")

    def _wait_for(self, *, accepting: bool) -> bool:
        """Poll ``pg_isready`` over TCP until the server accepts connections (or, with
        ``accepting=False``, answers nothing at all), within the timeout."""
        deadline = time.monotonic() + self.timeout
        isready = [str(self._bin / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(self.port)]
        while True:
            code = subprocess.run([*isready, "-t", "2"], check=False).returncode
            if (code == 0) if accepting else (code == 2 and not self.running):
                return True
            if time.monotonic() > deadline:
                return False
            time.sleep(0.1)

    def _kill_postmaster(self) -> None:
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            pid = int((self.data / "postmaster.pid").read_text().splitlines()[0])
            os.kill(pid, signal.SIGKILL)

    def _fail(self, what: str, done: subprocess.CompletedProcess[str]) -> NoReturn:
        tail = ""
        with contextlib.suppress(OSError, RuntimeError):
            tail = self.log.read_text(errors="replace")[-LOG_TAIL_CHARS:]
        raise RuntimeError(
            f"private PostgreSQL cluster on 127.0.0.1:{self.port} {what} within "
            f"{self.timeout:.0f} s (exit {done.returncode}): {done.stdout}{done.stderr}\n"
            f"--- server log tail ({self.log if self._root else 'no directory'}):\n{tail}"
        )
