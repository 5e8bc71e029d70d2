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
import { EVENT_TYPES } from '../../src/events/catalog.ts';
import { parseYaml } from '../helpers/contracts/yaml-document.ts';

let t: TestApp;
let origin: string;
let browser: Browser;
let tenant: TestTenant;
// The reference is loaded once for the tests that read it: rendering the whole document is most of a browser
// test's CPU, and a loaded machine is when the suite needs it least.
let reference: Page;
let referenceWatch: Awaited<ReturnType<typeof watchPage>>;

/** Every request is to the page's own origin; and no CSP violation names an external URL. */
async function expectOnlySameOrigin(page: Page, watch: Awaited<ReturnType<typeof watchPage>>) {
  const external = watch.requests.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin);
  expect(external).toEqual([]);
  // The bundle's schema validator tries new Function(); the policy refuses it (no 'unsafe-eval') and the
  // reference renders without it. Anything with a URL would be an attempted external load.
  const violations = (await watch.cspViolations()).filter((v) => !/ (eval|inline)$/.test(v));
  expect(violations).toEqual([]);
}

describeInBrowser('/docs in Chromium', () => {
  beforeAll(async () => {
    ({ t, origin } = await startServer());
    tenant = await t.tenant('Docs Org');
    browser = await launchChromium();
    reference = await openPage(browser, { viewport: { width: 1280, height: 900 } });
    referenceWatch = await watchPage(reference);
  });
  afterAll(async () => {
    await reference?.close();
    await browser?.close();
    await t?.close();
  });

  it(
    'renders every tag of openapi.yaml, an operation with its request body and responses, and stays on the origin',
    async () => {
      const spec = parseYaml(await (await fetch(`${origin}/openapi.yaml`)).text()) as {
        paths: Record<string, Record<string, { tags?: string[] }>>;
      };
      const tags = [
        ...new Set(Object.values(spec.paths).flatMap((ops) => Object.values(ops).flatMap((op) => op.tags ?? []))),
      ];
      expect(tags.length).toBeGreaterThan(5);

      const page = reference;
      const response = await page.goto(`${origin}/docs`);
      expect(response?.status()).toBe(200);
      expect(response?.headers()['content-security-policy']).toContain("default-src 'self'");
      await page.getByRole('heading', { name: 'Fleet Operations API', level: 1 }).waitFor();

      const headings = await page.locator('h2').allInnerTexts();
      const shown = headings.map((h) => h.replace(/\(Collapsed\)/, '').trim());
      for (const tag of tags) expect(shown, `tag ${tag}`).toContain(tag);

      // One operation: POST /api/v1/assets with its body fields and its responses.
      await page
        .getByRole('button', { name: /^assets/ })
        .first()
        .click();
      const operation = page.locator('section[id$="tag/assets/POST/api/v1/assets"]');
      await operation.waitFor();
      const text = await operation.innerText();
      expect(text).toContain('Create an asset');
      expect(text).toMatch(/Body\s+required\s+application\/json/);
      for (const field of ['assetClass', 'nickname', 'meterType']) expect(text).toContain(field);
      expect(text).toMatch(/Responses[\s\S]*201[\s\S]*422/);

      await expectOnlySameOrigin(page, referenceWatch);
    },
    BROWSER_TEST_TIMEOUT_MS,
  );

  it(
    "try-it sends the key as Authorization: Bearer to this service and shows the service's answer",
    async () => {
      // The reference the test above loaded (loaded here when this test runs alone).
      const page = reference;
      if (!page.url().startsWith(`${origin}/docs`)) await page.goto(`${origin}/docs`);
      await page.getByRole('heading', { name: 'Fleet Operations API', level: 1 }).waitFor();
      await page.getByPlaceholder('Token').first().fill(tenant.key);

      const meSection = page.locator('section[id$="tag/meta/GET/api/v1/me"]');
      await meSection.scrollIntoViewIfNeeded();
      await meSection.getByRole('button', { name: /Test Request/ }).click();
      const sent = page.waitForRequest((r) => r.url() === `${origin}/api/v1/me`);
      await page.getByRole('button', { name: /^Send/ }).first().click();
      const request = await sent;
      expect(request.headers().authorization).toBe(`Bearer ${tenant.key}`);
      const answer = await request.response();
      expect(answer?.status()).toBe(200);
      await page.getByText(tenant.orgId).first().waitFor();

      await expectOnlySameOrigin(page, referenceWatch);
    },
    BROWSER_TEST_TIMEOUT_MS,
  );

  it(
    'the webhooks page lists every event of the catalog, with its schema and example, linked from /docs',
    async () => {
      const page = await openPage(browser, { viewport: { width: 1280, height: 900 } });
      const watch = await watchPage(page);
      // The header is the server's HTML: the link is followed as soon as it is there, not after the reference has
      // rendered (which the tests above cover).
      await page.goto(`${origin}/docs`, { waitUntil: 'commit' });
      await page.locator('header.docs-top').getByRole('link', { name: 'Webhooks' }).click();
      await page.waitForURL(`${origin}/docs/webhooks`);
      expect(await page.getByRole('heading', { name: 'Webhooks', level: 1 }).count()).toBe(1);
      const eventHeadings = await page.locator('section.event h3').allInnerTexts();
      expect(eventHeadings).toEqual(EVENT_TYPES);
      for (const name of ['Node.js', 'Python', 'Shell: openssl']) {
        expect(await page.getByRole('heading', { name, level: 3 }).count()).toBe(1);
      }
      const first = page.locator('section.event').first();
      expect(await first.locator('table td code').count()).toBeGreaterThan(3);
      expect(await first.locator('pre').last().innerText()).toContain(`"event": "${EVENT_TYPES[0]}"`);
      expect(await page.locator('section.event details').count()).toBe(EVENT_TYPES.length);
      // On a phone, wide code and tables scroll inside their boxes; the page itself does not scroll sideways.
      await page.setViewportSize({ width: 390, height: 844 });
      const { scroll, client } = await pageWidths(page);
      expect(scroll).toBeLessThanOrEqual(client);
      await expectOnlySameOrigin(page, watch);
      await page.close();
    },
    BROWSER_TEST_TIMEOUT_MS,
  );
});
