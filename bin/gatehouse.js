#!/usr/bin/env node
// The gatehouse executable: runs the compiled CLI (built by `npm ci` through `prepare`).
import { main } from '../dist/cli/main.js';

await main(process.argv.slice(2));
