/**
 * Whether `[`/`{` nest past `max` outside strings in JSON text: a scan, so a body too deep to be
 * handled never reaches JSON.parse (or, parsed, a recursive walk). The reference service and the
 * gateway's `/mcp` each bound their bodies with it, each at a depth of its own.
 */
export function nestsDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
