// A bundle plugin: Node built-ins that dependencies require at their top, for what a start never
// does (an HTTPS or HTTP/2 server, a websocket client or compression, a push to a Prometheus
// gateway), are required on first use instead. Loading https, tls, http2 and zlib took about
// 7 ms of every start. Each rewrite names the file and the exact text it expects: a dependency
// that changed them fails the build, rather than quietly loading them again.

/** The module itself, loaded when a property is first read (all these files ever do with it). */
const lazy = (req) => [req, `__lazyBuiltin(() => ${req})`];

/** File (path ending) → [text, what it becomes]. */
const LAZY = [
  {
    file: 'node_modules/fastify/lib/server.js',
    rewrites: [lazy("require('node:https')"), lazy("require('node:http2')")],
  },
  {
    file: 'node_modules/ws/lib/websocket.js',
    rewrites: [lazy("require('https')"), lazy("require('tls')")],
  },
  { file: 'node_modules/ws/lib/permessage-deflate.js', rewrites: [lazy("require('zlib')")] },
  {
    file: 'node_modules/prom-client/lib/pushgateway.js',
    rewrites: [
      lazy("require('https')"),
      [
        "const { gzipSync } = require('zlib');",
        "const gzipSync = (...args) => require('zlib').gzipSync(...args);",
      ],
    ],
  },
];

const HELPER = `
function __lazyBuiltin(load) {
  let loaded;
  const target = () => (loaded ??= load());
  return new Proxy({}, {
    get: (_, key) => target()[key],
    has: (_, key) => key in target(),
  });
}
`;

export function lazyBuiltins() {
  const seen = new Set();
  return {
    name: 'lazy-builtins',
    transform(code, id) {
      const entry = LAZY.find((e) => id.replaceAll('\\', '/').endsWith(e.file));
      if (!entry) return null;
      let out = code;
      for (const [from, to] of entry.rewrites) {
        if (!out.includes(from)) throw new Error(`lazy-builtins: ${id} has no ${from}`);
        out = out.replaceAll(from, to);
      }
      seen.add(entry.file);
      return { code: out + HELPER, map: null };
    },
    buildEnd() {
      const missed = LAZY.filter((e) => !seen.has(e.file)).map((e) => e.file);
      if (missed.length > 0)
        throw new Error(`lazy-builtins: not in the bundle: ${missed.join(', ')}`);
    },
  };
}
