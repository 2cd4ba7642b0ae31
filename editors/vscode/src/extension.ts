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
import { addressOf, articleFile, governingArticle, storeRoot } from './address';
import { isExecutable, resolveServer, ServerCommand, ServerNotFound, which } from './serverCommand';

let client: LanguageClient | undefined;
let starting: Promise<LanguageClient | undefined> | undefined;
let serverMissing = false; // set when no server was found: store events stop retrying until a restart
let log: vscode.LogOutputChannel;
let statusItem: vscode.StatusBarItem;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  log = vscode.window.createOutputChannel('Canon', { log: true });
  statusItem = vscode.window.createStatusBarItem('canon.governing', vscode.StatusBarAlignment.Left, 50);
  statusItem.name = 'Canon governing article';
  statusItem.command = 'canon.client.openArticle';
  context.subscriptions.push(log, statusItem);

  const command = (id: string, run: () => unknown) =>
    context.subscriptions.push(vscode.commands.registerCommand(id, run));
  command('canon.client.openArticle', openArticle);
  command('canon.client.newJournalEntry', newJournalEntry);
  command('canon.client.search', search);
  command('canon.client.map', showMap);
  command('canon.client.status', showStatus);
  command('canon.client.restart', restart);

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('canon')) {
        log.info('canon settings changed; restarting the server');
        void restart();
      }
    }),
    vscode.window.onDidChangeActiveTextEditor(() => updateStatus()),
  );
  // A store created later (by an agent, the CLI or a code action) starts the server then.
  const watcher = vscode.workspace.createFileSystemWatcher('**/.canon/**');
  context.subscriptions.push(
    watcher,
    watcher.onDidCreate(() => {
      updateStatus();
      if (!client && !starting && !serverMissing) {
        void ensureClient();
      }
    }),
    watcher.onDidDelete(() => updateStatus()),
  );

  updateStatus();
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

function foldersWithStore(): vscode.WorkspaceFolder[] {
  return (vscode.workspace.workspaceFolders ?? []).filter(
    (f) =>
      f.uri.scheme === 'file' &&
      fs.existsSync(storeRoot(f.uri.fsPath, settings(f.uri).get<string>('root'))),
  );
}

async function findServer(): Promise<ServerCommand> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
  return resolveServer({
    settingPath: settings(folder).get<string>('server.path'),
    which: (name) => which(name),
    isExecutable,
    pythonInterpreter: () => pythonInterpreter(folder),
    hasModule: (python, module) =>
      new Promise((resolve) => {
        cp.execFile(python, ['-c', `import ${module}`], { timeout: 15000 }, (err) =>
          resolve(!err),
        );
      }),
  });
}

/** The Python extension's interpreter for the workspace (new environments API, then the old one). */
async function pythonInterpreter(resource?: vscode.Uri): Promise<string | undefined> {
  const ext = vscode.extensions.getExtension('ms-python.python');
  if (!ext) {
    return undefined;
  }
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const api: any = ext.isActive ? ext.exports : await ext.activate();
  const envs = api?.environments;
  if (envs?.getActiveEnvironmentPath) {
    const active = envs.getActiveEnvironmentPath(resource);
    const resolved = await envs.resolveEnvironment?.(active);
    return resolved?.executable?.uri?.fsPath ?? active?.path;
  }
  return api?.settings?.getExecutionDetails?.(resource)?.execCommand?.[0];
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
    const message = e instanceof ServerNotFound ? e.message : `Canon: ${String(e)}`;
    serverMissing = true;
    log.error(message);
    const choice = await vscode.window.showErrorMessage(message, 'Open Settings');
    if (choice) {
      void vscode.commands.executeCommand('workbench.action.openSettings', 'canon.server.path');
    }
    return undefined;
  }
  log.info(`starting ${server.command} ${server.args.join(' ')} (found via ${server.source})`);
  // stdio without `transport`: with TransportKind.stdio the client would append `--stdio`.
  const serverOptions: ServerOptions = { command: server.command, args: server.args };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }],
    outputChannel: log,
    // The server also asks with workspace/configuration (section `canon`); this is the snapshot
    // it can use before its first request.
    initializationOptions: JSON.parse(
      JSON.stringify(settings(vscode.workspace.workspaceFolders?.[0]?.uri)),
    ) as unknown,
  };
  const created = new LanguageClient('canon', 'Canon', serverOptions, clientOptions);
  try {
    await created.start();
  } catch (e) {
    log.error(`the server did not start: ${String(e)}`);
    void vscode.window.showErrorMessage(`Canon: the server did not start (${String(e)}); see the Canon output.`);
    return undefined;
  }
  client = created;
  return client;
}

