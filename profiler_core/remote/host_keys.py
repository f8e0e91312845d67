"""The host's key checked against known_hosts as ``ssh`` checks it: the same key is
accepted, a different key of the same type is refused as CHANGED, a host with no key is
refused as unknown (``ssh`` would ask; a window has no terminal to ask in), a ``@revoked``
key is refused. Each refusal names the fingerprint, the file and line, and the command
that accepts the key once the user has checked it.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profiler_core.errors import HostKeyError
from profiler_core.remote.ssh_config import SshTarget

# ssh's names for key types in its messages
_KIND = {"ssh-ed25519": "ED25519", "ssh-rsa": "RSA", "ssh-dss": "DSA"}
_RSA_SIGNATURES = ("rsa-sha2-512", "rsa-sha2-256", "ssh-rsa")


@dataclass(frozen=True)
class KnownKey:
    file: str
    line: int
    key_type: str
    key: Any  # a paramiko PKey
    revoked: bool = False


def key_kind(key_type: str) -> str:
    return _KIND.get(key_type, "ECDSA" if key_type.startswith("ecdsa") else key_type)


def known_keys(target: SshTarget) -> list[KnownKey]:
    """The keys the known_hosts files hold for ``target``, in file and line order. Lines
    that cannot be read (another tool's format, a key type we lack) are passed over, as
    ssh passes over them."""
    import paramiko

    found = []
    for name in target.known_hosts:
        try:
            lines = Path(name).read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:  # no such file: nothing known from it
            continue
        for number, raw in enumerate(lines, start=1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            marker = ""
            if line.startswith("@"):
                marker, _, line = line.partition(" ")
                if marker != "@revoked":  # @cert-authority: certificates are not used here
                    continue
            try:
                entry = paramiko.hostkeys.HostKeyEntry.from_line(line, number)
            except Exception:
                entry = None
            if entry is None or entry.key is None:
                continue
            if any(_matches(pattern, target.known_hosts_name) for pattern in entry.hostnames):
                kind = entry.key.get_name()
                found.append(KnownKey(name, number, kind, entry.key, marker == "@revoked"))
    return found


def _matches(pattern: str, name: str) -> bool:
    import paramiko

    if pattern.startswith("|1|"):
        return paramiko.HostKeys.hash_host(name, pattern) == pattern
    if pattern.startswith("!"):
        return False
    return pattern == name or fnmatch.fnmatchcase(name, pattern)


def preferred_key_types(known: list[KnownKey], offered: list[str]) -> list[str]:
    """``offered`` (the client's host key algorithms) with the types known for this host
    first, so the server shows the key we can check, as ssh orders them."""
    first: list[str] = []
    for k in known:
        types = _RSA_SIGNATURES if k.key_type == "ssh-rsa" else (k.key_type,)
        first += [t for t in types if t in offered and t not in first]
    return first + [t for t in offered if t not in first]


def check_host_key(target: SshTarget, known: list[KnownKey], key: Any) -> None:
    """Accept ``key`` (the server's) or raise ``HostKeyError`` saying why, as ssh does."""
    kind, fingerprint = key.get_name(), key.fingerprint
    shown = f"{key_kind(kind)} key {fingerprint}"
    name = target.known_hosts_name
    for k in known:
        if k.revoked and k.key == key:
            raise HostKeyError(
                target.url,
                f"the host key of {name} ({shown}) is marked @revoked in {k.file} line "
                f"{k.line}: refused, as ssh refuses it.",
            )
    same_type = [k for k in known if not k.revoked and k.key_type == kind]
    if any(k.key == key for k in same_type):
        return
    accept = f"then connect once with `{target.ssh_command}` and answer yes"
    if same_type:
        old = same_type[0]
        raise HostKeyError(
            target.url,
            f"the host key of {name} has CHANGED: the host sent {shown}, but {old.file} "
            f"line {old.line} holds another {key_kind(kind)} key for it. Someone could be "
            "eavesdropping on you (a man-in-the-middle attack), or the host's key was "
            "replaced. Refused, as ssh refuses it. If you know the key was replaced, remove "
            f'the old one with `ssh-keygen -f "{old.file}" -R "{name}"`, {accept}.',
        )
    other = {key_kind(k.key_type) for k in known if not k.revoked}
    known_note = f" (only {', '.join(sorted(other))} keys are known for it)" if other else ""
    files = ", ".join(target.known_hosts[:1]) or "known_hosts"
    raise HostKeyError(
        target.url,
        f"the authenticity of host {name} can't be established: it is not in {files}"
        f"{known_note}; it sent {shown}. Refused, as ssh refuses an unknown host when it "
        f"cannot ask. To accept it, check the fingerprint with the host's administrator, "
        f"{accept}, then open the report again.",
    )
