"""A real OpenSSH server for tests: the system's sshd on 127.0.0.1 and a free port, with a
throw-away host key, user key, authorized_keys and config in a temporary folder; the
client side gets its own SSH config and known_hosts there too (``POPVISION_SSH_CONFIG``),
so nothing touches the system's sshd or ~/.ssh. Its SFTP server logs every file it opens
and the bytes read from it (``sftp_reads``), which is how tests count what was fetched.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

SSHD = "/usr/sbin/sshd"
SFTP_SERVER = "/usr/lib/openssh/sftp-server"


def available() -> str:
    """Why a test server cannot run here ("" when it can)."""
    for tool in (SSHD, SFTP_SERVER):
        if not os.path.exists(tool):
            return f"{tool} is missing (apt-get install openssh-server; .ci/run does)"
    if shutil.which("ssh-keygen") is None:
        return "ssh-keygen is missing (apt-get install openssh-client)"
    return ""


def keygen(path: Path) -> Path:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "test", "-f", str(path)],
        check=True,
        timeout=30,
    )
    return path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class TestSshd:
    """``start()`` / ``stop()`` / ``kill()``; ``url(path)`` for an ssh:// address."""

    __test__ = False  # not a test class

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.host_key = keygen(folder / "host_key")
        self.user_key = keygen(folder / "id_user")
        shutil.copy(folder / "id_user.pub", folder / "authorized_keys")
        self.sftp_log = folder / "sftp.log"
        self.home = folder / "home"  # where SFTP starts: what ssh://host/~/ names
        self.home.mkdir(exist_ok=True)
        self.known_hosts = folder / "known_hosts"
        self.ssh_config = folder / "ssh_config"
        self.port = 0
        self.process: subprocess.Popen | None = None
        self.user = _user()

    def start(self) -> TestSshd:
        if os.geteuid() == 0:  # sshd started by root wants its privilege separation folder
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        config = self.folder / "sshd_config"
        config.write_text(
            f"ListenAddress 127.0.0.1\nHostKey {self.host_key}\nPidFile none\n"
            f"AuthorizedKeysFile {self.folder / 'authorized_keys'}\nStrictModes no\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            "PubkeyAuthentication yes\nLogLevel ERROR\nMaxStartups 50\n"
            # SFTP starts in home/ here (the account's own home is not the test's to fill)
            f"Subsystem sftp {SFTP_SERVER} -e -l INFO -d {self.home} 2>>{self.sftp_log}\n"
        )
        for _attempt in range(5):  # another process may take the free port first
            self.port = free_port()
            self.process = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(config), "-p", str(self.port)],
                stdout=subprocess.DEVNULL,
                stderr=open(self.folder / "sshd.log", "ab"),  # noqa: SIM115
            )
            if self._listening():
                break
            self.stop()
        else:
            raise RuntimeError(f"sshd did not start: {(self.folder / 'sshd.log').read_text()}")
        host_pub = (self.folder / "host_key.pub").read_text().split()
        self.known_hosts.write_text(f"[127.0.0.1]:{self.port} {host_pub[0]} {host_pub[1]}\n")
        self.client_config(self.ssh_config)
        return self

    def client_config(
        self,
        path: Path,
        identity: Path | None = None,
        known_hosts: Path | None = None,
        timeout: int = 3,
    ) -> Path:
        """An SSH client config for this server at ``path`` (the user key and this
        server's known_hosts unless told otherwise; no agent, no ~/.ssh)."""
        path.write_text(
            "Host 127.0.0.1\n"
            f"  IdentityFile {identity or self.user_key}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {known_hosts or self.known_hosts}\n"
            f"  GlobalKnownHostsFile {self.folder / 'no_global_known_hosts'}\n"
            f"  ConnectTimeout {timeout}\n"
        )
        return path

    def _listening(self) -> bool:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                return False
            with socket.socket() as s:
                s.settimeout(0.5)
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return True
            time.sleep(0.05)
        return False

    def url(self, path: Path | str) -> str:
        return f"ssh://{self.user}@127.0.0.1:{self.port}{path}"

    def sftp_reads(self) -> list[tuple[str, int]]:
        """(file, bytes read) of every file the SFTP server closed, in order."""
        found = []
        if self.sftp_log.exists():
            for line in self.sftp_log.read_text().splitlines():
                if line.startswith("close ") and " bytes read " in line:
                    name = line.split('"')[1]
                    found.append((name, int(line.split(" bytes read ")[1].split()[0])))
        return found

    def children(self) -> list[int]:
        """The per-connection processes of this sshd (and theirs): what carries a session."""
        if self.process is None:
            return []
        parents: dict[int, int] = {}
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
                    parents[int(entry)] = int(fields[1])
                except (OSError, IndexError, ValueError):
                    continue
        found, frontier = [], [self.process.pid]
        while frontier:
            pid = frontier.pop()
            kids = [child for child, parent in parents.items() if parent == pid]
            found += kids
            frontier += kids
        return found

    def kill(self) -> None:
        """Kill the server and every session it carries, as a crashed host would lose them."""
        for pid in [*self.children(), *([self.process.pid] if self.process else [])]:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        self.stop()

    def drop_sessions(self) -> list[int]:
        """Kill the sessions this server carries and keep it listening, as a dropped
        network connection would; returns the processes killed."""
        killed = []
        for pid in self.children():
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)
        return killed

    def stop(self) -> None:
        if self.process is None:
            return
        sessions = self.children()  # before the server goes: then they belong to init
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)
        for pid in sessions:  # sessions still open when the test ended
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
        self.process = None


def _user() -> str:
    import getpass

    return getpass.getuser()
