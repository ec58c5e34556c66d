// Trades the token for a session cookie (HttpOnly, SameSite=Strict), then opens the dashboard.
const form = document.getElementById('login-form');
const error = document.getElementById('login-error');
form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const token = document.getElementById('token').value;
  const response = await fetch('/login', {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-skyq-request': '1' },
    body: JSON.stringify({ token }),
  });
  if (response.ok) location.assign('/');
  else error.textContent = 'Wrong token.';
});
