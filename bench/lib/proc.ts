// Readings of another process from /proc (Linux only): CPU time and resident memory.
import { readFileSync } from 'node:fs';

/** A field of /proc/<pid>/status in MB: VmRSS (resident now) or VmHWM (the kernel's high-water mark). */
export function statusMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(field));
  return Number(line?.split(/\s+/)[1] ?? NaN) / 1024;
}

/** utime + stime of the whole process (all threads) in ms: fields 14 and 15 of /proc/<pid>/stat, 10 ms ticks. */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}
