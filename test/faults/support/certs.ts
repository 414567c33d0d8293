/**
 * A throwaway certificate authority, a server certificate for 127.0.0.1 and a client certificate,
 * made with the openssl command line at test time (nothing is checked in), for the HTTPS receiver.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TestCerts {
  dir: string;
  /** PEM of the CA: what NODE_EXTRA_CA_CERTS points at. */
  caPath: string;
  key: string;
  /** Server certificate (PEM), signed by the CA, for IP 127.0.0.1, localhost and the names asked for. */
  cert: string;
  /** The CA's PEM, for a server that asks its clients for a certificate (mutual TLS). */
  caPem: string;
  /** A client certificate signed by the CA (clientAuth), and its key: files, as OTEL_EXPORTER_OTLP_CLIENT_* name them. */
  clientCertPath: string;
  clientKeyPath: string;
  remove(): void;
}

/** Why certificates cannot be made here, or undefined when openssl is available. */
export function opensslMissing(): string | undefined {
  try {
    execFileSync('openssl', ['version'], { stdio: 'pipe' });
    return undefined;
  } catch (error) {
    return `openssl is not available: ${(error as Error).message}`;
  }
}

/** `dnsNames`: host names the server certificate is for, besides 127.0.0.1 and localhost. */
export function makeCerts(dnsNames: readonly string[] = []): TestCerts {
  const dir = mkdtempSync(path.join(tmpdir(), 'pyro-run-certs-'));
  const file = (name: string) => path.join(dir, name);
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.pem',
    '-days',
    '2',
    '-subj',
    '/CN=pyro-run test CA',
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  );
  openssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  const altNames = ['IP:127.0.0.1', 'DNS:localhost', ...dnsNames.map((name) => `DNS:${name}`)].join(',');
  writeFileSync(file('server.ext'), `subjectAltName=${altNames}\nbasicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n`);
  openssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'server.ext',
  );
  openssl('req', ...ec, '-keyout', 'client.key', '-out', 'client.csr', '-subj', '/CN=pyro-run test client');
  writeFileSync(file('client.ext'), 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n');
  openssl(
    'x509',
    '-req',
    '-in',
    'client.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'client.pem',
    '-days',
    '2',
    '-extfile',
    'client.ext',
  );
  return {
    dir,
    caPath: file('ca.pem'),
    key: readFileSync(file('server.key'), 'utf8'),
    cert: readFileSync(file('server.pem'), 'utf8'),
    caPem: readFileSync(file('ca.pem'), 'utf8'),
    clientCertPath: file('client.pem'),
    clientKeyPath: file('client.key'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
