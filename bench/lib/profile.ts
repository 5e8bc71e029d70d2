// The top of a V8 CPU profile (.cpuprofile, as `node --cpu-prof` writes it): self time per function, summed over
// every node of the call tree that names it, as lines of "share  ms  function  file:line".

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export function topOfProfile(profile: CpuProfile, n: number): string[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    const f = byId.get(id)?.callFrame;
    if (!f) return;
    const file = f.url.replace(/^file:\/\//, '').replace(/^.*\/node_modules\//, '');
    const where = file ? `${file.replace(/^.*\/(dist|src)\//, '$1/')}:${f.lineNumber + 1}` : '';
    const label = `${f.functionName || '(anonymous)'}  ${where}`.trim();
    self.set(label, (self.get(label) ?? 0) + dt);
    total += dt;
  });
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(
      ([label, us]) =>
        `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(6)} ms  ${label}`,
    );
}
