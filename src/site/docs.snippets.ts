/**
 * Signature-verification code shown on /docs/webhooks. Kept here as plain text so the page escapes it and the
 * tests run exactly this code (Node, Python and the shell) against signed deliveries, fresh, tampered and stale.
 * The format is the one both signatures use (docs/api/webhooks.md and the AsyncAPI document).
 */
export const TOLERANCE_SEC = 300;

export const NODE_SNIPPET = `import { createHmac, timingSafeEqual } from 'node:crypto';

const TOLERANCE_SEC = ${TOLERANCE_SEC};

// rawBody: the request body exactly as received (a Buffer), before any JSON parsing.
// headers: lower-case names, as Node's req.headers. secret: the whsec_... string the API returned.
// Both throw when the delivery must be refused; a receiver needs only one of the two.

/** Standard Webhooks headers: webhook-id, webhook-timestamp, webhook-signature. */
export function verifyStandardWebhook(rawBody, headers, secret, nowSec = Math.floor(Date.now() / 1000)) {
  const id = headers['webhook-id'];
  const timestamp = headers['webhook-timestamp'];
  const signatures = headers['webhook-signature'];
  if (!id || !timestamp || !signatures) throw new Error('missing webhook-* header');
  if (!/^\\d+$/.test(timestamp) || Math.abs(nowSec - Number(timestamp)) > TOLERANCE_SEC)
    throw new Error('timestamp outside the tolerance');
  // The key is the secret's base64 part, decoded (Buffer accepts standard and URL-safe base64).
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(\`\${id}.\${timestamp}.\`).update(rawBody).digest();
  // One "v1,<base64>" per live secret (two while a secret is being rotated): any match is enough.
  const match = signatures.split(' ').some((entry) => {
    const [version, value = ''] = entry.split(',');
    const given = Buffer.from(value, 'base64');
    return version === 'v1' && given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!match) throw new Error('bad signature');
}

/** The service's own header: X-Service-Signature: v1=<hex> over "<X-Service-Timestamp>.<raw body>". */
export function verifyServiceSignature(rawBody, headers, secret, nowSec = Math.floor(Date.now() / 1000)) {
  const timestamp = headers['x-service-timestamp'];
  const signatures = headers['x-service-signature'];
  if (!timestamp || !signatures) throw new Error('missing X-Service-* header');
  if (!/^\\d+$/.test(timestamp) || Math.abs(nowSec - Number(timestamp)) > TOLERANCE_SEC)
    throw new Error('timestamp outside the tolerance');
  // The key is the whole secret string, whsec_ prefix included, as UTF-8.
  const expected = Buffer.from(createHmac('sha256', secret).update(\`\${timestamp}.\`).update(rawBody).digest('hex'));
  const match = signatures.split(' ').some((entry) => {
    const given = Buffer.from(entry.startsWith('v1=') ? entry.slice(3) : '');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  if (!match) throw new Error('bad signature');
}
`;

