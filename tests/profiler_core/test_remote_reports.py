"""Reports on another machine (issue 43): a real OpenSSH server on loopback with a throw-away
host key and user key serves a report the engine wrote; it is opened over ssh:// and must
read as the local one. What the server was asked for is counted from its own SFTP log.
Bad input: unknown and changed host keys (as ssh refuses them, checked against ssh itself),
wrong keys, closed and silent ports, links and '..' out of the folder, a connection killed
between two files."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from profiler_core.cli import main
from profiler_core.errors import HostKeyError, LoadCancelledError, RemoteError
from profiler_core.remote import RemoteLocation, open_source, parse_location
from profiler_core.report import open_report
from tests.ssh_server import TestSshd, free_port, keygen

pytestmark = pytest.mark.usefixtures("ssh_client")


def cli_json(capsys, *argv):
    code = main([*map(str, argv), "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def fingerprint(public_key: Path) -> str:
    """The key's SHA256 fingerprint as ssh-keygen prints it."""
    out = subprocess.run(["ssh-keygen", "-lf", str(public_key)], capture_output=True, text=True)
    return out.stdout.split()[1]


def test_addresses_parse_as_ssh_reads_them():
    assert parse_location("ssh://me@host:2222/data/r") == RemoteLocation(
        "host", "/data/r", "me", 2222
    )
    assert parse_location("ssh://host/~/reports/r/") == RemoteLocation("host", "~/reports/r")
    assert parse_location("ssh://[::1]:22/a%20b") == RemoteLocation("[::1]", "/a b", "", 22)
    assert parse_location("SSH://h/x").url == "ssh://h/x"
    assert parse_location("ssh://u@h:2/a b").url == "ssh://u@h:2/a%20b"
    for bad, why in [
        ("ssh://h/a/../../etc", "'..'"),
        ("ssh://h:0/x", "port '0'"),
        ("ssh://h:99999/x", "port"),
        ("ssh://h", "names no folder"),
        ("ssh:/h/x", "not an ssh:// address"),
    ]:
        with pytest.raises(RemoteError, match=why):
            parse_location(bad)


def test_the_summary_over_ssh_is_the_local_one(capsys, sshd, tutorial1_report):
    local = cli_json(capsys, "summary", tutorial1_report)
    remote = cli_json(capsys, "summary", sshd.url(tutorial1_report))
    assert remote == local
    assert local["name"] == "engine" and local["files"]["debug.cbor"] > 0


def test_profile_pop_first_debug_when_needed_then_nothing_twice(sshd, report_copy):
    before = len(sshd.sftp_reads())
    report = open_source(sshd.url(report_copy))
    profile = (report_copy / "profile.pop").stat().st_size
    assert sshd.sftp_reads()[before:] == [(str(report_copy / "profile.pop"), profile)]
    assert report.location == sshd.url(report_copy)
    files = ("profile.pop", "debug.cbor", "serialized_graph.bundle")  # autoReport.all's
    assert report.file_sizes() == {name: (report_copy / name).stat().st_size for name in files}
    expected = open_report(report_copy).debug
    assert report.debug.name == expected.name and len(expected.name) > 0
    assert [r[0] for r in sshd.sftp_reads()[before:]] == [
        str(report_copy / "profile.pop"),
        str(report_copy / "debug.cbor"),
    ]
    report.close()

    again = open_source(sshd.url(report_copy))  # unchanged: read from the cache
    assert again.debug is not None and again.summary().memory is not None
    assert again.remote.bytes_read == 0 and again.remote.files_read == []
    assert len(sshd.sftp_reads()) == before + 2
    again.close()

    mtime = (report_copy / "debug.cbor").stat().st_mtime
    os.utime(report_copy / "debug.cbor", (mtime + 5, mtime + 5))  # rewritten: fetched anew
    third = open_source(sshd.url(report_copy))
    third.debug  # noqa: B018
    assert third.remote.files_read == ["debug.cbor"]
    assert [r[0] for r in sshd.sftp_reads()[before + 2 :]] == [str(report_copy / "debug.cbor")]
    third.close()


def test_a_path_from_the_remote_home(sshd, tutorial1_report):
    shutil.copytree(tutorial1_report, sshd.home / "reports" / "engine", dirs_exist_ok=True)
    url = f"ssh://{sshd.user}@127.0.0.1:{sshd.port}/~/reports/engine"
    report = open_source(url)
    assert report.location == url and report.summary().memory is not None
    assert report.remote.folder == str(sshd.home / "reports" / "engine")
    report.close()
    with pytest.raises(RemoteError, match="home/reports/none: no such file or folder"):
        open_source(url.replace("engine", "none"))


