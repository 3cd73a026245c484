/** The path of a Chromium to run the browser tests and benchmarks with. */
export function findChromium(): string;
/** Flags for a headless Chromium on a machine with no network but loopback. */
export const chromiumFlags: string[];
