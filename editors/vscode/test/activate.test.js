// activate() with a mocked `vscode`: without a bundled server, canon-ls on PATH is started for a
// workspace with a .canon/ store, on every file; the status bar names it; a settings change
// restarts it.
const test = require('node:test');
const assert = require('node:assert');
const path = require('path');
const { install, script } = require('./fakeVscode');

const env = install();
script(env.bin, 'canon-ls', '');

test('activate starts canon-ls from PATH for all file documents and registers the commands', async () => {
  const ext = require('../out/extension.js');
  await ext.activate(env.context);
  assert.strictEqual(env.clients.length, 1);
  const c = env.clients[0];
  assert.strictEqual(c.serverOptions.command, path.join(env.bin, 'canon-ls'));
  assert.deepStrictEqual(c.serverOptions.args, []);
  assert.strictEqual(c.serverOptions.transport, undefined); // TransportKind.stdio would add --stdio
  assert.deepStrictEqual(c.clientOptions.documentSelector, [{ scheme: 'file' }]);
  assert.ok(c.started);
  assert.strictEqual(c.clientOptions.initializationOptions.untrustedWorkspace, false);
  for (const id of ['openArticle', 'newJournalEntry', 'search', 'map', 'status', 'showHistory', 'showSettings', 'restart', 'showLog']) {
    assert.ok(env.commands.has(`canon.client.${id}`), id);
  }
  const server = env.item('canon.server');
  assert.ok(server.visible);
  assert.strictEqual(server.text, '$(server-process) canon-ls (PATH)');
  assert.match(server.tooltip, /canon-ls 9\.9\.9, canon-ls on PATH/);

  // a change under `canon` restarts: the old client stops, a new one starts
  for (const fn of env.configListeners) fn({ affectsConfiguration: (s) => s === 'canon' });
  await new Promise((resolve) => {
    const poll = () => (env.clients.length === 2 && env.clients[1].started ? resolve() : setImmediate(poll));
    poll();
  });
  assert.ok(c.stopped);
  await ext.deactivate();
  assert.ok(env.clients[1].stopped);
  assert.ok(!server.visible);
  env.cleanup();
});
