import { readFileSync } from 'node:fs';
import { Hono } from 'hono';

const assetTypes = {
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
} as const;

function readAsset(name: string): string {
  return readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');
}

/**
 * Serves the dashboard page (`/`) and its script and style. The page cannot pass a token to the
 * files it loads, so when a token is active the page's asset links carry it (`?token=`); a
 * token is base64url, so it needs no escaping in HTML.
 */
export function createStaticAssets({ token }: { token: string | null }): Hono {
  const routes = new Hono();
  const assetQuery = token === null ? '' : `?token=${token}`;
  const page = readAsset('index.html').replaceAll('{{asset_query}}', assetQuery);
  const assets = new Map(Object.entries(assetTypes).map(([name, type]) => [name, { body: readAsset(name), type }]));

  routes.get('/', (context) => context.html(page));
  // Browsers ask for /favicon.ico whatever the page links; answer with the icon rather than a 404 in the console.
  routes.get('/favicon.ico', (context) => context.redirect(`/favicon.svg${assetQuery}`, 301));
  routes.get('/:name{app\\.(js|css)|favicon\\.svg}', (context) => {
    const asset = assets.get(context.req.param('name'));
    if (!asset) return context.notFound();
    return context.body(asset.body, 200, { 'Content-Type': asset.type });
  });
  return routes;
}
