/** Builds the chat and the launcher under `out`; resolves with the public folder, `out`/browser. */
export function buildBrowser(out: string): Promise<string>;
/** The name of the chat file in a public folder (`dist/browser` unless said), as its manifest names it. */
export function builtChat(dir?: string): Promise<string>;
