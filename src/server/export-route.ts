import { Hono } from 'hono';
import type { Cadre } from '../runtime/create-cadre.ts';
import { exportSession } from '../export/export-session.ts';
import { renderMarkdownExport } from '../export/render-markdown-export.ts';
import { failRequest } from './request-input.ts';

/**
 * `GET /api/sessions/:id/export?format=json|markdown`: the session export (docs/command-line.md)
 * as a download (`Content-Disposition: attachment`).
 */
export function createExportRoute({ cadre }: { cadre: Cadre }): Hono {
  const routes = new Hono();

  routes.get('/:id/export', async (context) => {
    const id = context.req.param('id');
    const format = context.req.query('format') ?? 'json';
    if (format !== 'json' && format !== 'markdown') failRequest(400, "'format' must be json or markdown.");
    if (!(await cadre.store.getSession(id))) failRequest(404, `No session '${id}'.`);
    const document = await exportSession(cadre.store, id, { limits: cadre.limits });
    const [body, type, extension] =
      format === 'json'
        ? [`${JSON.stringify(document, null, 2)}\n`, 'application/json; charset=utf-8', 'json']
        : [renderMarkdownExport(document), 'text/markdown; charset=utf-8', 'md'];
    return context.body(body, 200, {
      'Content-Type': type,
      // Session ids are [a-zA-Z0-9_], so the file name needs no quoting rules beyond the quotes.
      'Content-Disposition': `attachment; filename="${id.replace(/[^\w.-]/g, '_')}.${extension}"`,
    });
  });

  return routes;
}
