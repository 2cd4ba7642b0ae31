// VS Code client for canon-ls: starts the server for workspaces with a .canon/ store and adds
// a few commands and a status bar item on top of what the language server already offers.
import * as cp from 'child_process';
import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import {
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from 'vscode-languageclient/node';
import { journalSubject, parseResolved, Resolved, statusFor } from './resolve';
import {
  bundledLibs,
  isExecutable,
  PythonCandidate,
  resolveServer,
  ServerCommand,
  ServerNotFound,
  which,
} from './serverCommand';

let client: LanguageClient | undefined;
let starting: Promise<LanguageClient | undefined> | undefined;
let running: ServerCommand | undefined; // what the current client was started with
let serverMissing = false; // set when no server was found: store events stop retrying until a restart
let log: vscode.LogOutputChannel;
let statusItem: vscode.StatusBarItem; // the active file's governing article
let serverItem: vscode.StatusBarItem; // which server runs
let extensionPath = '';
let statusGeneration = 0;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  log = vscode.window.createOutputChannel('canon', { log: true });
  statusItem = vscode.window.createStatusBarItem('canon.governing', vscode.StatusBarAlignment.Left, 50);
  statusItem.name = 'canon governing article';
  statusItem.command = 'canon.client.openArticle';
  serverItem = vscode.window.createStatusBarItem('canon.server', vscode.StatusBarAlignment.Left, 49);
  serverItem.name = 'canon server';
  serverItem.command = 'canon.client.showLog';
  extensionPath = context.extensionPath;
  context.subscriptions.push(log, statusItem, serverItem);

  const command = (id: string, run: () => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, run));
  command('canon.client.openArticle', openArticle);
  command('canon.client.newJournalEntry', newJournalEntry);
  command('canon.client.search', search);
  command('canon.client.map', showMap);
  command('canon.client.status', showStatus);
  command('canon.client.showHistory', showHistory);
  command('canon.client.showSettings', showSettings);
  command('canon.client.restart', restart);
  command('canon.client.showLog', () => log.show());

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('canon')) {
        log.info('canon settings changed; restarting the server');
        void restart();
      }
    }),
    vscode.window.onDidChangeActiveTextEditor(() => void updateStatus()),
    // Trust granted later: the Python extension's interpreter may now be used.
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      if (client || serverMissing) {
        void restart();
      }
    }),
  );
  void watchInterpreter(context);
  // A store created later (by an agent, the CLI or a code action) starts the server then.
  const watcher = vscode.workspace.createFileSystemWatcher('**/.canon/**');
  context.subscriptions.push(
    watcher,
    watcher.onDidCreate(() => {
      void updateStatus();
      if (!client && !starting && !serverMissing) {
        void ensureClient();
      }
    }),
    watcher.onDidDelete(() => void updateStatus()),
  );

  void updateStatus();
  if (foldersWithStore().length > 0) {
    await ensureClient();
  } else {
    log.info('no workspace folder has a .canon/ store yet; the server starts with the first one');
  }
}

export async function deactivate(): Promise<void> {
  await stopClient();
}

function settings(scope?: vscode.Uri): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration('canon', scope);
}

/** Where a folder's store lives: the `canon.root` setting (absolute or folder-relative) or
 * `<folder>/.canon`. Only to decide whether to start the server; addresses are the server's. */
function hasStore(folder: vscode.WorkspaceFolder): boolean {
  const root = (settings(folder.uri).get<string>('root') ?? '').trim();
  const dir = !root ? path.join(folder.uri.fsPath, '.canon') : path.resolve(folder.uri.fsPath, root);
  return fs.existsSync(dir);
}

function foldersWithStore(): vscode.WorkspaceFolder[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file' && hasStore(f));
}

async function findServer(): Promise<ServerCommand> {
  const folder = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file');
  return resolveServer({
    settingPath: settings(folder?.uri).get<string>('server.path'),
    workspaceFolder: folder?.uri.fsPath,
    bundledLibs: bundledLibs(extensionPath),
    pythons: () => pythonCandidates(folder?.uri),
    pythonVersion,
    which: (name) => which(name),
    isExecutable,
  });
}

/** Interpreters for the bundled server: the Python extension's (trusted workspaces only: in an
 * untrusted one it may be the workspace's own .venv), then python3 and python on PATH. */
async function pythonCandidates(resource?: vscode.Uri): Promise<PythonCandidate[]> {
  const found: PythonCandidate[] = [];
  if (vscode.workspace.isTrusted) {
    const selected = await pythonInterpreter(resource).catch((e: unknown) => {
      log.warn(`the Python extension did not name an interpreter: ${String(e)}`);
      return undefined;
    });
    if (selected) {
      found.push({ path: selected, origin: 'the Python extension' });
    }
  }
  for (const name of ['python3', 'python']) {
    const onPath = which(name);
    if (onPath && !found.some((c) => c.path === onPath)) {
      found.push({ path: onPath, origin: 'PATH' });
    }
  }
  return found;
}

