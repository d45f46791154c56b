import { chromium } from 'playwright-core';

const url = process.argv[2];
const path = process.argv[3] ?? '/';
const b = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-quic',
    '--no-first-run',
    '--disable-component-update',
    '--disable-sync',
  ],
});
const ctx = await b.newContext();
const p = await ctx.newPage();
await p.goto(url);
for (let i = 0; i < 3; i++) {
  const t0 = Date.now();
  await p.goto(new URL(path, url).toString());
  await p.waitForFunction(
    () =>
      performance.getEntriesByName('ckpt:tree-drawn').length +
        performance.getEntriesByName('ckpt:catalog-drawn').length >
      0,
  );
  const r = await p.evaluate(() => ({
    marks: performance.getEntriesByType('mark').map((m) => [m.name, Math.round(m.startTime)]),
    nav: (() => {
      const n = performance.getEntriesByType('navigation')[0];
      return {
        req: Math.round(n.requestStart),
        resp: Math.round(n.responseEnd),
        dcl: Math.round(n.domContentLoadedEventEnd),
      };
    })(),
    res: performance
      .getEntriesByType('resource')
      .map((e) => [
        e.name.replace(/^http:\/\/[^/]+/, ''),
        Math.round(e.startTime),
        Math.round(e.responseEnd),
        e.transferSize,
      ]),
  }));
  console.log(Date.now() - t0, JSON.stringify(r));
}
await b.close();
