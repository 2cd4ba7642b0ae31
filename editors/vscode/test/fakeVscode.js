// A mocked `vscode` and `vscode-languageclient/node` for activate() tests: records the clients
// created, the commands registered, the status bar items and the Python extension's use.
// Each *.test.js runs in its own process, so each gets a fresh extension module.
const fs = require('fs');
const os = require('os');
const path = require('path');
const Module = require('module');

function install({ trusted = true, pythonExtension } = {}) {
  const ws = fs.mkdtempSync(path.join(os.tmpdir(), 'canon-ws-'));
  fs.mkdirSync(path.join(ws, '.canon', 'articles'), { recursive: true });
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'canon-bin-'));
  const ext = fs.mkdtempSync(path.join(os.tmpdir(), 'canon-ext-'));
  process.env.PATH = bin + path.delimiter + process.env.PATH;

  const state = { ws, bin, ext, clients: [], commands: new Map(), configListeners: [], items: [], pythonAsked: 0 };
  const noop = () => ({ dispose() {} });
  const fakeVscode = {
    StatusBarAlignment: { Left: 1 },
    QuickPickItemKind: { Separator: -1 },
    Uri: { file: (p) => ({ scheme: 'file', fsPath: p }), parse: (u) => ({ scheme: 'file', fsPath: u }) },
    window: {
      createOutputChannel: () => ({ info() {}, warn() {}, error() {}, show() {}, dispose() {} }),
      createStatusBarItem: (id) => {
        const item = { id, visible: false, show() { this.visible = true; }, hide() { this.visible = false; }, dispose() {} };
        state.items.push(item);
        return item;
      },
      onDidChangeActiveTextEditor: noop,
      showErrorMessage: async (m) => { throw new Error(`unexpected error message: ${m}`); },
      activeTextEditor: undefined,
    },
    commands: { registerCommand: (id, fn) => { state.commands.set(id, fn); return { dispose() {} }; } },
    workspace: {
      isTrusted: trusted,
      workspaceFolders: [{ uri: { scheme: 'file', fsPath: ws }, name: 'ws', index: 0 }],
      getConfiguration: () => ({ get: () => undefined }),
      onDidChangeConfiguration: (fn) => { state.configListeners.push(fn); return { dispose() {} }; },
      onDidGrantWorkspaceTrust: noop,
      createFileSystemWatcher: () => ({ onDidCreate: noop, onDidDelete: noop, dispose() {} }),
    },
    extensions: {
      getExtension: (id) => {
        if (id !== 'ms-python.python' || !pythonExtension) return undefined;
        const exports = {
          environments: {
            getActiveEnvironmentPath: () => { state.pythonAsked++; return { path: pythonExtension }; },
            resolveEnvironment: async () => ({ executable: { uri: { fsPath: pythonExtension } } }),
          },
        };
        return { isActive: true, exports };
      },
    },
  };
  class FakeClient {
    constructor(id, name, serverOptions, clientOptions) {
      Object.assign(this, { id, name, serverOptions, clientOptions });
      this.initializeResult = { serverInfo: { name: 'canon-ls', version: '9.9.9' } };
      state.clients.push(this);
    }
    async start() { this.started = true; }
    async stop() { this.stopped = true; }
    async sendRequest() { return null; }
  }
  const fakeLc = { LanguageClient: FakeClient, TransportKind: { stdio: 0 }, ExecuteCommandRequest: { type: 'x' } };
  const origLoad = Module._load;
  Module._load = function (request) {
    if (request === 'vscode') return fakeVscode;
    if (request === 'vscode-languageclient/node') return fakeLc;
    return origLoad.apply(this, arguments);
  };
  state.context = { subscriptions: [], extensionPath: ext };
  state.item = (id) => state.items.find((i) => i.id === id);
  state.cleanup = () => {
    for (const dir of [ws, bin, ext]) fs.rmSync(dir, { recursive: true, force: true });
  };
  return state;
}

/** An executable script in `dir` that prints `out` (a fake python3 answering its version). */
function script(dir, name, out) {
  const file = path.join(dir, name);
  fs.writeFileSync(file, `#!/bin/sh\necho ${out}\n`, { mode: 0o755 });
  return file;
}

/** What a packaged .vsix holds: bundled/libs/canon_ls/__main__.py. */
function bundle(ext) {
  const pkg = path.join(ext, 'bundled', 'libs', 'canon_ls');
  fs.mkdirSync(pkg, { recursive: true });
  fs.writeFileSync(path.join(pkg, '__main__.py'), '');
  return path.join(ext, 'bundled', 'libs');
}

module.exports = { install, script, bundle };