/** `<python> -c 'print(version)'`, run in the extension's directory (not the workspace). */
function pythonVersion(python: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    cp.execFile(
      python,
      ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'],
      { timeout: 15000, cwd: extensionPath || undefined },
      (err, stdout) => resolve(err ? undefined : stdout.trim() || undefined),
    );
  });
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function pythonApi(): Promise<any> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) {
    return undefined;
  }
  return ext.isActive ? ext.exports : await ext.activate();
}

/** The Python extension's interpreter for the workspace (environments API, then the old one). */
async function pythonInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
  const api = await pythonApi();
  const envs = api?.environments;
  if (envs?.getActiveEnvironmentPath) {
    const active = envs.getActiveEnvironmentPath(resource);
    const resolved = await envs.resolveEnvironment?.(active);
    return resolved?.executable?.uri?.fsPath ?? active?.path;
  }
  return api?.settings?.getExecutionDetails?.(resource)?.execCommand?.[0];
}

/** A new interpreter chosen in the Python extension restarts a bundled server on it. */
async function watchInterpreter(context: vscode.ExtensionContext): Promise<void> {
  const api = await pythonApi().catch(() => undefined);
  const event = api?.environments?.onDidChangeActiveEnvironmentPath;
  if (typeof event === 'function') {
    context.subscriptions.push(
      event(() => {
        if (running?.source === 'bundled' || serverMissing) {
          log.info('the Python interpreter changed; restarting the server');
          void restart();
        }
      }),
    );
  }
}

function ensureClient(): Promise<LanguageClient | undefined> {
  if (client) {
    return Promise.resolve(client);
  }
  starting ??= startClient().finally(() => {
    starting = undefined;
  });
  return starting;
}

async function startClient(): Promise<LanguageClient | undefined> {
  let server: ServerCommand;
  try {
    server = await findServer();
  } catch (e) {
    const message = e instanceof ServerNotFound ? e.message : `canon: ${String(e)}`;
    serverMissing = true;
    log.error(message);
    const choice = await vscode.window.showErrorMessage(message, 'Open Settings');
    if (choice) {
      void vscode.commands.executeCommand('workbench.action.openSettings', 'canon.server.path');
    }
    return undefined;
  }
  log.info(`starting ${server.description}: ${server.command} ${server.args.join(' ')}`);
  // stdio without `transport`: with TransportKind.stdio the client would append `--stdio`.
  const serverOptions: ServerOptions = {
    command: server.command,
    args: server.args,
    options: server.env ? { env: { ...process.env, ...server.env } } : undefined,
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }],
    outputChannel: log,
    // The server also asks with workspace/configuration (section `canon`); this is the snapshot
    // it can use before its first request. In a workspace not trusted yet, the project's own
    // canon.toml may not choose root or mounts either (trust granted later restarts the server).
    initializationOptions: {
      ...(JSON.parse(JSON.stringify(settings(vscode.workspace.workspaceFolders?.[0]?.uri))) as object),
      untrustedWorkspace: !vscode.workspace.isTrusted,
    },
  };
  const created = new LanguageClient('canon', 'canon', serverOptions, clientOptions);
  try {
    await created.start();
  } catch (e) {
    log.error(`the server did not start: ${String(e)}`);
    void vscode.window.showErrorMessage(`canon: the server did not start (${String(e)}); see the canon output.`);
    return undefined;
  }
  client = created;
  running = server;
  showServer(server, created.initializeResult?.serverInfo?.version);
  void updateStatus();
  return client;
}

const SOURCE_LABEL: Record<ServerCommand['source'], string> = {
  bundled: 'bundled',
  path: 'PATH',
  setting: 'setting',
};

/** The status bar says which server runs (bundled, from PATH, or the setting's). */
function showServer(server: ServerCommand, version?: string): void {
  serverItem.text = `$(server-process) canon-ls (${SOURCE_LABEL[server.source]})`;
  serverItem.tooltip = `canon: ${version ? `canon-ls ${version}, ` : ''}${server.description}. Click for the server log.`;
  serverItem.show();
}

async function stopClient(): Promise<void> {
  const current = client ?? (await starting);
  client = undefined;
  running = undefined;
  serverItem.hide();
  if (current) {
    await current.stop().catch((e: unknown) => log.warn(`stopping the server: ${String(e)}`));
  }
}

async function restart(): Promise<void> {
  serverMissing = false;
  await stopClient();
  await ensureClient();
  void updateStatus();
}

