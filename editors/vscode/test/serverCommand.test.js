// Server resolution (setting -> canon-ls on PATH -> Python extension interpreter), with injected
// look-ups; plus `which` against a real temporary PATH.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { resolveServer, which, isExecutable, NOT_FOUND, ServerNotFound } = require('../out/serverCommand');

function deps(over = {}) {
  return {
    settingPath: '',
    which: () => undefined,
    isExecutable: () => false,
    pythonInterpreter: async () => undefined,
    hasModule: async () => false,
    ...over,
  };
}

test('the canon.server.path setting wins over PATH and Python', async () => {
  const got = await resolveServer(deps({
    settingPath: '/opt/canon/bin/canon-ls',
    isExecutable: (p) => p === '/opt/canon/bin/canon-ls',
    which: () => '/usr/bin/canon-ls',
    pythonInterpreter: async () => '/usr/bin/python3',
    hasModule: async () => true,
  }));
  assert.deepStrictEqual(got, { command: '/opt/canon/bin/canon-ls', args: [], source: 'setting' });
});

test('a bare command name in the setting is looked up on PATH', async () => {
  const got = await resolveServer(deps({
    settingPath: 'my-canon-ls',
    which: (n) => (n === 'my-canon-ls' ? '/usr/local/bin/my-canon-ls' : undefined),
    isExecutable: (p) => p === '/usr/local/bin/my-canon-ls',
  }));
  assert.strictEqual(got.command, '/usr/local/bin/my-canon-ls');
});

test('a setting that points nowhere is an error naming the setting, not a silent fallback', async () => {
  await assert.rejects(
    resolveServer(deps({ settingPath: '/nope/canon-ls', which: () => '/usr/bin/canon-ls' })),
    (e) => e instanceof ServerNotFound && /canon\.server\.path/.test(e.message) && /\/nope\/canon-ls/.test(e.message),
  );
});

test('canon-ls on PATH is used when the setting is empty', async () => {
  const got = await resolveServer(deps({
    settingPath: '  ',
    which: (n) => (n === 'canon-ls' ? '/home/u/.local/bin/canon-ls' : undefined),
    pythonInterpreter: async () => '/usr/bin/python3',
    hasModule: async () => true,
  }));
  assert.deepStrictEqual(got, { command: '/home/u/.local/bin/canon-ls', args: [], source: 'path' });
});

test("the Python extension's interpreter runs `-m canon_ls` when it has the module", async () => {
  const asked = [];
  const got = await resolveServer(deps({
    pythonInterpreter: async () => '/ws/.venv/bin/python',
    hasModule: async (py, mod) => { asked.push([py, mod]); return true; },
  }));
  assert.deepStrictEqual(got, { command: '/ws/.venv/bin/python', args: ['-m', 'canon_ls'], source: 'python' });
  assert.deepStrictEqual(asked, [['/ws/.venv/bin/python', 'canon_ls']]);
});

test('an interpreter without canon_ls, or none at all, gives the message naming all three options', async () => {
  for (const over of [
    { pythonInterpreter: async () => '/usr/bin/python3', hasModule: async () => false },
    { pythonInterpreter: async () => undefined },
    { pythonInterpreter: async () => { throw new Error('python extension broke'); } },
  ]) {
    await assert.rejects(resolveServer(deps(over)), (e) => {
      assert.strictEqual(e.message, NOT_FOUND);
      assert.match(e.message, /canon\.server\.path/);
      assert.match(e.message, /PATH/);
      assert.match(e.message, /Python/);
      return true;
    });
  }
});

test('which finds an executable on a real PATH and skips non-executable files', () => {
  const dir1 = fs.mkdtempSync(path.join(os.tmpdir(), 'canon-which-'));
  const dir2 = fs.mkdtempSync(path.join(os.tmpdir(), 'canon-which-'));
  try {
    fs.writeFileSync(path.join(dir1, 'canon-ls'), '#!/bin/sh\n', { mode: 0o644 });
    fs.writeFileSync(path.join(dir2, 'canon-ls'), '#!/bin/sh\n', { mode: 0o755 });
    const envPath = [dir1, '', dir2].join(path.delimiter);
    if (process.platform !== 'win32') {
      assert.strictEqual(which('canon-ls', envPath), path.join(dir2, 'canon-ls'));
      assert.strictEqual(isExecutable(path.join(dir1, 'canon-ls')), false);
    }
    assert.strictEqual(which('absent-tool', envPath), undefined);
    assert.strictEqual(isExecutable(dir1), false);
  } finally {
    fs.rmSync(dir1, { recursive: true, force: true });
    fs.rmSync(dir2, { recursive: true, force: true });
  }
});
