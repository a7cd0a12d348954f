// @tier slow: runs the image's command and nginx as processes

import { spawnSync } from 'node:child_process';
import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
} from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { haveNginx, startNginx } from '../support/nginx.ts';
import { killSpawned, spawnWatched } from '../support/process.ts';

// No Docker engine on this machine: the image and the compose file are checked as far as a plain
// process allows. The Dockerfile's final stage is read (WORKDIR, ENV, COPY, the directories it makes
// for its user, USER, CMD, HEALTHCHECK), its file system laid out in a temporary root (root-owned,
// as COPY leaves it), and its command run as the image's user with the image's environment.

const ROOT = new URL('../..', import.meta.url).pathname;
/** The `node` user of the official Node images. */
const IMAGE_UID = 1000;
/** Where the base image (node:24-bookworm-slim) has its node. */
const IMAGE_NODE = 'usr/local/bin/node';
const NODE = join(ROOT, 'node_modules/.bin/node');

interface FinalStage {
  workdir: string;
  env: Record<string, string>;
  copies: string[];
  userDirs: string[];
  user: string | undefined;
  cmd: string[];
  healthcheck: string | undefined;
}

function readFinalStage(): FinalStage {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').replace(/\\\n/g, ' ');
  const lines = text.split('\n').map((line) => line.trim());
  const from = lines.findLastIndex((line) => /^FROM\s/i.test(line));
  const stage: FinalStage = {
    workdir: '/',
    env: {},
    copies: [],
    userDirs: [],
    user: undefined,
    cmd: [],
    healthcheck: undefined,
  };
  for (const line of lines.slice(from + 1)) {
    const [instruction = '', ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    switch (instruction.toUpperCase()) {
      case 'WORKDIR':
        stage.workdir = args;
        break;
      case 'ENV':
        for (const pair of args.matchAll(/(\w+)=(\S+)/g)) stage.env[pair[1] as string] = pair[2] as string;
        break;
      case 'COPY': {
        // Destinations relative to WORKDIR: the image mirrors the repository's layout.
        const paths = rest.filter((arg) => !arg.startsWith('--'));
        const dest = (paths.pop() ?? '').replace(/^\.\/?/, '');
        if (dest === '' || dest.endsWith('/'))
          for (const source of paths) stage.copies.push(`${dest}${source.split('/').at(-1)}`);
        else stage.copies.push(dest);
        break;
      }
      case 'RUN': {
        const made = /install -d -o (\S+) -g \S+ (.+)$/.exec(args);
        if (made) stage.userDirs.push(...(made[2] as string).split(/\s+/));
        break;
      }
      case 'USER':
        stage.user = args;
        break;
      case 'CMD':
        stage.cmd = JSON.parse(args);
        break;
      case 'HEALTHCHECK':
        stage.healthcheck = /CMD node -e "(.+)"$/.exec(args)?.[1];
        break;
    }
  }
  return stage;
}

const temps: string[] = [];
afterEach(killSpawned);
afterAll(() => {
  for (const dir of temps) rmSync(dir, { recursive: true, force: true });
});

/**
 * The packages the image's deps stage installs (`npm ci --omit=dev --omit=optional`), as paths
 * under the checkout: node_modules/<name> for each, their own node_modules inside them.
 */
let productionPackages: string[] | undefined;
function imagePackages(): string[] {
  if (productionPackages) return productionPackages;
  const listed = spawnSync('npm', ['ls', '--omit=dev', '--omit=optional', '--all', '--parseable'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  productionPackages = listed.stdout
    .split('\n')
    .map((path) => relative(ROOT, path))
    .filter((path) => /^node_modules\/(@[^/]+\/)?[^/]+$/.test(path));
  if (productionPackages.length < 20) throw new Error(`npm ls listed too few packages:\n${listed.stderr}`);
  return productionPackages;
}

/**
 * Copies `path` from `from` to `to`, as COPY makes: copies, not links into the checkout, so the
 * image's user reads them whatever the checkout's parent directories allow (a clone inside a 0700
 * directory, as mktemp -d makes). Hard links where the file system allows, else real copies.
 * node_modules gets the production packages only, as the deps stage installs them: a devDependency
 * the gateway needs at run time fails here as in the image (and it is a third of the files).
 */
function copyInto(from: string, to: string, path: string): void {
  const paths = path === 'node_modules' ? imagePackages() : [path];
  // One `cp` for all of them (its --parents keeps each path below `to`): a process per package
  // was over a hundred starts per layout, seconds on a loaded machine.
  mkdirSync(to, { recursive: true });
  const linked = spawnSync('cp', ['-al', '--parents', ...paths, to], { cwd: from });
  if (linked.status === 0) return;
  for (const one of paths) {
    mkdirSync(dirname(join(to, one)), { recursive: true });
    cpSync(join(from, one), join(to, one), { recursive: true, verbatimSymlinks: true, force: true });
  }
}

/** The final stage's files under a fresh root: COPYed paths root-owned, its user's directories its own. */
function layOut(stage: FinalStage, checkout = ROOT): string {
  const root = mkdtempSync(join(tmpdir(), 'image-'));
  temps.push(root);
  chmodSync(root, 0o755);
  const app = join(root, stage.workdir);
  mkdirSync(app, { recursive: true, mode: 0o755 });
  for (const path of stage.copies) copyInto(checkout, app, path);
  // The base image's Node 24, which the deps stage does not install: this checkout's (the `node`
  // devDependency's binary), linked in where node:24 has it.
  copyInto(join(ROOT, 'node_modules/node/bin'), join(root, dirname(IMAGE_NODE)), 'node');
  for (const dir of stage.userDirs) {
    mkdirSync(join(root, dir), { recursive: true });
    chownSync(join(root, dir), IMAGE_UID, IMAGE_UID);
  }
  return root;
}

/**
 * Runs `command` as the image's user in `cwd`: `node` is the image's own (the base image's
 * /usr/local/bin/node, which layOut puts under the root), not the checkout's.
 */
function runAsImageUser(command: string[], root: string, workdir: string, env: Record<string, string>) {
  const [program, ...args] = command;
  return spawnWatched(program === 'node' ? join(root, IMAGE_NODE) : (program as string), args, {
    cwd: join(root, workdir),
    env,
    user: IMAGE_UID,
    name: `${program} as the image's user`,
  });
}

const asRoot = process.getuid?.() === 0;

/**
 * A test that lays out the image and starts it as its user: a cold start (that user cannot share
 * the run's compile cache) beside the slow tier's other files. Past waitFor's own 30 s, which says
 * what did not come, so a slow start fails with its output rather than as a bare timeout.
 */
const STARTS_THE_IMAGE = { timeout: 45_000 };

it('the image and the compose gateway listen on every interface: the embedded default alone is loopback only', () => {
  expect(readFinalStage().env.HOST).toBe('0.0.0.0');
  const compose = parse(readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8')) as {
    services: Record<string, { environment?: Record<string, string> }>;
  };
  expect(compose.services.gateway?.environment?.HOST).toBe('0.0.0.0');
});

describe.skipIf(!asRoot)('the image, run as its user without Docker', () => {
  it(
    'starts with no UPSTREAM_URL (the embedded store creates its database), and its HEALTHCHECK passes',
    STARTS_THE_IMAGE,
    async () => {
      const stage = readFinalStage();
      expect(stage.user).toBe('node');
      const root = layOut(stage);
      // The image's environment; PORT and HOST moved off the machine's shared 4000.
      const gateway = runAsImageUser(stage.cmd, root, stage.workdir, {
        ...stage.env,
        PORT: '0',
        HOST: '127.0.0.1',
      });
      const [, url] = await gateway.waitFor(/at (http:\/\/\S+\/graphql)/);
      const port = new URL(url as string).port;
      expect(existsSync(join(root, stage.workdir, 'data/petstore.db'))).toBe(true);
      expect(stage.healthcheck).toBeDefined();
      const check = spawnSync(NODE, ['-e', stage.healthcheck as string], {
        env: { PORT: port },
        timeout: 5000,
      });
      expect(check.status).toBe(0);
    },
  );
});

describe.skipIf(!asRoot)('the image test, from a checkout its user cannot enter', () => {
  it(
    'runs the image as its user from a checkout inside a 0700 directory (what mktemp -d makes)',
    STARTS_THE_IMAGE,
    async () => {
      const stage = readFinalStage();
      // mkdtemp makes 0700 directories: a checkout below one is out of reach of uid 1000.
      const parent = mkdtempSync(join(tmpdir(), 'checkout-'));
      temps.push(parent);
      const checkout = join(parent, 'repo');
      mkdirSync(checkout);
      for (const path of stage.copies) copyInto(ROOT, checkout, path);
      const root = layOut(stage, checkout);
      const gateway = runAsImageUser(stage.cmd, root, stage.workdir, {
        ...stage.env,
        PORT: '0',
        HOST: '127.0.0.1',
      });
      const [, url] = await gateway.waitFor(/at (http:\/\/\S+\/graphql)/);
      expect((await fetch(new URL('/health', url as string))).status).toBe(200);
    },
  );
});

describe.skipIf(!asRoot)('deploy/compose.yaml, as far as it runs here', () => {
  const compose = parse(readFileSync(join(ROOT, 'deploy/compose.yaml'), 'utf8')) as {
    services: Record<
      string,
      {
        command?: string[];
        environment?: Record<string, string>;
        volumes?: string[];
        healthcheck?: { test: string[] };
      }
    >;
  };

  it(
    'runs the reference service as the image user on its volume, and its health check passes against it',
    STARTS_THE_IMAGE,
    async () => {
      const stage = readFinalStage();
      const petstore = compose.services.petstore;
      if (!petstore?.command || !petstore.environment) throw new Error('no petstore service');
      const db = petstore.environment.PETSTORE_DB as string;
      // The volume is mounted on the database's directory, and that directory is the image user's.
      expect(petstore.volumes?.map((volume) => volume.split(':')[1])).toContain(dirname(db));
      expect(stage.userDirs).toContain(dirname(db));

      const root = layOut(stage);
      const service = runAsImageUser(petstore.command, root, stage.workdir, {
        ...stage.env,
        ...petstore.environment,
        PETSTORE_DB: join(root, db),
        PETSTORE_API_KEY: 'compose-key',
        PORT: '0',
        HOST: '127.0.0.1',
      });
      const [, port] = await service.waitFor(/127\.0\.0\.1:(\d+)/);
      expect(existsSync(join(root, db))).toBe(true);

      const [kind, program, ...args] = petstore.healthcheck?.test ?? [];
      expect(kind).toBe('CMD');
      expect(program).toBe('node');
      const check = spawnSync(NODE, args, { env: { PORT: port as string }, timeout: 5000 });
      expect(check.status).toBe(0);
      // And it fails when nothing answers there.
      const down = spawnSync(NODE, args, { env: { PORT: '1' }, timeout: 5000 });
      expect(down.status).toBe(1);
    },
  );
});

describe('deploy/nginx.conf, run by the real nginx', () => {
  it.skipIf(!haveNginx())(
    'keeps the caller’s X-Request-Id and makes one only when there is none',
    async () => {
      const backendRequestIds: Array<string | undefined> = [];
      const backend = createServer((req, res) => {
        backendRequestIds.push(req.headers['x-request-id'] as string | undefined);
        res.end('ok');
      });
      backend.listen(0, '127.0.0.1');
      await once(backend, 'listening');
      const nginx = await startNginx((backend.address() as AddressInfo).port);
      try {
        backendRequestIds.length = 0;
        await fetch(`${nginx.origin}/health`, { headers: { 'x-request-id': 'caller-chosen-id-1' } });
        await fetch(`${nginx.origin}/health`);
        expect(backendRequestIds[0]).toBe('caller-chosen-id-1');
        expect(backendRequestIds[1]).toMatch(/^[0-9a-f]{32}$/);
      } finally {
        await nginx.stop();
        backend.close();
      }
    },
  );
});

async function _freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
