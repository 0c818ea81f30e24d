/**
 * The HTTP listener of `--metrics-listen`: `GET /metrics` answers with the exposition text of the run's
 * `LiveMetrics`; `/` names that path; anything else is 404. The listener is bound before the run connects
 * anywhere, so that a port in use is an error before the run rather than a run nobody can watch.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface MetricsSource {
  readonly contentType: string;
  text(): Promise<string>;
}

export interface MetricsServer {
  /** `http://HOST:PORT/metrics` with the port actually bound (port 0 asks for any free port). */
  readonly url: string;
  readonly port: number;
  /** Stop listening and drop open (keep-alive) connections. */
  close(): Promise<void>;
}

/**
 * Listen on HOST:PORT; rejects with the system error (`EADDRINUSE`, `EADDRNOTAVAIL`, `EACCES`, `ENOTFOUND`)
 * when the address cannot be bound. The server does not keep the process alive by itself (`unref`): the run
 * does, and `--metrics-linger` holds it with a timer of its own.
 */
export function startMetricsServer(
  host: string | undefined,
  port: number,
  source: MetricsSource,
): Promise<MetricsServer> {
  const server = http.createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { Allow: 'GET, HEAD', 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('only GET\n');
      return;
    }
    if (path === '/metrics') {
      source.text().then(
        (body) => {
          res.writeHead(200, { 'Content-Type': source.contentType });
          res.end(req.method === 'HEAD' ? undefined : body);
        },
        (e: unknown) => {
          res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' });
          res.end(`cannot collect the metrics: ${(e as Error).message}\n`);
        },
      );
      return;
    }
    res.writeHead(path === '/' ? 200 : 404, { 'Content-Type': 'text/plain; charset=utf-8' });
    res.end(
      path === '/' ? 'dbsmack: the metrics are at /metrics\n' : 'not found: the metrics are at /metrics\n',
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port }, () => {
      server.off('error', reject);
      server.unref();
      const a = server.address() as AddressInfo;
      const shown = a.family === 'IPv6' ? `[${a.address}]` : a.address;
      resolve({
        url: `http://${shown}:${a.port}/metrics`,
        port: a.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done());
            server.closeAllConnections();
          }),
      });
    });
  });
}
