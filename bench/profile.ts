import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The parts of a V8 `.cpuprofile` used here. */
interface CpuProfile {
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
  }>;
  samples: number[];
  timeDeltas: number[];
}

const TOP = 20;

/**
 * Top self-time functions per target, as text. A target started again each round wrote one file per
 * process (`<target>.<n>.cpuprofile`): its summary adds them up, every round's process counted.
 */
export function summariseProfiles(dir: string): string {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  } catch {
    return `no CPU profiles in ${dir}`;
  }
  const byTarget = new Map<string, string[]>();
  for (const file of files.sort()) {
    const target = file.replace(/(\.\d+)?\.cpuprofile$/, '');
    byTarget.set(target, [...(byTarget.get(target) ?? []), join(dir, file)]);
  }
  return [...byTarget].map(([target, paths]) => summariseProfile(target, paths)).join('\n\n');
}

/** Where a frame's code lives: a package name, a file of ours, or a Node/V8 bucket. */
function owner(url: string): string {
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (inPackage) return inPackage[1] as string;
  if (url.startsWith('node:')) return 'node (built-ins)';
  const ours = /\/(src|bench)\/(.+)$/.exec(url);
  if (ours) return `${ours[1]}/${ours[2]}`;
  return url === '' ? 'native / V8' : url;
}

function summariseProfile(target: string, paths: readonly string[]): string {
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  let busy = 0;
  for (const path of paths) busy += addProfile(path, byFunction, byOwner);
  const share = (micros: number) => `${((100 * micros) / busy).toFixed(1).padStart(5)}%`;
  const top = (map: Map<string, number>, n: number) =>
    [...map.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
  const processes = paths.length === 1 ? paths[0] : `${paths.length} processes (${paths.join(', ')})`;
  return [
    `CPU profile of ${target}, ${processes}: ${(busy / 1e6).toFixed(1)} s busy (idle excluded).`,
    'Self time by package or file:',
    ...top(byOwner, 12).map(([name, micros]) => `  ${share(micros)}  ${name}`),
    `Top ${TOP} functions by self time:`,
    ...top(byFunction, TOP).map(([name, micros]) => `  ${share(micros)}  ${name}`),
  ].join('\n');
}

/** Adds one profile's self time to the maps; returns its busy microseconds. */
function addProfile(path: string, byFunction: Map<string, number>, byOwner: Map<string, number>): number {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const frame = frames.get(id);
    // Idle time is the bench running other targets; shares are of the time the gateway was busy.
    if (frame === undefined || frame.functionName === '(idle)') return;
    const where = owner(frame.url);
    const file = frame.url.startsWith('node:') ? frame.url : where;
    const key =
      `${frame.functionName || '(anonymous)'}  ${frame.url ? `${file}:${frame.lineNumber + 1}` : ''}`.trim();
    byFunction.set(key, (byFunction.get(key) ?? 0) + delta);
    byOwner.set(where, (byOwner.get(where) ?? 0) + delta);
    busy += delta;
  });
  return busy;
}
