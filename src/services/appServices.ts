/**
 * What the process shares with every request handler and background worker: the store, the
 * clock, the configuration and the logger. Built once in main.ts (or by a test) and passed down.
 */
import type { Clock } from '../clock.ts';
import type { Config } from '../config.ts';
import type { Logger } from '../log.ts';
import type { Store } from '../store/store.ts';

export interface AppServices {
  config: Config;
  store: Store;
  clock: Clock;
  log: Logger;
}
