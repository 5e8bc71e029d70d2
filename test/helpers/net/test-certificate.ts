import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import selfsigned from 'selfsigned';

let certificate: Promise<{ cert: string; key: string; caFile: string }> | undefined;

/**
 * One self-signed certificate for localhost / 127.0.0.1 per test process, for the HTTPS peers of the tests
 * (webhook receivers, telematics providers), trusted only through WEBHOOK_CA_FILE (`caFile`).
 */
export function testCertificate() {
  certificate ??= selfsigned
    .generate([{ name: 'commonName', value: 'localhost' }], { keySize: 2048, algorithm: 'sha256' })
    .then((pems) => {
      const caFile = path.join(os.tmpdir(), `fleet-test-ca-${randomBytes(6).toString('hex')}.pem`);
      writeFileSync(caFile, pems.cert);
      return { cert: pems.cert, key: pems.private, caFile };
    });
  return certificate;
}
