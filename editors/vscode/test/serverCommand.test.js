// Server resolution (the setting -> the bundled server on Python >= 3.11 -> canon-ls on PATH),
// with injected look-ups; plus `which` against a real temporary PATH.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { resolveServer, which, isExecutable, atLeast, bundledLibs, ServerNotFound } = require('../out/serverCommand');

const LIBS = '/ext/bundled/libs';

function deps(over = {}) {
  return {
    settingPath: '',
    workspaceFolder: '/ws',
    bundledLibs: undefined,
    pythons: async () => [],
    pythonVersion: async () => undefined,
    which: () => undefined,
    isExecutable: () => false,
    ...over,
  };
}

test('the canon.server.path setting wins over the bundled server and PATH', async () => {
  const got = await resolveServer(deps({
    settingPath: '/opt/canon/bin/canon-ls',
    isExecutable: (p) => p === '/opt/canon/bin/canon-ls',
    bundledLibs: LIBS,
    pythons: async () => [{ path: '/usr/bin/python3', origin: 'PATH' }],
    pythonVersion: async () => '3.12.1',
    which: () => '/usr/bin/canon-ls',
  }));
  assert.strictEqual(got.command, '/opt/canon/bin/canon-ls');
  assert.deepStrictEqual(got.args, []);
  assert.strictEqual(got.source, 'setting');
});

test('a bare command name in the setting is looked up on PATH', async () => {
  const got = await resolveServer(deps({
    settingPath: 'my-canon-ls',
    which: (n) => (n === 'my-canon-ls' ? '/usr/local/bin/my-canon-ls' : undefined),
    isExecutable: (p) => p === '/usr/local/bin/my-canon-ls',
  }));
  assert.strictEqual(got.command, '/usr/local/bin/my-canon-ls');
});

test('SPEC §12: a relative setting resolves against the workspace folder, never the cwd', async () => {
  // a real file at <cwd>/tools/canon-ls that must NOT be chosen
  const cwd = fs.mkdtempSync(path.join(os.tmpdir(), 'canon-cwd-'));
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'canon-wsf-'));
  const before = process.cwd();
  try {
    fs.mkdirSync(path.join(cwd, 'tools'));
    fs.writeFileSync(path.join(cwd, 'tools', 'canon-ls'), '#!/bin/sh\n', { mode: 0o755 });
    process.chdir(cwd);
    await assert.rejects(
      resolveServer(deps({ settingPath: './tools/canon-ls', workspaceFolder: ws, isExecutable, which })),
      (e) => e instanceof ServerNotFound && e.message.includes(path.join(ws, 'tools', 'canon-ls')),
    );
    fs.mkdirSync(path.join(ws, 'tools'));
    fs.writeFileSync(path.join(ws, 'tools', 'canon-ls'), '#!/bin/sh\n', { mode: 0o755 });
    const got = await resolveServer(deps({ settingPath: 'tools/canon-ls', workspaceFolder: ws, isExecutable, which }));
    assert.strictEqual(got.command, path.join(ws, 'tools', 'canon-ls'));
    // no workspace folder: a relative path is refused, not taken from the cwd
    await assert.rejects(
      resolveServer(deps({ settingPath: './tools/canon-ls', workspaceFolder: undefined, isExecutable, which })),
      (e) => e instanceof ServerNotFound && /relative path/.test(e.message),
    );
  } finally {
    process.chdir(before);
    fs.rmSync(cwd, { recursive: true, force: true });
    fs.rmSync(ws, { recursive: true, force: true });
  }
});

test('a setting that points nowhere is an error naming the setting, not a silent fallback', async () => {
  await assert.rejects(
    resolveServer(deps({ settingPath: '/nope/canon-ls', which: () => '/usr/bin/canon-ls', bundledLibs: LIBS })),
    (e) => e instanceof ServerNotFound && /canon\.server\.path/.test(e.message) && /\/nope\/canon-ls/.test(e.message),
  );
});

test('the bundled server runs as `<python> -P -m canon_ls` with PYTHONPATH on the first Python >= 3.11', async () => {
  const asked = [];
  const got = await resolveServer(deps({
    bundledLibs: LIBS,
    pythons: async () => [
      { path: '/ws/.venv/bin/python', origin: 'the Python extension' },
      { path: '/usr/bin/python3', origin: 'PATH' },
      { path: '/usr/bin/python', origin: 'PATH' },
    ],
    pythonVersion: async (p) => { asked.push(p); return p === '/ws/.venv/bin/python' ? '3.10.12' : '3.11.2'; },
    which: () => '/usr/bin/canon-ls',
  }));
  assert.deepStrictEqual(got.command, '/usr/bin/python3');
  assert.deepStrictEqual(got.args, ['-P', '-m', 'canon_ls']);
  assert.deepStrictEqual(got.env, { PYTHONPATH: LIBS });
  assert.strictEqual(got.source, 'bundled');
  assert.match(got.description, /bundled canon-ls on \/usr\/bin\/python3 \(Python 3\.11\.2, from PATH\)/);
  assert.deepStrictEqual(asked, ['/ws/.venv/bin/python', '/usr/bin/python3']); // stops at the first fit
});

