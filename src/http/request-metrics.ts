import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import { addRouteHook } from './route-hooks.ts';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

interface Series {
  labels: { method: string; route: string; status: string };
  /** Per bucket, not cumulative; the last slot counts what is above every bound. */
  counts: Float64Array;
  sum: number;
  count: number;
}

interface Value {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName?: string;
}

/**
 * `http_requests_total` and `http_request_duration_seconds`, counted in plain arrays on the request path and turned
 * into prom-client's shape only when scraped. prom-client's labelled children validate and hash their label set on
 * every observation (a few microseconds a request for two metrics); here a response costs its route's series
 * looked up by status in an array, a bucket search and three additions. The exposition is the same as prom-client's
 * Counter and Histogram would write.
 */
export function registerHttpMetrics(app: FastifyInstance, registry: Registry) {
  const series = new Map<string, Series>();
  const seriesOf = (method: string, route: string, status: number) => {
    const id = `${method} ${status} ${route}`;
    let s = series.get(id);
    if (!s) {
      s = {
        labels: { method, route, status: String(status) },
        counts: new Float64Array(BUCKETS.length + 1),
        sum: 0,
        count: 0,
      };
      series.set(id, s);
    }
    return s;
  };

  const metric = (name: string, help: string, type: 'counter' | 'histogram', values: () => Value[]) => ({
    name,
    help,
    type,
    aggregator: 'sum' as const,
    get: async () => ({ name, help, type, aggregator: 'sum' as const, values: values() }),
    // Zeroed rather than dropped: routes hold on to their series.
    reset: () => {
      for (const s of series.values()) {
        s.counts.fill(0);
        s.sum = 0;
        s.count = 0;
      }
    },
  });
  registry.registerMetric(
    metric('http_requests_total', 'HTTP requests by route and status', 'counter', () =>
      [...series.values()].map((s) => ({ labels: s.labels, value: s.count })),
    ) as never,
  );
  registry.registerMetric(
    metric('http_request_duration_seconds', 'HTTP request latency by route and status', 'histogram', () =>
      [...series.values()].flatMap((s) => {
        let acc = 0;
        const name = 'http_request_duration_seconds';
        const buckets: Value[] = BUCKETS.map((le, i) => ({
          labels: { le },
          sharedLabels: s.labels,
          value: (acc += s.counts[i]),
          metricName: `${name}_bucket`,
        }));
        const all: Value[] = [
          ...buckets,
          { labels: { le: '+Inf' }, sharedLabels: s.labels, value: s.count, metricName: `${name}_bucket` },
          { labels: {}, sharedLabels: s.labels, value: s.sum, metricName: `${name}_sum` },
          { labels: {}, sharedLabels: s.labels, value: s.count, metricName: `${name}_count` },
        ];
        return all;
      }),
    ) as never,
  );

  const record = (s: Series, seconds: number) => {
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]) i++;
    s.counts[i] += 1;
    s.sum += seconds;
    s.count += 1;
  };

  // Each route records its own responses (its pattern is known when it is added, so nothing is looked up per
  // response but the status); requests that matched no route are recorded here as 'unmatched'.
  app.addHook('onRoute', (route) => {
    const url = route.url;
    // A route of one method (all of ours) caches its series by status; one of several looks them up.
    const single = typeof route.method === 'string';
    const byStatus: (Series | undefined)[] = [];
    const onResponse = (request: FastifyRequest, reply: FastifyReply, done: () => void) => {
      const status = reply.statusCode;
      const s = single
        ? (byStatus[status] ??= seriesOf(request.method, url, status))
        : seriesOf(request.method, url, status);
      record(s, reply.elapsedTime / 1000);
      done();
    };
    addRouteHook(route, 'onResponse', onResponse);
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) record(seriesOf(request.method, 'unmatched', reply.statusCode), reply.elapsedTime / 1000);
    done();
  });
}
