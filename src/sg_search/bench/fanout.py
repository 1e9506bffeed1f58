"""Where a benchmark's episodes run: in this process, a local process pool, or Ray.

Every backend calls ``deliver(seed, result, error, node)`` in this (the driver's) process once
per episode, as each finishes, in completion order. An episode whose worker process dies is
retried once. The local pool does not say which worker died: it fails every episode in flight
and ends its other workers. So each episode writes a marker file when it starts; after a break,
one that had not started is queued again, as new, and one that had runs again alone, in a
fresh one-worker pool, where a death is its own (:func:`after_a_broken_pool`). Ray retries the
task itself (``max_retries=1``). An episode that raises is not retried: its error is
delivered.

Ray is imported only by the Ray backend. It listens on every interface whatever it is told
(measured, see README "Run on a cluster"), so starting a local Ray is refused unless this
process is in a private network namespace (only ``lo``: ``scripts/private-network``) or the
user allows other machines (``SG_SEARCH_MULTI_MACHINE=1``); joining a cluster by address is
the user's explicit choice.
"""

from __future__ import annotations

import ctypes
import multiprocessing
import os
import signal
import socket
import sys
import tempfile
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from itertools import chain
from pathlib import Path
from typing import Any

from sg_search.ros_env import multi_machine

Episode = Callable[[int], dict[str, Any]]
Deliver = Callable[[int, dict[str, Any] | None, str | None, str], None]
"""(seed, result or None, error text or None, node name)."""

BACKENDS = ("local", "ray")
SPAWN = multiprocessing.get_context("spawn")
DIED_TWICE = "the worker process died on this episode's retry"
PR_SET_PDEATHSIG = 1  # prctl(2)


def run_serial(episode: Episode, seeds: Iterable[int], deliver: Deliver) -> None:
    """In this process, one after the other (``--workers 1``): nothing to retry."""
    node = socket.gethostname()
    for seed in seeds:
        try:
            result = episode(seed)
        except Exception as exc:
            deliver(seed, None, _describe(exc), node)
            continue
        deliver(seed, result, None, node)


def run_pool(episode: Episode, seeds: Iterable[int], workers: int, deliver: Deliver) -> None:
    """Over ``workers`` local processes, at most ``workers`` episodes in flight (so a broken
    pool loses no more than those). Workers are spawned, not forked: a fork of a process whose
    torch (OpenMP) threads have started hangs in the child. They end with this process, also
    when it is killed (:func:`_end_with_parent`)."""
    node = socket.gethostname()
    queue = iter(seeds)
    crashed: list[int] = []
    unstarted: list[int] = []
    with tempfile.TemporaryDirectory(prefix="sg-search-pool-") as markers, _pool(workers) as pool:
        running: dict[Future[dict[str, Any]], int] = {}
        broken = False
        try:
            while True:
                while not broken and len(running) < workers and (seed := next(queue, None)) is not None:
                    try:
                        running[pool.submit(_run_marked, episode, markers, seed)] = seed
                    except BrokenProcessPool:  # broke before we read the future that says so
                        broken = True
                        unstarted.append(seed)
                if not running:
                    break
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    seed = running.pop(future)
                    try:
                        deliver(seed, future.result(), None, node)
                    except BrokenProcessPool:
                        broken = True
                        crashed.append(seed)
                    except Exception as exc:
                        deliver(seed, None, _describe(exc), node)
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        started = {seed for seed in crashed if (Path(markers) / str(seed)).exists()}
    if not broken:
        return
    requeue, tries = after_a_broken_pool(crashed, started)
    for seed, n in tries.items():
        _run_alone(episode, seed, n, deliver, node)
    run_pool(episode, chain(unstarted, requeue, queue), workers, deliver)  # what was never started


def after_a_broken_pool(crashed: list[int], started: set[int]) -> tuple[list[int], dict[int, int]]:
    """Given the episodes a broken pool failed (``crashed``) and those of them that had started,
    the ones to queue again as new, and how often each other one may run alone while its
    worker dies. One of the started ones killed the pool; when several had started, which one
    is not known, so none is charged with that death (two tries alone); when one had, it is
    charged (one). When none had, the pool could not run anything: each gets one try alone."""
    if not started:
        return [], dict.fromkeys(crashed, 1)
    tries = 1 if len(started) == 1 else 2
    return [s for s in crashed if s not in started], {s: tries for s in crashed if s in started}


def _run_marked(episode: Episode, markers: str, seed: int) -> dict[str, Any]:
    """In a pool worker: mark ``seed`` started (a file in ``markers``), then run it."""
    (Path(markers) / str(seed)).touch()
    return episode(seed)


