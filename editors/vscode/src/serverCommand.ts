// Finds the canon-ls server to launch. Kept free of the `vscode` module so that plain
// `node --test` can cover every branch with injected look-ups.
import * as fs from 'fs';
import * as path from 'path';

export interface ServerCommand {
  command: string;
  args: string[];
  /** Which of the three options produced the command, for the log. */
  source: 'setting' | 'path' | 'python';
}

export interface ResolveDeps {
  /** The `canon.server.path` setting ('' or undefined when unset). */
  settingPath?: string;
  /** Finds an executable on PATH, or undefined. */
  which(name: string): string | undefined;
  /** True when the path is an executable file. */
  isExecutable(file: string): boolean;
  /** The Python extension's active interpreter for the workspace, or undefined. */
  pythonInterpreter(): Promise<string | undefined>;
  /** True when that interpreter can import the module (canon_ls). */
  hasModule(python: string, module: string): Promise<boolean>;
}

export const NOT_FOUND =
  'Canon: the canon-ls language server was not found. Set "canon.server.path" to the canon-ls ' +
  'executable, put canon-ls on PATH (pip install canon-ls), or select a Python interpreter ' +
  'that has canon-ls installed in the Python extension.';

export class ServerNotFound extends Error {}

/**
 * Order: the `canon.server.path` setting, then `canon-ls` on PATH, then
 * `<interpreter> -m canon_ls` with the Python extension's active interpreter.
 * A setting that points nowhere is an error of its own (silently falling back would hide it).
 */
export async function resolveServer(deps: ResolveDeps): Promise<ServerCommand> {
  const setting = (deps.settingPath ?? '').trim();
  if (setting) {
    const expanded = expandHome(setting);
    const found = path.isAbsolute(expanded) ? expanded : deps.which(expanded) ?? expanded;
    if (!deps.isExecutable(found)) {
      throw new ServerNotFound(
        `Canon: "canon.server.path" is set to ${setting}, which is not an executable file; ` +
          'fix or clear the setting.',
      );
    }
    return { command: found, args: [], source: 'setting' };
  }
  const onPath = deps.which('canon-ls');
  if (onPath) {
    return { command: onPath, args: [], source: 'path' };
  }
  const python = await deps.pythonInterpreter().catch(() => undefined);
  if (python && (await deps.hasModule(python, 'canon_ls').catch(() => false))) {
    return { command: python, args: ['-m', 'canon_ls'], source: 'python' };
  }
  throw new ServerNotFound(NOT_FOUND);
}

function expandHome(p: string): string {
  const home = process.env.HOME || process.env.USERPROFILE;
  return home && (p === '~' || p.startsWith('~/')) ? path.join(home, p.slice(1)) : p;
}

/** True when `file` is a regular file we may execute. */
export function isExecutable(file: string): boolean {
  try {
    const st = fs.statSync(file);
    if (!st.isFile()) {
      return false;
    }
    if (process.platform === 'win32') {
      return true;
    }
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `which`: the first executable called `name` on the given PATH. */
export function which(
  name: string,
  envPath: string = process.env.PATH ?? '',
  exists: (file: string) => boolean = isExecutable,
): string | undefined {
  if (name.includes('/') || name.includes('\\')) {
    return exists(name) ? path.resolve(name) : undefined;
  }
  const exts =
    process.platform === 'win32'
      ? (process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').concat([''])
      : [''];
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (exists(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}
