// The console's calls to its own origin. The CSRF token comes from each page answer (JSON), never HTML.
let csrfToken = '';

export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function parse(response) {
  const body = await response.json().catch(() => ({}));
  if (!response.ok) {
    const error = body.error ?? {};
    throw new ApiError(
      response.status,
      error.code ?? 'error',
      error.message ?? response.statusText,
    );
  }
  return body;
}

/** GET /console/api/view/<page>?<query>: {session, data}. */
export async function loadView(page, query = '') {
  const body = await parse(
    await fetch(`/console/api/view/${page}${query ? `?${query}` : ''}`, {
      credentials: 'same-origin',
    }),
  );
  csrfToken = body.session.csrfToken;
  return body;
}

/** POST JSON with the session's CSRF token. */
export async function post(path, value = {}) {
  return parse(
    await fetch(`/console/api/${path}`, {
      method: 'POST',
      credentials: 'same-origin',
      headers: { 'content-type': 'application/json', 'x-csrf-token': csrfToken },
      body: JSON.stringify(value),
    }),
  );
}

/** Exchanges a pasted key for a session cookie; the key is not kept anywhere. */
export async function signIn(key) {
  return post('sign-in', { key });
}

export async function signOut() {
  await post('sign-out');
  csrfToken = '';
}
