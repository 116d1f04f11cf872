export function startCluster(opts?: {
  env?: NodeJS.ProcessEnv;
  durable?: boolean;
}): Promise<
  { url: string; restart(): Promise<void>; stop(): void; missing?: undefined } | { missing: string }
>;
