"""Adaptive concurrency: how many judge requests to keep in flight, learnt from the endpoint.

A fixed concurrency is wrong for someone: 16 requests against a llama.cpp server with one slot
queue 15 requests inside the server, each waits for the ones before it, the client's timeout
fires on requests the server is still working on, the client retries, and the server works on
abandoned requests (measured: 8 of 8 samples timed out at the old default of 16). A low fixed
value wastes a hosted API. :class:`AdaptiveLimit` starts from what the endpoint says it can take
and then follows what it measures, as TCP congestion control and Netflix's
``concurrency-limits`` library do.

The rules
---------
**Start.** :func:`probe_endpoint` asks a local or private server what it is (``GET /props``
``total_slots`` and ``GET /slots`` of llama.cpp's server; ``GET /metrics`` with ``vllm:``
series for vLLM; ``GET /openapi.json`` titled as llama-cpp-python's server). Start limit ``L0``:

- llama.cpp with ``k`` slots: ``min(k, max)``, latency mode;
- vLLM (continuous batching): ``max``, loss mode;
- another local/private URL (llama-cpp-python, Ollama, LM Studio...): ``min(2, max)``,
  latency mode with slow start;
- a public URL, or no URL (in-process and provider-routed backends): ``max``, loss mode
  (the behaviour before adaptive concurrency).

``max`` is the judge's ``concurrency`` (default 16): the limit never exceeds it; 1 is the floor.

**Latency mode** (a Vegas / gradient rule: local servers, where queueing inside the server is
the failure). Each successful request gives a sample ``x = latency / (completion_tokens +
prompt_tokens / 8 + 8)`` (seconds per weighted token, so a long reply is not taken for a queue;
without token counts, the latency). ``base`` is the smallest ``x`` of the last 500 samples (the
no-queue cost), ``now`` the median ``x`` of the last ``max(4, L)`` samples. Then, once per
window of ``max(4, L)`` samples::

    g = clamp((1.5 * base + slack / w) / now, 0.5, 1)   # tolerance 1.5, as Netflix's Gradient2
    L <- L * g + 1                                      # a queue allowance of one request

(``w`` is the median weight of the window's samples.)

On a one-slot server a request sent behind ``n`` others takes ``(n + 1)`` service times, so
``now / base ~ L`` and the rule settles at ``L = 2``: the server never idles (the next request
is already there) and nothing waits behind more than one other. On a server with ``k``
parallel slots it settles near ``1.5 k + 1``; where latency does not grow with ``L`` it grows
to ``max``. Before the first window whose ``g < 1`` (and before any timeout), slow start adds
1 per success (doubling per round trip, as TCP).

**Loss mode** (hosted APIs and vLLM, whose latency varies with load and reply length far more
than with our own queue): additive increase, ``L <- L + 1 / L`` per success (one per round
trip), up to ``max``.

**Both modes, multiplicative decrease.** A timeout or an HTTP 429 halves ``L`` (floor 1), once
per round trip: failures of requests sent before the last decrease do not decrease again (a
burst of 429s from one moment is one signal).

**Timeouts count the server's time.** A request's clock starts when it was sent *and* fewer than
``c`` of the requests sent before it are still running, where ``c`` is the server's parallel
capacity: its slot count when probed; in latency mode the median of the last 8 estimates ``n /
rho`` (a request sent with ``n`` requests in flight, itself included, that took ``rho`` no-queue
service times, ``rho = max(1, (latency - slack) / (base * weight))``), and before any estimate 1
(an unknown local server is taken to serve one request at a time until it has answered: measured
on the one-slot 1.5B server, the second of the two first requests waited behind the first, 2 x
~45 s, and was abandoned at 60 s); else ``max`` (no deferral). Time a request spends inside the
server waiting for ragmeter's own earlier requests is not held against it. ``slack`` is 5 % of
the timeout: latency differences below it are scheduling noise, not a queue (without it a fast
loopback server's millisecond jitter read as queueing and collapsed the limit to 2). It is also
at most ``max(0.25 s, half the fastest reply seen)``: with a long timeout (600 s) 5 % of it (30
s) was longer than a whole call of a slow one-slot server, which hid its queue (measured: 9 in
flight).

**Growth stops at a queue.** In latency mode the limit grows (slow start or the window rule)
only up to ``1.5 c + 1``, ``c`` the capacity estimate above: when latency rises in proportion to
the number in flight, ``n / rho`` stays near the server's parallelism however many are sent, so
a one-slot server keeps about 2 in flight, while on a server whose latency does not grow with
``n`` the estimate follows ``n`` and the limit still reaches ``max``.

**Order.** Requests waiting for a slot are sent by their sample's rank (:data:`REQUEST_RANK`,
which the evaluator sets for each sample's task), lowest first, and first come first served
within a rank (and among requests without one, which come after ranked ones): a started
sample's later calls (claims, then their verdicts) go before other samples' first calls, so
samples finish, and are written, in order as the run goes, instead of every sample in the
window waiting for its first call before any gets its second.

**An abandoned request is not re-sent at once.** After a timeout the request keeps its place
in flight for one more typical service time (the median latency of recent successes, at most
the timeout), since the server is probably still computing it; only then is the slot freed
for its retry or for another request. The retry gets twice the timeout (up to 8x the judge's
``timeout``; in :class:`~ragmeter.judges.Judge`), as TCP backs off its retransmission timeout: a
local server that is simply slower than the timeout still gets to answer, instead of being sent
the same request again and again. Before any timeout, too, a request's first attempt gets 3x the
slowest recent reply when that is longer than ``timeout`` (at most 8x; :meth:`AdaptiveLimit.learned_timeout`),
as TCP sets its retransmission timeout from measured round trips: a server that has shown it
needs 90 s a call is not abandoned at 60 s. On a local server it also gets 3x the slowest recent
seconds per weighted token times its own weight when that is longer: a prompt ten times longer
than those answered so far is given the time its length needs.
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import heapq
import itertools
import logging
import math
import time
from collections import deque
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from statistics import median
from typing import Any, Literal, TypeVar

from .base import Usage

T = TypeVar("T")
logger = logging.getLogger("ragmeter.judges")

Mode = Literal["latency", "loss", "fixed"]
TOLERANCE = 1.5
QUEUE = 1.0
BASE_WINDOW = 500
LOCAL_START = 2
SLACK = 0.05
#: The ``info.title`` of llama-cpp-python's server in its ``GET /openapi.json`` (FastAPI's schema)
LLAMA_CPP_PYTHON_TITLE = "\U0001f999 llama.cpp Python API"
NOISE_FLOOR = 0.25
#: The rank of the sample a judge request is made for: waiting requests are sent lowest rank
#: first (see "Order" in the module docs). The evaluator sets it in each sample's task; ``None``
#: (a request made outside an evaluation) waits behind ranked requests, first come first served.
REQUEST_RANK: ContextVar[int | None] = ContextVar("ragmeter_request_rank", default=None)


@dataclass(frozen=True)
class EndpointInfo:
    """What :func:`probe_endpoint` learnt: ``kind`` (``llama.cpp``, ``vllm``,
    ``llama-cpp-python``, ``local``, ``remote``, ``none``) and the slot count when the server
    reports one."""

    kind: str
    slots: int | None = None


def _root(base_url: str) -> str:
    url = base_url.rstrip("/")
    return url[: -len("/v1")] if url.endswith("/v1") else url


async def probe_endpoint(base_url: str | None, *, timeout: float = 2.0) -> EndpointInfo:
    """Ask a local or private server how many requests it serves at once (see the module docs).

    Never raises: an endpoint that does not answer, or answers something else, is ``local``.
    Public URLs are not probed (``remote``); ``None`` gives ``none``.
    """
    from .backends.openai_compat import is_local_url  # a light import; avoids a cycle at load

    if not base_url:
        return EndpointInfo("none")
    if not is_local_url(base_url):
        return EndpointInfo("remote")
    import aiohttp

    root = _root(base_url)
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session:

        async def get(path: str) -> Any:
            try:
                async with session.get(root + path) as resp:
                    if resp.status != 200:
                        return None
                    if "json" in resp.headers.get("content-type", ""):
                        try:
                            return await resp.json()
                        except (ValueError, aiohttp.ContentTypeError):
                            return None
                    return await resp.text()
            except (aiohttp.ClientError, OSError, TimeoutError, UnicodeDecodeError):
                return None

        props = await get("/props")
        if isinstance(props, dict) and isinstance(props.get("total_slots"), int) and props["total_slots"] > 0:
            return EndpointInfo("llama.cpp", props["total_slots"])
        slots = await get("/slots")
        if isinstance(slots, list) and slots and all(isinstance(s, dict) for s in slots):
            return EndpointInfo("llama.cpp", len(slots))
        metrics = await get("/metrics")
        if isinstance(metrics, str) and "vllm:" in metrics:
            return EndpointInfo("vllm")
        spec = await get("/openapi.json")
        if isinstance(spec, dict) and isinstance(spec.get("info"), dict) and \
                spec["info"].get("title") == LLAMA_CPP_PYTHON_TITLE:
            return EndpointInfo("llama-cpp-python")
    return EndpointInfo("local")


def start_for(info: EndpointInfo, maximum: int) -> tuple[float, Mode]:
    """The start limit and mode for an endpoint (the table in the module docs)."""
    if info.kind == "llama.cpp" and info.slots:
        return float(min(info.slots, maximum)), "latency"
    if info.kind in ("local", "llama-cpp-python"):
        return float(min(LOCAL_START, maximum)), "latency"
    return float(maximum), "loss"


def _weight(usage: Usage | None) -> float:
    if usage is None or usage.total_tokens == 0:
        return 1.0
    return usage.completion_tokens + usage.prompt_tokens / 8 + 8


class _Ticket:
    """One request in flight: when it was sent and a future resolved when its slot is freed."""

    __slots__ = ("ahead", "done", "epoch", "sent")

    def __init__(self, ahead: list[_Ticket], epoch: int, loop: asyncio.AbstractEventLoop) -> None:
        self.ahead = ahead
        self.epoch = epoch
        self.sent = time.monotonic()
        self.done: asyncio.Future[None] = loop.create_future()


#: The learned timeout is this many times the slowest recent reply (see :meth:`AdaptiveLimit.learned_timeout`).
LEARNED_TIMEOUT_FACTOR = 3.0


class AdaptiveLimit:
    """The in-flight limit of one judge on one event loop (rules in the module docs).

    ``maximum`` is the judge's ``concurrency``; ``mode="fixed"`` keeps the limit at ``maximum``
    (``Judge(adaptive=False)``: the old fixed semaphore). Use :meth:`slot` around each request.
    """

    def __init__(self, maximum: int, *, start: float | None = None, mode: Mode = "fixed",
                 slots: int | None = None, timeout: float = 60.0) -> None:
        self.maximum = maximum
        self.mode: Mode = mode
        self.limit = float(maximum if start is None else min(max(1.0, start), maximum))
        self.start = self.limit
        self.slots = slots
        self.timeout = timeout
        self.slow_start = mode == "latency"
        self._inflight: list[_Ticket] = []
        self._waiters: list[tuple[float, int, asyncio.Future[None]]] = []  # a heap: (rank, arrival, future)
        self._arrivals = itertools.count()
        self._samples: deque[float] = deque(maxlen=BASE_WINDOW)
        self._sorted: list[float] = []
        self._window: list[tuple[float, float]] = []
        self._capacity: deque[float] = deque(maxlen=8)
        self._latencies: deque[float] = deque(maxlen=50)
        self._per_weight: deque[float] = deque(maxlen=50)  # latency / weight of recent replies with usage
        self._completions: deque[int] = deque(maxlen=50)  # their completion tokens
        self._fastest = math.inf  # the shortest reply seen (seconds): scales the noise slack
        self._epoch = 0
        self.peak = 0
        self.lowest = self.limit
        self.decreases = 0

    # -- public ---------------------------------------------------------------------------------

    def info(self) -> dict[str, Any]:
        """Mode, start, current, lowest and highest-in-flight values (for logs and benches)."""
        return {"mode": self.mode, "start": self.start, "limit": round(self.limit, 2),
                "lowest": round(self.lowest, 2), "peak_in_flight": self.peak, "max": self.maximum,
                "slots": self.slots, "decreases": self.decreases}

    @property
    def in_flight(self) -> int:
        """Requests holding a slot now (abandoned ones still presumed running included)."""
        return len(self._inflight)

    def capacity(self) -> int:
        """The server's parallel capacity, for the timeout clock: its slot count when probed;
        in latency mode the median of the last 8 estimates ``n / rho`` (``n`` requests were in
        flight when a request was sent and it took ``rho`` no-queue service times), and 1 before
        any estimate; else ``max``."""
        if self.slots:
            return self.slots
        if self.mode != "latency":
            return self.maximum
        if not self._capacity:
            return 1  # an unknown local server, before its first reply: assume one request at a time
        return min(self.maximum, max(1, round(median(self._capacity))))

    @contextlib.asynccontextmanager
    async def slot(self) -> Any:
        """Hold one in-flight slot; yields a :class:`_Slot` whose :meth:`_Slot.run` sends the request."""
        await self._acquire()
        loop = asyncio.get_running_loop()
        ticket = _Ticket(list(self._inflight), self._epoch, loop)
        self._inflight.append(ticket)
        self.peak = max(self.peak, len(self._inflight))
        slot = _Slot(self, ticket)
        try:
            yield slot
        finally:
            if slot.hold > 0:  # the server is probably still working on the abandoned request
                loop.call_later(slot.hold, self._release, ticket)
            else:
                self._release(ticket)

    # -- internals ------------------------------------------------------------------------------

    def _room(self) -> bool:
        return len(self._inflight) < max(1, math.floor(self.limit))

    async def _acquire(self) -> None:
        """Wait for a free slot: lowest :data:`REQUEST_RANK` first, then first come first served
        (O(log n) per wake-up)."""
        if self._room() and not self._waiters:
            return
        rank = REQUEST_RANK.get()
        key = (math.inf if rank is None else float(rank), next(self._arrivals))
        loop = asyncio.get_running_loop()
        while True:
            entry = (*key, loop.create_future())
            heapq.heappush(self._waiters, entry)
            fut = entry[2]
            try:
                await fut
            except asyncio.CancelledError:
                if fut.done() and not fut.cancelled():
                    self._wake()  # woken and then cancelled: pass the wake-up on
                else:
                    with contextlib.suppress(ValueError):
                        self._waiters.remove(entry)
                        heapq.heapify(self._waiters)
                raise
            if self._room():
                return
            # the slot went to another: wait again, in the same place (same rank and arrival)

    def _wake(self) -> None:
        free = max(1, math.floor(self.limit)) - len(self._inflight)
        while free > 0 and self._waiters:
            fut = heapq.heappop(self._waiters)[2]
            if not fut.done():
                fut.set_result(None)
                free -= 1

    def _release(self, ticket: _Ticket) -> None:
        with contextlib.suppress(ValueError):
            self._inflight.remove(ticket)
        if not ticket.done.done():
            ticket.done.set_result(None)
        self._wake()

    def slack(self) -> float:
        """Latency differences read as noise, not as a queue: ``5 %`` of the timeout, but at most
        ``max(0.25 s, half the fastest reply seen)`` (see the module docs)."""
        cap = max(NOISE_FLOOR, self._fastest / 2) if math.isfinite(self._fastest) else math.inf
        return min(SLACK * self.timeout, cap)

    def _grow(self, value: float) -> None:
        """Raise the limit to ``value``, but in latency mode not past ``1.5 c + 1`` with ``c`` the
        measured capacity (a queue: latency growing with the number in flight); never lowers it."""
        if self.mode == "latency" and self._capacity:
            value = min(value, max(self.limit, TOLERANCE * self.capacity() + QUEUE))
        self._set(value)

    def _set(self, value: float) -> None:
        self.limit = min(float(self.maximum), max(1.0, value))
        self.lowest = min(self.lowest, self.limit)
        self._wake()

    def on_success(self, latency: float, usage: Usage | None, in_flight: int = 1) -> None:
        """Learn from a reply that took ``latency`` seconds since it was sent, when ``in_flight``
        requests (itself included) were in flight.

        Latency differences below :meth:`slack` are not read as queueing: on a fast server they
        are scheduling noise, not a queue worth a smaller limit.
        """
        self._latencies.append(latency)
        self._fastest = min(self._fastest, latency)
        if self.mode == "fixed":
            return
        if self.mode == "loss":
            self._set(self.limit + 1 / max(1.0, self.limit))
            return
        weight = _weight(usage)
        x = latency / weight
        if usage is not None and usage.total_tokens:
            self._per_weight.append(x)
            self._completions.append(usage.completion_tokens)
        if len(self._samples) == self._samples.maxlen:
            old = self._samples[0]
            del self._sorted[bisect.bisect_left(self._sorted, old)]
        self._samples.append(x)
        bisect.insort(self._sorted, x)
        base = self._sorted[0]
        slack = self.slack()
        rho = max(1.0, (latency - slack) / (base * weight)) if base > 0 else 1.0
        self._capacity.append(in_flight / rho)
        if self.slow_start and latency <= TOLERANCE * base * weight + slack:
            self._grow(self.limit + 1)
        self._window.append((x, weight))
        if len(self._window) >= max(4, math.floor(self.limit)):
            now = median(x for x, _ in self._window)
            w = median(w for _, w in self._window)
            self._window.clear()
            g = min(1.0, max(0.5, (TOLERANCE * base + slack / w) / now)) if now > 0 else 1.0
            if g < 1:
                self.slow_start = False
            if not self.slow_start:
                new = self.limit * g + QUEUE
                if new > self.limit:
                    self._grow(new)
                else:
                    self._set(new)

    def on_overload(self, ticket: _Ticket) -> None:
        """A timeout or a 429: halve the limit, once per round trip."""
        self.slow_start = False
        if self.mode == "fixed" or ticket.epoch < self._epoch:
            return
        self._epoch += 1
        self.decreases += 1
        self._set(self.limit / 2)
        logger.info("judge concurrency: overload signal, limit now %.1f", self.limit)

    def learned_timeout(self, timeout: float, prompt_tokens: int | None = None) -> float:
        """The first-attempt timeout after what the server has shown: ``timeout``, or 3x the
        slowest of the recent replies when that is longer (at most 8x ``timeout``), as TCP sets
        its retransmission timeout from measured round trips. A local server that needs 90 s a
        call against a 60 s default is then given the time it has proved it needs, instead of
        being abandoned and asked again. A local server (latency mode) that has not answered yet
        gets 3x ``timeout``: nothing is known of its speed, its first replies are its slowest
        (an empty prompt cache), and a request abandoned there is computed for nobody (2026-12-01:
        context precision with log-probabilities, ~50 s a call on the one-slot 1.5B server, lost 3
        of its first requests to the 60 s default); a hosted server keeps ``timeout``.

        A local server's time grows with the prompt: given the request's ``prompt_tokens``
        (estimated), the timeout is also at least 3x the slowest recent seconds per weighted token
        times the request's weight (``prompt_tokens / 8 + 8`` plus the median reply of recent
        calls, as the latency samples are weighed). A request carrying ten chunks after a run of
        short calls is then not abandoned at the short calls' timeout (2026-12-06, contexts past the
        window on the one-slot 1.5B server: verdict lists of 3,700-5,600 prompt tokens among claim
        calls of a few hundred; 2 of 72 requests were given up and sent again)."""
        if self.mode == "fixed":
            return timeout
        if not self._latencies:
            return LEARNED_TIMEOUT_FACTOR * timeout if self.mode == "latency" else timeout
        learned = max(timeout, LEARNED_TIMEOUT_FACTOR * max(self._latencies))
        if prompt_tokens and self.mode == "latency" and self._per_weight:
            weight = prompt_tokens / 8 + 8 + median(self._completions)
            learned = max(learned, LEARNED_TIMEOUT_FACTOR * max(self._per_weight) * weight)
        return min(8.0 * timeout, learned)

    def service_time(self) -> float:
        """The median latency of recent successes (the timeout when none yet)."""
        return min(self.timeout, median(self._latencies)) if self._latencies else self.timeout


class _Slot:
    """One held slot: sends the request with the server-time clock and reports the outcome."""

    def __init__(self, limit: AdaptiveLimit, ticket: _Ticket) -> None:
        self.limit = limit
        self.ticket = ticket
        self.hold = 0.0

    def backstop(self, timeout: float) -> float:
        """The longest the transport itself may wait: ``timeout`` per round of requests ahead of
        this one that the server may serve first (the judge's server-time clock is the real bound)."""
        rounds = math.ceil(len(self.ticket.ahead) / self.limit.capacity())
        return timeout * (1 + rounds)

    async def run(self, call: Callable[[], Awaitable[T]], timeout: float,
                  usage_of: Callable[[T], Usage | None] = lambda _: None) -> T:
        """Await ``call()``; raise ``TimeoutError`` once it has had ``timeout`` seconds of server
        time (see the module docs) without answering. The caller reports failures with
        :meth:`failed`."""
        self.ticket.sent = time.monotonic()
        task = asyncio.ensure_future(call())
        try:
            cap = self.limit.capacity()
            while True:
                pending: list[asyncio.Future[Any]] = [t.done for t in self.ticket.ahead if not t.done.done()]
                if len(pending) < cap:
                    break
                done, _ = await asyncio.wait([task, *pending], return_when=asyncio.FIRST_COMPLETED)
                if task in done:
                    break
            async with asyncio.timeout(timeout):
                out = await task
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self.limit.on_success(time.monotonic() - self.ticket.sent, usage_of(out), len(self.ticket.ahead) + 1)
        return out

    def failed(self, *, timeout: bool = False, overloaded: bool = False) -> None:
        """Report a failed request: a timeout (the limit halves, and the slot stays held for one
        typical service time, as the server is probably still computing the reply) or an
        overload answer such as HTTP 429 (the limit halves)."""
        if timeout or overloaded:
            self.limit.on_overload(self.ticket)
        if timeout and self.limit.mode != "fixed":
            self.hold = self.limit.service_time()
