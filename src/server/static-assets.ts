import { readdirSync, readFileSync } from 'node:fs';
import { Hono } from 'hono';

const assetFolder = new URL('./assets/', import.meta.url);

const assetTypes: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
};

function readAsset(name: string): string {
  return readFileSync(new URL(name, assetFolder), 'utf8');
}

/**
 * The page's files: its script is native ES modules (`app.js` imports the others), its style and
 * its icon. A module's imports cannot carry a header either, so with a token they carry it in
 * their query too, the same query for every importer so that each module loads once.
 */
function loadAssets(assetQuery: string): Map<string, { body: string; type: string }> {
  const assets = new Map<string, { body: string; type: string }>();
  for (const name of readdirSync(assetFolder)) {
    const type = assetTypes[name.slice(name.lastIndexOf('.') + 1)];
    if (type === undefined || name === 'index.html') continue;
    let body = readAsset(name);
    if (name.endsWith('.js')) body = body.replace(/^(import \{[^}]*\} from '\.\/[a-z-]+\.js)';$/gm, `$1${assetQuery}';`);
    assets.set(name, { body, type });
  }
  return assets;
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
  const assets = loadAssets(assetQuery);

  routes.get('/', (context) => context.html(page));
  // Browsers ask for /favicon.ico whatever the page links; answer with the icon rather than a 404 in the console.
  routes.get('/favicon.ico', (context) => context.redirect(`/favicon.svg${assetQuery}`, 301));
  routes.get('/:name{[a-z-]+\\.(js|css|svg)}', (context) => {
    const asset = assets.get(context.req.param('name'));
    if (!asset) return context.notFound();
    return context.body(asset.body, 200, { 'Content-Type': asset.type });
  });
  return routes;
}