def test_an_unknown_host_key_is_refused_with_how_to_accept_it(
    sshd, tmp_path, monkeypatch, report_copy
):
    empty = tmp_path / "known_hosts"
    empty.write_text("")
    config = sshd.client_config(tmp_path / "config", known_hosts=empty)
    monkeypatch.setenv("POPVISION_SSH_CONFIG", str(config))
    with pytest.raises(HostKeyError) as refused:
        open_source(sshd.url(report_copy))
    text = str(refused.value)
    assert f"the authenticity of host [127.0.0.1]:{sshd.port} can't be established" in text
    assert fingerprint(sshd.folder / "host_key.pub") in text
    assert f"ssh -F {config} -p {sshd.port} {sshd.user}@127.0.0.1" in text
    assert empty.read_text() == ""  # nothing was added


def test_a_changed_host_key_is_refused_as_ssh_refuses_it(sshd, tmp_path, monkeypatch, report_copy):
    other = keygen(tmp_path / "other_host_key")
    kind, key = (tmp_path / "other_host_key.pub").read_text().split()[:2]
    known = tmp_path / "known_hosts"
    known.write_text(f"# an old line\n[127.0.0.1]:{sshd.port} {kind} {key}\n")
    config = sshd.client_config(tmp_path / "config", known_hosts=known)
    monkeypatch.setenv("POPVISION_SSH_CONFIG", str(config))
    with pytest.raises(HostKeyError) as refused:
        open_source(sshd.url(report_copy))
    text = str(refused.value)
    assert f"the host key of [127.0.0.1]:{sshd.port} has CHANGED" in text
    assert fingerprint(sshd.folder / "host_key.pub") in text
    assert f"{known} line 2" in text and fingerprint(other.with_suffix(".pub")) not in text
    assert f'ssh-keygen -f "{known}" -R "[127.0.0.1]:{sshd.port}"' in text
    ssh = subprocess.run(  # ssh itself refuses the same host with the same files
        ["ssh", "-F", str(config), "-o", "BatchMode=yes", "-p", str(sshd.port),
         f"{sshd.user}@127.0.0.1", "true"],
        capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert ssh.returncode == 255 and "REMOTE HOST IDENTIFICATION HAS CHANGED" in ssh.stderr


def test_a_hashed_known_hosts_entry_is_accepted(sshd, tmp_path, monkeypatch, report_copy):
    known = tmp_path / "known_hosts"
    shutil.copy(sshd.known_hosts, known)
    subprocess.run(["ssh-keygen", "-q", "-H", "-f", str(known)], check=True, capture_output=True)
    assert known.read_text().startswith("|1|")
    monkeypatch.setenv(
        "POPVISION_SSH_CONFIG", str(sshd.client_config(tmp_path / "c", known_hosts=known))
    )
    open_source(sshd.url(report_copy)).close()


def test_a_key_the_server_does_not_know_is_refused_quickly(
    sshd, tmp_path, monkeypatch, report_copy
):
    stranger = keygen(tmp_path / "id_stranger")
    config = sshd.client_config(tmp_path / "config", identity=stranger)
    monkeypatch.setenv("POPVISION_SSH_CONFIG", str(config))
    started = time.monotonic()
    with pytest.raises(RemoteError, match="did not accept any of our keys") as refused:
        open_source(sshd.url(report_copy))
    assert time.monotonic() - started < 10
    assert str(stranger) in str(refused.value) and "password" in str(refused.value)


def test_a_closed_port_and_a_silent_server_fail_within_seconds(sshd, tmp_path, monkeypatch):
    config = sshd.client_config(tmp_path / "config", timeout=1)
    monkeypatch.setenv("POPVISION_SSH_CONFIG", str(config))
    started = time.monotonic()
    with pytest.raises(RemoteError, match="refused the connection"):
        open_source(f"ssh://127.0.0.1:{free_port()}/report")
    assert time.monotonic() - started < 3

    silent = socket.create_server(("127.0.0.1", 0))  # accepts, never says a word
    accepted: list[socket.socket] = []
    thread = threading.Thread(target=lambda: accepted.append(silent.accept()[0]), daemon=True)
    thread.start()
    started = time.monotonic()
    try:
        with pytest.raises(RemoteError, match="did not answer as an SSH server within 1 s"):
            open_source(f"ssh://127.0.0.1:{silent.getsockname()[1]}/report")
        assert time.monotonic() - started < 5
    finally:
        thread.join(5)
        for s in [*accepted, silent]:
            s.close()


def test_links_out_of_the_folder_are_refused_and_the_rest_opens(sshd, tmp_path, report_copy):
    secret = tmp_path / "served" / "secret.cbor"
    shutil.move(report_copy / "debug.cbor", secret)
    (report_copy / "debug.cbor").symlink_to(secret)  # a link out of the folder
    (report_copy / "data").mkdir()
    shutil.move(report_copy / "profile.pop", report_copy / "data" / "real.pop")
    (report_copy / "profile.pop").symlink_to("data/real.pop")  # a link inside: fine
    os.mkfifo(report_copy / "stuck.pvti")  # a FIFO: refused by name, never opened
    report = open_source(sshd.url(report_copy))
    try:
        assert report.summary().memory is not None
        assert "debug.cbor is a link out of the report folder" in report.warnings()[0]
        assert f"(to {secret})" in report.warnings()[0]
        assert "stuck.pvti is not a regular file" in report.remote.refused["stuck.pvti"]
        assert not any("secret" in name for name, _ in sshd.sftp_reads())
    finally:
        report.close()
    (report_copy / "profile.pop").unlink()
    (report_copy / "profile.pop").symlink_to(secret)
    with pytest.raises(RemoteError, match="profile.pop is a link out of the report folder"):
        open_source(sshd.url(report_copy))


def test_a_connection_lost_mid_read_keeps_what_was_read(tmp_path, monkeypatch, report_copy):
    """The server is killed with its sessions while a 16 MB trace is coming: that file is an
    error saying so (and leaves nothing half-written in the cache), the next file too, and
    everything read from profile.pop before stays."""
    (report_copy / "big.pvti").write_bytes(os.urandom(16 << 20))
    server = TestSshd(tmp_path / "doomed").start()
    monkeypatch.setenv("POPVISION_SSH_CONFIG", str(server.ssh_config))
    cache = tmp_path / "cache"
    try:
        report = open_source(server.url(report_copy))
        seen: list[float] = []

        def kill_on_first_chunk(fraction: float, text: str) -> None:
            if fraction > 0 and server.process is not None:
                server.kill()  # the host goes away, and the session with it
            seen.append(fraction)

        started = time.monotonic()
        with pytest.raises(RemoteError, match="the connection to 127.0.0.1 was lost") as lost:
            report.fetch_traces(kill_on_first_chunk)
        assert 0 < seen[-1] < 1 and "reading" in str(lost.value)
        assert "connecting again failed (" in str(lost.value)  # it tried once more
        assert "reload (Ctrl+R)" in str(lost.value)
        error = report.section_error("debug")  # the next file: connecting again fails
        assert time.monotonic() - started < 10
        assert isinstance(error, RemoteError)
        assert "the connection to 127.0.0.1 was lost, and connecting again failed (" in str(error)
        assert not list(cache.rglob(".part-*")) and not list(cache.rglob("big.pvti"))
        summary = report.summary()  # profile.pop was fetched: every figure of it is there
        assert summary.memory is not None and summary.runs and summary.peak_live_bytes
        assert list(summary.errors) == ["debug"]
        report.close()
    finally:
        server.stop()


def test_a_session_dropped_mid_read_is_read_again(tmp_path, monkeypatch, report_copy):
    """The connection carrying a 16 MB trace dies mid-read while the host stays up (a
    network blip): the reader connects once more and the file arrives whole."""
    data = os.urandom(16 << 20)
    (report_copy / "big.pvti").write_bytes(data)
    server = TestSshd(tmp_path / "blip").start()
    monkeypatch.setenv("POPVISION_SSH_CONFIG", str(server.ssh_config))
    try:
        report = open_source(server.url(report_copy))
        dropped: list[int] = []

        def drop_on_first_chunk(fraction: float, text: str) -> None:
            if fraction > 0 and not dropped:
                dropped.extend(server.drop_sessions())

        fetched = report.fetch_traces(drop_on_first_chunk)
        assert dropped  # a session was there to drop, and went
        big = [path for path in fetched if Path(path).name == "big.pvti"]
        assert len(big) == 1 and Path(big[0]).read_bytes() == data
        report.close()
    finally:
        server.stop()


def test_a_trace_over_ssh_is_the_local_one(capsys, sshd, pvti_epochs_trace):
    local = cli_json(capsys, "trace", pvti_epochs_trace)
    remote = cli_json(capsys, "trace", sshd.url(pvti_epochs_trace))
    assert remote == local and local["events"] > 0


def test_cancelling_a_fetch_leaves_nothing_half_written(sshd, tmp_path, report_copy):
    (report_copy / "big.pvti").write_bytes(os.urandom(4 << 20))
    report = open_source(sshd.url(report_copy))
    try:
        with pytest.raises(LoadCancelledError):
            report.fetch_traces(lambda f, t: None, cancel=lambda: True)
        cache = tmp_path / "cache"
        assert not list(cache.rglob(".part-*")) and not list(cache.rglob("big.pvti"))
        (trace,) = report.fetch_traces()  # asked again, it comes whole
        assert trace.read_bytes() == (report_copy / "big.pvti").read_bytes()
    finally:
        report.close()
