// The rate-limits table: each bucket every launcher of the prefix shares ('*' = the whole
// queue), its limit, the tokens in it now and whether it holds work back. Read from Redis
// (GET /api/rate-limits); the section shows only while some limit is in use.
import { get } from './api.js';
import { el } from './dom.js';

const UNITS = { 1000: 's', 60000: 'min', 3600000: 'h' };
const rate = (b) => `${b.max}/${UNITS[b.perMs] ?? `${b.perMs}ms`}`;

export function rateLimitsTable(section) {
  const tbody = section.querySelector('tbody');
  async function load() {
    const { limits } = await get('/api/rate-limits');
    section.hidden = limits.length === 0;
    tbody.replaceChildren(
      ...limits.map((b) =>
        el(
          'tr',
          { dataset: { limit: b.name } },
          el('td', {}, b.name === '*' ? 'whole queue' : b.name),
          el('td', {}, rate(b)),
          el('td', { class: 'num' }, `${Math.floor(b.tokens)} of ${b.cap}`),
          el('td', b.limited ? { class: 'error' } : {}, b.limited ? 'yes' : 'no'),
        ),
      ),
    );
  }
  return { load };
}
