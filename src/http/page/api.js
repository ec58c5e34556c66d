// Talking to the server. Changes are POSTs with a JSON body and the X-Skyq-Request header: the
// server refuses a change without them (a foreign page cannot send that header).

export class ApiError extends Error {}

async function call(path, init) {
  const response = await fetch(path, { credentials: 'same-origin', ...init });
  if (response.status === 401) {
    location.reload(); // the login form
    throw new ApiError('the token is needed again');
  }
  const text = await response.text();
  const data = text ? JSON.parse(text) : {};
  if (!response.ok) throw new ApiError(data.error ?? `${response.status} ${response.statusText}`);
  return data;
}

export const get = (path) => call(path, { method: 'GET' });

export const post = (path, body = {}) =>
  call(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-skyq-request': '1' },
    body: JSON.stringify(body),
  });