async function stopClient(): Promise<void> {
  const current = client ?? (await starting);
  client = undefined;
  if (current) {
    await current.stop().catch((e: unknown) => log.warn(`stopping the server: ${String(e)}`));
  }
}

async function restart(): Promise<void> {
  serverMissing = false;
  await stopClient();
  await ensureClient();
  updateStatus();
}

/**
 * Runs one of the server's §6 commands (canon.read, canon.journal, ...) and returns its text.
 * `uri` (the active file's, else the first store folder's) tells a multi-root server which
 * workspace folder the command is about; the server strips it before running the action.
 */
async function runServer(command: string, argument: object): Promise<string | undefined> {
  const c = await ensureClient();
  if (!c) {
    return undefined;
  }
  const about =
    activeFile() !== undefined
      ? vscode.window.activeTextEditor?.document.uri
      : foldersWithStore()[0]?.uri;
  try {
    const result: unknown = await c.sendRequest(ExecuteCommandRequest.type, {
      command,
      arguments: [about && !('uri' in argument) ? { ...argument, uri: about.toString() } : argument],
    });
    return typeof result === 'string' ? result : JSON.stringify(result, null, 2);
  } catch (e) {
    log.error(`${command} failed: ${String(e)}`);
    void vscode.window.showErrorMessage(`Canon: ${command} failed (${String(e)}).`);
    return undefined;
  }
}

interface ActiveFile {
  folder: vscode.WorkspaceFolder;
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
  return { folder, file: uri.fsPath, rel: path.relative(folder.uri.fsPath, uri.fsPath) };
}

function governingOf(active: ActiveFile) {
  return governingArticle(
    active.folder.uri.fsPath,
    active.file,
    settings(active.folder.uri).get<string>('root'),
  );
}

function updateStatus(): void {
  const active = activeFile();
  if (!active || !fs.existsSync(storeRoot(active.folder.uri.fsPath, settings(active.folder.uri).get<string>('root')))) {
    statusItem.hide();
    return;
  }
  const gov = governingOf(active);
  if (gov) {
    statusItem.text = `$(book) ${gov.governing}`;
    statusItem.tooltip =
      gov.governing === gov.address
        ? `Canon: ${gov.governing} governs this file. Click to open the article.`
        : `Canon: ${gov.governing} governs ${gov.address}. Click to open the article.`;
  } else {
    statusItem.text = '$(book) no article';
    statusItem.tooltip = 'Canon: no article governs this file. Click to create one.';
  }
  statusItem.show();
}

async function openArticle(): Promise<void> {
  const active = activeFile();
  if (!active) {
    void vscode.window.showInformationMessage('Canon: open a file of a workspace folder first.');
    return;
  }
  const gov = governingOf(active);
  if (gov) {
    await vscode.window.showTextDocument(vscode.Uri.file(gov.file));
    return;
  }
  const capsule = await vscode.window.showInputBox({
    title: `Create article for ${active.rel}`,
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
    const created = governingOf(active);
    if (created) {
      await vscode.window.showTextDocument(vscode.Uri.file(created.file));
    }
    updateStatus();
  }
}

async function newJournalEntry(): Promise<void> {
  const active = activeFile();
  const gov = active ? governingOf(active) : undefined;
  const subject = gov?.governing ?? (active ? addressOf(active.rel) : undefined);
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
  for (const folder of foldersWithStore()) {
    const file = articleFile(storeRoot(folder.uri.fsPath, settings(folder.uri).get<string>('root')), address);
    if (fs.existsSync(file)) {
      await vscode.window.showTextDocument(vscode.Uri.file(file));
      return;
    }
  }
  const text = await runServer('canon.read', { path: address });
  if (text) {
    const doc = await vscode.workspace.openTextDocument({ content: text, language: 'markdown' });
    await vscode.window.showTextDocument(doc);
  }
}

async function search(): Promise<void> {
  const pick = vscode.window.createQuickPick<ArticleItem>();
  pick.title = 'Canon: search articles';
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
    void vscode.window.showInformationMessage(`Canon: ${text.trim()}`);
    return;
  }
  const chosen = await vscode.window.showQuickPick(items, {
    title: `Canon map: ${items.length} articles`,
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
    void vscode.window.showInformationMessage(`Canon: ${text.trim()}`);
  }
}
