"""The scaling study's step-time model (perf/scaling/README.md): one training step of one rank simulated from
the schedule the parameter stores follow, not fitted overlap shares.

Compute is a sequence of units (embedding, blocks, head) forward, then in reverse backward. Communication
is a set of transfers on a full-duplex link: each direction has rate r and is shared equally by the
transfers on it at that moment. The schedule (docs/parallel.md, "The gather window";
src/parallel/fsdp_store.cpp and reduction_queue.hpp):

- fsdp: at most K units gathered or being gathered; the window issues a unit's gather as soon as a slot
  frees (at the pass start the first K); the last K - 1 blocks and the head stay gathered from forward into
  backward; backward gathers wait until backward starts. Issued gathers go on the wire one at a time, in
  issue order. Compute waits at a unit whose gather has not arrived.
- reductions (every strategy): after a unit's backward its gradient reduction is queued; with R queued or
  running, compute first waits for the oldest (starting it if it is still queued); after the last unit it
  waits for all, in order. Then the optimizer, which nothing overlaps. fsdp's queued reductions start, in
  order, only while no gather is queued or running; the replicated store has no gathers and starts each
  reduction when it is queued.
- hsdp (the projection only): fsdp's schedule inside a shard group of S ranks on one link (NVLink inside a
  node), and each reduction's second stage, the all-reduce of the rank's 1/S chunk across the W / S groups,
  on another (the network). The first stage, the reduce-scatter inside the group, is left out: on NVLink it
  is a small fraction of a step (perf/scaling/README.md gives the figure).

The collectives are rings. llmtrain's MPI backend (docs/collectives.md): a reduce-scatter or an all-gather
of a unit of S bytes over N ranks is N - 1 steps of S / N each way at once, an all-reduce a reduce-scatter
then an all-gather of the result (2 (N - 1) steps); each step starts `latency` seconds after the previous
one ends (or the collective is issued). NCCL (the projection) pipelines its ring: one phase of
(N - 1) / N of S each way (twice that for all-reduce). Each direction of a tbf-shaped link also has tbf's
token bucket.
"""
import collections

UP, DOWN = 0, 1  # the two directions of the link


def phases(kind, nbytes, algorithm, ranks):
    """The phases of one collective on a unit of nbytes (in the wire type): a list of phases, each a list
    of (direction, bytes) that run at once."""
    if kind not in ("all_gather", "reduce_scatter", "all_reduce"):
        raise ValueError(f"unknown collective {kind}")
    stages = 2 if kind == "all_reduce" else 1
    if algorithm == "nccl":
        share = stages * nbytes * (ranks - 1) / ranks
        return [[(UP, share), (DOWN, share)]]
    if algorithm == "mpi":
        return [[(UP, nbytes / ranks), (DOWN, nbytes / ranks)] for _ in range(stages * (ranks - 1))]
    raise ValueError(f"unknown algorithm {algorithm}")


class Op:
    """One collective in flight: its remaining phases; done once the last has finished."""

    def __init__(self, plan):
        self.plan = collections.deque(plan)
        self.flows = []  # [direction, bytes left] of the running phase
        self.start_at = None  # when the next phase starts (None: running or done)
        self.done = not self.plan


