import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../fakes/cli.js';
import { CLI, REPO_ROOT, tempWorkspace } from '../fakes/fixtures.js';

// Issue 29: `maestro ui` in a real browser (Debian's chromium, driven by playwright-core). One
// browser for the whole file. CI installs chromium (.ci/run) and sets MAESTRO_BROWSER_TESTS, so
// there the tests cannot be skipped; elsewhere they run when chromium is installed.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const required = process.env.MAESTRO_BROWSER_TESTS === '1';
const runnable = required || existsSync(CHROMIUM);
const GITHUB_TOKEN = `ghp_${'Z9y8X7w6V5u4T3s2R1q0P9o8N7m6L5k4J3i2'}`;

let ws: Awaited<ReturnType<typeof tempWorkspace>>;
let browser: Browser;
let ui: ChildProcess;
let base = '';
let printed = '';
const ids = { secret: '', done: '', paused: '', stale: '', budget: '', stopme: '', manyA: '', manyB: '' };

async function runCommand(name: string, command: Record<string, unknown>, env: NodeJS.ProcessEnv = {}): Promise<string> {
  await writeFile(path.join(ws.dir, name), JSON.stringify(command));
  const r = await runCli(['run', name, '--json'], { cwd: ws.dir, env });
  return JSON.parse(r.stdout.trim().split('\n').at(-1) ?? '{}').run_id as string;
}

/** Starts `maestro ui` as a user would, and returns the address it prints. */
function startUi(): Promise<{ url: string; child: ChildProcess }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'ui', '--workspace', ws.dir], {
      // Each model call the console makes (a run it carries on) takes a while, so a page sees it going on.
      env: { ...process.env, NO_COLOR: '1', MAESTRO_OFFLINE_DELAY_MS: '300' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const url = /http:\/\/127\.0\.0\.1:\d+\/#token=\S+/.exec(out)?.[0];
      if (url) resolve({ url, child });
    });
    child.stderr?.on('data', (d: Buffer) => process.stderr.write(d));
    child.on('exit', (code) => reject(new Error(`maestro ui exited (${code}): ${out}`)));
  });
}

/** Opens a page of the console in the signed-in tab, and waits until the tab's script has shown it. */
async function open(page: Page, p: string): Promise<void> {
  await page.goto(`${base}${p}`);
  await shown(page, p);
}

/** Waits until a tab's script has shown this page (`sign-in` for the sign-in page). */
async function shown(tab: Page, p: string): Promise<void> {
  await tab.waitForSelector(`html[data-shown=${JSON.stringify(p)}]`, { state: 'attached' });
}

const ambiguous = (n: number) => ({ task_description: `The requirements are unclear: choose the message queue for billing ${n}` });

