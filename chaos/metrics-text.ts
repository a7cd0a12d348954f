/**
 * The sum of every sample of `name` in Prometheus text whose labels include `labels`
 * (`state="open"`), or undefined when there is none.
 */
export function sample(text: string, name: string, labels = ''): number | undefined {
  let total: number | undefined;
  for (const line of text.split('\n')) {
    if (!line.startsWith(name)) continue;
    const rest = line.slice(name.length);
    if (rest[0] !== ' ' && rest[0] !== '{') continue;
    const space = rest.lastIndexOf(' ');
    if (labels !== '' && !rest.slice(0, space).includes(labels)) continue;
    total = (total ?? 0) + Number(rest.slice(space + 1));
  }
  return total;
}
