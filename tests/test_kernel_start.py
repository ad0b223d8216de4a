"""Kernels that start under load: many at once beside a process that churns through local ports (issue 36).

Over TCP a kernel's manager picks free ports and the kernel binds them a moment later; a process that opens
ports in between takes some of them, and the kernel dies before it replies ("Address already in use"). The
runner's kernels talk over IPC where the platform has it, and a kernel that does not start is started again.
"""

from __future__ import annotations

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from cflib import kernels, runner

pytestmark = pytest.mark.slow

# Binds and listens on one loopback port after another (the kernel's range, bind(0)), holding the last HOLD
# of them; it stops by itself after the given seconds or MAX_SOCKETS sockets, whichever comes first.
CHURN = r"""
import collections, resource, socket, sys, time
seconds, hold, limit = float(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
hold = min(hold, resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 50)  # file descriptors this process may open
end, held, n = time.monotonic() + seconds, collections.deque(), 0
while time.monotonic() < end and n < limit:
    s = socket.socket()
    try:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
    except OSError:
        s.close()
        continue
    held.append(s)
    n += 1
    if len(held) > hold:
        held.popleft().close()
print(n, flush=True)
"""
KERNELS = 12
HOLD = 4000
MAX_SOCKETS = 3_000_000


def _churner(seconds: float) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-c", CHURN, str(seconds), str(HOLD), str(MAX_SOCKETS)],
        stdout=subprocess.PIPE,
        text=True,
    )


def test_many_kernels_at_once_beside_a_port_churner_lose_no_point(fake_repo, capfd):
    """KERNELS notebooks start together while another process opens and closes thousands of local ports."""
    churn = _churner(90)
    time.sleep(1.0)  # let it fill its window of held ports

    def point(x: int) -> str:
        try:
            r = runner.execute("demo/01-square.ipynb", "smoke", {"x": x}, output_dir=fake_repo / "out" / str(x))
        except Exception as exc:  # a lost point: what the issue measured
            return f"{type(exc).__name__}: {exc}".splitlines()[0]
        return r.status

    try:
        with ThreadPoolExecutor(max_workers=KERNELS) as pool:
            outcomes = list(pool.map(point, range(1, KERNELS + 1)))
    finally:
        churn.kill()
        churn.wait()
    lost = [o for o in outcomes if o != "executed"]
    assert not lost, f"{len(lost)} of {KERNELS} points lost: {lost}"
    for x in range(1, KERNELS + 1):
        claims = (fake_repo / "out" / str(x) / "demo" / "01-square.claims.json").read_text()
        assert f'"square": {x * x}' in claims
    err = capfd.readouterr().err
    assert "KeyboardInterrupt caught in kernel" not in err  # a normal shutdown is quiet


def test_the_churner_does_take_ports_a_kernel_would_be_given():
    """The stress above is real: over TCP, ports that jupyter_client found free are taken before a kernel binds them."""
    import socket

    churn = _churner(30)
    time.sleep(1.0)
    taken, deadline = 0, time.monotonic() + 15  # a loaded machine may give the churner little CPU: try for a while
    try:
        while taken < 3 and time.monotonic() < deadline:
            s = socket.socket()
            s.bind(("127.0.0.1", 0))  # what jupyter_client's write_connection_file does for each port
            port = s.getsockname()[1]
            s.close()
            time.sleep(0.01)  # the kernel binds a moment later
            t = socket.socket()
            try:
                t.bind(("127.0.0.1", port))
            except OSError:
                taken += 1
            finally:
                t.close()
    finally:
        churn.kill()
        churn.wait()
    assert taken >= 3


def test_a_kernel_that_does_not_start_is_started_again(fake_repo, monkeypatch, capfd):
    """Two failed starts, then a good one: the notebook runs, and each retry says so in one line."""
    failures = ["Kernel died before replying to kernel_info", "Kernel didn't respond in 5 seconds"]
    real = kernels.KernelClient.wait_for_ready

    async def flaky(self, timeout=None):
        if failures:
            raise kernels.KernelStartError(failures.pop(0))
        await real(self, timeout=timeout)

    monkeypatch.setattr(kernels.KernelClient, "wait_for_ready", flaky)
    r = runner.execute("demo/01-square.ipynb", "smoke", {"x": 4}, output_dir=fake_repo / "out")
    assert r.status == "executed" and not failures
    lines = [ln for ln in capfd.readouterr().err.splitlines() if "did not start" in ln]
    assert len(lines) == 2 and "(try 2 of 3)" in lines[0] and "(try 3 of 3)" in lines[1]
    assert "Kernel died before replying" in lines[0]


def test_a_kernel_that_never_starts_fails_with_a_kernel_start_error(fake_repo, monkeypatch):
    async def dead(self, timeout=None):
        raise kernels.KernelStartError("Kernel died before replying to kernel_info")

    monkeypatch.setattr(kernels.KernelClient, "wait_for_ready", dead)
    monkeypatch.setenv("CFLIB_KERNEL_START_TRIES", "2")
    out = fake_repo / "out"
    with pytest.raises(kernels.KernelStartError, match="did not start in 2 tries"):
        runner.execute("demo/01-square.ipynb", "smoke", output_dir=out)
    d = out / "demo"
    assert not (d / "01-square.ipynb").exists() and not (d / "01-square.run.json").exists()
    assert not [p for p in d.glob(".*") if p.suffix != ".lock"]  # no partial files


def test_transport_and_timeout_settings(monkeypatch):
    monkeypatch.delenv("CFLIB_KERNEL_TRANSPORT", raising=False)
    assert kernels.kernel_transport() == ("ipc" if sys.platform != "win32" else "tcp")
    monkeypatch.setenv("CFLIB_KERNEL_TRANSPORT", "TCP")
    assert kernels.kernel_transport() == "tcp"
    monkeypatch.setenv("CFLIB_KERNEL_TRANSPORT", "udp")
    with pytest.raises(ValueError, match="CFLIB_KERNEL_TRANSPORT must be 'ipc' or 'tcp'"):
        kernels.kernel_transport()
    monkeypatch.setenv("CFLIB_KERNEL_START_TIMEOUT", "45")
    assert kernels.start_timeout() == 45
    monkeypatch.setenv("CFLIB_KERNEL_START_TIMEOUT", "0")
    with pytest.raises(ValueError, match="CFLIB_KERNEL_START_TIMEOUT must be a number >= 1"):
        kernels.start_timeout()
    monkeypatch.delenv("CFLIB_KERNEL_START_TIMEOUT")
    monkeypatch.setattr(kernels.os, "getloadavg", lambda: (8.0, 0.0, 0.0))
    monkeypatch.setattr(kernels.os, "cpu_count", lambda: 2)
    assert kernels.start_timeout() == 240  # 60 s times a load of 4 per core
    monkeypatch.setattr(kernels.os, "getloadavg", lambda: (0.1, 0.0, 0.0))
    assert kernels.start_timeout() == 60
    monkeypatch.setenv("CFLIB_KERNEL_START_TRIES", "x")
    with pytest.raises(ValueError, match="CFLIB_KERNEL_START_TRIES must be a whole number >= 1"):
        kernels.start_tries()
