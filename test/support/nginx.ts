import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { marked } from './leftovers.ts';
import { freePort } from './ports.ts';

export const NGINX = '/usr/sbin/nginx';
const ROOT = new URL('../../', import.meta.url);

/** Whether nginx can run here; in CI (.ci/run installs it) a missing nginx fails instead. */
export const haveNginx = (): boolean => existsSync(NGINX) || Boolean(process.env.CI);

export interface RunningNginx {
  /** `http://127.0.0.1:<port>`, where nginx listens. */
  origin: string;
  stop(): Promise<void>;
}

/**
 * The real nginx running deploy/nginx.conf as shipped, with only its upstream pointed at
 * `backendPort` and its listen address on a free loopback port.
 */
export async function startNginx(backendPort: number): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'nginx-'));
  const listen = await freePort();
  const site = readFileSync(new URL('deploy/nginx.conf', ROOT), 'utf8')
    .replace(/server gateway:4000([^;]*);/, `server 127.0.0.1:${backendPort}$1;`)
    .replace('listen 4000;', `listen 127.0.0.1:${listen};`);
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off;\npid ${dir}/nginx.pid;\nerror_log ${dir}/error.log;\nevents {}\nhttp {\naccess_log off;\nclient_body_temp_path ${dir};\nproxy_temp_path ${dir};\nfastcgi_temp_path ${dir};\nuwsgi_temp_path ${dir};\nscgi_temp_path ${dir};\n${site}\n}\n`,
  );
  // Its own process group: SIGKILL to the master alone would leave its worker running.
  const child: ChildProcess = spawn(NGINX, ['-c', join(dir, 'nginx.conf'), '-p', dir], {
    stdio: 'ignore',
    detached: true,
    env: marked({ PATH: process.env.PATH ?? '' }),
  });
  const origin = `http://127.0.0.1:${listen}`;
  for (let i = 0; i < 100; i++) {
    if (
      await fetch(`${origin}/health`).then(
        () => true,
        () => false,
      )
    )
      break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    origin,
    async stop() {
      if (child.pid !== undefined && child.exitCode === null) {
        const exited = once(child, 'exit');
        try {
          process.kill(-child.pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