/** The uri that tells a multi-root server which folder a command is about: the active file's,
 * else the first store folder's (the server strips it before running the action). */
function aboutUri(): vscode.Uri | undefined {
  return activeFile() !== undefined
    ? vscode.window.activeTextEditor?.document.uri
    : foldersWithStore()[0]?.uri;
}

/** Sends `workspace/executeCommand` and returns the raw result; errors are logged and, unless
 * `quiet`, shown. Starts the server first when needed (unless `start` is false). */
async function callServer(
  command: string,
  argument: object,
  opts: { quiet?: boolean; start?: boolean } = {},
): Promise<unknown> {
  const c = opts.start === false ? client : await ensureClient();
  if (!c) {
    return undefined;
  }
  const about = aboutUri();
  try {
    return await c.sendRequest(ExecuteCommandRequest.type, {
      command,
      arguments: [about && !('uri' in argument) ? { ...argument, uri: about.toString() } : argument],
    });
  } catch (e) {
    log.error(`${command} failed: ${String(e)}`);
    if (!opts.quiet) {
      void vscode.window.showErrorMessage(`canon: ${command} failed (${String(e)}).`);
    }
    return undefined;
  }
}

/** Runs one of the server's §6 commands (canon.read, canon.journal, ...) and returns its text. */
async function runServer(command: string, argument: object): Promise<string | undefined> {
  const result = await callServer(command, argument);
  if (result === undefined) {
    return undefined;
  }
  return typeof result === 'string' ? result : JSON.stringify(result, null, 2);
}

/** Asks the server what a file or address is (`canon.resolve`): address, governing article. */
async function resolveWith(argument: object, start = true): Promise<Resolved | undefined> {
  const result = await callServer('canon.resolve', argument, { quiet: true, start });
  const resolved = parseResolved(result);
  if (result !== undefined && result !== null && !resolved) {
    log.warn(`canon.resolve answered ${JSON.stringify(result)}`);
  }
  return resolved;
}

interface ActiveFile {
  folder: vscode.WorkspaceFolder;
  uri: vscode.Uri;
  file: string;
  rel: string;
}

function activeFile(): ActiveFile | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri;
  if (!uri || uri.scheme !== 'file') {
    return undefined;
  }
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  if (!folder) {
    return undefined;
  }
  return { folder, uri, file: uri.fsPath, rel: path.relative(folder.uri.fsPath, uri.fsPath) };
}

/** The status bar item follows the active file; answers that arrive late are dropped. */
async function updateStatus(): Promise<void> {
  const mine = ++statusGeneration;
  const active = activeFile();
  if (!active || !client || !hasStore(active.folder)) {
    statusItem.hide();
    return;
  }
  const status = statusFor(await resolveWith({ uri: active.uri.toString() }, false));
  if (mine !== statusGeneration) {
    return;
  }
  if (!status) {
    statusItem.hide();
    return;
  }
  statusItem.text = status.text;
  statusItem.tooltip = status.tooltip;
  statusItem.show();
}

async function openArticle(): Promise<void> {
  const active = activeFile();
  if (!active) {
    void vscode.window.showInformationMessage('canon: open a file of a workspace folder first.');
    return;
  }
  const resolved = await resolveWith({ uri: active.uri.toString() });
  if (resolved?.exists && resolved.article) {
    await vscode.window.showTextDocument(vscode.Uri.parse(resolved.article));
    return;
  }
  if (!client) {
    return; // no server: ensureClient already said why
  }
  const capsule = await vscode.window.showInputBox({
    title: `Create article for ${resolved?.address || active.rel}`,
    prompt: 'No article governs this file yet. One dense line: what must a reader know about it?',
    placeHolder: 'capsule',
  });
  if (!capsule) {
    return;
  }
  const text = await runServer('canon.write', { path: active.file, capsule });
  if (text) {
    log.info(text);
    void vscode.window.showInformationMessage(text.split('\n')[0]);
    const created = await resolveWith({ uri: active.uri.toString() });
    if (created?.exists && created.article) {
      await vscode.window.showTextDocument(vscode.Uri.parse(created.article));
    }
    void updateStatus();
  }
}

async function newJournalEntry(): Promise<void> {
  const active = activeFile();
  const subject = active ? journalSubject(await resolveWith({ uri: active.uri.toString() })) : undefined;
  const body = await vscode.window.showInputBox({
    title: subject ? `Journal an entry about ${subject}` : 'New journal entry',
    prompt: 'What happened? (decisions, transitions, why; the entry is never rewritten)',
  });
  if (!body) {
    return;
  }
  const argument: { body: string; subject?: string[] } = { body };
  if (subject) {
    argument.subject = [subject];
  }
  const text = await runServer('canon.journal', argument);
  if (text) {
    log.info(text);
    void vscode.window.showInformationMessage(text.split('\n')[0]);
  }
}