def _run_alone(episode: Episode, seed: int, tries: int, deliver: Deliver, node: str) -> None:
    """``seed`` in a fresh one-worker pool, again while its worker dies, at most ``tries`` times."""
    for _ in range(tries):
        with _pool(1) as alone:
            try:
                result = alone.submit(episode, seed).result()
            except BrokenProcessPool:
                continue
            except Exception as exc:
                deliver(seed, None, _describe(exc), node)
                return
        deliver(seed, result, None, node)
        return
    deliver(seed, None, DIED_TWICE, node)


def _pool(workers: int) -> ProcessPoolExecutor:
    return ProcessPoolExecutor(workers, SPAWN, _end_with_parent, (os.getpid(),))


def _end_with_parent(parent: int) -> None:
    """A pool worker's initializer: the kernel sends it SIGTERM when the driver dies (Linux).
    A driver killed outright (SIGKILL, an out-of-memory kill) cannot shut its pool down, and
    its workers went on running episodes for minutes, on cores a new run needed. (The signal
    follows the thread that started the worker: :func:`run_pool` submits from its caller's
    thread, which outlives the pool.)"""
    if sys.platform == "linux":
        ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:  # the driver died before this worker asked
        os._exit(1)


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


# --------------------------------------------------------------------------- Ray


def network_interfaces() -> list[str]:
    """Interfaces of this process's network namespace (``/proc/self/net/dev``)."""
    lines = open("/proc/self/net/dev", encoding="ascii").read().splitlines()[2:]  # noqa: SIM115
    return [line.split(":", 1)[0].strip() for line in lines if ":" in line]


def check_local_ray_allowed() -> None:
    """ValueError unless a Ray started here can reach no other machine (see module docstring)."""
    outside = [name for name in network_interfaces() if name != "lo"]
    if outside and not multi_machine(os.environ):
        raise ValueError(
            "--backend ray would start a local Ray, which listens on every network interface "
            f"(here {', '.join(outside)}), not only 127.0.0.1. Run it in a private network: "
            "scripts/private-network sg-search bench ...; or join a cluster with --ray-address; "
            "or allow other machines with SG_SEARCH_MULTI_MACHINE=1"
        )


def start_ray(address: str, workers: int) -> bool:
    """Join the cluster at ``address``, or start a local Ray of ``workers`` CPUs (0: all) when it
    is "" (see :func:`check_local_ray_allowed`); False when this process already had Ray."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # nothing phones home
    import ray

    if ray.is_initialized():
        return False
    if address:
        ray.init(address=address)
    else:
        check_local_ray_allowed()
        ray.init(address="local", num_cpus=workers or None, include_dashboard=False)  # never a running one
    return True


def _ray_episode(episode: Episode, seed: int) -> tuple[dict[str, Any], str]:
    """A Ray task: one episode, and the node that ran it."""
    import ray

    return episode(seed), ray.get_runtime_context().get_node_id()[:8]


def run_ray(episode: Episode, seeds: Iterable[int], workers: int, address: str, deliver: Deliver) -> None:
    """As Ray tasks of one CPU each, at most ``workers`` in flight (0: the cluster's CPUs).
    ``address`` "" starts a local Ray of ``workers`` CPUs (refused outside a private network,
    see :func:`check_local_ray_allowed`); "auto" or "ray://host:port" joins a cluster."""
    import ray

    started = start_ray(address, workers)
    running: dict[Any, int] = {}
    try:
        cpus = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
        limit = workers or max(1, int(cpus))
        task = ray.remote(num_cpus=1, max_retries=1, retry_exceptions=False)(_ray_episode)
        shared = ray.put(episode)  # the episode list travels once per node, not once per task
        queue = iter(seeds)
        while True:
            while len(running) < limit and (seed := next(queue, None)) is not None:
                running[task.remote(shared, seed)] = seed
            if not running:
                break
            done, _ = ray.wait(list(running), num_returns=1)
            seed = running.pop(done[0])
            try:
                result, node = ray.get(done[0])
            except ray.exceptions.RayTaskError as exc:
                deliver(seed, None, _describe(exc.cause or exc), "")
            except ray.exceptions.RayError as exc:  # the worker or its node died, twice
                deliver(seed, None, f"{DIED_TWICE} ({type(exc).__name__})", "")
            else:
                deliver(seed, result, None, node)
    except BaseException:
        for ref in running:
            ray.cancel(ref, force=True)
        raise
    finally:
        if started:
            ray.shutdown()
