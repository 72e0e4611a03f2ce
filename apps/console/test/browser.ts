import { existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import axe from 'axe-core';
import { type Browser, type BrowserContext, type BrowserContextOptions, chromium, type Page } from 'playwright-core';

/**
 * The browser of the console's tests: Debian's chromium (`apt-get install chromium`; .ci/run
 * installs it when missing) driven by playwright-core, one instance per test file. CHROMIUM_PATH
 * names another binary.
 */
const CANDIDATES = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome', '/usr/bin/google-chrome-stable'];

export function chromiumPath(): string {
  const found = [process.env.CHROMIUM_PATH, ...CANDIDATES].find((p): p is string => Boolean(p) && existsSync(p!));
  if (!found) throw new Error(`No chromium found (looked at ${CANDIDATES.join(', ')}); install it with: apt-get install -y chromium`);
  return found;
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

export const DESKTOP = { width: 1280, height: 800 };
export const PHONE = { width: 390, height: 844 };

/**
 * A page in a browser context of its own (its own cookies: one signed-in person), at desktop
 * size unless `options` say otherwise, with a 15 s default timeout. The context is added to
 * `contexts`, which the test file closes after its tests.
 */
export async function newPageIn(browser: Browser, contexts: BrowserContext[], options: BrowserContextOptions = {}): Promise<Page> {
  const context = await browser.newContext({ viewport: DESKTOP, ...options });
  contexts.push(context);
  const page = await context.newPage();
  page.setDefaultTimeout(15_000);
  return page;
}

/** Waits for the page's level-1 heading: the page named has rendered. */
export async function heading(page: Page, name: string | RegExp): Promise<void> {
  await page.getByRole('heading', { level: 1, name }).waitFor();
}

/**
 * Whether this run takes screenshots: SCREENSHOTS=1 (`npm run docs:screenshots` sets it and runs
 * the files that take them). Without it the tests render, check and assert on every page at the
 * same points and write no picture.
 */
export const TAKE_SCREENSHOTS = process.env.SCREENSHOTS === '1';

/** Where the screenshots go with SCREENSHOTS=1 (the README names it). */
export const SCREENSHOTS = path.resolve(__dirname, '..', '..', '..', 'artifacts', 'screenshots');

/** A full-page screenshot of the page as it is, written to `file`, when the run takes them. */
export async function screenshot(page: Page, file: string): Promise<void> {
  if (!TAKE_SCREENSHOTS) return;
  mkdirSync(path.dirname(file), { recursive: true });
  await page.screenshot({ path: file, fullPage: true });
}

/**
 * Screenshots of the page as it is, at desktop and at phone width, when the run takes them; the
 * page is left at desktop width either way.
 */
export async function screenshots(page: Page, name: string): Promise<void> {
  await page.setViewportSize(DESKTOP);
  if (!TAKE_SCREENSHOTS) return;
  await screenshot(page, path.join(SCREENSHOTS, `${name}-desktop.png`));
  await page.setViewportSize(PHONE);
  await screenshot(page, path.join(SCREENSHOTS, `${name}-phone.png`));
  await page.setViewportSize(DESKTOP);
}

/** Closes the contexts opened so far (their pages stop polling the service) and forgets them. */
export async function closeContexts(contexts: BrowserContext[]): Promise<void> {
  for (const context of contexts.splice(0)) await context.close().catch(() => undefined);
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * axe-core's WCAG 2.1 A and AA rules on the page; the serious and critical violations. axe runs
 * through the DevTools protocol (page.evaluate), which the console's CSP does not apply to.
 */
export async function seriousA11yViolations(page: Page): Promise<AxeViolation[]> {
  // Injected once per document: the console's own navigations keep it, a load starts afresh.
  if (!(await page.evaluate(`typeof window.axe?.run === 'function'`))) await page.evaluate(axe.source);
  // Evaluated in the page (a string: this file is compiled without the DOM's types).
  const results = await page.evaluate<axe.AxeResults>(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })`,
  );
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact ?? null, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
}

/** The accessible names of the visible buttons of the page's main area, table sort buttons left out. */
export async function visibleButtons(page: Page): Promise<string[]> {
  return page.evaluate<string[]>(`[...document.querySelectorAll('main button, main [role="button"]')]
    .filter((b) => b.offsetParent !== null && !b.closest('th') && !b.closest('dialog'))
    .map((b) => (b.getAttribute('aria-label') ?? b.textContent ?? '').trim())`);
}
