// Reaching the page and the server: elements, the API with the page's token, notices.

export const token = new URLSearchParams(location.search).get('token');

export const byId = (id) => document.getElementById(id);

/** A path with the access token in its query, for links and EventSource (they cannot send headers). */
export function withToken(path) {
  if (!token) return path;
  const url = new URL(path, location.origin);
  url.searchParams.set('token', token);
  return url.pathname + url.search;
}

export async function api(path, { method = 'GET', body } = {}) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error(data.error || `${response.status} ${response.statusText}`);
  return data;
}

export function element(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

export function notice(text) {
  byId('notice').textContent = text;
}

export function attempt(work) {
  return Promise.resolve()
    .then(work)
    .catch((error) => notice(error.message));
}

export function badge(status) {
  return element('span', `badge status-${status}`, status);
}

export function setBadge(node, status) {
  node.className = `badge status-${status}`;
  node.textContent = status;
}

export function field(card, name) {
  return card.querySelector(`[data-field="${name}"]`);
}