export const PYTHON_SNIPPET = `import base64
import hashlib
import hmac
import time

TOLERANCE_SEC = ${TOLERANCE_SEC}

# raw_body: the request body exactly as received (bytes), before any JSON parsing.
# headers: a case-insensitive mapping (Flask's request.headers, Django's request.headers).
# secret: the whsec_... string the API returned. Both raise ValueError when the delivery must be refused.


def verify_standard_webhook(raw_body: bytes, headers, secret: str, now=None) -> None:
    """Standard Webhooks headers: webhook-id, webhook-timestamp, webhook-signature."""
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        raise ValueError("missing webhook-* header")
    if not timestamp.isdigit() or abs((time.time() if now is None else now) - int(timestamp)) > TOLERANCE_SEC:
        raise ValueError("timestamp outside the tolerance")
    # The key is the secret's base64 part, decoded (URL-safe secrets from older versions accepted too).
    b64 = secret.removeprefix("whsec_").translate(str.maketrans("-_", "+/"))
    key = base64.b64decode(b64 + "=" * (-len(b64) % 4))
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + raw_body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    # One "v1,<base64>" per live secret (two while a secret is being rotated): any match is enough.
    if not any(
        version == "v1" and hmac.compare_digest(value, expected)
        for version, _, value in (entry.partition(",") for entry in signatures.split(" "))
    ):
        raise ValueError("bad signature")


def verify_service_signature(raw_body: bytes, headers, secret: str, now=None) -> None:
    """The service's own header: X-Service-Signature: v1=<hex> over "<X-Service-Timestamp>.<raw body>"."""
    timestamp = headers.get("x-service-timestamp")
    signatures = headers.get("x-service-signature")
    if not timestamp or not signatures:
        raise ValueError("missing X-Service-* header")
    if not timestamp.isdigit() or abs((time.time() if now is None else now) - int(timestamp)) > TOLERANCE_SEC:
        raise ValueError("timestamp outside the tolerance")
    # The key is the whole secret string, whsec_ prefix included, as UTF-8.
    expected = "v1=" + hmac.new(secret.encode(), timestamp.encode() + b"." + raw_body, hashlib.sha256).hexdigest()
    if not any(hmac.compare_digest(entry, expected) for entry in signatures.split(" ")):
        raise ValueError("bad signature")
`;

export const SHELL_SNIPPET = `# Inputs: the raw body saved byte for byte in body.json, the secret, and the delivery's headers:
#   SECRET=whsec_...   TIMESTAMP=<X-Service-Timestamp>   SIGNATURE=<X-Service-Signature>
#   WEBHOOK_ID=<webhook-id>   WEBHOOK_SIGNATURE=<webhook-signature>
now=$(date +%s)
age=$(( now > TIMESTAMP ? now - TIMESTAMP : TIMESTAMP - now ))
[ "$age" -le ${TOLERANCE_SEC} ] || echo "timestamp outside the tolerance (\${age} s)"

# X-Service-Signature: HMAC-SHA256 keyed with the whole secret string, hex.
expected="v1=$(printf '%s.' "$TIMESTAMP" | cat - body.json | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.*= //')"
case " $SIGNATURE " in *" $expected "*) echo "X-Service-Signature: valid" ;; *) echo "X-Service-Signature: INVALID" ;; esac

# webhook-signature: the key is the secret's base64 part, decoded (given to openssl as hex), base64 output.
key_hex=$(printf '%s' "\${SECRET#whsec_}" | tr '_-' '/+' | base64 -d 2>/dev/null | od -An -v -tx1 | tr -d ' \\n')
expected_std="v1,$(printf '%s.%s.' "$WEBHOOK_ID" "$TIMESTAMP" | cat - body.json \\
  | openssl dgst -sha256 -mac HMAC -macopt "hexkey:$key_hex" -binary | base64)"
case " $WEBHOOK_SIGNATURE " in *" $expected_std "*) echo "webhook-signature: valid" ;; *) echo "webhook-signature: INVALID" ;; esac
`;

/** Sends a hand-signed delivery to your own receiver, to test it without the service. */
export const CURL_SEND_SNIPPET = `SECRET='whsec_...'            # your subscription's secret
URL='https://receiver.example/webhooks/fleet'
BODY='{"id":"0b6f3c1e-8d2a-4f7b-9c55-2e1d7a9f4b10","event":"flag.created","organizationId":"org_example","sentAt":"2026-11-22T14:05:03.000Z","data":{}}'
TIMESTAMP=$(date +%s)
SIGNATURE="v1=$(printf '%s.%s' "$TIMESTAMP" "$BODY" | openssl dgst -sha256 -hmac "$SECRET" | sed 's/^.*= //')"
curl -sS -X POST "$URL" -H 'Content-Type: application/json' \\
  -H "X-Service-Timestamp: $TIMESTAMP" -H "X-Service-Signature: $SIGNATURE" -H 'X-Service-Event: flag.created' \\
  --data-binary "$BODY"`;