test('canon-ls on PATH when nothing is bundled, or no Python is new enough', async () => {
  const onPath = { which: (n) => (n === 'canon-ls' ? '/home/u/.local/bin/canon-ls' : undefined) };
  for (const over of [
    {},
    { bundledLibs: LIBS, pythons: async () => [{ path: '/usr/bin/python3', origin: 'PATH' }], pythonVersion: async () => '3.9.2' },
    { bundledLibs: LIBS, pythons: async () => { throw new Error('python extension broke'); } },
  ]) {
    const got = await resolveServer(deps({ ...onPath, ...over }));
    assert.deepStrictEqual([got.command, got.args, got.source], ['/home/u/.local/bin/canon-ls', [], 'path']);
  }
});

test('nothing found: one message naming every route and what was tried', async () => {
  await assert.rejects(
    resolveServer(deps({
      bundledLibs: LIBS,
      pythons: async () => [{ path: '/usr/bin/python3', origin: 'PATH' }, { path: '/bin/py', origin: 'PATH' }],
      pythonVersion: async (p) => (p === '/usr/bin/python3' ? '3.10.1' : undefined),
    })),
    (e) => {
      assert.ok(e instanceof ServerNotFound);
      for (const want of [/Python 3\.11 or newer/, /pipx install \/path\/to\/a\/clone\/of\/canon-ls/, /canon\.server\.path/,
        /\/usr\/bin\/python3 \(from PATH\) is Python 3\.10\.1/, /\/bin\/py \(from PATH\) did not run/]) {
        assert.match(e.message, want);
      }
      return true;
    },
  );
});

test('atLeast compares dotted versions', () => {
  assert.ok(atLeast('3.11.0', [3, 11]));
  assert.ok(atLeast('3.13.1', [3, 11]));
  assert.ok(atLeast('4.0.0', [3, 11]));
  assert.ok(!atLeast('3.10.14', [3, 11]));
  assert.ok(!atLeast('2.7.18', [3, 11]));
  assert.ok(!atLeast('garbage', [3, 11]));
});

test('bundledLibs is found only where a packaged build put canon_ls', () => {
  const ext = fs.mkdtempSync(path.join(os.tmpdir(), 'canon-ext-'));
  try {
    assert.strictEqual(bundledLibs(ext), undefined);
    fs.mkdirSync(path.join(ext, 'bundled', 'libs', 'canon_ls'), { recursive: true });
    assert.strictEqual(bundledLibs(ext), undefined);
    fs.writeFileSync(path.join(ext, 'bundled', 'libs', 'canon_ls', '__main__.py'), '');
    assert.strictEqual(bundledLibs(ext), path.join(ext, 'bundled', 'libs'));
  } finally {
    fs.rmSync(ext, { recursive: true, force: true });
  }
});

test('which finds an executable on a real PATH, skips non-executable files and relative entries', () => {
  const dir1 = fs.mkdtempSync(path.join(os.tmpdir(), 'canon-which-'));
  const dir2 = fs.mkdtempSync(path.join(os.tmpdir(), 'canon-which-'));
  try {
    fs.writeFileSync(path.join(dir1, 'canon-ls'), '#!/bin/sh\n', { mode: 0o644 });
    fs.writeFileSync(path.join(dir2, 'canon-ls'), '#!/bin/sh\n', { mode: 0o755 });
    const envPath = [dir1, '', 'relative/bin', dir2].join(path.delimiter);
    if (process.platform !== 'win32') {
      assert.strictEqual(which('canon-ls', envPath), path.join(dir2, 'canon-ls'));
      assert.strictEqual(isExecutable(path.join(dir1, 'canon-ls')), false);
    }
    assert.strictEqual(which('absent-tool', envPath), undefined);
    assert.strictEqual(which('./canon-ls', envPath), undefined); // a path is never looked up
    assert.strictEqual(isExecutable(dir1), false);
  } finally {
    fs.rmSync(dir1, { recursive: true, force: true });
    fs.rmSync(dir2, { recursive: true, force: true });
  }
});