class Link:
    """Both directions of the link and the collectives on it, advanced in time. Each direction has a token
    bucket of `burst` bytes (tc tbf's, perf/netns/netns.sh): it refills at the rate while the direction is
    idle, and what it holds passes at once when a transfer starts."""

    def __init__(self, rate, latency, burst=0.0):
        self.rate, self.latency, self.ops = rate, latency, []
        self.burst, self.tokens = burst, [burst, burst]

    def issue(self, now, plan):
        op = Op(plan)
        if not op.done:
            op.start_at = now + self.latency
            self.ops.append(op)
            self._settle(now)
        return op

    def _sharing(self):
        count = [0, 0]
        for op in self.ops:
            for direction, _ in op.flows:
                count[direction] += 1
        return count

    def next_event(self, now):
        """Time of the next phase start or end (inf if nothing is in flight)."""
        count, best = self._sharing(), float("inf")
        for op in self.ops:
            if op.start_at is not None:
                best = min(best, op.start_at)
            elif op.flows:
                best = min(best, now + min(left * count[d] / self.rate for d, left in op.flows))
        return best

    def advance(self, now, until):
        """Moves every flow on to time `until` and finishes the phases and ops that end by then."""
        count, dt = self._sharing(), until - now
        for d in (0, 1):
            if count[d] == 0:
                self.tokens[d] = min(self.burst, self.tokens[d] + dt * self.rate)
        for op in self.ops:
            # A flow whose end falls within rounding of `until` ends now (else time could stall).
            op.flows = [[d, left - dt * self.rate / count[d]] for d, left in op.flows
                        if left * count[d] / self.rate > dt * (1 + 1e-9) + 1e-12]
        self._settle(until)

    def _settle(self, now):
        """Starts the phases due by `now`, lets the buckets pass what they hold, ends finished phases."""
        changed = True
        while changed:
            changed = False
            for op in self.ops:
                if op.start_at is not None and op.start_at <= now + 1e-12:
                    op.start_at, op.flows, changed = None, [[d, b] for d, b in op.plan[0] if b > 0], True
            for d in (0, 1):
                flows = sorted((f for op in self.ops for f in op.flows if f[0] == d), key=lambda f: f[1])
                for i, flow in enumerate(flows):  # equal shares of the bucket, the smallest first
                    give = min(flow[1], self.tokens[d] / (len(flows) - i))
                    flow[1] -= give
                    self.tokens[d] -= give
            for op in self.ops:
                live = [f for f in op.flows if f[1] > 1e-9]
                if op.start_at is None and not live and op.plan:
                    op.plan.popleft()
                    op.flows, changed = [], True
                    if op.plan:
                        op.start_at = now + self.latency
                    else:
                        op.done = True
                else:
                    op.flows = live
            self.ops = [op for op in self.ops if not op.done]


class Transfer:
    """A collective the store has issued: queued until the wire puts it on the link."""

    def __init__(self, kind, nbytes):
        self.kind, self.nbytes, self.op = kind, nbytes, None

    @property
    def done(self):
        return self.op is not None and self.op.done


class Wire:
    """The stores' side of the links: gathers one at a time in issue order; reductions in order, held while a
    gather is queued or running, unless compute waits for one (force). Gathers run over `ranks` ranks on
    `link`; reductions over `reduce_ranks` on `reduce_link` (the same link and ranks but for hsdp)."""

    def __init__(self, link, algorithm, ranks, reduce_link=None, reduce_ranks=None):
        self.link, self.algorithm, self.ranks = link, algorithm, ranks
        self.reduce_link = reduce_link or link
        self.reduce_ranks = reduce_ranks or ranks
        self.gathers, self.reductions = collections.deque(), collections.deque()

    def _start(self, now, transfer):
        link, ranks = (self.link, self.ranks) if transfer.kind == "all_gather" else (self.reduce_link,
                                                                                    self.reduce_ranks)
        transfer.op = link.issue(now, phases(transfer.kind, transfer.nbytes, self.algorithm, ranks))

    def gather(self, now, nbytes):
        transfer = Transfer("all_gather", nbytes)
        self.gathers.append(transfer)
        self.react(now)
        return transfer

    def reduce(self, now, kind, nbytes):
        transfer = Transfer(kind, nbytes)
        self.reductions.append(transfer)
        self.react(now)
        return transfer

    def force(self, now, transfer):
        """Compute waits for this reduction (the oldest not yet started): it starts whatever the gathers do."""
        if transfer.op is None:
            self._start(now, transfer)

    def react(self, now):
        """Starts what the rules allow at `now`; called after every issue and every change on the link."""
        while self.gathers and self.gathers[0].done:
            self.gathers.popleft()
        if self.gathers and self.gathers[0].op is None:
            self._start(now, self.gathers[0])
        while self.reductions and self.reductions[0].done:
            self.reductions.popleft()
        if not self.gathers:
            for transfer in self.reductions:
                if transfer.op is None:
                    self._start(now, transfer)


def kept_into_backward(k, n):
    """Units that stay gathered from forward into backward, of n in forward order: the head and the last
    K - 1 blocks."""
    return set(range(max(1, n - k), n))


def gathered_per_step(k, n):
    """Units an fsdp step gathers, of n in forward order: all in forward, the blocks not kept in backward."""
    return list(range(n)) + [b for b in range(n - 2, 0, -1) if b not in kept_into_backward(k, n)]


def reductions(reduce, limit, backward, reduce_bytes, kind):
    """Backward's reductions: one per unit after its backward, at most `limit` queued or running; `backward`
    yields each unit's compute (and its waits) in backward order. A generator of the thread's actions."""
    inflight = collections.deque()
    for u in backward:
        yield from u[1]
        while len(inflight) >= limit:
            yield ("wait", inflight.popleft())
        inflight.append(reduce(kind, reduce_bytes[u[0]]))
    for transfer in inflight:
        yield ("wait", transfer)


