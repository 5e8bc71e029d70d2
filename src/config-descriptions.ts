/**
 * What each environment variable means, for operators: attached to the config schema's fields with zod's
 * `.describe()` (src/config.ts) and rendered into docs/configuration.md by `npm run docs:config`. Markdown;
 * links are relative to docs/.
 */
export const envDescriptions = {
  PORT: 'HTTP port.',
  HOST: 'Interface to bind (`0.0.0.0` in containers).',
  DATABASE_URL:
    '`postgresql://…` to use PostgreSQL, directly or through a transaction pooler such as PgBouncer. ' +
    'Unset: the embedded PGlite database in `DATA_DIR`.',
  DATABASE_DIRECT_URL:
    'A direct connection to the same database when `DATABASE_URL` is a pooler: migrations (and their lock) and ' +
    'the webhook wake-up `LISTEN` use it. Unset: everything goes through `DATABASE_URL`, and other replicas’ ' +
    'commits reach this one’s dispatcher at its next poll (`WEBHOOK_POLL_MS`). Requires `DATABASE_URL`. See ' +
    '[PostgreSQL and poolers](operations/postgresql-and-poolers.md).',
  DATABASE_REPLICA_URLS:
    'Comma-separated `postgresql://` URLs of streaming replicas of `DATABASE_URL`. Reads that tolerate lag (the ' +
    'API’s GET requests: lists, details, reports, exports, the event feed) go to a healthy replica that has ' +
    'replayed the calling organisation’s last write; writes, transactions and API-key lookups stay on the primary. ' +
    'Each organisation’s last write position is kept in Redis when `REDIS_URL` is set (every API process sees it); ' +
    'without Redis it is kept in process memory, which is correct for a single API process only. Unset: every ' +
    'query goes to `DATABASE_URL`. See [read replicas](adr/0070-read-replicas.md).',
  REPLICA_MAX_LAG_MS:
    'A replica further behind the primary than this (measured by WAL position; an idle primary means no lag), or ' +
    'not answering, gets no reads until it has caught up; it is checked every 500 ms.',
  DB_PREPARED_STATEMENTS:
    'Named prepared statements for the hot paths. `auto`: only on connections that prove to be direct server ' +
    'sessions (never through a pooler); `true`: always (a pooler that tracks them, e.g. PgBouncer 1.21+ with ' +
    '`max_prepared_statements`); `false`: never. Through a transaction pooler without that support they fail ' +
    '(`prepared statement … does not exist`).',
  DATA_DIR:
    'Where the embedded database lives (ignored with `DATABASE_URL`), and its webhook-secret key file `secrets.key`.',
  PUBLIC_BASE_URL:
    'Base URL used in scan links, QR codes and the OpenAPI `servers` entry. Unset: `http://localhost:PORT`.',
  LOG_LEVEL: 'pino log level. `warn` drops the two lines written per request at `info`.',
  LOG_FORMAT:
    'How log lines look on stdout. `json`: one JSON object per line, for log collectors. `pretty`: coloured lines ' +
    'for people (pino-pretty). `auto`: pretty when stdout is a terminal, JSON otherwise (pipes, files, containers ' +
    'without a TTY).',
  RATE_LIMIT_PER_MINUTE: 'Default per-key cap of requests per minute (a key’s own limit wins).',
  REDIS_URL:
    '`redis://…` (or `rediss://`) to share rate-limit counters between instances. Unset: in-process counters, and ' +
    'the Redis client is not loaded.',
  WEBHOOK_DISPATCH_CRON:
    'The scheduler tick (node-cron syntax; a seconds field is allowed): sweeps due retries in continuous mode, ' +
    'dispatches in tick mode. Checked before the server starts.',
  WEBHOOK_DISPATCH_MODE:
    '`continuous`: committed events wake the dispatcher at once; `tick`: only the cron tick dispatches, at ' +
    'most `WEBHOOK_BATCH_SIZE` per tick (see [Webhooks](api/webhooks.md#dispatch-modes)).',
  WEBHOOK_BATCH_SIZE: 'Deliveries claimed per claim; in tick mode the cap per tick.',
  WEBHOOK_CONCURRENCY: 'Webhook sends in flight at once per process.',
  WEBHOOK_SUBSCRIPTION_CONCURRENCY:
    'A subscription’s share: its sends in flight at once per process (at most `WEBHOOK_CONCURRENCY`).',
  WEBHOOK_POLL_MS:
    'Continuous mode: how often an idle dispatcher looks for due retries and expired leases besides wake-ups.',
  WEBHOOK_LEASE_SEC:
    'Claim lease of a delivery, renewed every third of it while a send runs; a crashed instance’s deliveries are ' +
    'taken over after it.',
  WEBHOOK_BREAKER_FAILURES:
    'Failed attempts in a row that open a subscription’s circuit breaker (while open, due attempts are recorded ' +
    'as failed without a send, on schedule).',
  WEBHOOK_BREAKER_COOLDOWN_MS:
    'Longest wait after a failure before the next real send (the probe) to an open breaker’s receiver; capped to ' +
    'the shortest `WEBHOOK_RETRY_SCHEDULE` delay.',
  INSTANCE_ID:
    'Names this process’s delivery claims; keep it stable across restarts and unique per running process (a ' +
    'restart frees its own stale claims at start-up). Unset: `hostname:PORT`.',
  WEBHOOK_RETRY_SCHEDULE: 'Seconds between delivery attempts, comma separated (one retry per entry).',
  WEBHOOK_TIMEOUT_MS: 'Receiver timeout of one webhook send.',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS:
    'Allow webhook URLs on loopback, private and link-local networks (development and tests only).',
  WEBHOOK_CA_FILE:
    'PEM file of extra certificate authorities trusted for webhook receivers (private CAs); public CAs are always ' +
    'trusted. A bad file stops the start.',
  WEBHOOK_AUTO_DISABLE_AFTER_SEC:
    'A subscription whose every delivery attempt failed for this long (5 days), and that failed again within the ' +
    'last day, is disabled and its organisation notified; `0` = never.',
  WEBHOOK_HISTORY_DAYS:
    'Days of webhook delivery history and of the event feed (`GET /events`) kept at least; the daily retention ' +
    'job removes a calendar month once its last day is older.',
  IDEMPOTENCY_KEY_TTL_HOURS:
    'Hours an `Idempotency-Key` record is kept at least (minimum 24); an hourly job removes older ones.',
  BILLING_SYNC_URL: 'Where to POST the billable asset count after asset creation. Unset: disabled.',
  TELEMATICS_ENABLED:
    'Run the scheduler of telematics feeds (each connection every pollMinutes); a sync asked for through the API ' +
    'runs either way.',
  TELEMATICS_TIMEOUT_MS: 'Timeout of one request to a telematics provider (token or page), body included.',
  TELEMATICS_MAX_PAGE_BYTES: 'Largest telematics page read; a bigger one fails the run.',
  TELEMATICS_MAX_PAGES: 'Most pages one telematics run reads before it stops with an error.',
  TELEMATICS_RETRIES: 'Retries of a telematics request answered 5xx or timed out, before the run fails.',
  TELEMATICS_RETRY_BASE_MS: 'Wait before the first retry of a telematics request; doubles with each retry.',
  TELEMATICS_MAX_RETRY_AFTER_SEC:
    'Longest Retry-After of a 429 a telematics run waits for; a longer one fails the run with that reason.',
  TELEMATICS_LEASE_SEC:
    'Lease of a running telematics sync on its connection, renewed while it runs; a crashed run is taken over ' +
    'once it lapses.',
  BILLING_SYNC_TIMEOUT_MS: 'Timeout of the billing POST (it never delays the API response).',
  DB_POOL_SIZE: 'PostgreSQL connections per process.',
  HEAP_GROWTH_PERCENT:
    'How far V8 lets old space grow past the live heap before its next full collection (`--heap-growing-percent`, ' +
    'set at start-up, with allocation-site pretenuring off); bounds the garbage a busy process holds. `0` leaves ' +
    'V8’s own heuristics. See [Tuning](operations/tuning.md).',
  AUTH_CACHE_TTL_MS:
    'How long a verified (or unknown) key is trusted without re-reading it: the delay before a revocation, expiry ' +
    'or removed user takes effect in other processes.',
  METRICS_TOKEN:
    'Enables `GET /metrics` behind this bearer token (16+ characters). Unset: no metrics endpoint and nothing ' +
    'collected. See [Metrics and alerts](operations/metrics-and-alerts.md).',
  SHUTDOWN_TIMEOUT_MS: 'Longest graceful shutdown before the process gives up and exits 1.',
  SHUTDOWN_DRAIN_MS:
    'On SIGTERM, how long readiness answers 503 while requests are still served, before the listener closes and ' +
    'the load balancer is given as long again to close its connections. 0: no drain. Compose sets 3000. Must be ' +
    'less than half of `SHUTDOWN_TIMEOUT_MS`. See [the edge proxy](operations/edge-proxy.md).',
  DB_CONNECT_TIMEOUT_MS:
    'PostgreSQL: opening a connection, and waiting for a free one in the pool; past it 503 `database_unavailable`.',
  DB_STATEMENT_TIMEOUT_MS:
    'PostgreSQL: a statement running longer is cancelled (503 `database_unavailable`): in a transaction by the ' +
    'server (`SET LOCAL statement_timeout`), a self-committing statement by the client’s cancel request.',
  DB_IDLE_IN_TRANSACTION_TIMEOUT_MS:
    'PostgreSQL `idle_in_transaction_session_timeout`, set per transaction (`SET LOCAL`): the server rolls back a ' +
    'transaction left idle this long.',
  DB_QUERY_TIMEOUT_MS:
    'PostgreSQL, client side: a query unanswered this long (partition, hung server) resets its connection; keep it ' +
    'above `DB_STATEMENT_TIMEOUT_MS`.',
  DB_STARTUP_TIMEOUT_MS:
    'Start-up: how long to keep retrying an unreachable database (a log line per attempt) before exiting 1; `0` = ' +
    'one attempt.',
  MIGRATION_LOCK_WAIT_MS:
    'Start-up: longest wait for the migration lock another process holds while it migrates (a warning every 10 s ' +
    'names the holder), then exit 1.',
  MIGRATION_LOCK_TIMEOUT_MS:
    'Start-up migrations: each DDL statement’s `lock_timeout`; a statement that waits longer gives up (writers ' +
    'never queue behind it) and is retried with backoff, 10 tries.',
  REQUEST_TIMEOUT_MS:
    'Deadline of a whole request (receiving it, hooks, handler, reply): past it the answer is 503 ' +
    '`request_timeout` and the request’s database work is cut off (it never commits).',
  REDIS_COMMAND_TIMEOUT_MS: 'Longest wait for a Redis rate-limit command before failing open.',
  REDIS_BREAKER_INTERVAL_MS:
    'After a Redis failure, requests skip Redis (fail open, no wait) for this long; then one probe. At most one ' +
    'timeout and one warning per interval.',
  PRE_AUTH_RATE_LIMIT_PER_MINUTE:
    'Per client address: key lookups a minute that may find no usable key (unknown, revoked or expired); over it, ' +
    'keys not among the active ones get 429 `rate_limited` without a lookup. Valid keys never count and always ' +
    'pass. `0` = off.',
  TRUST_PROXY:
    'Whose `X-Forwarded-For` to believe for the client address: `false` (the TCP peer is the client), `true` (any ' +
    'peer; only behind a proxy that overwrites the header), or a comma-separated list of proxy addresses/CIDRs or ' +
    '`loopback`, `linklocal`, `uniquelocal` (recommended behind a load balancer).',
  SECRETS_ENCRYPTION_KEYS_FILE:
    'A file holding keys in the syntax of `SECRETS_ENCRYPTION_KEYS` (a mounted secret, or a volume every instance ' +
    'shares); created with one new key (mode 0600) when missing and the variable is unset. With both, the ' +
    'variable’s keys encrypt and the file’s still decrypt. Satisfies the PostgreSQL requirement.',
  SECRETS_ENCRYPTION_KEYS:
    'Keys of webhook signing secrets at rest: `id:base64key` entries (32 random bytes each), comma separated; the ' +
    'first encrypts, all decrypt. **Required with `DATABASE_URL`** unless `SECRETS_ENCRYPTION_KEYS_FILE` is set. ' +
    'Unset on the embedded database: `DATA_DIR/secrets.key` is created on first start. See ' +
    '[Secrets and key rotation](operations/secrets.md).',
  ATTACHMENTS_STORAGE:
    'Where attachment bytes live: `local` (a directory, see `ATTACHMENTS_DIR`) or `s3` (any S3-compatible bucket, ' +
    'see `S3_BUCKET`). See [Attachments storage](operations/attachments.md).',
  ATTACHMENTS_DIR:
    'Local attachment storage (content-addressed files). Unset: `DATA_DIR/attachments`, also on PostgreSQL. Several ' +
    'replicas need it on one shared volume.',
  ATTACHMENT_MAX_BYTES:
    'Largest attachment accepted, in bytes (default 25 MiB): larger uploads answer 413 `file_too_large`.',
  ATTACHMENT_QUOTA_BYTES:
    'Attachment bytes an organisation may hold (pending uploads count at their declared size); `0`: no quota. Over ' +
    'it: 413 `quota_exceeded`.',
  ATTACHMENT_TYPES:
    'Comma-separated content types accepted, as detected from the bytes (a subset of the default list: JPEG, PNG, ' +
    'WebP, GIF, HEIC/HEIF, PDF, plain text, CSV, Word, Excel, PowerPoint). Unset: all of them. HTML, SVG, XML, ' +
    'scripts and executables can never be allowed.',
  ATTACHMENT_UPLOAD_URL_TTL_SEC:
    'How long a presigned upload URL stays valid (seconds); at most 86400, the age at which the sweep removes an ' +
    'upload that was never completed.',
  ATTACHMENT_ORPHAN_GRACE_SEC:
    'Stored objects without an attachment row are removed by the sweep once they are this old (seconds), which ' +
    'leaves uploads in flight alone.',
  S3_BUCKET: 'Bucket of attachments with `ATTACHMENTS_STORAGE=s3` (required then).',
  S3_REGION: 'Region of the bucket. Unset: `us-east-1` (what MinIO and most S3-compatible servers expect).',
  S3_ENDPOINT:
    'Endpoint of an S3-compatible server (MinIO, Cloudflare R2, …). Unset: AWS S3. Credentials come from the ' +
    'standard AWS chain (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, profile, instance role).',
  S3_FORCE_PATH_STYLE: 'Path-style bucket URLs (`endpoint/bucket/key`), as MinIO and s3rver need.',
  S3_PREFIX:
    'Prefix of every object key the service writes in the bucket; not empty (the sweep removes objects under it ' +
    'that no attachment names, so share a bucket only under a prefix of its own).',
  S3_TIMEOUT_MS:
    'Connection and per-request timeout of bucket calls other than streamed transfers; a bucket that does not ' +
    'answer within it is a 503 `storage_unavailable`.',
  S3_UPLOAD_PART_MIB:
    'Part size of uploads streamed into the bucket (multipart past one part), 5 to 512 MiB. Each part is held in ' +
    'memory while it is sent.',
  S3_UPLOAD_QUEUE_SIZE: 'Parts of one upload sent to the bucket at once (each holds one part buffer).',
  S3_UPLOAD_BUFFER_MIB:
    'Memory for part buffers of all uploads to the bucket in this process (at least one part): past it, uploads ' +
    'wait for a buffer, so concurrent uploads cannot multiply it. With the defaults, 4 parts of 5 MiB.',
  S3_UPLOAD_WAIT_MS:
    'Longest wait of an upload for a part buffer; then 503 `storage_unavailable` (the bytes sent so far are ' +
    'discarded).',
  GIT_COMMIT: 'Build info for `/api/v1/version` and `/health`. Unset: read from `.git` (set it in images).',
  GIT_BRANCH: 'Build info for `/api/v1/version`. Unset: read from `.git` (set it in images).',
} as const;
