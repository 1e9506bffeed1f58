"""Several endpoints serving the same model (e.g. one vLLM or SGLang server per GPU node), used
as one: requests go round-robin, each endpoint has a limit of requests in flight from this
process, and an endpoint that failed (refused, timed out, 429, 5xx) is passed over for
``cooldown_s`` while another is up.

State is per process and shared by every client of the same endpoint list, so the limits
hold across the reasoners and threads of one process (not across processes: give each of
``--workers`` processes its share of a server's capacity).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Sequence


def endpoint_urls(base_url: str) -> list[str]:
    """The endpoints of a ``base_url`` that lists several, comma-separated (order kept,
    duplicates dropped)."""
    urls = [u.strip() for u in base_url.split(",") if u.strip()]
    return list(dict.fromkeys(urls))


class Endpoints:
    """Round-robin over ``urls`` with ``concurrency`` requests in flight per endpoint.

    Args:
        urls: endpoint roots, e.g. ``http://10.0.0.5:8000/v1``.
        concurrency: requests in flight per endpoint from this process.
        cooldown_s: how long a failed endpoint is passed over [s].
        clock: monotonic time [s] (tests pass their own).
    """

    def __init__(
        self,
        urls: Sequence[str],
        concurrency: int,
        cooldown_s: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not urls:
            raise ValueError("Endpoints needs at least one URL")
        self.urls = list(urls)
        self.cooldown_s = cooldown_s
        self._slots = {u: threading.BoundedSemaphore(concurrency) for u in self.urls}
        self._down_until = dict.fromkeys(self.urls, 0.0)
        self._next = 0
        self._lock = threading.Lock()
        self._clock = clock

    def order(self, tried: Collection[str] = ()) -> list[str]:
        """Endpoints in the order to try now: from the round-robin position on, those that are up
        and not yet ``tried`` for this request first, then the ones in cool-down, then the tried."""
        with self._lock:
            start = self._next
            self._next = (self._next + 1) % len(self.urls)
            now = self._clock()
        rotated = self.urls[start:] + self.urls[:start]
        return sorted(rotated, key=lambda u: (u in tried, self._down_until[u] > now))

    def acquire(self, tried: Collection[str] = ()) -> str:
        """A slot on the first endpoint in :meth:`order` with one free, or else a wait for the
        first; :meth:`release` it after the request."""
        candidates = self.order(tried)
        for url in candidates:
            if self._slots[url].acquire(blocking=False):
                return url
        self._slots[candidates[0]].acquire()
        return candidates[0]

    def release(self, url: str) -> None:
        """The request on ``url`` is over."""
        self._slots[url].release()

    def failed(self, url: str) -> None:
        """``url`` failed: pass it over for ``cooldown_s``."""
        with self._lock:
            self._down_until[url] = self._clock() + self.cooldown_s

    def succeeded(self, url: str) -> None:
        """``url`` answered: it is up again."""
        with self._lock:
            self._down_until[url] = 0.0

    def another(self, tried: Collection[str]) -> bool:
        """Whether an endpoint not in ``tried`` is up (a failed request moves there at once)."""
        now = self._clock()
        with self._lock:
            return any(u not in tried and self._down_until[u] <= now for u in self.urls)


_SHARED: dict[tuple[tuple[str, ...], int, float], Endpoints] = {}
_SHARED_LOCK = threading.Lock()


def shared_endpoints(base_url: str, concurrency: int, cooldown_s: float) -> Endpoints:
    """The process's one :class:`Endpoints` for this endpoint list and limits."""
    key = (tuple(endpoint_urls(base_url)), concurrency, cooldown_s)
    with _SHARED_LOCK:
        if key not in _SHARED:
            _SHARED[key] = Endpoints(key[0], concurrency, cooldown_s)
        return _SHARED[key]
