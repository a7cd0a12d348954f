import { setTimeout as sleep } from 'node:timers/promises';
import { processesMarked, runMarker } from './leftovers.ts';

/**
 * vitest's global setup: gives the run its marker, and at the end of the run fails it when a
 * process a test started is still running (an nginx worker re-parented to init, a gateway worker),
 * naming each; they are ended too, so a machine that runs the suite all day does not collect them.
 */
export default function setup(): () => Promise<void> {
  const marker = runMarker();
  return async () => {
    // Processes signalled in the last test's teardown get a moment to exit.
    let left = processesMarked(marker);
    for (let i = 0; i < 40 && left.length > 0; i++) {
      await sleep(50);
      left = processesMarked(marker);
    }
    if (left.length === 0) return;
    for (const line of left) {
      try {
        process.kill(Number(line.split(' ')[0]), 'SIGKILL');
      } catch {
        // Gone meanwhile.
      }
    }
    // vitest reports an error thrown here but still exits 0: the exit code is set as well.
    process.exitCode = 1;
    throw new Error(
      `processes the tests started were still running after the run (now ended):\n${left.join('\n')}`,
    );
  };
}
