import { findChromium } from './chromium.ts';

/**
 * vitest's global setup: finds Chromium once, before any test file starts. Without Debian's, the
 * @sparticuz/chromium build is unpacked into the temp directory on first use, and that package
 * takes an existing directory for a finished one: the browser test files, started side by side on
 * a fresh machine, each began unpacking, and the later ones launched a half-written browser.
 */
export default async function setup(): Promise<void> {
  await findChromium();
}
