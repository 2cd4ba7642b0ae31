// activate() with a mocked `vscode` and `vscode-languageclient/node`: the server found on PATH is
// started for a workspace with a .canon/ store, on every file, and restarted on a settings change.
const test = require('node:test');
const assert = require('node:assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const Module = require('module');

const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'canon-ws-'));
fs.mkdirSync(path.join(ws, '.canon', 'articles'), { recursive: true });
const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'canon-bin-'));
fs.writeFileSync(path.join(bin, 'canon-ls'), '#!/bin/sh\n', { mode: 0o755 });
process.env.PATH = bin + path.delimiter + process.env.PATH;

const clients = [];
const commands = new Map();
const configListeners = [];
const noop = () => ({ dispose() {} });
const fakeVscode = {
  StatusBarAlignment: { Left: 1 },
  QuickPickItemKind: { Separator: -1 },
  Uri: { file: (p) => ({ scheme: 'file', fsPath: p }) },
  window: {
    createOutputChannel: () => ({ info() {}, warn() {}, error() {}, dispose() {} }),
    createStatusBarItem: () => ({ show() {}, hide() {}, dispose() {} }),
    onDidChangeActiveTextEditor: noop,
    showErrorMessage: async (m) => { throw new Error(`unexpected error message: ${m}`); },
    activeTextEditor: undefined,
  },
  commands: { registerCommand: (id, fn) => { commands.set(id, fn); return { dispose() {} }; } },
  workspace: {
    workspaceFolders: [{ uri: { scheme: 'file', fsPath: ws }, name: 'ws', index: 0 }],
    getConfiguration: () => ({ get: () => undefined }),
    onDidChangeConfiguration: (fn) => { configListeners.push(fn); return { dispose() {} }; },
    createFileSystemWatcher: () => ({ onDidCreate: noop, onDidDelete: noop, dispose() {} }),
  },
  extensions: { getExtension: () => undefined },
};
class FakeClient {
  constructor(id, name, serverOptions, clientOptions) {
    Object.assign(this, { id, name, serverOptions, clientOptions });
    clients.push(this);
  }
  async start() { this.started = true; }
  async stop() { this.stopped = true; }
}
const fakeLc = { LanguageClient: FakeClient, TransportKind: { stdio: 0 }, ExecuteCommandRequest: { type: 'x' } };
const origLoad = Module._load;
Module._load = function (request) {
  if (request === 'vscode') return fakeVscode;
  if (request === 'vscode-languageclient/node') return fakeLc;
  return origLoad.apply(this, arguments);
};

test('activate starts canon-ls from PATH for all file documents and registers the commands', async () => {
  const ext = require('../out/extension.js');
  const context = { subscriptions: [] };
  await ext.activate(context);
  assert.strictEqual(clients.length, 1);
  const c = clients[0];
  assert.strictEqual(c.serverOptions.command, path.join(bin, 'canon-ls'));
  assert.deepStrictEqual(c.serverOptions.args, []);
  assert.strictEqual(c.serverOptions.transport, undefined); // TransportKind.stdio would add --stdio
  assert.deepStrictEqual(c.clientOptions.documentSelector, [{ scheme: 'file' }]);
  assert.ok(c.started);
  for (const id of ['openArticle', 'newJournalEntry', 'search', 'map', 'status', 'restart']) {
    assert.ok(commands.has(`canon.client.${id}`), id);
  }

  // a change under `canon` restarts: the old client stops, a new one starts
  for (const fn of configListeners) fn({ affectsConfiguration: (s) => s === 'canon' });
  await new Promise((resolve) => {
    const poll = () => (clients.length === 2 && clients[1].started ? resolve() : setImmediate(poll));
    poll();
  });
  assert.ok(c.stopped);
  await ext.deactivate();
  assert.ok(clients[1].stopped);
  fs.rmSync(ws, { recursive: true, force: true });
  fs.rmSync(bin, { recursive: true, force: true });
});
