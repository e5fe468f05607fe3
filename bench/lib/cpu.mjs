// CPU accounting from Linux /proc, to tell a saturated server from a starved one. Every function
// answers null where /proc is missing, and the bench then reports no CPU figures.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

let ticks;
function clockTicks() {
  if (ticks === undefined) {
    const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8', timeout: 5000 });
    ticks = Number(out.stdout) || 100;
  }
  return ticks;
}

/** CPU seconds (user + system) the process `pid` has used so far. */
export function processCpuSeconds(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks();
  } catch {
    return null;
  }
}

/**
 * CPU seconds all CPUs have spent busy so far, counting time the hypervisor stole: together
 * with the server's and the loader's own seconds it shows how much else ran during a sample.
 */
export function machineBusySeconds() {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0];
    const [user, nice, system, , , irq, softirq, steal = 0] = line.trim().split(/\s+/).slice(1).map(Number);
    return (user + nice + system + irq + softirq + steal) / clockTicks();
  } catch {
    return null;
  }
}
