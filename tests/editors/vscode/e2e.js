// Drives a running code-server (real VS Code) with headless Debian Chromium through playwright-core,
// as a person would: open a governed file, hover, read the inlay hint, look at Problems, apply the
// "Create article" quick fix. Prints "ok - name" / "FAIL - name: detail" and "N passed, M failed".
// usage: node e2e.js <baseUrl> <workspace> <screenshot.png> [full|typing|imports]
// `typing`: only the diagnostics of an article's unsaved text (SPEC §10 diagnostics as you type).
// `imports`: only the hover on an import, which names the module it imports (SPEC §10 hover).
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const [baseUrl, ws, shot, mode = 'full'] = process.argv.slice(2);
const APP_CAPSULE = 'Entry point: wires config and routes; never reads the environment directly.';
const FEED_EVIDENCE = '2 commits in 59 days since updated 2026-10-01 touched src/feed.py';
const t0 = Date.now();
let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok - ${name}`);
  } else {
    failed++;
    console.log(`FAIL - ${name}: ${JSON.stringify(detail)}`.slice(0, 2000));
  }
}
const note = (msg) => console.log(`# ${msg} (${Date.now() - t0} ms)`);
const text = (s) => (s || '').replace(/\u00a0/g, ' '); // Monaco renders spaces as NBSP

async function waitFor(page, fn, arg, timeout = 30000) {
  return page.waitForFunction(fn, arg, { timeout, polling: 200 }).then((h) => h.jsonValue(), () => null);
}

/**
 * Opens `rel` through Quick Open (Ctrl+P) and returns once its tab is the active one; throws
 * otherwise. Enter accepts the *focused* row, and the list is filtered asynchronously: on a loaded
 * machine the input already read "src/util.py" while the rows were still an earlier query's, with
 * app.py focused, so Enter opened app.py and the quick fix step ran against the wrong file. Enter
 * now waits until the focused row is this file for the full query.
 */
async function openFile(page, rel) {
  const name = path.basename(rel);
  const activeTab = () => page.evaluate(() => document.querySelector('.tabs-container .tab.active')?.textContent || '');
  let seen = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    await page.keyboard.press('Control+P');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 20000 });
    await input.fill(rel);
    const focused = await waitFor(page, (want) => {
      const value = document.querySelector('.quick-input-widget input')?.value;
      const row = document.querySelector('.quick-input-list .monaco-list-row.focused');
      const label = row ? row.getAttribute('aria-label') || '' : '';
      return value === want.rel && label.includes(want.name) ? label : false;
    }, { rel, name }, 20000);
    if (focused) {
      await page.keyboard.press('Enter');
      if (await waitFor(page, (n) => {
        const tab = document.querySelector('.tabs-container .tab.active');
        return !!tab && tab.textContent.includes(n);
      }, name, 20000)) {
        return;
      }
    }
    seen = `focused row ${JSON.stringify(focused)}, active tab ${JSON.stringify(await activeTab())}`;
    console.log(`# openFile ${rel}: attempt ${attempt + 1} failed (${seen})`);
    await page.keyboard.press('Escape');
  }
  throw new Error(`could not open ${rel} through Quick Open: ${seen}`);
}

/** Clicks into the line of the active editor that shows `text`, and checks Monaco has the focus
 * (Ctrl+. is the editor's keybinding: pressed elsewhere, e.g. in Problems, it does something else). */
async function focusEditorLine(page, text) {
  const line = page.locator('.editor-instance .view-lines .view-line', { hasText: text }).first();
  for (let attempt = 0; attempt < 3; attempt++) {
    await line.click();
    const focused = await waitFor(page, () => {
      const a = document.activeElement;
      return !!a && !!a.closest('.editor-instance .monaco-editor.focused');
    }, null, 5000);
    if (focused) {
      return;
    }
  }
  throw new Error(`the editor did not take the focus; it is on ${await page.evaluate(() => {
    const a = document.activeElement;
    return a ? `${a.tagName}.${a.className}` : 'nothing';
  })}`);
}

