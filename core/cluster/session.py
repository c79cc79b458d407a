"""The Dask session of a blocked run: connect or start a cluster, wait with progress, stop.

Dask is an optional extra (``pip install 'microagg-desktop[cluster]'``); :func:`require_dask`
turns its absence into a :class:`~core.errors.MicroaggError` that says so, and nothing in
the engine imports Dask before a blocked run is asked for.

Without a scheduler address, :func:`open_session` starts a ``distributed.LocalCluster``
of worker processes on the loopback interface, without a dashboard (the product never
opens a port beyond loopback, nor touches the network), and closes it when the run ends.
With an address the user's cluster is used and left running.

:func:`wait` turns the completion of a set of futures into :class:`~core.progress.TaskState`
progress, polling every fraction of a second; when the state is cancelled the futures
are cancelled, the workers are told to stop between blocks (a ``distributed.Event``,
see :func:`stop_requested`) and :class:`~core.errors.Cancelled` is raised.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Iterator, Sequence

from core.errors import Cancelled, MicroaggError
from core.progress import TaskState

__all__ = ["INSTALL_HINT", "require_dask", "open_session", "wait", "stop_requested",
           "Session"]

INSTALL_HINT = "install the cluster extra: pip install 'microagg-desktop[cluster]'"
_POLL = 0.15  # seconds between two looks at the futures
_CONNECT_TIMEOUT = 10  # seconds to reach a scheduler


def require_dask():
    """Import ``dask.dataframe`` and ``distributed``; a clear error when they are missing."""
    try:
        import dask.dataframe  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as error:
        raise MicroaggError(f"The Dask engine needs Dask ({error.name} is not installed); "
                            f"{INSTALL_HINT}.") from None
    return dask.dataframe, distributed


class Session:
    """A connected Dask client, the cluster it started (if any) and the run's stop event.

    Attributes
    ----------
    client : distributed.Client
    cluster : distributed.LocalCluster or None
        The cluster started for this run (closed by :func:`open_session`), or None when
        the user's scheduler is used.
    stop_name : str
        Name of the ``distributed.Event`` set when the run is cancelled.
    """

    def __init__(self, client, cluster, stop_name: str):
        self.client, self.cluster, self.stop_name = client, cluster, stop_name

    @property
    def address(self) -> str:
        return self.client.scheduler.address

    @property
    def n_workers(self) -> int:
        return max(1, len(self.client.scheduler_info(n_workers=-1).get("workers", {})))


@contextlib.contextmanager
def open_session(scheduler: str | None = None, *, n_workers: int | None = None,
                 processes: bool = True) -> Iterator[Session]:
    """Connect to ``scheduler`` (``"tcp://host:8786"``) or start a local cluster.

    Parameters
    ----------
    scheduler : str, optional
        The address of a running Dask scheduler. Without it a ``LocalCluster`` is
        started on 127.0.0.1 with no dashboard and closed at the end.
    n_workers : int, optional
        Workers of the local cluster (default: Dask's choice, one per core group).
    processes : bool
        Local workers as processes (default) or threads of this process.

    Raises
    ------
    MicroaggError
        Dask is not installed, or the scheduler cannot be reached (the message names
        the address).
    """
    _, distributed = require_dask()
    cluster = None
    try:
        if scheduler is None:
            # Everything on loopback: the scheduler, the workers (processes or threads,
            # over TCP) and the small HTTP server the scheduler always starts for its
            # health checks (on a free port; no dashboard).
            cluster = distributed.LocalCluster(
                n_workers=n_workers, threads_per_worker=1, processes=processes,
                host="127.0.0.1", protocol="tcp", dashboard_address=None,
                scheduler_kwargs={"dashboard_address": "127.0.0.1:0"}, silence_logs=50)
            client = distributed.Client(cluster, set_as_default=False)
        else:
            client = _connect(distributed, scheduler)
    except BaseException:
        if cluster is not None:
            cluster.close()
        raise
    session = Session(client, cluster, f"microagg-stop-{uuid.uuid4().hex}")
    try:
        yield session
    finally:
        with contextlib.suppress(Exception):
            client.close()
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close()


def _connect(distributed, scheduler: str):
    address = scheduler.strip()
    if not address:
        raise MicroaggError("The scheduler address is empty; give one such as "
                            "tcp://10.0.0.5:8786, or none to start a local cluster.")
    if "://" not in address:
        address = "tcp://" + address
    try:
        _probe(address)
        return distributed.Client(address, timeout=_CONNECT_TIMEOUT,
                                  set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        reason = str(error).splitlines()[0] if str(error) else type(error).__name__
        raise MicroaggError(f"Cannot reach the Dask scheduler at '{scheduler}' "
                            f"({reason}). Check the address and that the scheduler is "
                            "running, or leave the scheduler out to use a local "
                            "cluster.") from None


def _probe(address: str) -> None:
    """Open and close a TCP connection to a ``tcp://host:port`` address.

    ``distributed.Client`` retries a refused connection until its timeout; a port with
    nothing listening is refused at once, so this turns ten seconds of retries into an
    immediate message. Other protocols are left to the client.
    """
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address)
    if parts.scheme != "tcp":
        return
    if parts.port is None or not parts.hostname:  # left to the client's own message
        return
    with socket.create_connection((parts.hostname, parts.port), timeout=_CONNECT_TIMEOUT):
        pass


def wait(session: Session, futures: Sequence, state: TaskState, *, start: float,
         stop: float, message: str, gather: bool = True) -> list | None:
    """Wait for ``futures``, reporting the share done onto ``start..stop`` of ``state``.

    Returns their results, in order (None with ``gather=False``: the results stay on
    the workers). A task's error is raised as it is (a :class:`MicroaggError` from a
    block keeps its message).

    Raises
    ------
    Cancelled
        ``state`` was cancelled: the futures are cancelled and the workers told to stop.
    """
    from distributed import Event

    total = max(1, len(futures))
    while True:
        done = sum(f.done() for f in futures)
        if state.cancelled:
            with contextlib.suppress(Exception):
                Event(session.stop_name, client=session.client).set()
            session.client.cancel(list(futures))
            raise Cancelled("cancelled by the user")
        state.step(start + (stop - start) * done / total, f"{message} ({done} of {total})")
        if done == len(futures):
            break
        failed = next((f for f in futures if f.status == "error"), None)
        if failed is not None:
            failed.result()  # raises the task's error
        time.sleep(_POLL)
    return session.client.gather(list(futures)) if gather else None


def stop_requested(name: str | None) -> bool:
    """On a worker: True when the run named ``name`` was cancelled (checked per block)."""
    if not name:
        return False
    try:
        from distributed import Event, get_client
        return Event(name, client=get_client()).is_set()
    except (ValueError, OSError, ImportError):  # not on a worker (plain dask or a test)
        return False
