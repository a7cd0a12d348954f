// @tier slow: npm itself, signalled as a process manager would

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { freePort } from '../../chaos/traffic.ts';

// A process manager (systemd, a supervisor, a container's init) signals the pid it started: with
// `npm start`, npm's. The gateway must stop with it, not stay behind re-parented to init, holding
// its port.

const ROOT = new URL('../..', import.meta.url);

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('npm start, signalled as a process manager signals it', () => {
  it.each(['SIGTERM', 'SIGINT'] as const)(
    '%s to npm start’s own pid stops the gateway and frees its port',
    async (signal) => {
      const port = await freePort();
      const npm = spawn('npm', ['start'], {
        cwd: ROOT,
        env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', PETSTORE_DB: ':memory:' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let output = '';
      npm.stdout?.on('data', (chunk) => {
        output += chunk;
      });
      npm.stderr?.on('data', (chunk) => {
        output += chunk;
      });
      try {
        for (let i = 0; i < 300 && !/API key for this run/.test(output); i++)
          await new Promise((resolve) => setTimeout(resolve, 50));
        expect(await portAnswers(port), output).toBe(true);
        const exited = once(npm, 'exit');
        npm.kill(signal);
        await exited;
        let answers = true;
        for (let i = 0; i < 100 && answers; i++) {
          answers = await portAnswers(port);
          if (answers) await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(answers, `port ${port} still held after npm start exited on ${signal}`).toBe(false);
      } finally {
        npm.kill('SIGKILL');
      }
    },
    30_000,
  );
});
