// The handler of the dashboard's pictures (scripts/screenshot.mjs): a few milliseconds of
// work a job, a result for most, and an Error (with its stack) for a body that asks to fail.
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

async function chargeCard(order) {
  await sleep(2);
  throw new Error(order.fail);
}

export default async function handle(job) {
  if (job.body?.fail) await chargeCard(job.body);
  await sleep(1 + ((job.body?.order ?? 0) % 5));
  return job.name === 'invoice.render' ? { pages: 1 + ((job.body?.order ?? 0) % 3) } : undefined;
}
