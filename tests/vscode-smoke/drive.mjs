// Drives code-server in headless Chromium: opens FILE with Ctrl+P, waits for an error squiggle,
// reads the Problems panel and the LARK status-bar item, saves a screenshot. Started by run.sh.
//
// Env: PLAYWRIGHT_DIR (where playwright-core is installed), CHROMIUM, URL, FILE, OUT, TIMEOUT_S.
// Exit: 0 when a race diagnostic is in the Problems panel, 1 when not, 3 on a driver error.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

const env = (name, fallback) => {
  const v = process.env[name] ?? fallback;
  if (v === undefined) throw new Error(`${name} is not set`);
  return v;
};
const out = env('OUT');
const file = env('FILE');
const url = env('URL');
const timeoutMs = Number(env('TIMEOUT_S', '120')) * 1000;
const { chromium } = createRequire(path.join(env('PLAYWRIGHT_DIR'), 'package.json'))('playwright-core');

const started = Date.now();
const say = (msg) => console.log(`[drive ${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);
const hardStop = setTimeout(() => {
  console.error('[drive] gave up: overall time limit reached');
  process.exit(3);
}, timeoutMs + 180_000);

/** Messages of the notification toasts now on screen. */
function notificationTexts(page) {
  return page.$$eval('.notifications-toasts .notification-list-item-message', (items) =>
    [...new Set(items.map((i) => (i.innerText ?? '').trim()).filter((t) => t !== ''))],
  );
}

/** Runs "LARK: Show Lifted Model of Current File" from the palette; returns the opened text. */
async function showModel(page) {
  await page.locator('.tabs-container .tab', { hasText: file }).first().click();
  await page.keyboard.press('F1');
  const input = page.locator('.quick-input-widget input[type="text"], .quick-input-widget .quick-input-box input').first();
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill('>LARK: Show Lifted Model');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Show Lifted Model' }).first().waitFor({ timeout: 10_000 });
  await page.keyboard.press('Enter');
  const tab = page.locator('.tabs-container .tab', { hasText: '.model.txt' }).first();
  try {
    await tab.waitFor({ timeout: 20_000 });
  } catch {
    return { error: 'no model document opened', notifications: await notificationTexts(page) };
  }
  await page.waitForTimeout(500);
  const text = await page.$$eval('.editor-group-container.active .monaco-editor .view-lines', (els) => els.map((e) => e.innerText).join('\n'));
  await page.screenshot({ path: path.join(out, 'model.png') });
  return { tab: ((await tab.textContent()) ?? '').trim(), text: text.slice(0, 2000) };
}

const browser = await chromium.launch({
  executablePath: env('CHROMIUM', '/usr/bin/chromium'),
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', '--disable-sync', '--disable-quic', '--disable-dev-shm-usage'],
});
const consoleLines = [];
const result = { url, file, squiggles: 0, problems: [], statusBar: [], notifications: [], race: false, model: null, error: null };

try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.on('console', (m) => consoleLines.push(`[${m.type()}] ${m.text()}`));
  page.on('pageerror', (e) => consoleLines.push(`[pageerror] ${e.message}`));

  say(`opening ${url}`);
  await page.goto(url, { waitUntil: 'domcontentloaded', timeout: 60_000 });
  await page.waitForSelector('.monaco-workbench .part.statusbar', { timeout: 90_000 });
  await page.waitForSelector('.explorer-folders-view .monaco-list-row, .monaco-workbench .part.editor', { timeout: 60_000 });
  await page.waitForTimeout(1500); // let the workbench finish restoring before sending keys

  say(`Ctrl+P ${file}`);
  const quickInput = page.locator('.quick-input-widget input[type="text"], .quick-input-widget .quick-input-box input').first();
  for (let attempt = 1; ; attempt++) {
    await page.locator('.monaco-workbench').first().click({ position: { x: 700, y: 400 } }).catch(() => {});
    await page.keyboard.press('Control+P');
    try {
      await quickInput.waitFor({ state: 'visible', timeout: 5000 });
      break;
    } catch (e) {
      if (attempt >= 5) throw new Error(`quick open did not appear: ${e.message}`);
    }
  }
  await quickInput.fill(file);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: file }).first().waitFor({ timeout: 30_000 });
  await page.keyboard.press('Enter');
  await page.locator('.tabs-container .tab', { hasText: file }).first().waitFor({ timeout: 30_000 });
  say('file open; waiting for .squiggly-error');

  try {
    await page.waitForSelector('.squiggly-error', { timeout: timeoutMs });
    say('error squiggle shown');
  } catch {
    say(`no .squiggly-error within ${timeoutMs / 1000}s`);
  }
  result.squiggles = await page.locator('.squiggly-error').count();

  // Problems panel
  await page.keyboard.press('Control+Shift+M');
  try {
    await page.waitForSelector('.markers-panel .monaco-list-row', { timeout: result.squiggles > 0 ? 15_000 : 3000 });
  } catch {
    // no rows: reported below
  }
  await page.waitForTimeout(500);
  result.problems = await page.$$eval('.markers-panel .monaco-list-row', (rows) =>
    rows.map((r) => ({ label: r.getAttribute('aria-label') ?? '', text: (r.textContent ?? '').trim() })),
  );
  result.statusBar = await page.$$eval('.part.statusbar .statusbar-item', (items) =>
    items
      .map((i) => ({ id: i.id, text: (i.textContent ?? '').trim(), label: i.getAttribute('aria-label') ?? '' }))
      .filter((i) => /lark/i.test(`${i.id} ${i.text} ${i.label}`)),
  );
  result.notifications = await notificationTexts(page);
  result.race = result.problems.some((p) => /\brace\b/i.test(`${p.label} ${p.text}`));

  await page.screenshot({ path: path.join(out, 'screenshot.png') });
  say(`screenshot saved; ${result.problems.length} problem row(s), race: ${result.race}`);

  // Informational (does not decide the exit status): the palette command that shows the model.
  result.model = await showModel(page).catch((e) => ({ error: e instanceof Error ? e.message : String(e) }));
  say(`show model: ${JSON.stringify(result.model).slice(0, 160)}`);
} catch (e) {
  result.error = e instanceof Error ? e.stack ?? e.message : String(e);
  console.error(`[drive] ${result.error}`);
  try {
    const pages = browser.contexts().flatMap((c) => c.pages());
    if (pages[0]) await pages[0].screenshot({ path: path.join(out, 'screenshot.png') });
  } catch {
    // no screenshot possible
  }
} finally {
  fs.writeFileSync(path.join(out, 'problems.json'), `${JSON.stringify(result, null, 2)}\n`);
  fs.writeFileSync(path.join(out, 'browser-console.log'), `${consoleLines.join('\n')}\n`);
  await browser.close().catch(() => {});
  clearTimeout(hardStop);
}

for (const p of result.problems) console.log(`  problem: ${p.label || p.text}`);
for (const s of result.statusBar) console.log(`  status bar: ${s.text || s.label}`);
for (const n of result.notifications) console.log(`  notification: ${n}`);
if (result.error) process.exit(3);
if (!result.race) {
  console.error('vscode-smoke: FAIL: no race diagnostic in the Problems panel');
  process.exit(1);
}
console.log('vscode-smoke: OK: race diagnostic shown');