def fsdp_schedule(gather, reduce, k, limit, gather_bytes, reduce_bytes, forward, backward, reduce_kind="reduce_scatter"):
    """The compute thread of an fsdp step, a generator of ("compute", seconds) and ("wait", transfer); units
    in forward order: the embedding first, the head last, the blocks between. hsdp's reductions are
    all-reduces of each unit's chunk (reduce_kind "all_reduce", reduce_bytes the chunks)."""
    n = len(forward)
    kept = kept_into_backward(k, n)
    need = collections.deque((u, "forward") for u in range(n))  # gathers not yet issued, in order
    gathers, window = {}, 0

    def fill():
        nonlocal window
        while window < k and need:
            unit, use = need.popleft()
            gathers[(unit, use)] = gather(gather_bytes[unit])
            window += 1

    fill()
    for u in range(n):
        yield ("wait", gathers[(u, "forward")])
        yield ("compute", forward[u])
        if u not in kept:
            window -= 1
            fill()
    # Backward: the head and the kept blocks are still gathered; the other blocks are gathered again.
    need.extend((u, "backward") for u in gathered_per_step(k, n)[n:])
    fill()

    def unit(u):
        nonlocal window
        if (u, "backward") in gathers:
            yield ("wait", gathers[(u, "backward")])
        yield ("compute", backward[u])
        if u != 0:  # the embedding's backward needs no parameters: it was freed after forward
            window -= 1
            fill()

    yield from reductions(reduce, limit, ((u, unit(u)) for u in reversed(range(n))), reduce_bytes, reduce_kind)


def replicated_schedule(reduce, limit, reduce_bytes, forward, backward):
    """The compute thread of a replicated step: forward, then backward with one all-reduce per unit."""
    n = len(forward)
    for u in range(n):
        yield ("compute", forward[u])
    units = ((u, iter([("compute", backward[u])])) for u in reversed(range(n)))
    yield from reductions(reduce, limit, units, reduce_bytes, "all_reduce")


def step_time(strategy, k, param_counts, wire_width, forward, backward, optimizer, rate, latency, burst=0.0,
              limit=2, algorithm="mpi", ranks=2, group=None, group_rate=None):
    """Seconds of one step: param_counts per unit in forward order (embedding, blocks, head); wire_width
    bytes per element on the wire; forward / backward seconds per unit; rate bytes/s per direction; burst
    bytes of each direction's token bucket; limit the reductions queued or running (R). hsdp: shard groups
    of `group` ranks whose gathers run at group_rate (NVLink), the chunks' all-reduces over the
    ranks / group groups at rate."""
    link = Link(rate, latency, burst)
    if strategy == "hsdp":
        group_link = Link(group_rate, latency)
        wire = Wire(group_link, algorithm, group, reduce_link=link, reduce_ranks=ranks // group)
        links = [group_link, link]
    else:
        wire = Wire(link, algorithm, ranks)
        links = [link]
    now = 0.0
    gather = lambda nbytes: wire.gather(now, nbytes)
    reduce = lambda kind, nbytes: wire.reduce(now, kind, nbytes)
    nbytes = [p * wire_width for p in param_counts]
    if strategy == "replicated":
        thread = replicated_schedule(reduce, limit, nbytes, forward, backward)
    elif strategy == "hsdp":
        thread = fsdp_schedule(gather, reduce, k, limit, nbytes, [b / group for b in nbytes], forward, backward,
                               "all_reduce")
    else:
        thread = fsdp_schedule(gather, reduce, k, limit, nbytes, nbytes, forward, backward)
    action = next(thread, None)
    compute_end = None
    while action is not None:
        kind, what = action
        if kind == "compute" and compute_end is None:
            compute_end = now + what
        if kind == "wait":
            if what.done:
                action = next(thread, None)
                continue
            if what.kind != "all_gather":
                wire.force(now, what)
        until = min(min(l.next_event(now) for l in links), compute_end if kind == "compute" else float("inf"))
        if until == float("inf"):
            raise RuntimeError("the schedule waits for a transfer that never starts or ends")
        for l in links:
            l.advance(now, until)
        now = until
        wire.react(now)
        if kind == "compute" and now >= compute_end - 1e-12:
            compute_end = None
            action = next(thread, None)
    return now + optimizer
