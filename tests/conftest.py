"""Test configuration shared by every test: Qt offscreen, and real reports made by the engine.

Report fixtures run the bundled examples in a child process with autoReport on, exactly
as a user would, once per test session.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# Reports and traces are only written where a test asks for them.
os.environ.pop("POPLAR_ENGINE_OPTIONS", None)
os.environ.pop("PVTI_OPTIONS", None)

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "resources" / "examples"


def run_example(
    script: str, env_options: dict[str, dict], *args: str, cwd: Path | None = None
) -> subprocess.CompletedProcess:
    """Run a bundled example in a child process with options such as POPLAR_ENGINE_OPTIONS
    or PVTI_OPTIONS set in its environment, as a user would; it must succeed."""
    env = dict(os.environ)
    env.update({name: json.dumps(value) for name, value in env_options.items()})
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
    )
    assert result.returncode == 0, result.stderr
    return result


def run_example_with_reports(
    script: str, directory: Path, *args: str
) -> subprocess.CompletedProcess:
    options = {"autoReport.all": "true", "autoReport.directory": str(directory)}
    return run_example(script, {"POPLAR_ENGINE_OPTIONS": options}, *args)


@pytest.fixture(scope="session")
def tutorial4_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report folder of Poplar's tutorial 4 (m1 {900,600}, m2 {600,300}, m3 {300,200})."""
    directory = tmp_path_factory.mktemp("reports")
    run_example_with_reports("tutorial4_matmul.py", directory)
    return directory / "tutorial4"


@pytest.fixture(scope="session")
def tutorial4_variant_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tutorial 4 with m1 {1600,700} and m2 {700,300}: the other side of a comparison."""
    directory = tmp_path_factory.mktemp("reports_variant")
    run_example_with_reports(
        "tutorial4_matmul.py", directory, "--m1", "1600x700", "--m2", "700x300", "--name", "variant"
    )
    return directory / "variant"


@pytest.fixture(scope="session")
def tutorial1_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report folder of Poplar's tutorial 1: a few small variables on tiles 0-3 (the
    engine names its program "engine", as the tutorial gives it no name)."""
    directory = tmp_path_factory.mktemp("reports_tutorial1")
    run_example_with_reports("tutorial1_variables.py", directory)
    return directory / "engine"


@pytest.fixture(scope="session")
def four_shards_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model sharded over 4 IPUs (the "four_shards" example)."""
    directory = tmp_path_factory.mktemp("reports_four_shards")
    run_example_with_reports("four_shards.py", directory)
    return directory / "four_shards"


@pytest.fixture(scope="session")
def replicated_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Data-parallel training over 2 replicas (the "replicated" example, 2 steps)."""
    directory = tmp_path_factory.mktemp("reports_replicated")
    run_example_with_reports("replicated_model.py", directory, "--steps", "2")
    return directory / "replicated"


def run_example_with_trace(script: str, directory: Path, *args: str) -> list[Path]:
    """Run ``script`` with PVTI_OPTIONS tracing into ``directory``; the .pvti files written."""
    run_example(script, {"PVTI_OPTIONS": {"enable": "true", "directory": str(directory)}}, *args)
    return sorted(directory.glob("*.pvti"))


@pytest.fixture(scope="session")
def material_traced_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tutorial 1 run from a working folder with the onboarding material's own settings:
    autoReport.directory=./reports and PVTI enabled with no directory, so the .pvti lands in
    the working folder, neither in nor beside the report folder (issue 26 point 6)."""
    work = tmp_path_factory.mktemp("material_work")
    options = {
        "POPLAR_ENGINE_OPTIONS": {"autoReport.all": "true", "autoReport.directory": "./reports"},
        "PVTI_OPTIONS": {"enable": "true"},
    }
    run_example("tutorial1_variables.py", options, cwd=work)
    return work / "reports" / "engine"


@pytest.fixture(scope="session")
def pvti_epochs_trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The .pvti of resources/examples/pvti_epochs.py (3 epochs of 4 steps, a Prefetch
    thread, instants, a Loss series and a weights heatmap)."""
    directory = tmp_path_factory.mktemp("pvti_epochs")
    (path,) = run_example_with_trace("pvti_epochs.py", directory, "3", "4", "--prefetch")
    return path


@pytest.fixture(scope="session")
def tutorial4_oom_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Tutorial 4 with m1 {9000,6000} @ m2 {6000,300}, m4 planned with the whole of each
    tile for its temporaries (availableMemoryProportion 1.0): with m1 beside them, too big
    for the tiles. With debug.allowOutOfMemory the engine writes the report and then
    refuses to run it."""
    directory = tmp_path_factory.mktemp("reports_oom")
    env = dict(os.environ)
    env["POPLAR_ENGINE_OPTIONS"] = json.dumps(
        {
            "autoReport.all": "true",
            "autoReport.directory": str(directory),
            "debug.allowOutOfMemory": "true",
        }
    )
    args = ["--m1", "9000x6000", "--m2", "6000x300", "--name", "oom"]
    args += ["--available-memory-proportion", "m4=1.0"]
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / "tutorial4_matmul.py"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    # the run is refused (Out of memory on tile N); the report must be there all the same
    assert "Out of memory on tile" in result.stderr, result.stderr
    assert (directory / "oom" / "profile.pop").is_file()
    return directory / "oom"


@pytest.fixture(scope="session")
def pipelined_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The pipelined example's report: 4 IPUs, a forward and a backward stage on each, 8
    micro-batches (tests/operations_reports.py)."""
    from tests.operations_reports import pipelined_report

    return pipelined_report(tmp_path_factory.mktemp("reports_pipelined"))


@pytest.fixture(scope="session")
def resnet_onnx_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of two ResNet blocks written as ONNX in tests/operations_reports.py."""
    from tests.operations_reports import resnet_onnx_report

    return resnet_onnx_report(tmp_path_factory.mktemp("reports_resnet_onnx"))


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory):
    """The system's sshd on 127.0.0.1 with throw-away keys (tests/ssh_server.py), one per
    test module. Where OpenSSH is missing the tests fail saying how to install it (.ci/run
    installs it): a skipped remote test would prove nothing."""
    from tests.ssh_server import TestSshd, available

    why = available()
    if why:
        pytest.fail(f"{why}; install it with: apt-get install openssh-server openssh-client")
    server = TestSshd(tmp_path_factory.mktemp("sshd")).start()
    yield server
    server.stop()


@pytest.fixture
def ssh_client(sshd, monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    """The client side for ``sshd``: its SSH config and known_hosts (never ~/.ssh), no
    agent, and a cache of the test's own."""
    monkeypatch.setenv("POPVISION_SSH_CONFIG", str(sshd.ssh_config))
    monkeypatch.setenv("POPVISION_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
    return sshd


@pytest.fixture
def report_copy(tmp_path: Path, tutorial1_report: Path) -> Path:
    """Tutorial 1's report in a folder the test may change (served over SSH)."""
    folder = tmp_path / "served" / "engine"
    shutil.copytree(tutorial1_report, folder)
    return folder
