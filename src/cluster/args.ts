// The cluster command's arguments (CONTRACT.md "Several front ends"): --nodes N (1..8, default 3),
// --port P (default 8080), --replicas R (0..2, default 1; 0 with DATABASE_URL, whose server is not
// ours to copy). A pure function, so every refusal is tested without starting anything.
export type ClusterArgs = { nodes: number; port: number; replicas: number };

export class UsageError extends Error {
  constructor(
    message: string,
    readonly help = false,
  ) {
    super(message);
  }
}

export const USAGE = `usage: npm run cluster -- [--nodes N] [--port P] [--replicas R]
  --nodes N     service processes, 1..8 (default 3)
  --port P      the balancer's port on HOST (default 8080)
  --replicas R  streaming replicas of the embedded primary, 0..2 (default 1; 0 with DATABASE_URL)
Settings come from the environment as for npm start (DATA_DIR, DATABASE_URL, SVC_TIME_SCALE, ...).`;

const LIMITS = { nodes: [1, 8], port: [1, 65535], replicas: [0, 2] } as const;

export function parseClusterArgs(argv: string[], env: NodeJS.ProcessEnv): ClusterArgs {
  const given: Partial<ClusterArgs> = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--help' || a === '-h') throw new UsageError('help', true);
    const m = /^--(nodes|port|replicas)(?:=(.*))?$/.exec(a);
    if (!m) throw new UsageError(`unknown argument ${JSON.stringify(a)}`);
    const key = m[1] as keyof ClusterArgs;
    const raw = m[2] ?? argv[++i];
    if (raw === undefined) throw new UsageError(`--${key} needs a value`);
    const n = Number(raw);
    const [lo, hi] = LIMITS[key];
    if (!/^\d+$/.test(raw) || n < lo || n > hi)
      throw new UsageError(
        `--${key} must be an integer in ${lo}..${hi}, got ${JSON.stringify(raw)}`,
      );
    given[key] = n;
  }
  const external = Boolean(env.DATABASE_URL);
  if (external && given.replicas)
    throw new UsageError(
      '--replicas needs the embedded primary: unset DATABASE_URL, or use --replicas 0',
    );
  return {
    nodes: given.nodes ?? 3,
    port: given.port ?? 8080,
    replicas: given.replicas ?? (external ? 0 : 1),
  };
}
