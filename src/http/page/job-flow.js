// The job view's flow section (job.js): a flow child names its parent, a flow parent shows its
// tree below it (GET /api/jobs/<id> `flow`): each node's id opens its own job view, with its
// state, its name, whether it is optional, and why it died. Every value goes in as text.
import { el, idButton } from './dom.js';

/** `open(ref)`: opens the job view on another job. Null for a job of no flow. */
export function flow(job, open) {
  if (!job.parent && !job.flow) return null;
  const link = (node) => idButton(node.id, () => open({ id: node.id, group: node.group }));
  return el(
    'div',
    { class: 'job-part job-flow' },
    el('h3', {}, 'Flow'),
    job.parent
      ? el(
          'p',
          { 'data-field': 'parent' },
          'parent: ',
          link(job.parent),
          job.parent.optional ? ' (this child is optional)' : '',
        )
      : null,
    job.children
      ? el('p', { class: 'hint', 'data-field': 'children' }, countsText(job.children))
      : null,
    job.flow ? tree(job.flow, link) : null,
    job.flowCut
      ? el(
          'p',
          { class: 'hint', 'data-field': 'flow-cut' },
          `The tree shows the first jobs of the flow only (${job.flow.length} of its ${job.children.total} children here): skyq get ${job.id} --children lists every child.`,
        )
      : null,
  );
}

/** "3 children: 2 done, 1 active". */
function countsText(counts) {
  const { total, ...states } = counts;
  const parts = Object.entries(states)
    .filter(([, n]) => n > 0)
    .map(([state, n]) => `${n} ${state}`);
  return `${total} ${total === 1 ? 'child' : 'children'}${parts.length ? `: ${parts.join(', ')}` : ''}`;
}

function tree(nodes, link, top = true) {
  return el(
    'ul',
    top ? { class: 'flow-tree', 'data-field': 'flow' } : { class: 'flow-tree' },
    nodes.map((node) =>
      el(
        'li',
        { dataset: { id: node.id, state: node.state } },
        link(node),
        ' ',
        el('span', { class: `state state-${node.state}` }, node.state),
        node.name ? [' ', el('span', { class: 'name' }, node.name)] : null,
        node.optional ? el('span', { class: 'hint' }, ' (optional)') : null,
        node.error ? el('span', { class: 'error' }, ` – ${node.error}`) : null,
        node.children.length > 0 ? tree(node.children, link, false) : null,
      ),
    ),
  );
}
