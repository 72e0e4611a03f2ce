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

/** Where the screenshots go (CI keeps this folder as an artifact; the README names it). */
export const SCREENSHOTS = path.resolve(__dirname, '..', '..', '..', 'artifacts', 'screenshots');

/** Screenshots of the page as it is, at desktop and at phone width; the page is left at desktop width. */
export async function screenshots(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.setViewportSize(DESKTOP);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-desktop.png`), fullPage: true });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}-phone.png`), fullPage: true });
  await page.setViewportSize(DESKTOP);
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
  await page.evaluate(axe.source);
  // Evaluated in the page (a string: this file is compiled without the DOM's types).
  const results = (await page.evaluate(
    `axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] } })`,
  )) as axe.AxeResults;
  return results.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => ({ id: v.id, impact: v.impact ?? null, help: v.help, nodes: v.nodes.map((n) => n.target.join(' ')) }));
}

/** The accessible names of the visible buttons of the page's main area, table sort buttons left out. */
export async function visibleButtons(page: Page): Promise<string[]> {
  return (await page.evaluate(`[...document.querySelectorAll('main button, main [role="button"]')]
    .filter((b) => b.offsetParent !== null && !b.closest('th') && !b.closest('dialog'))
    .map((b) => (b.getAttribute('aria-label') ?? b.textContent ?? '').trim())`)) as string[];
}
