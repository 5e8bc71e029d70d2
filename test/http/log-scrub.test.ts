import { describe, expect, it } from 'vitest';
import { createTestApp } from '../helpers/app/test-app.ts';
import { scrubUrl } from '../../src/logger.ts';

const KEY = 'flt_' + 'a'.repeat(43);

describe('request URLs in logs', () => {
  it('scrubs credentials from query strings and keeps the rest', () => {
    expect(scrubUrl(`/api/v1/assets?api_key=${KEY}&limit=5`)).toBe('/api/v1/assets?api_key=[redacted]&limit=5');
    expect(scrubUrl('/x?token=abc&access_token=d&sig=e&password=f&q=ok')).toBe(
      '/x?token=[redacted]&access_token=[redacted]&sig=[redacted]&password=[redacted]&q=ok',
    );
    expect(scrubUrl(`/x?q=${KEY}`)).toBe('/x?q=[redacted]');
    expect(scrubUrl(`/x/${KEY}`)).toBe('/x/[redacted]');
    expect(scrubUrl('/api/v1/assets?cursor=abc')).toBe('/api/v1/assets?cursor=abc');
  });

  it('never writes a key sent in a query string to the request log', async () => {
    const t = await createTestApp({ LOG_LEVEL: 'info' });
    try {
      const res = await t.api.get(`/api/v1/assets?apiKey=${KEY}&key=${KEY}&x=1`);
      expect(res.statusCode).toBe(401);
      const text = JSON.stringify(t.logs);
      expect(text).toContain('/api/v1/assets?apiKey=[redacted]&key=[redacted]&x=1');
      expect(text).not.toContain(KEY);
    } finally {
      await t.close();
    }
  });
});