function firstLineText(page) {
  return page.evaluate(() => {
    const lines = [...document.querySelectorAll('.editor-instance .monaco-editor .view-lines .view-line')];
    const top = lines.sort((a, b) => a.offsetTop - b.offsetTop)[0];
    return top ? top.textContent : '';
  });
}

/** Moves the mouse over "Application" on line 1 until the hover shows the capsule. */
function hoverCapsule(page) {
  return hoverUntil(page, 'Application', APP_CAPSULE, 3);
}

/** Moves the mouse over `text` on the active editor until a hover shows `want`. */
async function hoverUntil(page, text, want, attempts) {
  const word = page.locator('.editor-instance .view-lines .view-line span span', { hasText: text }).first();
  for (let attempt = 0; attempt < attempts; attempt++) {
    // measured on every attempt: a code lens arriving late pushes line 1 down
    const box = await word.boundingBox();
    await page.mouse.move(box.x + 8 + attempt * 4, box.y + box.height / 2);
    await page.mouse.move(box.x + 12 + attempt * 4, box.y + box.height / 2);
    const hover = await waitFor(page, (want) => {
      const t = [...document.querySelectorAll('.monaco-hover')]
        .filter((h) => h.getBoundingClientRect().height > 0 && !h.closest('.hidden'))
        .map((h) => h.innerText).join('\n');
      return t.includes(want) ? t : false;
    }, want, 10000);
    if (hover) {
      return hover;
    }
  }
  return null;
}

/** Problems panel text once `fn(text)` holds (the panel is opened first), or null. */
async function problemsWhen(page, wantIt, timeout = 30000) {
  if (!(await page.locator('.markers-panel').isVisible().catch(() => false))) {
    await page.locator('#status\\.problems').click();
  }
  return waitFor(page, (want) => {
    const panel = document.querySelector('.markers-panel');
    const t = panel ? panel.innerText : '';
    return t.includes('src/not/there') === want ? t || 'empty' : false;
  }, wantIt, timeout);
}

/** A broken link typed into src/app.md (never saved) shows in Problems, and goes when deleted. */
async function typing(page) {
  const file = path.join(ws, '.canon/articles/src/app.md');
  const saved = fs.readFileSync(file, 'utf8');
  await openFile(page, '.canon/articles/src/app.md');
  const lens = await waitFor(page, () => [...document.querySelectorAll('.editor-instance .codelens-decoration')]
    .some((d) => d.textContent.includes('canon: src/app')), null, 60000);
  note(`the server answers (code lens: ${!!lens})`);
  await focusEditorLine(page, 'Routes are registered');
  await page.keyboard.press('Control+End');
  await page.keyboard.type('See [[src/not/there]].', { delay: 20 });
  const raised = await problemsWhen(page, true);
  note('typed');
  check('a broken link typed into an unsaved article is in Problems', !!raised, raised ||
    await page.evaluate(() => (document.querySelector('.markers-panel') || {}).innerText));
  await focusEditorLine(page, 'src/not/there');
  await page.keyboard.press('Control+Shift+K'); // delete the line
  const cleared = await problemsWhen(page, false);
  note('deleted');
  check('deleting the link clears it from Problems', !!cleared, cleared);
  check('the article file was not written', fs.readFileSync(file, 'utf8') === saved, file);
}

