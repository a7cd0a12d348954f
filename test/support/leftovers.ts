import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * Every process a test starts carries this variable (the spawn helpers add it to the bare
 * environments they build; the rest inherit it), with one value per `vitest run`: what is still
 * running with it once the run is over was left behind, whoever its parent is now.
 */
export const RUN_MARKER = 'PET_GATEWAY_TEST_RUN';

/** This run's marker, made once per run (vitest's workers inherit it from the process that made it). */
export function runMarker(): string {
  process.env[RUN_MARKER] ??= randomUUID();
  return process.env[RUN_MARKER];
}

/**
 * `env` with this run's marker, for a child started on a bare environment, and the run's compile
 * cache (vitest.config.ts) unless `env` says otherwise: it spares each start most of its
 * compilation and changes nothing the process does.
 */
export function marked(env: Record<string, string>): Record<string, string> {
  const marker = process.env[RUN_MARKER];
  const cache = process.env.NODE_COMPILE_CACHE;
  return {
    ...(cache ? { NODE_COMPILE_CACHE: cache } : {}),
    ...env,
    ...(marker ? { [RUN_MARKER]: marker } : {}),
  };
}

/** Processes carrying `marker` other than vitest's own (the runner and its workers), as `pid command`. */
export function processesMarked(marker: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const environ = readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (!environ.split('\0').includes(`${RUN_MARKER}=${marker}`)) continue;
      const command = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').trim();
      if (/vitest/.test(command)) continue;
      found.push(`${entry} ${command}`);
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}
