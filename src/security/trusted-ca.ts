import { readFileSync } from 'node:fs';
import tls, { type SecureContext } from 'node:tls';

let last: { pem: string; context: SecureContext } | undefined;

/**
 * The TLS context of outbound connections (webhook receivers, telematics providers) when an operator adds
 * certificate authorities: the system store plus the PEM file `caFile`, read now, so a bad file fails the start and
 * not the first connection. Built once per file content and shared: parsing the store's certificates is the cost,
 * and a `ca` list in the connect options would be parsed again for every new connection.
 */
export function trustedCaContext(caFile: string): SecureContext {
  const pem = readFileSync(caFile, 'utf8');
  if (last?.pem !== pem) last = { pem, context: tls.createSecureContext({ ca: [...tls.rootCertificates, pem] }) };
  return last.context;
}