describe.skipIf(!runnable)('maestro ui in a browser', () => {
  let page: Page;

  beforeAll(async () => {
    ws = await tempWorkspace();
    ids.secret = await runCommand('secret.json', { task_description: `Choose the queue. Deploy key ${GITHUB_TOKEN}` });
    ids.done = await runCommand('clear.json', { task_description: 'Choose the message queue for billing', config: { mode: 'parallel' } });
    ids.paused = await runCommand('ambiguous.json', ambiguous(1));
    ids.stale = await runCommand('ambiguous2.json', ambiguous(2));
    ids.stopme = await runCommand('ambiguous3.json', ambiguous(3));
    ids.manyA = await runCommand('ambiguous4.json', ambiguous(4));
    ids.manyB = await runCommand('ambiguous5.json', ambiguous(5));
    ids.budget = await runCommand('budget.json', {
      task_description: 'Pick a cache for the session store',
      config: { budget: { max_calls: 2 } },
    });
    const started = await startUi();
    ui = started.child;
    const url = started.url;
    printed = new URL(url).hash.replace('#token=', '');
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    page = await (await browser.newContext({ viewport: { width: 1280, height: 860 }, timezoneId: 'UTC' })).newPage();
    await page.goto(url);
    base = new URL(url).origin;
  }, 90_000);

  afterAll(async () => {
    await browser?.close();
    ui?.kill('SIGTERM');
    await ws?.cleanup();
  });

  it('lists the runs (the token left the address) and opens one, with its heat map and a verified audit chain', async () => {
    await shown(page, '/runs');
    expect(page.url()).toBe(`${base}/runs`);
    await expect.poll(() => page.locator('table.runs tbody tr').count()).toBe(8);
    await page.click(`a[href="/runs/${ids.done}"]`);
    await page.waitForURL(`${base}/runs/${ids.done}`);
    expect(await page.locator('.chain.ok').textContent()).toContain('The audit chain verifies');
    // The heat map is drawn once the browser has loaded it: wait for that, not for the page alone.
    const drawn = () =>
      page.locator('.artifact img').evaluate((img) => {
        const image = img as unknown as { complete: boolean; naturalWidth: number };
        return image.complete && image.naturalWidth > 0;
      });
    await expect.poll(drawn, { timeout: 10_000 }).toBe(true);
    await open(page, '/runs');
    await page.locator('select[name=status]').selectOption('paused');
    await page.click('form.filter button');
    await page.waitForURL(`${base}/runs?status=paused&tz=0`);
    expect(await page.locator('table.runs tbody tr').count()).toBe(6);
  });

  it('fits a phone (390 px): no page scrolls sideways, buttons say what they act on, text meets contrast minimums', async () => {
    const phone = await browser.newContext({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true, timezoneId: 'UTC' });
    try {
      const tab = await phone.newPage();
      await tab.goto(`${base}/runs`);
      await shown(tab, 'sign-in');
      const pages = [
        '/runs',
        '/runs?status=paused&tz=0',
        '/decisions',
        '/queue',
        '/live',
        ...Object.values(ids).map((id) => `/runs/${id}`),
      ];
      const widths: Record<string, number> = {};
      widths['sign-in'] = await tab.evaluate(
        () => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth,
      );
      await tab.goto(`${base}/#token=${printed}`);
      await shown(tab, '/runs');
      for (const p of pages) {
        await tab.goto(`${base}${p}`);
        await shown(tab, p);
        widths[p] = await tab.evaluate(
          () => (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document.documentElement.scrollWidth,
        );
      }
      for (const [p, width] of Object.entries(widths)) expect(width, p).toBeLessThanOrEqual(390);
      // The heat map keeps a legible size: it scrolls inside its own box, not the page.
      await tab.goto(`${base}/runs/${ids.done}`);
      await shown(tab, `/runs/${ids.done}`);
      expect((await tab.locator('.artifact img').boundingBox())?.width).toBe(560);
      // Every button on the Decisions page has a name of its own.
      await tab.goto(`${base}/decisions`);
      await shown(tab, '/decisions');
      const names = await tab
        .locator('main button')
        .evaluateAll((buttons) =>
          buttons.map(
            (b) =>
              (b as unknown as { getAttribute(n: string): string | null; textContent: string }).getAttribute('aria-label') ??
              b.textContent.trim(),
          ),
        );
      expect(names.length).toBeGreaterThan(4);
      expect(new Set(names).size).toBe(names.length);
      expect(names).toContain(`Continue run ${ids.paused}`);
      // Status badges, buttons and links: their text against what is behind it, at least 4.5:1.
      await tab.goto(`${base}/runs`);
      await shown(tab, '/runs');
      const ratios = await tab.locator('main .badge, main a, main button, header a').evaluateAll((els) => {
        type El = { parentElement: El | null; textContent: string };
        const view = globalThis as unknown as { getComputedStyle(e: El): { color: string; backgroundColor: string } };
        const rgb = (c: string) => (c.match(/[\d.]+/g) ?? []).map(Number);
        const lum = (c: number[]) => {
          const [r, g, b] = c.slice(0, 3).map((v) => {
            const x = v / 255;
            return x <= 0.03928 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
          }) as [number, number, number];
          return 0.2126 * r + 0.7152 * g + 0.0722 * b;
        };
        const behind = (e: El | null): number[] => {
          for (let at = e; at; at = at.parentElement) {
            const bg = rgb(view.getComputedStyle(at).backgroundColor);
            if (bg.length === 3 || (bg[3] ?? 0) > 0) return bg;
          }
          return [255, 255, 255];
        };
        return els.map((e) => {
          const el = e as unknown as El;
          const [a, b] = [lum(rgb(view.getComputedStyle(el).color)), lum(behind(el))];
          return { text: el.textContent.trim().slice(0, 30), ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) };
        });
      });
      expect(ratios.length).toBeGreaterThan(10);
      for (const r of ratios) expect(r.ratio, r.text).toBeGreaterThanOrEqual(4.5);
    } finally {
      await phone.close();
    }
  }, 120_000);

  it('keeps its sign-in from every other port of this machine, and lets two consoles live side by side in one browser', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const other = http.createServer((req, res) => {
      seen.push(req.headers);
      res.setHeader('content-type', 'text/html');
      res.end('<!doctype html><p>another local service</p>');
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const second = await startUi();
    try {
      // The signed-in tab visits another port of the same host: it sends nothing of the console.
      await page.goto(`http://127.0.0.1:${(other.address() as AddressInfo).port}/`);
      expect(seen.length).toBeGreaterThan(0);
      for (const headers of seen) {
        expect(headers.cookie).toBeUndefined();
        expect(headers.authorization).toBeUndefined();
      }
      const stored = await page.evaluate(() =>
        (globalThis as unknown as { sessionStorage: { getItem(k: string): string | null } }).sessionStorage.getItem('maestro-ui-session'),
      );
      expect(stored).toBeNull();
      const replayed = await fetch(`${base}/runs`, { headers: { cookie: seen[0]?.cookie ?? '' } });
      expect(replayed.status).toBe(401);
      // A second console, signed in in another tab of the same browser, signs nobody out.
      const tab = await page.context().newPage();
      await tab.goto(second.url);
      await shown(tab, '/runs');
      await open(page, '/decisions');
      await tab.reload();
      await shown(tab, '/runs');
      await tab.close();
    } finally {
      second.child.kill('SIGTERM');
      other.close();
    }
  });

  it('signs in a tab opened on its own with the token typed in, and a new tab of a signed-in one by asking it', async () => {
    const fresh = await browser.newContext();
    try {
      const tab = await fresh.newPage();
      await tab.goto(`${base}/decisions`);
      await shown(tab, 'sign-in');
      expect(await tab.locator('main').textContent()).not.toContain(ids.paused);
      await tab.fill('#sign-in input[name=token]', 'not-the-token-0123456789abcdef');
      await tab.click('#sign-in button');
      await tab.locator('#sign-in-problem').waitFor();
      await tab.fill('#sign-in input[name=token]', printed);
      await tab.click('#sign-in button');
      await shown(tab, '/decisions');
      expect(tab.url()).toBe(`${base}/decisions`);
    } finally {
      await fresh.close();
    }
    // Signed in at once, while the page still asks other tabs for a session: the sign-in stays.
    const quick = await browser.newContext();
    try {
      const tab = await quick.newPage();
      await tab.goto(`${base}/decisions`);
      await tab.fill('#sign-in input[name=token]', printed);
      await tab.click('#sign-in button');
      await shown(tab, '/decisions');
      await tab.waitForTimeout(600);
      expect(await tab.evaluate('Object.keys(sessionStorage).length')).toBe(1);
      expect(await tab.locator('main').textContent()).toContain(ids.paused);
    } finally {
      await quick.close();
    }
    const sibling = await page.context().newPage();
    await sibling.goto(`${base}/queue`);
    await shown(sibling, '/queue');
    await sibling.close();
  });

  it('watches a live run arrive, step by step, until it completes', async () => {
    await open(page, '/live');
    await page.locator('#live-state', { hasText: 'Watching' }).waitFor();
    await writeFile(path.join(ws.dir, 'live.json'), JSON.stringify({ task_description: 'Pick a cache for the session store' }));
    // Each model call takes a while, so the page sees the council at work, not only its end. The run is
    // in this process (`main(argv, io)`), not the console's: what the console sees of it is the same.
    const running = runCli(['run', 'live.json', '--json'], { cwd: ws.dir, env: { MAESTRO_OFFLINE_DELAY_MS: '300' } });
    // Its card shows the task and each reply rendered (Markdown), while it works.
    const card = page.locator('section.live-run', { hasText: 'Pick a cache for the session store' });
    await card.locator('.live-step:nth-of-type(3) .reply').waitFor({ timeout: 20_000 });
    expect(await card.locator('.live-step .reply p').count()).toBeGreaterThan(0);
    // Read while the card is there: once the run ends, its card goes.
    const shownRun = await card.getAttribute('data-run');
    const id = JSON.parse((await running).stdout).run_id as string;
    expect(shownRun).toBe(id);
    // Once it has ended its card goes: it is named under "Just now", and cards never pile up.
    await page.locator(`#live-ended li[data-run="${id}"][data-status="completed"]`).waitFor({ timeout: 20_000 });
    expect(await page.locator(`section.live-run[data-run="${id}"]`).count()).toBe(0);
  });

  it('shows times in the viewer’s time zone', async () => {
    const far = await browser.newContext({ timezoneId: 'Pacific/Kiritimati', locale: 'en-US' });
    try {
      const tab = await far.newPage();
      await tab.goto(`${base}/#token=${printed}`);
      await shown(tab, '/runs');
      const time = tab.locator('table.runs time').first();
      const iso = (await time.getAttribute('datetime')) as string;
      const expected = new Date(iso).toLocaleString('en-US', { timeZone: 'Pacific/Kiritimati', dateStyle: 'medium', timeStyle: 'medium' });
      expect(await time.textContent()).toBe(expected);
      expect(await tab.inputValue('.filter input[name=tz]')).toBe('-840');
    } finally {
      await far.close();
    }
  });

  it('decides a pause with a note, and the decision is in `maestro audit show`', async () => {
    await open(page, '/decisions');
    const card = page.locator(`article.paused[data-run="${ids.paused}"]`);
    await card.locator('.decide-form textarea[name=note]').fill('the budget owner approved it');
    // The README's picture of the console: `MAESTRO_UI_SCREENSHOT=docs/ui.png npx vitest run tests/cli/ui.browser.test.ts`.
    const shot = process.env.MAESTRO_UI_SCREENSHOT;
    if (shot) {
      await card.evaluate((e) => (e as unknown as { scrollIntoView(): void }).scrollIntoView());
      await page.screenshot({ path: path.resolve(REPO_ROOT, shot) });
    }
    await card.locator('button[value=continue]').click();
    await page.waitForURL(`${base}/runs/${ids.paused}?done=continue-console`);
    expect(await page.locator('.notice.ok').textContent()).toContain('This console carries the run on');
    // No watcher runs: the console carries the decision through, and the page shows the run end.
    await page.locator('h1 .badge.s-completed').waitFor({ timeout: 20_000 });
    expect(await page.locator('main').textContent()).not.toContain('maestro run --resume');
    expect(await page.locator('.decided .author').first().textContent()).toBe(
      `${os.userInfo().username} via the console from ${os.hostname()}`,
    );
    const audit = await runCli(['audit', 'show', ids.paused], { cwd: ws.dir });
    expect(audit.stdout).toMatch(/HITL_CONTINUE by USER · HITL_DECIDED/);
    expect(audit.stdout).toContain('RUN_COMPLETED');
  });

  it('carries a continued run on with no watcher: its page shows each step going on, then how it ends', async () => {
    await open(page, '/decisions');
    await page.locator(`article.paused[data-run="${ids.budget}"] button[value=continue]`).click();
    await page.waitForURL(`${base}/runs/${ids.budget}?done=continue-console`);
    const follow = page.locator(`section.follow[data-follow="${ids.budget}"]`);
    await follow.locator('.live-step').first().waitFor({ timeout: 20_000 });
    await page.locator('h1 .badge.s-completed').waitFor({ timeout: 30_000 });
    expect(await page.locator('section.follow').count()).toBe(0);
    expect(await page.locator('.artifact').textContent()).toContain('Pick a cache');
  });

  it('refuses a decision from a stale page: the pause it showed was decided meanwhile', async () => {
    await open(page, '/decisions');
    const card = page.locator(`article.paused[data-run="${ids.stale}"]`);
    await card.waitFor();
    await card.locator('.decide-form textarea[name=note]').fill('the owner said yes on the phone');
    const decided = await runCli(['hitl', 'decide', ids.stale, 'stop'], { cwd: ws.dir });
    expect(decided.code, decided.stderr).toBe(4); // stopped by a person
    await card.locator('button[value=continue]').click();
    const alert = page.locator('.notice.refused');
    await alert.waitFor();
    expect(await alert.textContent()).toMatch(
      /via the CLI on .* decided this pause first \(stop, at .*\)\. Your decision was not recorded\./,
    );
    // What the loser typed is still there to copy.
    expect(await page.inputValue('.kept-note textarea')).toBe('the owner said yes on the phone');
    const audit = await runCli(['audit', 'show', ids.stale], { cwd: ws.dir });
    expect(audit.stdout).not.toContain('HITL_CONTINUE');
  });

  it('asks why before it stops a run, then offers the next pause waiting', async () => {
    await open(page, '/decisions');
    const card = page.locator(`article.paused[data-run="${ids.stopme}"]`);
    await card.locator('.stop-box summary').click();
    await card.locator('button[value=stop]').click();
    // The reason is required: nothing was sent.
    expect(page.url()).toBe(`${base}/decisions`);
    expect((await runCli(['hitl', 'show', ids.stopme, '--json'], { cwd: ws.dir })).stdout).toContain('"status": "paused"');
    await card.locator('.stop-form textarea[name=note]').fill('the vendor is out of the running');
    await card.locator('button[value=stop]').click();
    await page.waitForURL(`${base}/runs/${ids.stopme}?done=stop`);
    await page.locator('h1 .badge.s-stopped').waitFor();
    expect(await page.locator('.next-pause').textContent()).toMatch(/Next waiting for a person|No other run waits/);
    expect(await page.locator('.decided').first().textContent()).toContain('the vendor is out of the running');
  });

  it('decides a selection at once: every run paused for one reason, one note, and lists what came of each', async () => {
    await open(page, '/decisions');
    const reason = (await page.locator(`article.paused[data-run="${ids.manyA}"] .decide code`).first().textContent()) ?? '';
    await page.click(`.decide-many a[href="/decisions?select=${reason}"]`);
    await shown(page, `/decisions?select=${reason}`);
    expect(await page.locator(`article.paused[data-run="${ids.manyA}"] input[name=pick]`).isChecked()).toBe(true);
    expect(await page.locator(`article.paused[data-run="${ids.manyB}"] input[name=pick]`).isChecked()).toBe(true);
    await page.fill('#decide-many textarea[name=note]', 'both questions are answered elsewhere');
    await page.click('#decide-many button[value=stop]');
    const list = page.locator('.decided-many');
    await list.waitFor();
    for (const id of [ids.manyA, ids.manyB])
      expect(await list.locator(`li.ok[data-run="${id}"]`).textContent()).toContain('stop — stopped');
  });

  it('refuses an invalid command with its findings and writes nothing; adds a valid one', async () => {
    await open(page, '/queue');
    const file = path.join(ws.dir, 'upload', 'broken.json');
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, JSON.stringify({ task_description: 'Choose a queue', config: { max_rounds: 'many' } }));
    await page.setInputFiles('.add-form input[type=file]', file);
    await expect.poll(() => page.inputValue('.add-form textarea')).toContain('max_rounds');
    await page.click('.add-form button[value=add]');
    await page.locator('.findings.refused').waitFor();
    expect(await page.locator('.findings.refused').textContent()).toContain('max_rounds');
    expect(await readdir(path.join(ws.dir, 'commands'))).not.toContain('broken.json');
    await page.fill('.add-form input[name=name]', 'from-the-console.json');
    await page.fill('.add-form textarea', JSON.stringify({ task_description: 'Choose the message queue for billing' }));
    await page.click('.add-form button[value=add]');
    await page.waitForURL(`${base}/queue?done=added`);
    expect(await page.locator('main').textContent()).toContain('from-the-console.json');
    expect(await readdir(path.join(ws.dir, 'commands'))).toContain('from-the-console.json');
  });

  it('shows a task’s secret on no page', async () => {
    const pages = ['/runs', '/decisions', '/queue', '/live', ...Object.values(ids).map((id) => `/runs/${id}`)];
    for (const p of pages) {
      await open(page, p);
      expect(await page.content(), p).not.toContain(GITHUB_TOKEN);
    }
    await open(page, `/runs/${ids.secret}`);
    expect(await page.locator('main').textContent()).toContain('[REDACTED:');
  });
});
