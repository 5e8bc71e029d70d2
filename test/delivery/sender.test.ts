import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebhookSender, firstBytes, firstChars, type WebhookSender } from '../../src/delivery/sender.ts';
import { newWebhookSecret, signatureFor, signEnvelope } from '../../src/delivery/signer.ts';
import { startReceiver, type Receiver } from '../helpers/delivery/harness.ts';

describe('signer', () => {
  it('matches an independently computed HMAC-SHA256 (openssl dgst -sha256 -hmac)', () => {
    expect(signatureFor('whsec_test_secret', 1700000000, '{"id":"d1","event":"flag.created"}')).toBe(
      'v1=9fb44d8fd69b3c18162d9328904b7d8e313b8cc65ad6701779c7b12c656e9f08',
    );
  });

  it('signs exactly the body it sends, with the timestamp of sentAt', () => {
    const now = new Date('2026-11-22T10:00:00.750Z');
    const signed = signEnvelope(
      'k',
      { id: 'd', eventId: 'e', event: 'tool.created', organizationId: 'o', data: { a: 1 } },
      { now, test: true },
    );
    expect(signed.body).toBe(
      '{"id":"d","eventId":"e","event":"tool.created","organizationId":"o","sentAt":"2026-11-22T10:00:00.750Z","data":{"a":1}}',
    );
    expect(signed.headers['x-service-timestamp']).toBe(String(Math.floor(now.getTime() / 1000)));
    expect(signed.signature).toBe(signatureFor('k', Math.floor(now.getTime() / 1000), signed.body));
    expect(signed.headers['x-service-test']).toBe('1');
  });

  it('makes secrets of 32 random bytes', () => {
    const a = newWebhookSecret();
    expect(Buffer.from(a.replace(/^whsec_/, ''), 'base64url')).toHaveLength(32);
    expect(newWebhookSecret()).not.toBe(a);
  });
});

describe('response excerpts', () => {
  it('keeps the first 500 characters for history and the first 500 bytes (whole characters) for the test call', () => {
    const body = Buffer.from('€'.repeat(600));
    expect(firstChars(body)).toBe('€'.repeat(500));
    expect(firstBytes(body)).toBe('€'.repeat(166));
    expect(firstBytes(Buffer.from('short'))).toBe('short');
    expect(firstChars(null)).toBeNull();
  });
});

describe('sender', () => {
  let receiver: Receiver;
  let sender: WebhookSender;
  beforeAll(async () => {
    receiver = await startReceiver();
    sender = createWebhookSender({ timeoutMs: 400, allowPrivateNetworks: true, caFile: receiver.caFile });
  });
  afterAll(async () => {
    await sender.close();
    await receiver.close();
  });

  it('fails an answer slower than WEBHOOK_TIMEOUT_MS', async () => {
    receiver.respond = () => ({ delayMs: 1_500 });
    const result = await sender.send(`${receiver.origin}/slow`, '{}', {});
    receiver.respond = () => ({});
    expect(result).toMatchObject({ ok: false, status: null, error: 'timed out after 400 ms' });
  });

  it('reads only the start of a huge response body', async () => {
    // Its own sender with a generous timeout: a new TLS connection and a large body are slow on a busy CI machine.
    const patient = createWebhookSender({ timeoutMs: 10_000, allowPrivateNetworks: true, caFile: receiver.caFile });
    receiver.respond = () => ({ body: 'a'.repeat(2_000_000) });
    const result = await patient.send(`${receiver.origin}/huge`, '{}', {}).finally(() => patient.close());
    receiver.respond = () => ({});
    expect(result.ok).toBe(true);
    expect(result.bodyPrefix!.length).toBeLessThanOrEqual(2048);
    expect(firstChars(result.bodyPrefix)).toBe('a'.repeat(500));
  });

  it('sends nothing once closed (shutdown), and says why', async () => {
    const closing = createWebhookSender({ timeoutMs: 2_000, allowPrivateNetworks: true, caFile: receiver.caFile });
    expect((await closing.send(`${receiver.origin}/before-close`, '{}', {})).ok).toBe(true);
    await closing.close();
    const result = await closing.send(`${receiver.origin}/after-close`, '{}', {});
    expect(result).toMatchObject({ ok: false, status: null, error: 'the webhook sender is closed (shutting down)' });
    expect(receiver.requests.map((r) => r.path)).not.toContain('/after-close');
  });

  it('refuses plain http', async () => {
    const result = await sender.send(`http://localhost:${receiver.port}/plain`, '{}', {});
    expect(result).toMatchObject({ ok: false, error: 'only https:// receivers are allowed' });
  });
});
