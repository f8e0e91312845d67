"""What the user's SSH configuration says about a host, as ``ssh`` reads it: the host's real
name, port, user, keys, known_hosts files and timeout.

The file is ``~/.ssh/config`` (``$POPVISION_SSH_CONFIG`` names another: tests, or a config
kept for popvision alone). Keys come from the agent and the usual ``~/.ssh/id_*`` files plus
any ``IdentityFile``; ``IdentitiesOnly yes`` keeps to the named files. Passwords are never
asked for or kept: a key with a passphrase is used through the agent (``ssh-add``).
"""

from __future__ import annotations

import getpass
import os
from dataclasses import dataclass
from pathlib import Path

from profiler_core.errors import RemoteError
from profiler_core.remote.location import RemoteLocation

CONFIG_VARIABLE = "POPVISION_SSH_CONFIG"
DEFAULT_CONNECT_TIMEOUT = 8.0  # seconds to a host that does not answer: "a few seconds"
KNOWN_HOSTS = ("~/.ssh/known_hosts", "~/.ssh/known_hosts2")
GLOBAL_KNOWN_HOSTS = ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")


@dataclass(frozen=True)
class SshTarget:
    """Everything needed to connect to one host, resolved from the URL and the config."""

    url: str  # the ssh:// address as given, for messages
    alias: str  # the host as written in the URL
    hostname: str  # the real name or address to connect to
    port: int
    user: str
    identity_files: tuple[str, ...]
    identities_only: bool
    known_hosts: tuple[str, ...]  # user files first, then the global ones
    connect_timeout: float
    config_path: str

    @property
    def known_hosts_name(self) -> str:
        """The host's name in known_hosts, as ssh writes it: ``host`` on port 22, else
        ``[host]:port``."""
        return self.hostname if self.port == 22 else f"[{self.hostname}]:{self.port}"

    @property
    def ssh_command(self) -> str:
        """The ``ssh`` command that reaches the same host with the same config, so it adds
        a key to the same known_hosts (to accept a key, to try the login)."""
        port = f" -p {self.port}" if self.port != 22 else ""
        config = f" -F {self.config_path}" if os.environ.get(CONFIG_VARIABLE) else ""
        return f"ssh{config}{port} {self.user}@{self.alias}"


def config_path() -> Path:
    return Path(os.environ.get(CONFIG_VARIABLE) or "~/.ssh/config").expanduser()


def resolve_target(location: RemoteLocation) -> SshTarget:
    """The connection settings for ``location``: the URL wins over the config (as ``ssh``'s
    command line wins over its config), the config over the defaults."""
    import paramiko  # loaded only when a remote report is opened

    path = config_path()
    options: dict = {}
    if path.is_file():
        try:
            options = dict(paramiko.SSHConfig.from_path(str(path)).lookup(location.host))
        except Exception as error:  # a config ssh would refuse too
            raise RemoteError(location.url, f"cannot read the SSH config {path}: {error}") from None
    for unsupported in ("proxyjump", "proxycommand"):
        if options.get(unsupported, "none").lower() != "none":
            raise RemoteError(
                location.url,
                f"{path} connects to this host through {unsupported} "
                f"({options[unsupported]}), which popvision does not follow yet: forward a "
                "port (ssh -L 2222:HOST:22 JUMP) and open ssh://user@localhost:2222/...",
            )
    port = location.port or _int(options.get("port"), 22)
    user = location.user or options.get("user") or getpass.getuser()
    identities = tuple(str(Path(p).expanduser()) for p in options.get("identityfile", []))
    user_files = options.get("userknownhostsfile", " ".join(KNOWN_HOSTS)).split()
    global_files = options.get("globalknownhostsfile", " ".join(GLOBAL_KNOWN_HOSTS)).split()
    timeout = _int(options.get("connecttimeout"), 0) or DEFAULT_CONNECT_TIMEOUT
    return SshTarget(
        url=location.url,
        alias=location.host,
        hostname=options.get("hostname", location.host).strip("[]"),
        port=port,
        user=user,
        identity_files=identities,
        identities_only=options.get("identitiesonly", "no").lower() == "yes",
        known_hosts=tuple(str(Path(p).expanduser()) for p in user_files + global_files),
        connect_timeout=float(timeout),
        config_path=str(path),
    )


def _int(text: object, default: int) -> int:
    try:
        return int(str(text))
    except (TypeError, ValueError):
        return default
