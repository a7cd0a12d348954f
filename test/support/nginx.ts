import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './ports.ts';
import { spawnWatched } from './process.ts';

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
  // Through the one process harness: its own group (SIGKILL to the master alone would leave its
  // worker running), marked for the leftover check, ended with this process.
  const server = spawnWatched(NGINX, ['-c', join(dir, 'nginx.conf'), '-p', dir], { name: 'nginx' });
  const origin = `http://127.0.0.1:${listen}`;
  // nginx prints no line when it listens: its /health, proxied to the backend, says it does.
  const until = performance.now() + 10_000;
  for (;;) {
    const up = await fetch(`${origin}/health`).then(
      () => true,
      () => false,
    );
    if (up) break;
    if (performance.now() > until || server.child.exitCode !== null) {
      await server.stop('SIGKILL');
      const log = readFileSync(join(dir, 'error.log'), { encoding: 'utf8', flag: 'a+' });
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`nginx: ${origin}/health did not answer within 10 s:\n${log}${server.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return {
    origin,
    async stop() {
      await server.stop('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
