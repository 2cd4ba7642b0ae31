// SPEC §12: in an untrusted workspace the Python extension's interpreter (possibly the
// workspace's own .venv) is never run; the bundled server runs on python3 from PATH.
const test = require('node:test');
const assert = require('node:assert');
const { install, script, bundle } = require('./fakeVscode');

test('untrusted workspace: python3 from PATH, the Python extension is not asked', async () => {
  const env = install({ trusted: false, pythonExtension: '/ws/.venv/bin/python' });
  bundle(env.ext);
  const python3 = script(env.bin, 'python3', '3.11.9');
  const ext = require('../out/extension.js');
  await ext.activate(env.context);
  try {
    const c = env.clients[0];
    assert.strictEqual(c.serverOptions.command, python3);
    assert.deepStrictEqual(c.serverOptions.args, ['-P', '-m', 'canon_ls']);
    assert.strictEqual(env.pythonAsked, 0);
    // the server is told, so the project's canon.toml cannot choose root or mounts either
    assert.strictEqual(c.clientOptions.initializationOptions.untrustedWorkspace, true);
  } finally {
    await ext.deactivate();
    env.cleanup();
  }
});
