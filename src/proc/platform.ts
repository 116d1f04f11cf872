// The one switch on the operating system: Linux has /proc, its boot clock and cgroups; elsewhere
// (macOS, for development) `ps` and pidusage stand in.
export const LINUX = process.platform === 'linux';
