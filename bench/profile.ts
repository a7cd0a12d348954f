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

/** Top self-time functions of every `.cpuprofile` in `dir`, as text. */
export function summariseProfiles(dir: string): string {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
  } catch {
    return `no CPU profiles in ${dir}`;
  }
  return files.map((file) => summariseProfile(join(dir, file))).join('\n\n');
}

function summariseProfile(path: string): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const selfMicros = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const delta = profile.timeDeltas[i] ?? 0;
    const frame = frames.get(id);
    const where = frame?.url
      ? `${frame.url.replace(/^.*\/node_modules\//, '').replace(/^file:\/\/.*\/main\//, '')}:${frame.lineNumber + 1}`
      : '';
    const key = `${frame?.functionName || '(anonymous)'} ${where}`.trim();
    selfMicros.set(key, (selfMicros.get(key) ?? 0) + delta);
    total += delta;
  });
  const top = [...selfMicros.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP);
  return [
    `CPU profile ${path} (${(total / 1e6).toFixed(1)} s sampled), top ${TOP} by self time:`,
    ...top.map(([name, micros]) => `  ${((100 * micros) / total).toFixed(1).padStart(5)}%  ${name}`),
  ].join('\n');
}
