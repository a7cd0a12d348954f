// @tier slow: starts processes and kills them every way a test can

import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { startNginx } from '../../chaos/nginx.ts';
import { freePort } from '../../chaos/traffic.ts';
import { processesMarked, RUN_MARKER } from '../support/leftovers.ts';

// #44 item 9: no process a test starts outlives it, however it is stopped.

const NGINX = process.env.NGINX_PATH ?? '/usr/sbin/nginx';

const alive = (pid: number) =>
  existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, 'utf8'));

describe('processes the tests start', () => {
  it.skipIf(!existsSync(NGINX) && !process.env.CI)(
    'a SIGKILLed nginx master takes its workers with it',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'pet-gateway-leftovers-'));
      chmodSync(dir, 0o755);
      try {
        const nginx = startNginx(dir, await freePort(), [await freePort()]);
        const master = nginx.child.pid as number;
        let workers: number[] = [];
        for (let i = 0; i < 100 && workers.length === 0; i++) {
          await sleep(50);
          const listed = readFileSync(`/proc/${master}/task/${master}/children`, 'utf8').trim();
          workers = listed === '' ? [] : listed.split(' ').map(Number);
        }
        expect(workers.length).toBeGreaterThan(0);
        await nginx.stop('SIGKILL');
        for (let i = 0; i < 40 && workers.some(alive); i++) await sleep(50);
        expect(workers.filter(alive)).toEqual([]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  it('the end-of-run check finds a process left running with the run’s marker, and not once it has ended', async () => {
    const marker = `check-${process.pid}-${Date.now()}`;
    const child = spawn('sleep', ['30'], { env: { PATH: process.env.PATH ?? '', [RUN_MARKER]: marker } });
    try {
      await sleep(100);
      expect(processesMarked(marker)).toEqual([`${child.pid} sleep 30`]);
    } finally {
      child.kill('SIGKILL');
    }
    for (let i = 0; i < 40 && processesMarked(marker).length > 0; i++) await sleep(25);
    expect(processesMarked(marker)).toEqual([]);
  });
});
