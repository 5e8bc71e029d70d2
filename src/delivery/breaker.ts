export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  /** Consecutive failed attempts that open the breaker. */
  failures: number;
  /**
   * How long an open breaker waits after a failure before the next real send (the probe). The delivery engine
   * passes min(WEBHOOK_BREAKER_COOLDOWN_MS, shortest retry delay), so the probe cadence follows the schedule.
   */
  cooldownMs: number;
  now?: () => number;
}

interface Circuit {
  consecutiveFailures: number;
  /** First failed attempt of the streak (ms). */
  since: number;
  lastError: string;
  openUntil: number;
  probing: boolean;
}

/**
 * One circuit breaker per subscription (its receiver), per process. The breaker may make a due attempt
 * cheaper, never later:
 * - open: due deliveries are still attempted at their scheduled time, but not sent: the dispatcher records
 *   them as failed attempts (they count towards the schedule) with an error saying why (`unsentReason`);
 * - half-open (the cooldown has passed since the last failure): one delivery is sent for real as a probe
 *   while the others wait for its answer (at most the send timeout); success closes the breaker, failure
 *   opens it again for the same cooldown (no doubling: the probe cadence must keep up with the schedule).
 * Each process learns a receiver's health from its own sends: nothing shared is needed for the schedule to hold,
 * and no write per attempt is added (docs/adr/0007-per-process-breaker.md).
 */
export function createBreakers(options: BreakerOptions) {
  const now = options.now ?? Date.now;
  const circuits = new Map<string, Circuit>();

  function stateOf(subscriptionId: string): BreakerState {
    const c = circuits.get(subscriptionId);
    if (!c || c.openUntil === 0) return 'closed';
    return now() < c.openUntil ? 'open' : 'half-open';
  }

  /** The `error` of an attempt not sent because the breaker is open. */
  function unsentReason(c: Circuit): string {
    return (
      `not sent: receiver failing since ${new Date(c.since).toISOString()} (circuit open after ` +
      `${c.consecutiveFailures} consecutive failures; last: ${c.lastError})`
    );
  }

  return {
    stateOf,

    /**
     * skip: open breakers, with the error their due deliveries are failed with (no send); blocked: subscriptions
     * whose rows must not be claimed for sending now (open, or half-open with the probe in flight); probeOnly:
     * half-open subscriptions allowed exactly one send (the probe).
     */
    restrictions(): { skip: Map<string, string>; blocked: string[]; probeOnly: string[] } {
      const skip = new Map<string, string>();
      const blocked: string[] = [];
      const probeOnly: string[] = [];
      for (const [id, c] of circuits) {
        const state = stateOf(id);
        if (state === 'open') skip.set(id, unsentReason(c));
        if (state === 'open' || (state === 'half-open' && c.probing)) blocked.push(id);
        else if (state === 'half-open') probeOnly.push(id);
      }
      return { skip, blocked, probeOnly };
    },

    /** A claimed row is about to be sent: in half-open state it is the probe. */
    started(subscriptionId: string): void {
      const c = circuits.get(subscriptionId);
      if (c && stateOf(subscriptionId) === 'half-open') c.probing = true;
    },

    /** Records a sent attempt's result; returns the new state. */
    record(subscriptionId: string, ok: boolean, error?: string | null): BreakerState {
      if (ok) {
        circuits.delete(subscriptionId);
        return 'closed';
      }
      const at = now();
      const c = circuits.get(subscriptionId) ?? {
        consecutiveFailures: 0,
        since: at,
        lastError: '',
        openUntil: 0,
        probing: false,
      };
      circuits.set(subscriptionId, c);
      c.consecutiveFailures++;
      c.lastError = error ?? 'failed';
      if (c.probing || c.openUntil !== 0) {
        // A failed probe (or a send that was already in flight when the breaker opened): the cooldown restarts.
        c.probing = false;
        c.openUntil = at + options.cooldownMs;
      } else if (c.consecutiveFailures >= options.failures) {
        c.openUntil = at + options.cooldownMs;
      }
      return stateOf(subscriptionId);
    },

    /** A send ended without a result (shutdown): a probe in flight no longer counts. */
    released(subscriptionId: string): void {
      const c = circuits.get(subscriptionId);
      if (c) c.probing = false;
    },

    /** Milliseconds until the next breaker turns half-open (to wake the dispatcher then), or null. */
    nextReopenInMs(): number | null {
      let next: number | null = null;
      for (const c of circuits.values()) {
        if (c.openUntil > now() && (next === null || c.openUntil - now() < next)) next = c.openUntil - now();
      }
      return next;
    },
  };
}

export type Breakers = ReturnType<typeof createBreakers>;
