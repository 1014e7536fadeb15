/**
 * Loaded into the service by the soak benchmark (NODE_OPTIONS=--import=…/soakProbe.ts, with
 * SOAK_PROBE_FILE naming a file): writes the process's memory figures (process.memoryUsage())
 * there every second, so the benchmark can read the heap of a child process. Nothing else.
 */
import { writeFileSync } from 'node:fs';

const file = process.env.SOAK_PROBE_FILE;
if (file) {
  const timer = setInterval(() => {
    const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage();
    try {
      writeFileSync(file, JSON.stringify({ at: Date.now(), rss, heapUsed, heapTotal, external, arrayBuffers }));
    } catch {
      // the benchmark removed its directory: it has finished
    }
  }, 1000);
  timer.unref();
}
