import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

// The browser: Debian's Chromium when the machine has it (CHROMIUM_PATH, else /usr/bin/chromium);
// otherwise the Chromium build that the @sparticuz/chromium devDependency carries inside its npm
// package (nothing is downloaded: `npm ci` brings it, and it is unpacked into the temp directory on
// first use), so a fresh clone runs the browser tests with `npm ci` alone. Only when neither can start
// is a test skipped, saying why; in CI (CI set) that fails the run instead.
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Where Chromium is, or why there is none. */
export async function findChromium(): Promise<{ path?: string; problem?: string }> {
  if (existsSync(CHROMIUM)) return { path: CHROMIUM };
  try {
    const { default: packaged } = await import('@sparticuz/chromium');
    return { path: await packaged.executablePath() };
  } catch (error) {
    return {
      problem: `no Chromium at ${CHROMIUM}, and @sparticuz/chromium did not unpack (${(error as Error).message})`,
    };
  }
}

/**
 * Finds Chromium for the test file `name`: skipped with a warning when there is none, an error in CI.
 * `launch` starts it headless (extra `args` on top of the usual ones).
 */
export async function chromiumFor(name: string) {
  const found = await findChromium();
  if (!found.path && process.env.CI) throw new Error(`[${name}] ${found.problem}`);
  if (!found.path) console.warn(`[${name}] skipped: ${found.problem} (run npm ci)`);
  return {
    available: found.path !== undefined,
    launch: (args: string[] = []) =>
      chromium.launch({
        ...(found.path ? { executablePath: found.path } : {}),
        args: [
          '--no-sandbox',
          '--disable-gpu',
          '--disable-quic',
          '--no-first-run',
          '--disable-background-networking',
          '--disable-component-update',
          '--disable-sync',
          ...args,
        ],
      }),
  };
}
