// The plugin's own certificate for go-plugin's AutoMTLS: a throwaway
// self-signed ECDSA P-256 certificate for "localhost". The host pins
// exactly this certificate as its root and connects with server name
// "localhost", so it must carry that SAN, be a CA and allow server auth.
// Node's crypto makes the key; @peculiar/x509 builds the certificate on
// Node's WebCrypto.

import { webcrypto, randomBytes } from "node:crypto";
import type * as X509 from "@peculiar/x509";

export interface ServerCertificate {
  keyPem: string;
  certPem: string;
  /** The DER bytes, which go into the handshake line. */
  der: Buffer;
}

export async function serverCertificate(name: string): Promise<ServerCertificate> {
  // Loaded here, not when the SDK is imported: it is the slowest module to
  // load, and only a serving plugin needs it (tests and the harness do not).
  const x509: typeof X509 = require("@peculiar/x509");
  x509.cryptoProvider.set(webcrypto as any);
  const alg = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };
  const keys = (await webcrypto.subtle.generateKey(alg, true, ["sign", "verify"])) as any;
  const serial = randomBytes(16);
  serial[0] &= 0x7f; // a positive serial number
  serial[0] |= 0x01; // without a leading zero byte
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial.toString("hex"),
    name: `CN=localhost, O=hookhost plugin ${name.replace(/[,+="<>#;\\]/g, "_")}`,
    notBefore: new Date(now - 30_000),
    // The certificate dies with the process; it only needs to outlive it.
    notAfter: new Date(now + 3650 * 24 * 3600 * 1000),
    signingAlgorithm: alg,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyAgreement | x509.KeyUsageFlags.keyCertSign, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
      new x509.SubjectAlternativeNameExtension([{ type: "dns", value: "localhost" }]),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey("pkcs8", keys.privateKey as any));
  const keyPem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString("base64").replace(/(.{64})/g, "$1\n").replace(/\n$/, "")}\n-----END PRIVATE KEY-----\n`;
  const der = Buffer.from(cert.rawData);
  return { keyPem, certPem: cert.toString("pem") + "\n", der };
}

/**
 * The certificate as the handshake line's sixth field wants it: standard
 * base64 of the DER, unpadded (go-plugin decodes it with RawStdEncoding;
 * padding fails only for some certificate lengths).
 */
export function handshakeCertField(der: Buffer): string {
  return der.toString("base64").replace(/=+$/, "");
}
