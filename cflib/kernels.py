"""Notebook kernels that start on a loaded machine: IPC transport, a scaled start-up timeout, quiet shutdown.

:mod:`cflib.runner` hands :class:`KernelManager` to papermill (nbclient's ``kernel_manager_class``).

* **Transport.** Over TCP a kernel's manager picks five free ports and the kernel binds them a moment
  later; another process that opens a port in between takes one ("Address already in use") and the
  kernel dies before it replies. Over IPC (Unix domain sockets, a path per kernel) there is no port to
  lose. IPC is the default wherever the platform has Unix sockets; ``CFLIB_KERNEL_TRANSPORT=tcp``
  chooses TCP.
* **Start-up failures are not the notebook's.** A kernel that dies before replying to ``kernel_info`` or
  does not reply in time raises :class:`KernelStartError`; the runner starts it again a bounded number of
  times (:func:`start_tries`) with a line that says so.
* **Time-out.** ``CFLIB_KERNEL_START_TIMEOUT`` seconds, else 60 s times the load per core (at least 1,
  at most 10): a loaded machine gets longer.
* **Quiet shutdown.** jupyter_client interrupts a kernel before asking it to shut down; an idle ipykernel
  then logs "ERROR | KeyboardInterrupt caught in kernel." for a normal end. A kernel whose notebook
  has finished needs no interrupt: the shutdown request follows, and a kernel that ignores it is killed.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import threading
import uuid
import weakref
from typing import Any

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager
from traitlets import DottedObjectName, Type, default

__all__ = [
    "KernelStartError",
    "KernelClient",
    "KernelManager",
    "env_number",
    "kernel_transport",
    "start_timeout",
    "start_tries",
    "stop_kernels",
    "stopping",
    "allow_kernels",
    "quiet_start_errors",
]

#: The base of the scaled start-up timeout (jupyter_client's and nbclient's default).
BASE_START_TIMEOUT = 60.0
_MAX_LOAD_FACTOR = 10.0


class KernelStartError(RuntimeError):
    """A kernel did not start: it died before replying to ``kernel_info`` or did not reply in time.

    Not an error of the notebook: :func:`cflib.runner.execute` starts the kernel again.
    """


def env_number(name: str, kind: type, low: float, *, what: str = "") -> float | None:
    """A number from the environment variable ``name``, or ``None`` when it is unset or blank.

    Parameters
    ----------
    name : str
        The variable, e.g. ``"CFLIB_KERNEL_START_TRIES"``.
    kind : type
        ``int`` (a whole number) or ``float``.
    low : float
        The smallest value allowed.
    what : str
        What the number is, for the error message (e.g. ``"threads per notebook kernel"``).

    Returns
    -------
    int, float or None

    Raises
    ------
    ValueError
        The value is not a number of ``kind``, or is below ``low``.
    """
    raw = os.environ.get(name, "").strip()
    if not raw:
        return None
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or value < low:
        about = f" ({what})" if what else ""
        raise ValueError(f"{name} must be a {'whole ' if kind is int else ''}number >= {low:g}{about}, got {raw!r}")
    return value


def kernel_transport() -> str:
    """The kernels' transport: ``CFLIB_KERNEL_TRANSPORT`` (``ipc`` or ``tcp``), else ``ipc`` where Unix sockets exist.

    Returns
    -------
    str
        ``"ipc"`` or ``"tcp"``.

    Raises
    ------
    ValueError
        ``CFLIB_KERNEL_TRANSPORT`` is set to something else, or to ``ipc`` on a platform without Unix sockets.
    """
    has_ipc = os.name == "posix" and hasattr(socket, "AF_UNIX")
    raw = os.environ.get("CFLIB_KERNEL_TRANSPORT", "").strip().lower()
    if not raw:
        return "ipc" if has_ipc else "tcp"
    if raw not in ("ipc", "tcp"):
        raise ValueError(f"CFLIB_KERNEL_TRANSPORT must be 'ipc' or 'tcp', got {raw!r}")
    if raw == "ipc" and not has_ipc:
        raise ValueError("CFLIB_KERNEL_TRANSPORT=ipc: this platform has no Unix domain sockets; use tcp")
    return raw


def start_timeout() -> int:
    """Seconds a kernel has to reply after it was started.

    ``CFLIB_KERNEL_START_TIMEOUT`` when set; else :data:`BASE_START_TIMEOUT` times the one-minute load
    average per core, clipped to ``[1, 10]``: on a machine running twice as many processes as it has
    cores, a kernel gets two minutes.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        ``CFLIB_KERNEL_START_TIMEOUT`` is not a number >= 1.
    """
    given = env_number("CFLIB_KERNEL_START_TIMEOUT", float, 1)
    if given is not None:
        return int(round(given))
    try:
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
    except (AttributeError, OSError):  # no load average on this platform
        load = 1.0
    return int(round(BASE_START_TIMEOUT * min(max(load, 1.0), _MAX_LOAD_FACTOR)))


def start_tries() -> int:
    """How many times a kernel is started before its notebook is given up: ``CFLIB_KERNEL_START_TRIES``, else 3.

    Returns
    -------
    int

    Raises
    ------
    ValueError
        ``CFLIB_KERNEL_START_TRIES`` is not a whole number >= 1.
    """
    given = env_number("CFLIB_KERNEL_START_TRIES", int, 1)
    return 3 if given is None else int(given)


class KernelClient(AsyncKernelClient):
    """nbclient's client, whose failure to hear from a new kernel raises :class:`KernelStartError`."""

    async def wait_for_ready(self, timeout: float | None = None) -> None:
        """Wait for the kernel's ``kernel_info`` reply.

        Parameters
        ----------
        timeout : float, optional
            Seconds (default: wait for ever).

        Raises
        ------
        KernelStartError
            The kernel died first or did not reply in time.
        """
        try:
            await super().wait_for_ready(timeout=timeout)
        except RuntimeError as exc:
            raise KernelStartError(str(exc)) from exc


