/*
 * Log lines for a person at a terminal: the JSON line pino writes, turned into one short line
 * (time, level, what happened, then the rest as key=value), in the spirit of pino-pretty's. Programs
 * reading stdout (a pipe, a file, a log shipper) get the JSON as it is.
 */

export type LogFormat = 'auto' | 'json' | 'pretty';

/** Whether lines go out short: `pretty`, or `auto` with stdout a terminal. */
export function prettyLogs(format: LogFormat, stdoutIsTerminal: boolean): boolean {
  return format === 'pretty' || (format === 'auto' && stdoutIsTerminal);
}

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO',
  40: 'WARN',
  50: 'ERROR',
  60: 'FATAL',
};
/** Said by the time, level and message, or (the operation line) in its own order; not repeated as key=value. */
const SHOWN = new Set(['level', 'time', 'service', 'msg']);
const OPERATION = ['operationName', 'operationType', 'status', 'durationMs', 'outcome', 'codes'];

/** One JSON log line (with its newline) as a short line for people; anything that is not JSON as it is. */
export function prettyLine(json: string): string {
  let event: Record<string, unknown>;
  try {
    event = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json;
  }
  const level = (LEVELS[Number(event.level)] ?? String(event.level)).padEnd(5);
  const words = [`${clock(event.time)} ${level} ${String(event.msg ?? '')}`];
  const skip = new Set(SHOWN);
  if (event.msg === 'operation') {
    const { operationName, operationType, status, durationMs, outcome, codes } = event;
    words.push(
      `${operationName ?? '(anonymous)'} ${operationType ?? ''} ${status ?? ''} ${durationMs ?? ''} ms ${outcome ?? ''}`,
    );
    if (Array.isArray(codes)) words.push(codes.join(','));
    for (const key of OPERATION) skip.add(key);
  }
  let stack = '';
  for (const [key, value] of Object.entries(event)) {
    if (skip.has(key) || value === undefined) continue;
    if (key === 'err' && typeof value === 'object' && value !== null) {
      const { message, stack: trace } = value as { message?: string; stack?: string };
      words.push(`err=${shown(message ?? '')}`);
      if (trace) stack = `\n    ${trace.split('\n').slice(1).join('\n    ').trim()}`;
      continue;
    }
    words.push(`${key}=${shown(value)}`);
  }
  return `${words.join(' ')}${stack}\n`;
}

/** `HH:MM:SS.mmm` of an ISO time, in this machine's time zone (a terminal's reader is here). */
function clock(time: unknown): string {
  const at = new Date(typeof time === 'string' || typeof time === 'number' ? time : Date.now());
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(at.getHours())}:${two(at.getMinutes())}:${two(at.getSeconds())}.${String(at.getMilliseconds()).padStart(3, '0')}`;
}

function shown(value: unknown): string {
  if (Array.isArray(value)) return value.map(shown).join(',');
  if (typeof value === 'string') return /^[^\s"=,]+$/.test(value) ? value : JSON.stringify(value);
  return typeof value === 'object' && value !== null ? JSON.stringify(value) : String(value);
}
