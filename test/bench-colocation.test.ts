/**
 * bench/colocation.ts: /proc/net/tcp's rows read into each socket's ports, and the descriptor a thread waits
 * to read from out of its /proc/…/syscall line; then the two on this machine's own sockets and threads, where
 * /proc can be read: a process blocked in `read` on its standard input is seen reading that descriptor, and a
 * listening socket's port is found under its inode.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync } from 'node:fs';
import net from 'node:net';
import { test } from 'node:test';
import { readingFd, tcpPorts } from '../bench/colocation.ts';
import { need } from './helpers/preconditions.ts';

const TCP = `  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
   0: 0100007F:1538 00000000:0000 0A 00000000:00000000 00:00000000 00000000   106        0 23145 1 0000000000000000 100 0 0 10 0
   1: 0100007F:D2A4 0100007F:1538 01 00000000:00000000 00:00000000 00000000     0        0 991234 1 0000000000000000 20 4 30 10 -1
   2: 0100007F:1538 0100007F:D2A4 01 00000000:00000000 00:00000000 00000000   106        0 991240 1 0000000000000000 20 4 30 10 -1
   3: 0100007F:9C40 0100007F:1538 06 00000000:00000000 03:00000F2B 00000000     0        0 0 3 0000000000000000
`;

test("/proc/net/tcp: each socket's inode to its local and remote ports; rows without an inode left out", () => {
  const m = tcpPorts(TCP);
  assert.deepEqual(m.get('23145'), [5432, 0]);
  assert.deepEqual(m.get('991234'), [0xd2a4, 5432], 'the client side');
  assert.deepEqual(m.get('991240'), [5432, 0xd2a4], 'the backend side: the same ports the other way round');
  assert.equal(m.size, 3, 'a TIME_WAIT row has inode 0');
  assert.equal(tcpPorts('').size, 0);
});

test('the descriptor a thread waits to read: read and recvfrom name it first, in hexadecimal', () => {
  assert.equal(readingFd('45 0x1b 0x7f3a2c001000 0x10000 0x0 0x0 0x0 0x7ffd3c0 0x7f3a3b1'), 27);
  assert.equal(readingFd('0 0x5 0x55d0c3a0 0x10000 0x0 0x0 0x0 0x7ffd3c0 0x7f3a3b1\n'), 5);
  // epoll_wait, poll, running, a kernel thread: no one descriptor
  assert.equal(readingFd('232 0x4 0x7ffd 0x400 0x32 0x0 0x0 0x7ffd 0x7f3a'), undefined);
  assert.equal(readingFd('7 0x7ffd 0x1 0xffffffff 0x0 0x0 0x0 0x7ffd 0x7f3a'), undefined);
  assert.equal(readingFd('running'), undefined);
  assert.equal(readingFd('-1 0x7ffd 0x7f3a'), undefined);
  assert.equal(readingFd(''), undefined);
});

test("on this machine: a child blocked reading its standard input is seen in read on it; a listener's port under its inode", async (t) => {
  if (!need(t, existsSync('/proc/self/syscall') ? undefined : '/proc/PID/syscall is not readable here'))
    return;
  // a shell reading a line from a pipe that nothing writes to
  const reader = spawn('sh', ['-c', 'read x'], { stdio: ['pipe', 'ignore', 'ignore'] });
  t.after(() => reader.kill());
  let fd: number | undefined;
  const until = Date.now() + 3000;
  while (fd === undefined && Date.now() < until) {
    await new Promise((r) => setTimeout(r, 20));
    fd = readingFd(readFileSync(`/proc/${reader.pid}/syscall`, 'latin1'));
  }
  assert.equal(fd, 0, 'the shell reads its standard input');
  // Node.js gives a child's piped stdio a socket pair, not a pipe
  assert.match(readlinkSync(`/proc/${reader.pid}/fd/0`), /^socket:\[\d+\]$/);
  const server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.after(() => server.close());
  const port = (server.address() as net.AddressInfo).port;
  const rows = [...tcpPorts(readFileSync('/proc/net/tcp', 'latin1')).values()];
  assert.ok(
    rows.some(([local, remote]) => local === port && remote === 0),
    `the listener on ${port}`,
  );
});
