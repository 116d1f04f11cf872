export function startCluster(opts?: {
  env?: NodeJS.ProcessEnv;
  durable?: boolean;
}): Promise<{ url: string; stop(): void; missing?: undefined } | { missing: string }>;
