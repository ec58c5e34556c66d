// A schedule's row opens the job view of its pending occurrence, the ordinary message
// `schedule:<id>:<grid ms>` (lua/schedule-lib.lua), by a click or Enter on the row.
import { toast } from './dom.js';

export function openOccurrences(section, jobView) {
  const open = (row) => {
    const { schedule, next } = row.dataset;
    if (!next) return toast(`schedule ${schedule} has no pending occurrence (it ended)`, 'error');
    void jobView.open({ id: `schedule:${schedule}:${next}` }, row);
  };
  section.addEventListener('click', (event) => {
    const row = event.target.closest('tr[data-schedule]');
    if (row && !event.target.closest('button, a, input')) open(row);
  });
  section.addEventListener('keydown', (event) => {
    const row = event.target.closest('tr[data-schedule]');
    if (row && event.key === 'Enter' && event.target === row) open(row);
  });
}
