/**
 * One more server process of the example, for the tests: `node serve.mjs <options as JSON>`
 * starts the server (the options of `startServer`), prints `{ "url": … }` on a line, and closes
 * when it is sent SIGTERM.
 */
import { type ServerOptions, startServer } from '../../src/server.js';

const server = await startServer(JSON.parse(process.argv[2]!) as ServerOptions);
process.on('SIGTERM', () => {
  void server.close().then(() => process.exit(0));
});
console.log(JSON.stringify({ url: server.url }));
