// gatehouse's native module (native/: the process starter, spawn.c; the run folder writer,
// run-folder.c; the process table's listing, proc-scan.c), which `npm run build` puts in
// dist/native/ (scripts/build-native.mjs). Linux only.
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export interface NativeAddon {
  probe(): void;
  start(
    file: string,
    argv: string[],
    envp: string[],
    cwd: string,
    output: number,
    onExit: (code: number, signal: number, reaped: boolean) => void,
  ): Promise<number>;
  writeFolder(dir: string, names: string[], texts: string[], logPath: string): Promise<number>;
  /** Every /proc/<pid>, with its inode's ctimeMs (NaN: gone meanwhile), in pairs. */
  procInodeTimes(): Float64Array;
}

/** Where the build puts it, from dist/proc/ and from dist/bundle/ alike. */
export const NATIVE_PATH = fileURLToPath(
  new URL('../../dist/native/start_process.node', import.meta.url),
);

let loaded: NativeAddon | null = null;

/** The module, loaded on first use; throws what require throws (a build that did not make it). */
export function nativeAddon(): NativeAddon {
  loaded ??= createRequire(import.meta.url)(NATIVE_PATH) as NativeAddon;
  return loaded;
}
