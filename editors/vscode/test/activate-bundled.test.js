// activate() with a packaged build (bundled/libs present): the bundled server runs on the Python
// extension's interpreter in a trusted workspace, never on it in an untrusted one (SPEC §12), and
// the status bar says "bundled".
const test = require('node:test');
const assert = require('node:assert');
const path = require('path');
const { install, script, bundle } = require('./fakeVscode');

async function activateWith(opts) {
  const env = install(opts);
  const libs = bundle(env.ext);
  const python3 = script(env.bin, 'python3', '3.12.1');
  script(env.bin, 'canon-ls', ''); // present, but the bundled server comes first
  const ext = require('../out/extension.js');
  await ext.activate(env.context);
  return { env, ext, libs, python3 };
}

test('trusted workspace: the bundled server runs on the Python extension\'s interpreter', async () => {
  const selected = path.join(require('os').tmpdir(), 'canon-venv-python');
  require('fs').writeFileSync(selected, '#!/bin/sh\necho 3.13.0\n', { mode: 0o755 });
  const { env, ext, libs } = await activateWith({ trusted: true, pythonExtension: selected });
  try {
    const c = env.clients[0];
    assert.strictEqual(c.serverOptions.command, selected);
    assert.deepStrictEqual(c.serverOptions.args, ['-P', '-m', 'canon_ls']);
    assert.strictEqual(c.serverOptions.options.env.PYTHONPATH, libs);
    assert.ok(env.pythonAsked > 0);
    const server = env.item('canon.server');
    assert.strictEqual(server.text, '$(server-process) canon-ls (bundled)');
    assert.match(server.tooltip, /the bundled canon-ls on .*canon-venv-python \(Python 3\.13\.0, from the Python extension\)/);
  } finally {
    await ext.deactivate();
    require('fs').rmSync(selected, { force: true });
    env.cleanup();
  }
});
