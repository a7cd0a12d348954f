import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Started, startCommand } from './processes.ts';

/** Debian's nginx, installed by .ci/run. */
export const NGINX = process.env.NGINX_PATH ?? '/usr/sbin/nginx';

/** nginx with deploy/nginx.conf, its upstream pointed at the instances, in the foreground. */
export function startNginx(dir: string, port: number, gatewayPorts: number[]): Started {
  const site = readFileSync(new URL('../deploy/nginx.conf', import.meta.url), 'utf8')
    // Each instance gets the line deploy/nginx.conf gives `gateway:4000`, its parameters kept.
    .replace(/server gateway:4000([^;]*);/, (_, parameters: string) =>
      gatewayPorts.map((p) => `server 127.0.0.1:${p}${parameters};`).join('\n  '),
    )
    .replace('listen 4000;', `listen 127.0.0.1:${port};`);
  if (!site.includes(`127.0.0.1:${gatewayPorts[0]}`))
    throw new Error('deploy/nginx.conf: no "server gateway:4000…;" to point');
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
    (name) => `${name}_temp_path ${dir};`,
  );
  writeFileSync(
    join(dir, 'nginx.conf'),
    [
      'daemon off;',
      'worker_processes 1;',
      `pid ${dir}/nginx.pid;`,
      `error_log ${dir}/nginx-error.log;`,
      'events { worker_connections 1024; }',
      'http {',
      'access_log off;',
      ...temp,
      site,
      '}',
    ].join('\n'),
  );
  return startCommand(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf')], {}, 'nginx');
}
