import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import {
  BROWSER_TEST_TIMEOUT_MS,
  describeInBrowser,
  launchChromium,
  openPage,
  pageWidths,
  startServer,
  watchPage,
} from '../helpers/browser/browser.ts';
import type { TestApp } from '../helpers/app/test-app.ts';
import type { TestTenant } from '../helpers/app/tenants.ts';

let t: TestApp;
let origin: string;
let browser: Browser;
let tenant: TestTenant;
let tool: { toolId: string; scanToken: string };
const PHONE = { width: 390, height: 844 };

async function phonePage(): Promise<Page> {
  return openPage(browser, { viewport: PHONE, deviceScaleFactor: 3, isMobile: true, hasTouch: true });
}

describeInBrowser('the public scan page on a phone (390x844) in Chromium', () => {
  beforeAll(async () => {
    ({ t, origin } = await startServer());
    tenant = await t.tenant('Northwind Plant Hire & Sons Limited');
    // A long name without a break opportunity: the page must wrap it, not scroll sideways.
    const res = await t.api.post('/api/v1/tools', tenant.key, {
      name: 'HydraulicTorqueWrenchKitWithExtraLongReactionArmXL2000',
      category: 'Power tools',
      serial: 'SN-PRIVATE-4471',
      notes: 'kept in the locked cage, code 4471',
    });
    expect(res.statusCode).toBe(201);
    tool = res.json();
    expect(
      (await t.api.post(`/api/v1/tools/${tool.toolId}/report`, tenant.key, { description: 'Anvil cracked' }))
        .statusCode,
    ).toBe(200);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it(
    "shows the tool's name, status and organisation, fits the width, and shows nothing sensitive",
    async () => {
      const page = await phonePage();
      const watch = await watchPage(page);
      const response = await page.goto(`${origin}/scan/${tool.scanToken}`);
      expect(response?.status()).toBe(200);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe(
        'HydraulicTorqueWrenchKitWithExtraLongReactionArmXL2000',
      );
      const text = await page.locator('body').innerText();
      expect(text).toContain('Broken');
      expect(text).toContain('Northwind Plant Hire & Sons Limited');

      const width = await pageWidths(page);
      expect(width.client).toBe(PHONE.width);
      expect(width.scroll).toBeLessThanOrEqual(width.client);

      const html = await page.content();
      for (const secret of [
        tool.toolId,
        tenant.orgId,
        tenant.slug,
        tenant.userId,
        tenant.email,
        tenant.key,
        tenant.keyId,
      ]) {
        expect(html).not.toContain(secret);
      }
      for (const privateField of ['SN-PRIVATE-4471', 'locked cage', 'Anvil cracked'])
        expect(html).not.toContain(privateField);
      expect(html).not.toMatch(/[\w.+-]+@[\w-]+\.[\w.]+/);
      expect(watch.requests.every((url) => new URL(url).origin === origin)).toBe(true);
      await page.close();
    },
    BROWSER_TEST_TIMEOUT_MS,
  );

  it(
    'an unknown token shows a friendly 404 page (HTML, status 404) that also fits the width',
    async () => {
      const page = await phonePage();
      const response = await page.goto(`${origin}/scan/no-such-token-123`);
      expect(response?.status()).toBe(404);
      expect(response?.headers()['content-type']).toMatch(/^text\/html/);
      expect(await page.getByRole('heading', { level: 1 }).innerText()).toBe('Label not found');
      expect(await page.locator('body').innerText()).toContain('This tool label is not known');
      const { scroll, client } = await pageWidths(page);
      expect(scroll).toBeLessThanOrEqual(client);
      await page.close();
    },
    BROWSER_TEST_TIMEOUT_MS,
  );
});