(async () => {
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  const page = await browser.newPage({ viewport: { width: 1000, height: 600 } });
  try {
    await page.goto(`${baseUrl}/?folder=${encodeURIComponent(ws)}`, { waitUntil: 'domcontentloaded' });
    await page.waitForSelector('#workbench\\.parts\\.statusbar', { timeout: 90000 });
    note('workbench up');
    await page.locator('.monaco-workbench').click({ position: { x: 600, y: 300 } }).catch(() => {});
    if (mode === 'typing') {
      await typing(page);
      return;
    }
    if (mode === 'imports') {
      await openFile(page, 'src/main.py');
      // the server has answered for this file (its code lens) before the mouse goes over line 1
      const lens = await waitFor(page, () => [...document.querySelectorAll('.editor-instance .codelens-decoration')]
        .some((d) => d.textContent.includes('canon:')), null, 60000);
      note(`the server answers (code lens: ${!!lens})`);
      let imported = null;
      for (let attempt = 0; attempt < 3 && !imported; attempt++) { // a late render moves the word
        imported = await hoverUntil(page, 'feed', "Fetches the feed; retries are the caller's job.", 3)
          .catch(() => null);
      }
      check("hover on an import shows the imported module's capsule", !!imported, imported ||
        await page.evaluate(() => [...document.querySelectorAll('.monaco-hover')].map((h) => h.innerText).join('\n')));
      return;
    }

    // 1. open the governed file; the inlay hint (SPEC §10) appears at the end of line 1
    await openFile(page, 'src/app.py');
    const hintLine = await waitFor(page, (want) => {
      const lines = [...document.querySelectorAll('.editor-instance .monaco-editor .view-lines .view-line')];
      const top = lines.sort((a, b) => a.offsetTop - b.offsetTop)[0];
      const t = top ? top.textContent.replace(/\u00a0/g, ' ') : '';
      return t.includes(want) ? t : false;
    }, 'Entry point: wires config', 45000);
    note('inlay hint');
    check('inlay hint with the capsule is on line 1', !!hintLine && hintLine.startsWith('"""Application entry point."""'),
      hintLine || text(await firstLineText(page)));

    // 1b. code lens on line 1: `canon: <address> · updated <date> · N journal` (SPEC §10 code lens)
    const lens = await waitFor(page, () => {
      const t = [...document.querySelectorAll('.editor-instance .codelens-decoration')].map((d) => d.textContent).join(' | ');
      return t.includes('canon:') ? t.replace(/\u00a0/g, ' ') : false;
    }, null, 20000);
    check('code lens names src/app and its date', !!lens && lens.includes('canon: src/app') && lens.includes('2026-11-20'), lens);

    // 2. status bar items: the governing address (asked of the server: canon.resolve), and which
    // server runs (the .vsix's bundled one: canon-ls is not on this PATH)
    const statusText = (id) => waitFor(page, (want) => {
      const items = [...document.querySelectorAll('#workbench\\.parts\\.statusbar .statusbar-item')];
      const item = items.find((i) => (i.id || '').includes(want.id) && i.textContent.includes(want.text));
      return item ? item.textContent : false;
    }, id, 20000);
    const status = await statusText({ id: 'canon.governing', text: 'src/app' });
    check('status bar shows the governing address', !!status && status.includes('src/app'), status);
    const server = await statusText({ id: 'canon.server', text: 'canon-ls' });
    check('status bar says the bundled server runs', !!server && server.includes('canon-ls (bundled)'), server);

    // 3. hover on line 1 shows the governing article's capsule
    const hover = await hoverCapsule(page);
    note('hover');
    check('hover widget shows the capsule', !!hover, hover);
    check('hover names the governing address', !!hover && hover.includes('src/app'), hover);
    await page.mouse.move(5, 590);

    // 3b. a stale article's file: the hover carries the evidence, how many commits since when
    // (SPEC §9.1; it arrives with the whole-store check, hence the patience)
    await openFile(page, 'src/feed.py');
    const staleLens = await waitFor(page, () => {
      const t = [...document.querySelectorAll('.editor-instance .codelens-decoration')].map((d) => d.textContent).join(' | ');
      return t.includes('stale') ? t.replace(/\u00a0/g, ' ') : false;
    }, null, 45000);
    check('the stale code lens reads "stale · 2 commits since 2026-10-01"',
      !!staleLens && staleLens.includes('stale · 2 commits since 2026-10-01'), staleLens);
    const staleHover = await hoverUntil(page, 'Feed', FEED_EVIDENCE, 6);
    note('stale hover');
    check('the stale hover shows the commit count', !!staleHover, staleHover ||
      await page.evaluate(() => [...document.querySelectorAll('.monaco-hover')].map((h) => h.innerText).join('\n')));
    await page.mouse.move(5, 590);

    // 4. Problems: the orphan article src/legacy is reported for the whole store (SPEC §10 diagnostics)
    await page.locator('#status\\.problems').click();
    const problems = await waitFor(page, () => {
      const panel = document.querySelector('.markers-panel');
      const t = panel ? panel.innerText : '';
      return t.includes('legacy.md') ? t : false;
    }, null, 30000);
    note('problems');
    check('Problems lists the orphan article legacy.md', !!problems && /orphan/i.test(problems), problems ||
      await page.evaluate(() => (document.querySelector('.markers-panel') || {}).innerText));
    const count = await page.locator('#status\\.problems').getAttribute('aria-label').catch(String);
    check('Problems count is not zero', !!count && !/^No Problems/i.test(count) && /[1-9]/.test(count), count);

    // the README's screenshot: Problems open with the orphan, the hover and hint on app.py
    if (shot) {
      await openFile(page, 'src/app.py');
      if (await hoverCapsule(page)) {
        await waitFor(page, () => [...document.querySelectorAll('.monaco-hover')]
          .some((h) => h.getBoundingClientRect().height > 0 && h.innerText.includes('src/app')
            && getComputedStyle(h).opacity === '1'), null, 5000);
      }
      await page.screenshot({ path: shot });
      await page.mouse.move(5, 590);
    }

    // 5. quick fix "Create article for src/util" on an ungoverned file creates the article
    await openFile(page, 'src/util.py');
    await focusEditorLine(page, 'def run');
    const article = path.join(ws, '.canon', 'articles', 'src', 'util.md');
    let offered = null;
    const tried = [];
    for (let attempt = 0; attempt < 4 && !offered; attempt++) {
      await page.keyboard.press('Control+.');
      offered = await waitFor(page, () => {
        const rows = [...document.querySelectorAll('.action-widget .monaco-list-row')];
        const labels = rows.map((r) => r.innerText.replace(/\u00a0/g, ' ').trim());
        return labels.some((l) => l.includes('Create article for src/util')) ? labels : false;
      }, null, 10000);
      if (!offered) {
        // what was there instead: the widget's rows, the "No code actions" message, the focus
        tried.push(await page.evaluate(() => ({
          rows: [...document.querySelectorAll('.action-widget .monaco-list-row')].map((r) => r.innerText),
          message: [...document.querySelectorAll('.monaco-editor-overlaymessage')].map((m) => m.innerText).join(' '),
          tab: document.querySelector('.tabs-container .tab.active')?.textContent,
          focus: document.activeElement ? `${document.activeElement.tagName}.${document.activeElement.className}` : null,
        })));
        await page.keyboard.press('Escape');
        await focusEditorLine(page, 'def run');
      }
    }
    check('quick fix menu offers create and journal', !!offered && offered.some((l) => l.includes('Journal an entry about src/util')),
      offered || tried);
    if (offered) {
      await page.locator('.action-widget .monaco-list-row', { hasText: 'Create article for src/util' }).first().click();
      const deadline = Date.now() + 20000;
      const written = () => fs.existsSync(article) && fs.readFileSync(article, 'utf8').includes('# src/util');
      while (!written() && Date.now() < deadline) {
        await page.waitForTimeout(200);
      }
    }
    note('quick fix');
    check('"Create article for src/util" creates .canon/articles/src/util.md', fs.existsSync(article),
      fs.readdirSync(path.join(ws, '.canon', 'articles', 'src')));
    check('the created article has front matter and the # src/util title',
      fs.existsSync(article) && /^---\n[\s\S]*\n---\n# src\/util/.test(fs.readFileSync(article, 'utf8')),
      fs.existsSync(article) && fs.readFileSync(article, 'utf8'));

    // 6. "canon: New Journal Entry" from the command palette lands an entry (SPEC §6 journal)
    const JOURNAL_TEXT = 'Chose a queue consumer over polling for the feed.';
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 20000 });
    await page.keyboard.type('canon: New Journal Entry', { delay: 10 });
    await page.waitForSelector('.quick-input-list .monaco-list-row[aria-label*="New Journal Entry"]', { timeout: 20000 });
    await page.keyboard.press('Enter');
    await waitFor(page, () => {
      const w = document.querySelector('.quick-input-widget');
      return !!w && w.innerText.includes('What happened');
    }, null, 20000);
    await page.keyboard.type(JOURNAL_TEXT, { delay: 5 });
    await page.keyboard.press('Enter');
    const journalDir = path.join(ws, '.canon', 'journal');
    let entry = null;
    const until = Date.now() + 20000;
    while (!entry && Date.now() < until) {
      const names = fs.existsSync(journalDir) ? fs.readdirSync(journalDir) : [];
      entry = names.map((n) => fs.readFileSync(path.join(journalDir, n), 'utf8')).find((t) => t.includes(JOURNAL_TEXT)) || null;
      if (!entry) {
        await page.waitForTimeout(200);
      }
    }
    note('journal');
    check('"canon: New Journal Entry" writes a journal entry about the active file', !!entry && /harness: lsp/.test(entry), entry);

    // 7. a click on the status bar item opens the governing article
    await page.keyboard.press('Escape');
    await openFile(page, 'src/app.py');
    await page.locator('#workbench\\.parts\\.statusbar .statusbar-item[id*="canon.governing"]').first().click();
    const opened = await waitFor(page, () => {
      const tab = document.querySelector('.tabs-container .tab.active');
      return tab && tab.textContent.includes('app.md') ? tab.getAttribute('aria-label') || tab.textContent : false;
    }, null, 20000);
    check('the status bar item opens .canon/articles/src/app.md', !!opened, opened);

    // 8. Go to Symbol in Workspace (Ctrl+T) finds an article by a word of its capsule that its
    // address does not contain (SPEC §10 workspace symbols): VS Code drops every symbol whose
    // name does not fuzzy-match the query, so the capsule must be part of the name it sees.
    let symbolRows = null;
    for (let attempt = 0; attempt < 6 && !symbolRows; attempt++) {
      await page.keyboard.press('Escape');
      await page.keyboard.press('Control+T');
      const input = page.locator('.quick-input-widget input');
      await input.waitFor({ state: 'visible', timeout: 20000 });
      await input.fill('#routes');
      symbolRows = await waitFor(page, () => {
        const rows = [...document.querySelectorAll('.quick-input-list .monaco-list-row')]
          .map((r) => (r.getAttribute('aria-label') || r.innerText).replace(/\u00a0/g, ' '));
        return rows.some((r) => r.includes('src/app')) ? rows : false;
      }, null, 5000);
    }
    note('workspace symbols');
    check('Ctrl+T "routes" lists src/app (a word of its capsule)', !!symbolRows, symbolRows ||
      await page.evaluate(() => [...document.querySelectorAll('.quick-input-list .monaco-list-row')].map((r) => r.innerText)));
    await page.keyboard.press('Escape');

    // 9. "canon: Show History" opens the governing article's history (SPEC §9.2) in a tab
    await openFile(page, 'src/feed.py');
    await page.keyboard.press('F1');
    await page.waitForSelector('.quick-input-widget input', { state: 'visible', timeout: 20000 });
    await page.keyboard.type('canon: Show History', { delay: 10 });
    await page.waitForSelector('.quick-input-list .monaco-list-row[aria-label*="Show History"]', { timeout: 20000 });
    await page.keyboard.press('Enter');
    const historyText = await waitFor(page, () => {
      const tab = document.querySelector('.tabs-container .tab.active');
      const lines = [...document.querySelectorAll('.editor-instance .monaco-editor .view-lines .view-line')]
        .map((l) => l.textContent.replace(/\u00a0/g, ' ')).join('\n');
      return tab && tab.textContent.includes('history') && lines.includes('History of src/feed') ? lines : false;
    }, null, 30000);
    note('history');
    check('"canon: Show History" opens the history of src/feed', !!historyText && historyText.includes('Retry on 429'),
      historyText || await page.evaluate(() => document.querySelector('.tabs-container .tab.active')?.textContent));
  } catch (e) {
    check('no exception', false, String((e && e.stack) || e));
    if (shot) {
      await page.screenshot({ path: shot.replace(/\.png$/, '-failure.png') }).catch(() => {});
    }
  } finally {
    await browser.close();
    console.log(`${passed} passed, ${failed} failed`);
    process.exit(failed === 0 && passed > 0 ? 0 : 1);
  }
})();
