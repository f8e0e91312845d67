"""One SSH connection and its SFTP session (paramiko), with every failure said in words.

``connect(target)`` checks the host key (``host_keys.py``), authenticates with keys only (the
agent, ``~/.ssh/id_*``, ``IdentityFile``; never a password), and opens SFTP. Every network
wait is bounded: the TCP connect and the server's banner by ``ConnectTimeout`` (a few
seconds by default), authentication, and each SFTP answer by ``READ_TIMEOUT``, so a host
that goes away mid-read is an error, never a hang. ``SftpSession`` is the one place paramiko
is called after that; its methods raise ``RemoteError`` (or ``LoadCancelledError``).
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import socket
from collections.abc import Callable, Iterator
from typing import Any

import paramiko

from profiler_core.errors import (
    ConnectionLostError,
    HostKeyError,
    LoadCancelledError,
    RemoteError,
)
from profiler_core.remote.host_keys import check_host_key, known_keys, preferred_key_types
from profiler_core.remote.ssh_config import SshTarget

# paramiko's transport thread logs a lost connection with a traceback; without a handler of
# the application's, Python's last-resort handler would print it on stderr.
logging.getLogger("paramiko").addHandler(logging.NullHandler())

READ_TIMEOUT = 20.0  # seconds without an answer to an SFTP request: the connection is lost
AUTH_TIMEOUT = 20.0
KEEPALIVE = 30  # seconds between keep-alives on an idle connection (a report left open)
CHUNK = 1 << 20
PREFETCH_REQUESTS = 64

Progress = Callable[[int], None]  # bytes read so far


class _CheckedHostKey(paramiko.MissingHostKeyPolicy):
    """Every host key goes through ``check_host_key`` (the client is given no keys of its
    own), so the refusal names the file and line as ssh does."""

    def __init__(self, target: SshTarget, known: list) -> None:
        self.target, self.known = target, known

    def missing_host_key(self, client: Any, hostname: str, key: Any) -> None:
        check_host_key(self.target, self.known, key)


def connect(target: SshTarget) -> SftpSession:
    """An authenticated SFTP session with ``target``, or a ``RemoteError`` saying why not."""
    known = known_keys(target)

    def transport(sock: Any, **kwargs: Any) -> paramiko.Transport:
        t = paramiko.Transport(sock, **kwargs)
        options = t.get_security_options()
        options.key_types = preferred_key_types(known, list(options.key_types))
        return t

    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(_CheckedHostKey(target, known))
    where = f"{target.hostname} port {target.port}"
    try:
        client.connect(
            target.hostname,
            target.port,
            username=target.user,
            # as ssh, an IdentityFile that is not there is passed over
            key_filename=[k for k in target.identity_files if os.path.isfile(k)] or None,
            allow_agent=not target.identities_only,
            look_for_keys=not target.identities_only,
            timeout=target.connect_timeout,
            banner_timeout=target.connect_timeout,
            auth_timeout=AUTH_TIMEOUT,
            channel_timeout=target.connect_timeout,
            transport_factory=transport,
        )
        client.get_transport().set_keepalive(KEEPALIVE)
        sftp = client.open_sftp()
        sftp.get_channel().settimeout(READ_TIMEOUT)
    except HostKeyError:
        client.close()
        raise
    except Exception as error:
        client.close()
        raise RemoteError(target.url, _connect_problem(target, where, error)) from None
    return SftpSession(target, client, sftp)


def _connect_problem(target: SshTarget, where: str, error: Exception) -> str:
    seconds = f"{target.connect_timeout:g} s"
    if isinstance(error, socket.gaierror):
        return f"cannot find the host '{target.hostname}' ({error.strerror}): check its name"
    if isinstance(error, paramiko.ssh_exception.NoValidConnectionsError | ConnectionRefusedError):
        return (
            f"{where} refused the connection: is an SSH server running there, and is the "
            "port right?"
        )
    if isinstance(error, TimeoutError):
        return f"no answer from {where} within {seconds}: the host is down or unreachable"
    if isinstance(error, paramiko.PasswordRequiredException):
        return (
            f"a key for {target.user}@{target.hostname} needs its passphrase, and popvision "
            "never asks for or keeps one: add the key to your SSH agent (ssh-add) and try again"
        )
    if isinstance(error, paramiko.AuthenticationException):
        tried = "agent and ~/.ssh/id_* keys" if not target.identities_only else "no agent"
        keys = ", ".join(target.identity_files) or "none named"
        return (
            f"{target.user}@{target.hostname} did not accept any of our keys (IdentityFile: "
            f"{keys}; {tried}). Check the user name, and that your public key is in the "
            f"server's ~/.ssh/authorized_keys: `{target.ssh_command}` must log in without a "
            "password"
        )
    if isinstance(error, OSError) and error.errno in (errno.EHOSTUNREACH, errno.ENETUNREACH):
        return f"cannot reach {where}: {error.strerror}"
    text = str(error) or type(error).__name__
    if "banner" in text.lower() or text == "No existing session":  # no key exchange in time
        return f"{where} did not answer as an SSH server within {seconds} ({text})"
    return f"could not connect over SSH to {where}: {text}"


def _quiet_prefetch(remote: Any) -> None:
    """paramiko reads ahead in a thread of its own (``prefetch``); when the connection is
    lost that thread dies with a traceback on stderr, while the reading thread raises the
    same loss, which is said in words. The thread's target is looked up on the file when
    the thread starts, so this file's own one is wrapped to end quietly instead."""
    read_ahead = getattr(remote, "_prefetch_thread", None)
    if read_ahead is None:
        return

    def quiet(*args: Any) -> None:
        with contextlib.suppress(EOFError, OSError, paramiko.SSHException):
            read_ahead(*args)

    remote._prefetch_thread = quiet


