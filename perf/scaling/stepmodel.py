"""The scaling study's step-time model (perf/scaling/README.md): one training step of one rank simulated from
the schedule the parameter stores follow, not fitted overlap shares.

Compute is a sequence of units (embedding, blocks, head) forward, then in reverse backward. Communication
is a set of transfers on a full-duplex link: each direction has rate r and is shared equally by the
transfers on it at that moment. The schedule (docs/parallel.md, "The gather window"):

- fsdp: at most K units gathered or being gathered; a unit's gather is issued as soon as a slot frees (at
  the pass start the first K); the last K - 1 blocks and the head stay gathered from forward into backward;
  backward gathers wait until backward starts. Compute waits at a unit whose gather has not arrived.
- both: after a unit's backward its gradient reduction starts; with R reductions in flight it first waits
  for the oldest; after the last unit it waits for all. Then the optimizer, which nothing overlaps.

How a collective uses the link depends on the library. Open MPI's libnbc at two ranks (what we measure):
all-gather sends half the unit each way at once; reduce-scatter is a binomial reduce to rank 0 (the whole
unit one way) and then a scatter (half of it back); all-reduce (in place) is a reduce to rank 0 and a
broadcast back (the whole unit each way, one after the other). NCCL's rings (the projection) send
(N - 1) / N of the unit each way at once, twice that for all-reduce. Each phase of a collective starts
`latency` seconds after the collective is issued or its previous phase ends (a rendezvous handshake
through the link's queue). Each direction of a tbf-shaped link also has tbf's token bucket.
"""
import collections

UP, DOWN = 0, 1  # rank 1 -> rank 0 (towards the reduction root) and back


def phases(kind, nbytes, algorithm, ranks=2):
    """The phases of one collective on a unit of nbytes (in the wire type): a list of phases, each a list
    of (direction, bytes) that run at once."""
    if algorithm == "ring":
        share = nbytes * (ranks - 1) / ranks
        both = 2 * share if kind == "all_reduce" else share
        return [[(UP, both), (DOWN, both)]]
    if kind == "all_gather":
        return [[(UP, nbytes / 2), (DOWN, nbytes / 2)]]
    if kind == "reduce_scatter":
        return [[(UP, nbytes)], [(DOWN, nbytes / 2)]]
    if kind == "all_reduce":
        return [[(UP, nbytes)], [(DOWN, nbytes)]]
    raise ValueError(f"unknown collective {kind}")


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

    def issue(self, now, kind, nbytes, algorithm, ranks):
        op = Op(phases(kind, nbytes, algorithm, ranks))
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


def kept_into_backward(k, n):
    """Units that stay gathered from forward into backward, of n in forward order: the head and the last
    K - 1 blocks."""
    return set(range(max(1, n - k), n))


def gathered_per_step(k, n):
    """Units an fsdp step gathers, of n in forward order: all in forward, the blocks not kept in backward."""
    return list(range(n)) + [b for b in range(n - 2, 0, -1) if b not in kept_into_backward(k, n)]


def fsdp_schedule(issue, k, reductions, gather_bytes, reduce_bytes, forward, backward):
    """The compute thread of an fsdp step, a generator of ("compute", seconds) and ("wait", op); units in
    forward order: the embedding first, the head last, the blocks between."""
    n = len(forward)
    kept = kept_into_backward(k, n)
    need = collections.deque((u, "forward") for u in range(n))  # gathers not yet issued, in order
    gathers, window = {}, 0

    def fill():
        nonlocal window
        while window < k and need:
            unit, use = need.popleft()
            gathers[(unit, use)] = issue("all_gather", gather_bytes[unit])
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
    inflight = collections.deque()
    for u in reversed(range(n)):
        if (u, "backward") in gathers:
            yield ("wait", gathers[(u, "backward")])
        yield ("compute", backward[u])
        if u != 0:  # the embedding's backward needs no parameters: it was freed after forward
            window -= 1
            fill()
        while len(inflight) >= reductions:
            yield ("wait", inflight.popleft())
        inflight.append(issue("reduce_scatter", reduce_bytes[u]))
    for op in inflight:
        yield ("wait", op)


def replicated_schedule(issue, reductions, reduce_bytes, forward, backward):
    """The compute thread of a replicated step: forward, then backward with one all-reduce per unit."""
    n = len(forward)
    for u in range(n):
        yield ("compute", forward[u])
    inflight = collections.deque()
    for u in reversed(range(n)):
        yield ("compute", backward[u])
        while len(inflight) >= reductions:
            yield ("wait", inflight.popleft())
        inflight.append(issue("all_reduce", reduce_bytes[u]))
    for op in inflight:
        yield ("wait", op)


def step_time(strategy, k, param_counts, wire_width, forward, backward, optimizer, rate, latency, burst=0.0,
              reductions=2, algorithm="libnbc", ranks=2):
    """Seconds of one step: param_counts per unit in forward order (embedding, blocks, head); wire_width
    bytes per element on the wire; forward / backward seconds per unit; rate bytes/s per direction; burst
    bytes of each direction's token bucket."""
    link = Link(rate, latency, burst)
    now = 0.0
    issue = lambda kind, nbytes: link.issue(now, kind, nbytes, algorithm, ranks)
    nbytes = [p * wire_width for p in param_counts]
    if strategy == "replicated":
        thread = replicated_schedule(issue, reductions, nbytes, forward, backward)
    else:
        thread = fsdp_schedule(issue, k, reductions, nbytes, nbytes, forward, backward)
    action = next(thread, None)
    compute_end = None
    while action is not None:
        kind, what = action
        if kind == "compute" and compute_end is None:
            compute_end = now + what
        if kind == "wait" and what.done:
            action = next(thread, None)
            continue
        until = min(link.next_event(now), compute_end if kind == "compute" else float("inf"))
        if until == float("inf"):
            raise RuntimeError("the schedule waits for a transfer that never ends")
        link.advance(now, until)
        now = until
        if kind == "compute" and now >= compute_end - 1e-12:
            compute_end = None
            action = next(thread, None)
    return now + optimizer
