/**
 * The CPU time a process has used so far (all its threads), from /proc/<pid>/stat: what a
 * benchmark's server spent per request, beside the throughput that the load generator sharing the
 * machine also shapes. Null where there is no /proc (not Linux) or the process is gone.
 */
import { readFile } from 'node:fs/promises';

/** Clock ticks per second of utime and stime: USER_HZ, 100 on every Linux architecture Node runs on. */
const TICKS_PER_SECOND = 100;

export async function processCpuMicros(pid: number): Promise<{ userUs: number; systemUs: number; reapedChildrenUs: number; parentPid: number } | null> {
  let stat: string;
  try {
    stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // The command name (field 2) is in parentheses and may hold spaces: count fields after its last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After the name: state is field 3, so utime (14) and stime (15) are at 11 and 12 here.
  const user = Number(fields[11]);
  const system = Number(fields[12]);
  // cutime and cstime: what the process's children used, once it has reaped them.
  const children = Number(fields[13]) + Number(fields[14]);
  if (!Number.isFinite(user) || !Number.isFinite(system)) return null;
  return { userUs: (user * 1e6) / TICKS_PER_SECOND, systemUs: (system * 1e6) / TICKS_PER_SECOND, reapedChildrenUs: (children * 1e6) / TICKS_PER_SECOND, parentPid: Number(fields[1]) };
}