interface ArticleItem extends vscode.QuickPickItem {
  address?: string;
}

/** Splits `address: capsule` lines (map, search) into pick items; other lines become separators. */
function articleItems(text: string): ArticleItem[] {
  const items: ArticleItem[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim().replace(/^(?:\d+[.)]|[-*])\s+/, '');
    if (!line) {
      continue;
    }
    const cut = line.indexOf(': ');
    const address = cut > 0 ? line.slice(0, cut) : line.endsWith(':') ? line.slice(0, -1) : '';
    if (address && !/\s/.test(address)) {
      items.push({ label: address, detail: cut > 0 ? line.slice(cut + 2) : '', address });
    } else {
      items.push({ label: line, kind: vscode.QuickPickItemKind.Separator });
    }
  }
  return items;
}

async function openAddress(address: string): Promise<void> {
  const resolved = await resolveWith({ address });
  if (resolved?.exists && resolved.governing === address && resolved.article) {
    await vscode.window.showTextDocument(vscode.Uri.parse(resolved.article));
    return;
  }
  const text = await runServer('canon.read', { path: address });
  if (text) {
    const doc = await vscode.workspace.openTextDocument({ content: text, language: 'markdown' });
    await vscode.window.showTextDocument(doc);
  }
}

async function search(): Promise<void> {
  const pick = vscode.window.createQuickPick<ArticleItem>();
  pick.title = 'canon: search articles';
  pick.placeholder = 'words to search for (BM25 over address, title, capsule, body)';
  pick.matchOnDetail = true;
  let timer: NodeJS.Timeout | undefined;
  let generation = 0;
  pick.onDidChangeValue((query) => {
    if (timer) {
      clearTimeout(timer);
    }
    timer = setTimeout(async () => {
      const mine = ++generation;
      if (!query.trim()) {
        pick.items = [];
        return;
      }
      pick.busy = true;
      const text = await runServer('canon.search', { query });
      if (mine === generation) {
        pick.busy = false;
        pick.items = text ? articleItems(text) : [];
      }
    }, 200);
  });
  pick.onDidAccept(async () => {
    const chosen = pick.selectedItems[0];
    pick.hide();
    if (chosen?.address) {
      await openAddress(chosen.address);
    }
  });
  pick.onDidHide(() => pick.dispose());
  pick.show();
}

async function showMap(): Promise<void> {
  const text = await runServer('canon.map', {});
  if (text === undefined) {
    return;
  }
  const items = articleItems(text).filter((i) => i.address);
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`canon: ${text.trim()}`);
    return;
  }
  const chosen = await vscode.window.showQuickPick(items, {
    title: `canon map: ${items.length} articles`,
    matchOnDetail: true,
  });
  if (chosen?.address) {
    await openAddress(chosen.address);
  }
}

async function showStatus(): Promise<void> {
  const active = activeFile();
  const text = await runServer('canon.status', active ? { path: active.file } : {});
  if (text) {
    log.info(text);
    void vscode.window.showInformationMessage(`canon: ${text.trim()}`);
  }
}

/** "canon: Show Settings": each of the six options, its value and where it comes from (these
 * settings, your settings.json, the project's canon.toml, the default), in the canon output. */
async function showSettings(): Promise<void> {
  const active = activeFile();
  const text = await runServer('canon.settings', active ? { path: active.file } : {});
  if (text) {
    log.info(`canon settings:\n${text.trim()}`);
    log.show(true);
  }
}

/** "canon: Show History": the governing article's history (canon.history) in a read-only tab. */
async function showHistory(): Promise<void> {
  const active = activeFile();
  if (!active) {
    void vscode.window.showInformationMessage('canon: open a file of a workspace folder first.');
    return;
  }
  const text = await runServer('canon.history', { path: active.file });
  if (text) {
    const uri = vscode.Uri.from({ scheme: HISTORY_SCHEME, path: `/${active.rel} history`, query: String(Date.now()) });
    historyDocs().set(uri.toString(), text);
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(doc, { preview: false });
  }
}

const HISTORY_SCHEME = 'canon-history';
let historyTexts: Map<string, string> | undefined;

/** Texts of the read-only history documents, served by a content provider registered on first use. */
function historyDocs(): Map<string, string> {
  if (!historyTexts) {
    const texts = new Map<string, string>();
    historyTexts = texts;
    vscode.workspace.registerTextDocumentContentProvider(HISTORY_SCHEME, {
      provideTextDocumentContent: (uri) => texts.get(uri.toString()) ?? '',
    });
  }
  return historyTexts;
}
