/**
 * The dashboard's static files: Pico CSS from its npm package (no CDN, no build step), and the
 * dashboard's own small stylesheet and script (the copy buttons; no inline script anywhere).
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type Router from '@koa/router';

const require = createRequire(import.meta.url);

const ASSETS: Record<string, { file: string; type: string }> = {
  'pico.min.css': { file: require.resolve('@picocss/pico/css/pico.min.css'), type: 'text/css; charset=utf-8' },
  'dashboard.css': { file: new URL('./assets/dashboard.css', import.meta.url).pathname, type: 'text/css; charset=utf-8' },
  'dashboard.js': { file: new URL('./assets/dashboard.js', import.meta.url).pathname, type: 'text/javascript; charset=utf-8' },
};

export function assetRoutes(router: Router): void {
  const loaded = new Map<string, Buffer>();
  router.get('asset', '/assets/:name', (koa) => {
    const asset = Object.hasOwn(ASSETS, koa.params.name!) ? ASSETS[koa.params.name!] : undefined;
    if (!asset) return;
    let bytes = loaded.get(asset.file);
    if (!bytes) {
      bytes = readFileSync(asset.file);
      loaded.set(asset.file, bytes);
    }
    koa.type = asset.type;
    koa.set('Cache-Control', 'public, max-age=3600');
    koa.body = bytes;
  });
}
