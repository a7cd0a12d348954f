import type { TargetKind } from './workloads.ts';

/**
 * The order targets are measured in, in round `round`. The goals' targets run as one block, the
 * gateway between the JSON hop and Tailcall (the headline goals' peers), its baseline and `warn`
 * twins one further, Hive + Mesh at the end: this machine's speed drifts within a minute (Node's
 * targets slow more than Tailcall's binary when it does), so a goal's ratio must compare runs
 * seconds apart, in every round. The block moves one place each round among the other targets,
 * which rotate, and runs backwards every other round, so no target always runs first or right
 * after the same one.
 */
export function measuringOrder(targets: readonly TargetKind[], round: number): TargetKind[] {
  const beside: TargetKind[] = [
    'hive-mesh',
    'gateway-baseline',
    'tailcall',
    'gateway',
    'json-hop',
    'gateway-warn',
  ];
  const block = beside.filter((t) => targets.includes(t));
  if (round % 2 === 0) block.reverse();
  const others = targets.filter((t) => !beside.includes(t));
  const turn = others.length === 0 ? 0 : (round - 1) % others.length;
  const rotated = [...others.slice(turn), ...others.slice(0, turn)];
  const at = (round - 1) % (rotated.length + 1);
  return [...rotated.slice(0, at), ...block, ...rotated.slice(at)];
}
