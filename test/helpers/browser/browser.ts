import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { describe } from 'vitest';
import { createTestApp, type TestApp } from '../app/test-app.ts';
import { CHROMIUM_PATH, inCI } from '../run/test-env.ts';

/**
 * Browser tests drive Debian's Chromium (package `chromium`) through playwright-core: no browser download.
 * Flags: this machine runs as root in a container without a GPU, and a test must not reach the internet.
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
];
const hasChromium = existsSync(CHROMIUM_PATH);

/**
 * describe() for browser tests. Without Chromium they are skipped with a message locally; under CI they run
 * and fail at launch, because CI (.ci/run) installs Chromium and must never pass by skipping them.
 */
export function describeInBrowser(name: string, body: () => void): void {
  if (!hasChromium && !inCI) {
    console.warn(
      `[browser tests] "${name}" SKIPPED: no Chromium at ${CHROMIUM_PATH}. Install it with ` +
        '`apt-get update && apt-get install -y chromium` (.ci/run does this in CI, where these tests never skip).',
    );
    describe.skip(name, body);
    return;
  }
  describe(name, body);
}

/**
 * Time a browser test may take: the reference parses a 3.5 MB bundle and the whole openapi.yaml, and CI runs
 * these files beside the rest of the suite on two cores (load average above 10 measured). Waits inside a test use
 * the page default below; vitest's per-test limit must exceed the sum of a test's waits.
 */
export const BROWSER_TEST_TIMEOUT_MS = 180_000;
export const BROWSER_WAIT_MS = 90_000;

export async function launchChromium(): Promise<Browser> {
  if (!hasChromium) {
    throw new Error(
      `Chromium is required here (CI is set) but ${CHROMIUM_PATH} is missing: .ci/run installs it ` +
        'with `apt-get install -y chromium`; check that step.',
    );
  }
  return chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS, timeout: 60_000 });
}

/** A page whose waits (navigation, locators) allow for a loaded machine. */
export async function openPage(browser: Browser, options: Parameters<Browser['newPage']>[0] = {}): Promise<Page> {
  const page = await browser.newPage(options);
  page.setDefaultTimeout(BROWSER_WAIT_MS);
  page.setDefaultNavigationTimeout(BROWSER_WAIT_MS);
  return page;
}

/** A test app listening on a loopback port, for a real browser. */
export async function startServer(env: Record<string, string> = {}): Promise<{ t: TestApp; origin: string }> {
  const t = await createTestApp(env);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const address = t.app.server.address();
  if (!address || typeof address === 'string') throw new Error('the test server has no TCP address');
  return { t, origin: `http://127.0.0.1:${address.port}` };
}

/**
 * Records every request the page makes and every Content-Security-Policy violation it reports (a request the
 * policy blocked may never reach the network, so both are checked).
 */
export async function watchPage(page: Page) {
  const requests: string[] = [];
  page.on('request', (request) => requests.push(request.url()));
  // Page-side code as text: this project's TypeScript has no DOM types.
  await page.addInitScript(
    "window.__cspViolations = []; document.addEventListener('securitypolicyviolation', " +
      "(e) => window.__cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));",
  );
  return {
    requests,
    cspViolations: () => page.evaluate('window.__cspViolations') as Promise<string[]>,
  };
}

/** The document's scroll width and client width (no horizontal scroll when scroll <= client). */
export async function pageWidths(page: Page): Promise<{ scroll: number; client: number }> {
  return (await page.evaluate(
    '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
  )) as { scroll: number; client: number };
}
