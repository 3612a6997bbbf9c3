// The JSON API, called with the session cookie; writes carry the CSRF header.

let csrf = null;
let onUnauthorized = () => {};

export function setCsrf(value) { csrf = value; }
export function whenUnauthorized(f) { onUnauthorized = f; }

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export function query(params) {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v != null && v !== '') q.set(k, v);
  }
  const s = q.toString();
  return s ? `?${s}` : '';
}

export async function api(method, path, body) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET' && csrf) headers['X-Cairn-Csrf'] = csrf;
  const res = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (res.status === 204) return null;
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const e = data && data.error;
    const err = new ApiError(res.status, (e && e.code) || `http_${res.status}`, (e && e.message) || res.statusText);
    // No session any more, or its token was revoked or has expired.
    const ended = res.status === 401 || ['token_revoked', 'token_expired', 'invalid_token'].includes(err.code);
    if (ended && !path.startsWith('/dashboard/session')) onUnauthorized(err);
    throw err;
  }
  return data;
}

export const get = (path, params) => api('GET', path + query(params));
export const post = (path, body) => api('POST', path, body === undefined ? {} : body);
export const patch = (path, body) => api('PATCH', path, body);
export const del = (path) => api('DELETE', path);