class SftpSession:
    """The SFTP calls the remote reader makes, with paramiko's errors as ``RemoteError``."""

    def __init__(self, target: SshTarget, client: paramiko.SSHClient, sftp: Any) -> None:
        self.target, self.client, self.sftp = target, client, sftp

    @property
    def alive(self) -> bool:
        transport = self.client.get_transport()
        return transport is not None and transport.is_active()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.sftp.close()
        with contextlib.suppress(Exception):
            self.client.close()

    def normalize(self, path: str) -> str:
        """The remote real path of ``path``: links followed, ``~/`` from the home (where
        SFTP starts, so a relative path is read from there)."""
        with self.mapped(f"resolving {path}"):
            return self.sftp.normalize(path[2:] or "." if path.startswith("~/") else path)

    def listdir_attr(self, path: str) -> list:
        with self.mapped(f"listing {path}"):
            return self.sftp.listdir_attr(path)

    def stat(self, path: str) -> Any:
        with self.mapped(f"reading the attributes of {path}"):
            return self.sftp.stat(path)

    def read_into(
        self,
        path: str,
        size: int,
        write: Callable[[bytes], None],
        progress: Progress,
        cancelled: Callable[[], bool],
    ) -> int:
        """Read ``path`` (``size`` bytes when it was listed) in chunks into ``write``;
        returns the bytes read. Cancelling stops between chunks."""
        done = 0
        with self.mapped(f"reading {path}"), self.sftp.open(path, "rb") as remote:
            _quiet_prefetch(remote)
            remote.prefetch(size, PREFETCH_REQUESTS)
            while True:
                if cancelled():
                    raise LoadCancelledError(None, f"reading {path} was cancelled")
                chunk = remote.read(CHUNK)
                if not chunk:
                    return done
                write(chunk)
                done += len(chunk)
                progress(done)

    @contextlib.contextmanager
    def mapped(self, what: str) -> Iterator[None]:
        host = self.target.hostname
        try:
            yield
        except (RemoteError, LoadCancelledError):
            raise
        except FileNotFoundError:
            raise RemoteError(self.target.url, f"{what}: no such file or folder") from None
        except PermissionError:
            raise RemoteError(self.target.url, f"{what}: permission denied on {host}") from None
        except TimeoutError:
            raise RemoteError(
                self.target.url,
                f"{what}: no answer from {host} for {READ_TIMEOUT:g} s; the connection seems "
                "lost. What was read before stays; reload (Ctrl+R) when the host answers.",
            ) from None
        except (EOFError, OSError, paramiko.SSHException) as error:
            detail = str(error) or type(error).__name__
            if isinstance(error, OSError) and self.alive:  # the server said no to this one
                raise RemoteError(self.target.url, f"{what}: {detail}") from None
            raise ConnectionLostError(
                self.target.url,
                f"the connection to {host} was lost while {what} ({detail}). What was read "
                "before stays; reload (Ctrl+R) when the host is reachable again.",
            ) from None
