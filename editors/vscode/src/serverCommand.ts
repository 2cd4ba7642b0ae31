// Finds the canon-ls server to launch. Kept free of the `vscode` module so that plain
// `node --test` can cover every branch with injected look-ups.
import * as fs from 'fs';
import * as path from 'path';

/** Which option produced the command: shown in the status bar and the log. */
export type ServerSource = 'setting' | 'bundled' | 'path';

export interface ServerCommand {
  command: string;
  args: string[];
  /** Variables added to the extension host's environment (PYTHONPATH for the bundled server). */
  env?: Record<string, string>;
  source: ServerSource;
  /** What runs, in one phrase: "the bundled canon-ls on /usr/bin/python3 (Python 3.11.2)". */
  description: string;
}

/** A Python interpreter to try for the bundled server, and where it came from. */
export interface PythonCandidate {
  path: string;
  origin: string; // 'the Python extension' | 'PATH'
}

export interface ResolveDeps {
  /** The `canon.server.path` setting ('' or undefined when unset). */
  settingPath?: string;
  /** The workspace folder a relative `canon.server.path` is resolved against. */
  workspaceFolder?: string;
  /** The extension's bundled/libs directory when it holds canon_ls (a packaged .vsix). */
  bundledLibs?: string;
  /** Interpreters to try for the bundled server, in order. */
  pythons(): Promise<PythonCandidate[]>;
  /** The interpreter's version ("3.11.2"), or undefined when it does not run. */
  pythonVersion(python: string): Promise<string | undefined>;
  /** Finds an executable on PATH, or undefined. */
  which(name: string): string | undefined;
  /** True when the path is an executable file. */
  isExecutable(file: string): boolean;
}

export const MIN_PYTHON: [number, number] = [3, 11];

export class ServerNotFound extends Error {}

/**
 * Order: the `canon.server.path` setting (a deliberate choice; user or machine settings only),
 * then the server bundled in the extension run as `<python> -P -m canon_ls` by the first
 * interpreter of at least Python 3.11 (the Python extension's, then `python3` on PATH), then
 * `canon-ls` on PATH. A setting that points nowhere is an error of its own (silently falling
 * back would hide it).
 */
export async function resolveServer(deps: ResolveDeps): Promise<ServerCommand> {
  const setting = (deps.settingPath ?? '').trim();
  if (setting) {
    return fromSetting(setting, deps);
  }
  const skipped: string[] = [];
  if (deps.bundledLibs) {
    const candidates = await deps.pythons().catch(() => [] as PythonCandidate[]);
    for (const python of candidates) {
      const version = await deps.pythonVersion(python.path).catch(() => undefined);
      if (!version) {
        skipped.push(`${python.path} (from ${python.origin}) did not run`);
      } else if (!atLeast(version, MIN_PYTHON)) {
        skipped.push(`${python.path} (from ${python.origin}) is Python ${version}`);
      } else {
        return {
          command: python.path,
          // -P: never put the working directory (the workspace) ahead of the bundled libraries.
          args: ['-P', '-m', 'canon_ls'],
          env: { PYTHONPATH: deps.bundledLibs },
          source: 'bundled',
          description: `the bundled canon-ls on ${python.path} (Python ${version}, from ${python.origin})`,
        };
      }
    }
    if (candidates.length === 0) {
      skipped.push('no Python interpreter was found (the Python extension, python3 on PATH)');
    }
  }
  const onPath = deps.which('canon-ls');
  if (onPath) {
    return { command: onPath, args: [], source: 'path', description: `canon-ls on PATH (${onPath})` };
  }
  throw new ServerNotFound(notFoundMessage(skipped));
}

function fromSetting(setting: string, deps: ResolveDeps): ServerCommand {
  const expanded = expandHome(setting);
  let found: string | undefined;
  if (path.isAbsolute(expanded)) {
    found = expanded;
  } else if (/[\\/]/.test(expanded)) {
    // A relative path belongs to the workspace folder, never to the extension host's cwd.
    if (!deps.workspaceFolder) {
      throw new ServerNotFound(
        `canon: "canon.server.path" is the relative path ${setting}, and there is no workspace ` +
          'folder to resolve it against; use an absolute path.',
      );
    }
    found = path.resolve(deps.workspaceFolder, expanded);
  } else {
    found = deps.which(expanded); // a bare command name: looked up on PATH
  }
  if (!found || !deps.isExecutable(found)) {
    throw new ServerNotFound(
      `canon: "canon.server.path" is set to ${setting}, which is not an executable file` +
        (found && found !== setting ? ` (${found})` : '') +
        '; fix or clear the setting.',
    );
  }
  return { command: found, args: [], source: 'setting', description: `canon.server.path (${found})` };
}

export function notFoundMessage(skipped: string[] = []): string {
  const why = skipped.length ? ` Tried: ${skipped.join('; ')}.` : '';
  return (
    'canon: no way to run the canon-ls language server was found. Install Python 3.11 or newer ' +
    '(python3 on PATH, or select it in the Python extension), or install canon-ls ' +
    '(pipx install /path/to/a/clone/of/canon-ls) so canon-ls is on PATH, or set ' +
    '"canon.server.path" in your user ' +
    `settings.${why}`
  );
}

/** True when a dotted version ("3.11.2") is at least `min` ([3, 11]). */
export function atLeast(version: string, min: [number, number]): boolean {
  const [major, minor] = version.split('.').map((n) => Number.parseInt(n, 10));
  if (Number.isNaN(major) || Number.isNaN(minor)) {
    return false;
  }
  return major > min[0] || (major === min[0] && minor >= min[1]);
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

/** `which`: the first executable called `name` on the given PATH (a bare name only). */
export function which(
  name: string,
  envPath: string = process.env.PATH ?? '',
  exists: (file: string) => boolean = isExecutable,
): string | undefined {
  if (name.includes('/') || name.includes('\\')) {
    return undefined; // a path is not looked up; callers resolve it against a known folder
  }
  const exts =
    process.platform === 'win32'
      ? (process.env.PATHEXT ?? '.EXE;.CMD;.BAT').split(';').concat([''])
      : [''];
  for (const dir of envPath.split(path.delimiter)) {
    if (!dir || !path.isAbsolute(dir)) {
      continue; // a relative PATH entry would mean the cwd
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

/** The extension's bundled/libs directory when a packaged build put canon_ls there. */
export function bundledLibs(extensionPath: string): string | undefined {
  const libs = path.join(extensionPath, 'bundled', 'libs');
  return fs.existsSync(path.join(libs, 'canon_ls', '__main__.py')) ? libs : undefined;
}