# Kernels started and not yet shut down, so that an interrupted run can stop them (stop_kernels).
_LIVE: weakref.WeakSet[KernelManager] = weakref.WeakSet()
_STOPPING = threading.Event()


def _ipc_prefix() -> str:
    """A fresh path prefix for one kernel's sockets, in Jupyter's private runtime folder when its path is short."""
    from jupyter_core.paths import jupyter_runtime_dir

    name = f"cflib-kernel-{uuid.uuid4().hex[:16]}"
    folder = jupyter_runtime_dir()
    # A Unix socket's path is limited to about 107 bytes; the sockets are <prefix>-1 ... <prefix>-5.
    if len(os.path.join(folder, name)) > 90:
        import tempfile

        folder = tempfile.gettempdir()
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return os.path.join(folder, name)


class KernelManager(AsyncKernelManager):
    """The runner's kernel manager: :func:`kernel_transport`, :class:`KernelClient`, no interrupt at shutdown."""

    client_class = DottedObjectName("cflib.kernels.KernelClient")
    client_factory = Type(KernelClient, klass=AsyncKernelClient)

    @default("transport")
    def _default_transport(self) -> str:
        return kernel_transport()

    @default("ip")
    def _default_ip(self) -> str:
        # jupyter_client derives an IPC prefix from the connection file, or uses "kernel-ipc" in the working folder
        # when none is set yet, which two kernels started at once would share: give each its own.
        if self.transport == "ipc":
            return _ipc_prefix()
        from jupyter_client.localinterfaces import localhost

        return localhost()

    async def start_kernel(self, **kw: Any) -> None:  # type: ignore[override]
        """Start the kernel process (refused once :func:`stop_kernels` was called).

        Parameters
        ----------
        **kw
            As :meth:`jupyter_client.manager.AsyncKernelManager.start_kernel`.

        Raises
        ------
        KernelStartError
            The run is being stopped.
        """
        if _STOPPING.is_set():
            raise KernelStartError("the run is being stopped")
        await super().start_kernel(**kw)
        _LIVE.add(self)
        if _STOPPING.is_set():  # stop_kernels ran while this one started
            self.kill_now()

    async def _async_interrupt_kernel(self) -> None:
        if self.shutting_down:  # a normal end: the shutdown request follows (and a kill if it is ignored)
            return
        await super()._async_interrupt_kernel()

    async def _async_cleanup_resources(self, restart: bool = False) -> None:
        _LIVE.discard(self)
        await super()._async_cleanup_resources(restart=restart)

    def kill_now(self) -> None:
        """Kill the kernel's process group at once (from any thread); nbclient then sees a dead kernel."""
        provisioner = self.provisioner
        pid = getattr(provisioner, "pid", None) if provisioner is not None else None
        if not pid:
            return
        try:
            os.killpg(pid, signal.SIGKILL)  # the kernel leads its own session: this also ends its children
        except (ProcessLookupError, PermissionError):
            return
        except OSError:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)


def stop_kernels() -> int:
    """Kill every kernel this process started and refuse new ones until :func:`allow_kernels`.

    Returns
    -------
    int
        How many kernels were killed.
    """
    _STOPPING.set()
    live = list(_LIVE)
    for km in live:
        km.kill_now()
    return len(live)


def allow_kernels() -> None:
    """Let kernels start again after :func:`stop_kernels` (a new run in the same process).

    Returns
    -------
    None
    """
    _STOPPING.clear()


class _DropStartErrors(logging.Filter):
    """nbclient logs a failed start at ERROR before raising; the runner says it in its own line and retries."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Error occurred while starting new kernel client")


_FILTER = _DropStartErrors()


def quiet_start_errors() -> None:
    """Drop nbclient's ERROR record of a failed kernel start from papermill's logger (idempotent).

    Returns
    -------
    None
    """
    logger = logging.getLogger("papermill")
    if _FILTER not in logger.filters:
        logger.addFilter(_FILTER)


def stopping() -> bool:
    """Whether :func:`stop_kernels` was called (and :func:`allow_kernels` not since).

    Returns
    -------
    bool
    """
    return _STOPPING.is_set()
