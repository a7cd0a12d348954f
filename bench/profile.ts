/** The gateways' CPU profiles under --profile, summarised: where their busy time went. */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The parts of a V8 `.cpuprofile` used here. */
interface CpuProfile {
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string; lineNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

/**
 * Top self-time functions per target, as text. A target started again each round wrote one file per
 * process (`<target>.<n>.cpuprofile`): its summary adds every round's process up.
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
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
  if (inPackage) return inPackage;
  if (url.startsWith('node:')) return 'node (built-ins)';
  const ours = /\/((?:src|bench)\/.+)$/.exec(url)?.[1];
  return ours ?? (url === '' ? 'native / V8' : url);
}

function summariseProfile(target: string, paths: readonly string[]): string {
  const byFunction = new Map<string, number>();
  const byOwner = new Map<string, number>();
  const add = (map: Map<string, number>, key: string, micros: number) =>
    map.set(key, (map.get(key) ?? 0) + micros);
  let busy = 0;
  for (const path of paths) {
    const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
    const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
    profile.samples.forEach((id, i) => {
      const delta = profile.timeDeltas[i] ?? 0;
      const frame = frames.get(id);
      // Idle time is the bench running other targets: shares are of the time the gateway was busy.
      if (frame === undefined || frame.functionName === '(idle)') return;
      const where = owner(frame.url);
      const file = frame.url.startsWith('node:') ? frame.url : where;
      const at = frame.url ? `${file}:${frame.lineNumber + 1}` : '';
      add(byFunction, `${frame.functionName || '(anonymous)'}  ${at}`.trim(), delta);
      add(byOwner, where, delta);
      busy += delta;
    });
  }
  const top = (map: Map<string, number>, n: number) =>
    [...map.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, n)
      .map(([name, micros]) => `  ${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${name}`);
  const processes = paths.length === 1 ? paths[0] : `${paths.length} processes (${paths.join(', ')})`;
  return [
    `CPU profile of ${target}, ${processes}: ${(busy / 1e6).toFixed(1)} s busy (idle excluded).`,
    'Self time by package or file:',
    ...top(byOwner, 12),
    'Top 20 functions by self time:',
    ...top(byFunction, 20),
  ].join('\n');
}
