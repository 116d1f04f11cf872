// Dashboards after a restart: N websocket clients resume from after=0 at once, in a process of
// their own (so their reading does not slow the timing side). Prints "open" once all are open
// and "done" once each has received `expected` events, then exits.
import WebSocket from 'ws';

const [url, n, expected] = process.argv.slice(2);
let open = 0;
let done = 0;
for (let i = 0; i < Number(n); i++) {
  const ws = new WebSocket(`${url.replace('http', 'ws')}/events/stream?after=0`);
  let count = 0;
  ws.on('open', () => {
    if (++open === Number(n)) process.stdout.write('open\n');
  });
  ws.on('message', () => {
    if (++count === Number(expected)) {
      ws.terminate();
      if (++done === Number(n)) {
        process.stdout.write('done\n');
        process.exit(0);
      }
    }
  });
  ws.on('error', (err) => {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  });
}
