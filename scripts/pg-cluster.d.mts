export function startCluster(opts?: {
  env?: NodeJS.ProcessEnv;
  durable?: boolean;
  /** A CIDR whose clients may connect too (the server then listens on every address). */
  network?: string | null;
}): Promise<
  { url: string; restart(): Promise<void>; stop(): void; missing?: undefined } | { missing: string }
>;
