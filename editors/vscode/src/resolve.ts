// The server's answer to `canon.resolve`: a file's address and governing article. The client
// asks instead of re-implementing the address and resolution rule. Free of `vscode` for tests.

export interface Resolved {
  folder: string; // the workspace folder's URI
  kind: string; // 'asset' | 'article' | 'journal' | 'store'
  address: string; // the file's own address ('' for journal entries and other store files)
  governing: string | null; // the article that answers: itself or the nearest ancestor
  article: string | null; // URI of the governing article, else where the exact one would go
  exists: boolean; // the governing article's file exists
}

/** The server's answer, or undefined for null, a sentence (bad argument) or anything else. */
export function parseResolved(value: unknown): Resolved | undefined {
  if (typeof value !== 'object' || value === null) {
    return undefined;
  }
  const r = value as Record<string, unknown>;
  if (typeof r.address !== 'string' || typeof r.kind !== 'string' || typeof r.exists !== 'boolean') {
    return undefined;
  }
  return {
    folder: typeof r.folder === 'string' ? r.folder : '',
    kind: r.kind,
    address: r.address,
    governing: typeof r.governing === 'string' ? r.governing : null,
    article: typeof r.article === 'string' ? r.article : null,
    exists: r.exists,
  };
}

/** The status bar item's text and tooltip for a resolved file; undefined hides the item. */
export function statusFor(r: Resolved | undefined): { text: string; tooltip: string } | undefined {
  if (!r || (r.kind !== 'asset' && r.kind !== 'article')) {
    return undefined;
  }
  if (r.governing && r.exists) {
    return {
      text: `$(book) ${r.governing}`,
      tooltip:
        r.governing === r.address
          ? `canon: ${r.governing} governs this file. Click to open the article.`
          : `canon: ${r.governing} governs ${r.address}. Click to open the article.`,
    };
  }
  return {
    text: '$(book) no article',
    tooltip: 'canon: no article governs this file. Click to create one.',
  };
}

/** The address a journal entry about this file is about: its governing article, else itself. */
export function journalSubject(r: Resolved | undefined): string | undefined {
  return r?.governing ?? (r?.address ? r.address : undefined);
}
