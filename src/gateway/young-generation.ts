// V8's young generation held at the size it has once the daemon's code is loaded (2 MiB a
// semi-space), for a smaller resident set: up to 16 MiB a semi-space otherwise. Started with
// `node --max-semi-space-size=1` for this, each start took about 20 ms more on Node 20: any V8
// flag changes V8's flag hash, and Node then compiles each of its own modules from source
// instead of from the code cache built into it. Set at run time, the flag does the same to the
// built-ins loaded after it: a board on SQLite loads a few small ones, and the PostgreSQL
// driver's are loaded with the flag put back (open.ts's driverLoading). V8 reads the growth
// factor each time it would grow the space.
import { setFlagsFromString } from 'node:v8';

export function holdYoungGeneration(): void {
  setFlagsFromString('--semi-space-growth-factor=1');
}

/**
 * V8's default again: what a code cache is read under. The build records the daemon's cache after
 * the daemon held the young generation, so it calls this first, or every start would refuse the
 * cache; and the daemon, while it loads the PostgreSQL driver.
 */
export function releaseYoungGeneration(): void {
  setFlagsFromString('--semi-space-growth-factor=2');
}
