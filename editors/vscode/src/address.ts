// The client's small view of SPEC §3 (addresses) and §4 (resolution), used for the status bar and
// "Open governing article" without a server round trip. Free of `vscode` for unit tests.
import * as fs from 'fs';
import * as path from 'path';

/** SPEC §3 address of a project-relative path: segments cleaned, extension stripped once. */
export function addressOf(relPath: string): string {
  const out: string[] = [];
  for (const seg of relPath.replace(/\\/g, '/').split('/')) {
    if (seg === '' || seg === '.') {
      continue;
    }
    if (seg === '..') {
      out.pop();
      continue;
    }
    out.push(seg);
  }
  if (out.length === 0) {
    return '';
  }
  const last = out[out.length - 1];
  const dot = last.lastIndexOf('.');
  if (dot > 0) {
    out[out.length - 1] = last.slice(0, dot);
  }
  return out.join('/');
}

/** The address and its ancestors, nearest first: a/b/c, a/b, a. */
export function* ancestors(address: string): Generator<string> {
  let current = address;
  while (current) {
    yield current;
    const cut = current.lastIndexOf('/');
    current = cut < 0 ? '' : current.slice(0, cut);
  }
}

/** The store root of a workspace folder: the `canon.root` setting or `<folder>/.canon`. */
export function storeRoot(folder: string, rootSetting?: string): string {
  const root = (rootSetting ?? '').trim();
  if (!root) {
    return path.join(folder, '.canon');
  }
  return path.isAbsolute(root) ? root : path.join(folder, root);
}

export function articleFile(store: string, address: string): string {
  return path.join(store, 'articles', ...address.split('/')) + '.md';
}

export interface Governing {
  address: string; // the file's own address
  governing: string; // the address of the article that answers (itself or an ancestor)
  file: string; // that article's path
}

/** SPEC §4: the exact article, else the nearest ancestor's; undefined when none governs. */
export function governingArticle(
  folder: string,
  file: string,
  rootSetting?: string,
  exists: (p: string) => boolean = fs.existsSync,
): Governing | undefined {
  const rel = path.relative(folder, file);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel)) {
    return undefined;
  }
  const store = storeRoot(folder, rootSetting);
  const articles = path.join(store, 'articles');
  const inStore = path.relative(articles, file);
  const address =
    !inStore.startsWith('..') && !path.isAbsolute(inStore) ? addressOf(inStore) : addressOf(rel);
  for (const candidate of ancestors(address)) {
    const target = articleFile(store, candidate);
    if (exists(target)) {
      return { address, governing: candidate, file: target };
    }
  }
  return undefined;
}
